"""Accuracy of the generated exp, exp2 and log of float32 against float64, over every input.

    PYTHONPATH=python /usr/bin/python3 benchmarks/exp_accuracy.py [--step S]

Runs `y = ntl.<fn>(x)` on every float32 bit pattern (every S-th with --step),
negative and positive, denormals, infinities and NaNs included, in chunks of
2^24, and compares each result with numpy's float64 function of the same
input. The error is |y - exact| in units of the float32 spacing at the exact
value (2^-149 below the normal range); results that must be NaN, infinite or
zero must be exactly that. Prints the largest error per function, the input
where it occurs, and the share of results within 1 ulp. About a minute per
function when exhaustive.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from math_kernels import KERNELS, REFERENCES, ulp_errors  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=1, help="check every S-th bit pattern")
    parser.add_argument("--functions", default="exp,exp2,log")
    args = parser.parse_args()
    chunk = 1 << 24
    for name in args.functions.split(","):
        kernel, reference = KERNELS[name], REFERENCES[name]
        start_time = time.perf_counter()
        worst, worst_x, within_one, checked, special_failures = 0.0, None, 0, 0, 0
        for start in range(0, 1 << 32, chunk):
            bits = np.arange(start, start + chunk, args.step, dtype=np.uint64).astype(np.uint32)
            x = bits.view(np.float32)
            out = np.full(x.shape, np.nan, dtype=np.float32)
            kernel(x, out)
            with np.errstate(invalid="ignore"):  # signalling NaNs among the inputs
                exact = reference(x.astype(np.float64))
            errors, specials_ok = ulp_errors(out, exact)
            special_failures += int((~specials_ok).sum())
            finite = np.isfinite(errors)
            if finite.any():
                i = int(np.argmax(np.where(finite, errors, -1)))
                if errors[i] > worst:
                    worst, worst_x = float(errors[i]), float(x[i])
            within_one += int((errors <= 1).sum())
            checked += x.size
        print(f"{name:5s}: max error {worst:.3f} ulp at x = {worst_x!r} ({np.float32(worst_x).view(np.uint32):#010x}); "
              f"{100 * within_one / checked:.4f}% within 1 ulp; {special_failures} wrong special values; "
              f"{checked} inputs, {time.perf_counter() - start_time:.0f} s")


if __name__ == "__main__":
    main()
