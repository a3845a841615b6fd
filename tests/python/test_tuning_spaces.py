"""`num_warps` and `num_stages` as tuning spaces, as upstream's tests write them (issue 26, item 2).

`make`, `jit` and `build` take an int or a tuple/list of candidates for each (upstream's
test_generation: `num_warps=(4, 8)`, `num_stages=(1, 3)`). Tuning chooses among the num_warps
candidates where programs run on work-groups (GPUs; here in the work-group layout, by
layout_scripts/tuning_spaces.py); on a CPU a program is one work-item and the first candidate is
used. num_stages changes no code here: the first candidate is recorded in every configuration.
`pin()` and `tuning_report()` show both.
"""

import functools
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from emulated_layouts import work_group_environment
from ninetoothed import Tensor

SCRIPTS = pathlib.Path(__file__).resolve().parent / "layout_scripts"


def warps_are_timed():
    """Do programs run on work-groups here (a GPU, the work-group layout forced, CUDA tensors)?"""
    return os.environ.get("NINETOOTHED_TEST_DEVICE") == "cuda" or ninetoothed._core.program_work_items(8) > 1


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype)


def matmul_arrangement(input, other, output, BLOCK_SIZE_M=None, BLOCK_SIZE_N=None, BLOCK_SIZE_K=None):
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


def matmul_kernel(block_sizes, **keywords):
    block_size_m, block_size_n, block_size_k = block_sizes
    arrangement = functools.partial(
        matmul_arrangement, BLOCK_SIZE_M=block_size_m, BLOCK_SIZE_N=block_size_n, BLOCK_SIZE_K=block_size_k
    )
    return ninetoothed.make(arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)), **keywords)


def check_matmul(kernel, dtype, m=67, k=45, n=93):
    lhs, rhs = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    output = poisoned((m, n), dtype)
    kernel(lhs, rhs, output)
    expected = (lhs.double() @ rhs.double()).to(dtype).double()
    tolerance = 2e-3 if dtype == torch.float16 else 1e-5
    assert torch.allclose(output.double(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("num_stages", (None, 3, (1, 3)))
@pytest.mark.parametrize("num_warps", (None, 4, (4, 8)))
@pytest.mark.parametrize("block_size", (ninetoothed.block_size, lambda: 16))
def test_upstreams_auto_tuning_generation(block_size, num_warps, num_stages):
    # Upstream's test_auto_tuning_generation, at run time: every combination launches correctly,
    # and the configurations say num_warps and num_stages where they were given.
    kernel = matmul_kernel(
        (block_size(), block_size(), block_size()), num_warps=num_warps, num_stages=num_stages, max_num_configs=2
    )
    assert kernel.num_warps == num_warps and kernel.num_stages == num_stages
    for dtype in (torch.float32, torch.float16):
        check_matmul(kernel, dtype)
    records = kernel.tuning_report()
    if not records:  # nothing chosen per launch: block sizes given, num_warps and num_stages not candidates
        assert not isinstance(num_warps, tuple) and num_stages is None
        return
    for record in records:
        for config in [record["chosen"]] + [config for config, _ in record["candidates"]]:
            assert ("num_stages" in config) == (num_stages is not None), config
            if num_stages is not None:
                assert config["num_stages"] == (num_stages[0] if isinstance(num_stages, tuple) else num_stages)
            if isinstance(num_warps, tuple):
                assert config["num_warps"] in num_warps, config
                if not warps_are_timed():  # on a CPU a program is one work-item: the first candidate
                    assert config["num_warps"] == num_warps[0], config
            else:
                assert "num_warps" not in config, config


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_jit_takes_lists_and_generators_of_candidates(dtype):
    block = ninetoothed.block_size()

    @ninetoothed.jit(num_warps=[2, 4, 2], num_stages=(s for s in (2, 3)))
    def add(x: Tensor(1).tile((block,)), y: Tensor(1).tile((block,)), z: Tensor(1).tile((block,))):
        z = x + y  # noqa: F841

    assert add.num_warps == (2, 4) and add.num_stages == (2, 3)  # read once, repeats dropped
    for size in (1, 1000, 4097):
        x, y = torch.randn(size).to(dtype), torch.randn(size).to(dtype)
        z = poisoned((size,), dtype)
        add(x, y, z)
        assert torch.equal(z, x + y)
    (record,) = add.tuning_report()[:1]
    assert record["chosen"]["num_warps"] in (2, 4) and record["chosen"]["num_stages"] == 2
    if not warps_are_timed():
        assert record["chosen"]["num_warps"] == 2


def test_pin_takes_num_warps_and_num_stages():
    kernel = matmul_kernel((ninetoothed.block_size(),) * 3, num_warps=(4, 8), num_stages=(1, 3), max_num_configs=2)
    check_matmul(kernel, torch.float32)
    chosen = kernel.tuning_report()[0]["chosen"]
    for warps, stages in ((8, 3), (4, 1), (2, 5)):
        kernel.pin(dict(chosen, num_warps=warps, num_stages=stages))
        check_matmul(kernel, torch.float32, m=33, k=17, n=129)
    meta = {name: value for name, value in chosen.items() if name not in ("num_warps", "num_stages")}
    kernel.pin(meta)  # without them: the first candidates
    check_matmul(kernel, torch.float16)
    for bad in ({"num_stages": 0}, {"num_warps": 0}):
        kernel.pin(dict(meta, **bad))
        with pytest.raises(ValueError, match=next(iter(bad))):
            check_matmul(kernel, torch.float32)


@pytest.mark.parametrize("keyword", ("num_warps", "num_stages"))
@pytest.mark.parametrize("value", ((), (0,), (4, "8"), (4, 2.5), [True], "48", {4: 8}))
def test_candidates_of_the_wrong_kind_are_value_errors(keyword, value):
    with pytest.raises(ValueError, match=keyword):
        matmul_kernel((16, 16, 16), **{keyword: value})


def test_tuning_chooses_among_num_warps_where_programs_run_on_work_groups(tmp_path):
    # layout_scripts/tuning_spaces.py, with the work-group layout forced and a cache of its own.
    env = work_group_environment(NINETOOTHED_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, str(SCRIPTS / "tuning_spaces.py")], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    # Block sizes on the first warps, the fastest again on the others; without meta symbols, the
    # warps alone; a space that fits the cap on every warps, all of it on each; max_num_configs=1:
    # the first only.
    assert result.stdout.split("\n")[:-1] == ["tuned 2 8 stages 1", "fixed blocks 1 4", "small 4 8 6", "capped 8 1",
                                              "ok"]


def add_arrangement(x, y, z, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    return x.tile((block_size,)), y.tile((block_size,)), z.tile((block_size,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


def add_premake(dtype=None, block_size=None):
    arrangement = functools.partial(add_arrangement, block_size=block_size)
    tensors = tuple(Tensor(1, dtype=dtype) for _ in range(3))
    return arrangement, add_application, tensors


def test_an_ahead_of_time_kernel_takes_one_num_warps(tmp_path):
    with pytest.raises(ValueError, match="one num_warps"):
        ninetoothed.make(*add_premake(ninetoothed.float32, 64), caller="opencl", kernel_name="aot_warps",
                         output_dir=tmp_path, num_warps=(4, 8))
    assert not (tmp_path / "aot_warps.so").exists()


def test_build_tunes_over_candidates_of_its_compilation_configs(tmp_path):
    configs = (
        ((), {"dtype": ninetoothed.float32, "block_size": 64}, {"num_warps": (2, 8), "num_stages": (1, 3)}),
        ((), {"dtype": ninetoothed.float16, "block_size": 128}, {"num_warps": [4]}),
    )
    kernel = ninetoothed.build(add_premake, configs, kernel_name="add_warps", output_dir=tmp_path)
    # One variant per candidate; num_warps and num_stages tuned at build time, not passed.
    assert len(kernel._variants) == 5
    for dtype, block_size in ((torch.float32, 64), (torch.float16, 128)):
        x, y = torch.randn(1001).to(dtype), torch.randn(1001).to(dtype)
        z = poisoned((1001,), dtype)
        kernel(x, y, z, getattr(ninetoothed, str(dtype).removeprefix("torch.")), block_size)
        assert torch.equal(z, x + y)


NEIGHBOURS_SCRIPT = '''
import json
import torch
import ninetoothed
from ninetoothed import Tensor

def arrangement(x, y, BM=ninetoothed.block_size(8, 64), BN=ninetoothed.block_size(8, 64)):
    return x.tile((BM, BN)), y.tile((BM, BN))

def application(x, y):
    y = x * 3 + 1  # noqa: F841

kernel = ninetoothed.make(arrangement, application, (Tensor(2), Tensor(2)))
x = torch.randn(67, 93)
y = torch.full_like(x, float("nan"))
kernel(x, y)
assert torch.allclose(y, x * 3 + 1, rtol=1e-6, atol=1e-6)
(record,) = kernel.tuning_report()
print(json.dumps(record["candidates"]))
'''


def replay_neighbour_rounds(candidates, sampled, neighbours_of):
    """Checks the neighbour rounds of a tuning report's `candidates` (after `sampled` samples): each
    round times the untimed neighbours_of(the fastest so far), and another follows where one of them
    won, three rounds at most. Returns where the rounds' candidates end."""
    configs = [tuple(sorted(config.items())) for config, _ in candidates]
    assert len(set(configs)) == len(configs)  # none timed twice

    def fastest(count):
        return configs[min(range(count), key=lambda i: candidates[i][1])]

    end, best, last, rounds = sampled, fastest(sampled), None, 0
    while rounds < 3 and best != last:
        last, rounds = best, rounds + 1
        expected = neighbours_of(dict(best)) - set(configs[:end])
        assert set(configs[end:end + len(expected)]) == expected, f"round {rounds}"
        end += len(expected)
        best = fastest(end)
    return end


def neighbours_of(best, warps_tuned):
    """What CompiledKernel::neighbours() gives for NEIGHBOURS_SCRIPT's kernel: each block size
    doubled or halved alone (8 to 64), a doubled one also on twice the warps where warps are tuned
    (half and twice the default 4, 2 and 8)."""
    warps = best.get("num_warps", 4)
    near = set()
    for name in best:
        if name == "num_warps":
            continue
        for value in (best[name] * 2, best[name] // 2):
            if 8 <= value <= 64:
                near.add(tuple(sorted({**best, name: value}.items())))
                if warps_tuned and value > best[name] and warps * 2 in (2, 8):
                    near.add(tuple(sorted({**best, name: value, "num_warps": warps * 2}.items())))
    return near


@pytest.mark.parametrize("asked", ("1", "0"))
def test_tuning_times_the_neighbours_of_the_fastest_sampled_candidate(tmp_path, asked):
    """Where the default cap leaves configurations untimed (16 here, 12 sampled), GPUs also time the
    untimed neighbours of the fastest sample: each block size doubled or halved alone, and again
    those of a neighbour that wins, three rounds at most. NINETOOTHED_TUNE_NEIGHBOURS=1 asks for it
    on this device, 0 on none. (Where programs run on work-groups, warps are tuned too: the
    fastest are timed again on other warps after these.)"""
    script = tmp_path / "neighbours.py"
    script.write_text(NEIGHBOURS_SCRIPT)
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path / "cache"), NINETOOTHED_TUNE_NEIGHBOURS=asked)
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    candidates = json.loads(result.stdout.strip().splitlines()[-1])
    warps_tuned = any("num_warps" in config for config, _ in candidates)
    end = 12
    if asked == "1":
        end = replay_neighbour_rounds(candidates, 12, lambda best: neighbours_of(best, warps_tuned))
    if warps_tuned:  # then the retimed ones, each on another number of warps
        assert all(config.get("num_warps") in (2, 8) for config, _ in candidates[end:])
    else:
        assert len(candidates) == end


def test_neighbours_include_a_doubled_block_on_twice_the_warps(tmp_path):
    """Where num_warps is tuned (programs on work-groups: forced here), a neighbour with a block size
    doubled is also timed on twice the sample's warps (its per-warp share kept): on Hopper the best
    float16 matmul tile, 128 x 256 x 64 on 8 warps, lies so next to 128 x 128 x 64 on 4."""
    script = tmp_path / "neighbours.py"
    script.write_text(NEIGHBOURS_SCRIPT)
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path / "cache"), NINETOOTHED_TUNE_NEIGHBOURS="1",
               NINETOOTHED_PROGRAM_LAYOUT="work-group", NINETOOTHED_OPENCL_OPTIONS="-cl-opt-disable")
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    candidates = json.loads(result.stdout.strip().splitlines()[-1])
    sampled = candidates[:12]
    assert all("num_warps" not in config for config, _ in sampled)  # on the default warps, 4
    replay_neighbour_rounds(candidates, 12, lambda best: neighbours_of(best, True))
