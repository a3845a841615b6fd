"""First calls on CUDA tensors: how long a new kernel's first call takes with a cold cache (NVRTC
compiles every configuration tuning times), and in a new process with the disk cache warm (cubins
and the tuned choice read back), per configuration compiled.

Run on a machine with an NVIDIA GPU: python3 benchmarks/gpu_first_call.py (each measurement in a
fresh process with its own NINETOOTHED_CACHE_DIR).
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

CHILD = r"""
import json, sys, time
sys.path.insert(0, {python!r})
start = time.perf_counter()
import torch
import ninetoothed
from ninetoothed import Tensor, _core


def arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def application(x, y, z):
    z = x + y  # noqa: F841


x = torch.randn(1 << 20, device="cuda")
y = torch.randn_like(x)
z = torch.empty_like(x)
torch.cuda.synchronize()
kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1)){keywords})
begin = time.perf_counter()
kernel(x, y, z)
torch.cuda.synchronize()
first = time.perf_counter() - begin
assert torch.equal(z, x + y)
print(json.dumps({{"first_call": first, "nvrtc_compiles": _core.num_nvrtc_compiles()}}))
"""


def measure(cache, keywords=""):
    script = os.path.join(cache, "first_call.py")  # kernels are traced from their source file
    with open(script, "w") as file:
        file.write(CHILD.format(python=os.path.join(ROOT, "python"), keywords=keywords))
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=os.path.join(cache, "cache"))
    result = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    print("| kernel | cache | first call (s) | NVRTC compiles | per configuration (s) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for label, keywords in (("add, tuned (block sizes and warps)", ""), ("add, one configuration", ", max_num_configs=1")):
        with tempfile.TemporaryDirectory() as cache:
            cold = measure(cache, keywords)
            warm = measure(cache, keywords)
        for name, row in (("cold", cold), ("warm disk cache", warm)):
            per = row["first_call"] / max(row["nvrtc_compiles"], 1) if row["nvrtc_compiles"] else float("nan")
            print(f"| {label} | {name} | {row['first_call']:.3f} | {row['nvrtc_compiles']} | {per:.3f} |")


if __name__ == "__main__":
    main()
