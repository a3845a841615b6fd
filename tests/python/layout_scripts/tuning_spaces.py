"""Run with NINETOOTHED_PROGRAM_LAYOUT=work-group (and a cache of its own): num_warps given as candidates
is the space tuning chooses from, with or without meta symbols; the chosen program runs on its warps;
num_stages is recorded (its first candidate) in every configuration; max_num_configs caps the warps
too; a space that fits the cap is timed whole on every num_warps; pin() takes both. Prints what was timed, then 'ok'."""


import os

import _paths  # noqa: F401  (sys.path: the package, the examples, the tests)

import torch  # noqa: E402

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from test_device_memory import add_arrangement as fixed_add_arrangement  # noqa: E402  (no meta symbols)
from tutorial_kernels import add_arrangement, add_application  # noqa: E402  (BLOCK_SIZE tuned)

LARGEST = ninetoothed._core.current_device()["max_work_group_size"]


def work_items(num_warps):
    return min(32 * num_warps, 1 << (LARGEST.bit_length() - 1))


def tensors():
    return (Tensor(1), Tensor(1), Tensor(1))


def check(kernel, **constexprs):
    for dtype in (torch.float32, torch.float16):
        x, y = torch.randn(3001).to(dtype), torch.randn(3001).to(dtype)
        z = torch.full_like(x, float("nan"))
        kernel(x, y, z, **constexprs)
        assert torch.equal(z, x + y), dtype
    records = kernel.tuning_report()
    record = records[-1]
    warps = sorted({config["num_warps"] for config, _ in record["candidates"]})
    stages = sorted({config["num_stages"] for config, _ in record["candidates"] if "num_stages" in config})
    chosen = record["chosen"]
    assert kernel._binder.last.last_work_items == work_items(chosen["num_warps"]), record
    return warps, stages, chosen, len(record["candidates"])


def small_space_arrangement(x, y, z):
    block = ninetoothed.block_size(lower_bound=256, upper_bound=1024)
    return x.tile((block,)), y.tile((block,)), z.tile((block,))


def main():
    tuned = ninetoothed.make(add_arrangement, add_application, tensors(), num_warps=(2, 8), num_stages=(1, 3))
    warps, stages, chosen, _ = check(tuned)
    (block_size,) = set(chosen) - {"num_warps", "num_stages"}  # the meta symbol of ninetoothed.block_size()
    assert chosen["num_stages"] == 1 and block_size.startswith("ninetoothed_BLOCK_SIZE"), chosen
    print("tuned", *warps, "stages", *stages)

    fixed = ninetoothed.make(fixed_add_arrangement, add_application, tensors(), num_warps=[1, 4])
    warps, stages, chosen, _ = check(fixed, BLOCK=256)
    assert set(chosen) == {"num_warps"}, chosen
    print("fixed blocks", *warps)

    # Three block sizes on two num_warps fit the default cap: every one is timed on each, though the
    # walk to neighbours (asked for here, as on GPUs) may time one on twice the warps first.
    small = ninetoothed.make(small_space_arrangement, add_application, tensors(), num_warps=(4, 8))
    os.environ["NINETOOTHED_TUNE_NEIGHBOURS"] = "1"
    warps, _, chosen, count = check(small)
    del os.environ["NINETOOTHED_TUNE_NEIGHBOURS"]
    print("small", *warps, count)

    capped = ninetoothed.make(add_arrangement, add_application, tensors(), num_warps=(8, 2), max_num_configs=1)
    warps, _, chosen, count = check(capped)
    print("capped", *warps, count)

    tuned.pin({block_size: 512, "num_warps": 8, "num_stages": 3})
    x, y = torch.randn(1001), torch.randn(1001)
    z = torch.full_like(x, float("nan"))
    tuned(x, y, z)
    assert torch.equal(z, x + y) and tuned._binder.last.last_work_items == work_items(8)
    print("ok")


main()
