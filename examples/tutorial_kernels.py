"""The tutorial's kernels ("The Basics"), run on the OpenCL device (PoCL on the CPU).

Builds vector addition and matrix multiplication exactly as the tutorial
writes them, plus the row softmax of upstream NineToothed's examples, runs
each on the tutorial's tiny inputs and on moderate ones, and compares every
result with torch computed in higher precision (float64 for float32 data,
float32 for float16 data). Prints the largest absolute error, whether the
result agrees (allclose) and the time of a call. Exits with status 1 if any
result disagrees.
"""

import sys
import time

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from ninetoothed._core import current_device

# --- Vector addition ---------------------------------------------------------------------------


def add_arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


add_kernel = ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))

# --- Matrix multiplication ---------------------------------------------------------------------

BLOCK_SIZE_M = ninetoothed.block_size()
BLOCK_SIZE_N = ninetoothed.block_size()
BLOCK_SIZE_K = ninetoothed.block_size()


def matmul_arrangement(input, other, output):
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K))
    input_arranged = input_arranged.tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)

    other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N))
    other_arranged = other_arranged.tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)

    return input_arranged, other_arranged, output_arranged


def matmul_application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)

    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])

    output = accumulator  # noqa: F841


matmul_kernel = ninetoothed.make(
    matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2))
)

# --- Row softmax: one program per row, padding past the row reads -inf ---------------------

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)


def softmax_arrangement(input, output):
    return input.tile((1, BLOCK_SIZE)), output.tile((1, BLOCK_SIZE))


def softmax_application(input, output):
    row_minus_max = input - ntl.max(input)
    numerator = ntl.exp(row_minus_max)
    denominator = ntl.sum(numerator)
    output = numerator / denominator  # noqa: F841


softmax_kernel = ninetoothed.make(
    softmax_arrangement, softmax_application, (Tensor(2, other=float("-inf")), Tensor(2))
)

# --- Running and checking ----------------------------------------------------------------------


def timed(function, repeats=3):
    """(seconds of the first call, best seconds of `repeats` further calls)."""
    start = time.perf_counter()
    function()
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return first, best


def run(name, kernel, inputs, output, expected, rtol, atol, **constexprs):
    """Runs `kernel(*inputs, output)` into a NaN-poisoned output and compares with `expected`."""
    output.fill_(float("nan"))
    first, best = timed(lambda: kernel(*inputs, output, **constexprs))
    actual, reference = output.double(), expected.double()
    error = (actual - reference).abs().nan_to_num(float("inf")).max().item()
    agrees = torch.allclose(actual, reference, rtol=rtol, atol=atol)
    shapes = " @ ".join("x".join(map(str, x.shape)) for x in inputs[:2])
    print(
        f"{name:12} {str(output.dtype).replace('torch.', ''):8} {shapes:18} max abs error {error:9.3e}  "
        f"allclose {'yes' if agrees else 'NO '}  {best * 1e3:8.2f} ms (first call {first * 1e3:.0f} ms)"
    )
    return agrees


def main():
    torch.manual_seed(0)
    device = current_device()
    print(f"device: {device['name']} ({device['platform']}, {device['compute_units']} compute units)")
    results = []

    # Vector addition: the tutorial's example, then a million elements (not a multiple of a block).
    x = torch.tensor((1, 2, 3), dtype=torch.float16)
    y = torch.tensor((4, 5, 6), dtype=torch.float16)
    results.append(run("vector add", add_kernel, (x, y), torch.empty_like(x),
                       torch.tensor((5, 7, 9), dtype=torch.float32), rtol=0, atol=0))
    for dtype in (torch.float16, torch.float32):
        x, y = torch.randn(1_000_003).to(dtype), torch.randn(1_000_003).to(dtype)
        reference = x.float() + y.float() if dtype == torch.float16 else x.double() + y.double()
        # One rounding to the output dtype: within half an ulp.
        rtol = 2**-11 if dtype == torch.float16 else 2**-24
        results.append(run("vector add", add_kernel, (x, y), torch.empty_like(x), reference, rtol, 0))

    # Matrix multiplication, float16 as in the tutorial (float32 accumulator, float16 output).
    a = torch.tensor(((1, 2), (3, 4)), dtype=torch.float16)
    b = torch.tensor(((5, 6), (7, 8)), dtype=torch.float16)
    results.append(run("matmul", matmul_kernel, (a, b), torch.empty((2, 2), dtype=torch.float16),
                       torch.tensor(((19, 22), (43, 50)), dtype=torch.float32), rtol=0, atol=0))
    for m, k, n in ((512, 512, 512), (300, 700, 500)):
        a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
        # Products of float16 values are exact in float32; the sums differ from the reference
        # only by their order, and the result is rounded once to float16.
        results.append(run("matmul", matmul_kernel, (a, b), torch.empty((m, n), dtype=torch.float16),
                           a.float() @ b.float(), rtol=2e-3, atol=1e-3 * k**0.5))
    a, b = torch.randn(300, 700), torch.randn(700, 500)
    results.append(run("matmul", matmul_kernel, (a, b), torch.empty((300, 500)),
                       a.double() @ b.double(), rtol=1e-4, atol=2e-6 * 700))

    # Softmax over rows: a block as long as the row, and a block longer than it (padding).
    for rows, cols, block in ((1024, 1024, 1024), (1000, 781, 1024)):
        x = torch.randn(rows, cols) * 3
        results.append(run("softmax", softmax_kernel, (x,), torch.empty_like(x),
                           torch.softmax(x.double(), dim=-1), rtol=1e-4, atol=1e-7, BLOCK_SIZE=block))

    disagreeing = results.count(False)
    print(f"{len(results) - disagreeing} of {len(results)} results agree with torch")
    return 1 if disagreeing else 0


if __name__ == "__main__":
    sys.exit(main())
