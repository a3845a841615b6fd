"""Benchmark: from make() to the first correct result, cold and warm caches.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tuning.py

A 1024x1024 float32 matmul with three `ninetoothed.block_size()` symbols, run
in a fresh interpreter (the time includes its start, imports, make(), tuning,
the launch and a check against numpy) twice: first with empty caches (ours in
NINETOOTHED_CACHE_DIR and PoCL's own in POCL_CACHE_DIR), then again with the
caches the first process left (a second process pays neither builds nor
tuning). numpy arrays are used so that torch is never imported.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

CHILD = '''
import json, time
import numpy as np
import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BM, BN, BK = ninetoothed.block_size(), ninetoothed.block_size(), ninetoothed.block_size()

def arrangement(input, other, output):
    output_arranged = output.tile((BM, BN))
    input_arranged = input.tile((BM, BK)).tile((1, -1)).expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BK, BN)).tile((-1, 1)).expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged

def application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator

start = time.perf_counter()
kernel = ninetoothed.make(arrangement, application, (Tensor(2), Tensor(2), Tensor(2)))
rng = np.random.default_rng()
a = rng.standard_normal((1024, 1024), dtype=np.float32)
b = rng.standard_normal((1024, 1024), dtype=np.float32)
c = np.full((1024, 1024), np.nan, dtype=np.float32)
kernel(a, b, c)
first_result = time.perf_counter() - start
print("result ready", flush=True)  # the parent's clock stops here; checking comes after
assert np.allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
(record,) = kernel.tuning_report()
print(json.dumps({"make_to_result": first_result, "stats": ninetoothed._core.cache_stats(),
                  "chosen": record["chosen"], "candidates": len(record["candidates"])}))
'''


def run_child(environment, script):
    """Seconds from spawning the interpreter to the result being ready, and the child's report."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, str(script)], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    ready = child.stdout.readline()
    total = time.perf_counter() - start
    rest, errors = child.communicate()
    if child.returncode != 0 or ready.strip() != "result ready":
        raise SystemExit(errors)
    return total, json.loads(rest.strip().splitlines()[-1])


def main():
    python_dir = pathlib.Path(__file__).resolve().parents[1] / "python"
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as pocl:
        environment = dict(os.environ, PYTHONPATH=str(python_dir), NINETOOTHED_CACHE_DIR=ours, POCL_CACHE_DIR=pocl)
        script = pathlib.Path(ours).parent / f"ninetoothed_tuning_child_{os.getpid()}.py"
        script.write_text(CHILD)  # applications are read from their source file
        print("1024x1024 float32 matmul, three block_size() symbols; 'to result' includes interpreter start")
        print(f"{'run':<28}{'to result s':>12}{'make->result s':>16}{'builds':>8}{'timing runs':>13}")
        for label in ("cold caches (first process)", "warm caches (new process)"):
            total, child = run_child(environment, script)
            stats = child["stats"]
            print(
                f"{label:<28}{total:>12.2f}{child['make_to_result']:>16.2f}"
                f"{stats['program_builds']:>8}{stats['timing_runs']:>13}"
            )
        print(f"chosen configuration: {child['chosen']}")
        script.unlink()


if __name__ == "__main__":
    main()
