"""Auto-tuning and the persistent caches, each case in fresh processes with its own cache directory."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[2] / "python"

KERNELS = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    import ninetoothed
    import ninetoothed.language as ntl
    from ninetoothed import Tensor

    def add_arrangement(x, y, z, BLOCK=ninetoothed.block_size()):
        return x.tile((BLOCK,)), y.tile((BLOCK,)), z.tile((BLOCK,))

    def add_application(x, y, z):
        z = x + y

    BM, BN, BK = ninetoothed.block_size(), ninetoothed.block_size(), ninetoothed.block_size()

    def matmul_arrangement(a, b, c):
        c_arranged = c.tile((BM, BN))
        a_arranged = a.tile((BM, BK)).tile((1, -1)).expand((-1, c_arranged.shape[1]))
        a_arranged.dtype = a_arranged.dtype.squeeze(0)
        b_arranged = b.tile((BK, BN)).tile((-1, 1)).expand((c_arranged.shape[0], -1))
        b_arranged.dtype = b_arranged.dtype.squeeze(1)
        return a_arranged, b_arranged, c_arranged

    def matmul_application(a, b, c):
        accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
        for k in range(a.shape[0]):
            accumulator += ntl.dot(a[k], b[k])
        c = accumulator

    def sum_arrangement(x, out, BLOCK=ninetoothed.block_size()):
        x_arranged = x.tile((BLOCK,))
        return x_arranged, out.tile((1,)).expand((x_arranged.shape[0],))

    def sum_application(x, out):
        ntl.atomic_add(out.source.data_ptr(), ntl.sum(x))

    MAX = int(sys.argv[1]) if len(sys.argv) > 1 else None
    add = ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)), max_num_configs=MAX)
    matmul = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)), max_num_configs=MAX or 4)
    total = ninetoothed.make(sum_arrangement, sum_application, (Tensor(1), Tensor(1)), max_num_configs=MAX)

    torch.manual_seed(0)
    x, y = torch.randn(100_003), torch.randn(100_003)
    z = torch.full_like(x, float("nan"))
    a, b = torch.randn(130, 70), torch.randn(70, 90)
    c = torch.full((130, 90), float("nan"))
    ints = torch.randint(-100, 100, (50_001,), dtype=torch.int64)
    out = torch.zeros(1, dtype=torch.int64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        add(x, y, z)
        matmul(a, b, c)
        total(ints, out)
    result = {
        "add_ok": bool(torch.equal(z, x + y)),
        "matmul_ok": bool(torch.allclose(c, a @ b, rtol=1e-4, atol=1e-4)),
        "sum_ok": int(out.item()) == int(ints.sum().item()),
        "reports": {name: k.tuning_report() for name, k in (("add", add), ("matmul", matmul), ("sum", total))},
        "stats": ninetoothed._core.cache_stats(),
        "warnings": [str(w.message) for w in caught],
    }
    print(json.dumps(result))
    """
)


def run(cache_dir, *args, **environ):
    environment = dict(os.environ, NINETOOTHED_CACHE_DIR=str(cache_dir), PYTHONPATH=str(PYTHON_DIR), **environ)
    with tempfile.TemporaryDirectory() as directory:
        script = pathlib.Path(directory) / "tuned_kernels.py"  # applications need a source file
        script.write_text(KERNELS)
        completed = subprocess.run(
            [sys.executable, str(script), *args], env=environment, capture_output=True, text=True, timeout=600
        )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def assert_correct(result):
    assert result["add_ok"] and result["matmul_ok"] and result["sum_ok"]


def files_under(directory):
    """The files under `directory`, but PoCL's temporary ones."""
    return sorted(str(f) for f in directory.rglob("*") if f.is_file() and not f.name.startswith("tempfile"))


@pytest.mark.parametrize("pocl_kernel_cache", ("1", "0"))
def test_tuning_chooses_the_fastest_candidate_and_a_second_process_reuses_everything(tmp_path, pocl_kernel_cache):
    # On PoCL, built kernels are kept between processes by PoCL's own cache (here one of this test's),
    # not as binaries in ours, unless POCL_KERNEL_CACHE=0 turns it off (cpp/runtime/program.cpp).
    pocl_cache = tmp_path / "pocl"
    environ = dict(POCL_CACHE_DIR=str(pocl_cache), POCL_KERNEL_CACHE=pocl_kernel_cache)
    ours = tmp_path / "ours"
    first = run(ours, **environ)
    assert_correct(first)  # the atomic sum is exact: tuning ran on scratch copies
    for name, report in first["reports"].items():
        (record,) = report
        assert not record["from_disk"]
        times = {json.dumps(config, sort_keys=True): seconds for config, seconds in record["candidates"]}
        chosen = json.dumps(record["chosen"], sort_keys=True)
        assert chosen in times, name
        assert times[chosen] == min(times.values()), name
    assert first["stats"]["timing_runs"] > 0
    assert first["stats"]["program_builds"] > 0
    import ninetoothed

    binaries = not ninetoothed._core.current_device()["is_pocl"] or pocl_kernel_cache == "0"
    kept = [f for f in (ours / "programs").iterdir() if "." not in f.name] if (ours / "programs").exists() else []
    if binaries:
        # Only the chosen candidates' binaries go to disk (on PoCL, reading one compiles once more).
        candidates = sum(len(r[0]["candidates"]) for r in first["reports"].values())
        assert len(kept) == len(first["reports"]) < candidates
    else:
        assert kept == []
        # PoCL with its cache: one program in it per build of ours, nothing else compiled (the
        # device's host-memory probe fills a buffer, no kernel).
        assert len(list(pocl_cache.rglob("program.bc"))) == first["stats"]["program_builds"]
    compiled = files_under(pocl_cache)

    second = run(ours, **environ)
    assert_correct(second)
    if binaries:
        assert second["stats"]["program_builds"] == 0  # binaries came from the cache
        assert second["stats"]["program_binary_loads"] > 0
    else:
        assert second["stats"]["program_binary_loads"] == 0
        assert files_under(pocl_cache) == compiled  # PoCL's cache had every kernel: nothing compiled anew
    assert second["stats"]["timing_runs"] == 0
    for name, report in second["reports"].items():
        (record,) = report
        assert record["from_disk"], name
        assert record["chosen"] == first["reports"][name][0]["chosen"], name


def test_max_num_configs_caps_the_candidates(tmp_path):
    result = run(tmp_path, "3")
    assert_correct(result)
    for report in result["reports"].values():
        assert 1 <= len(report[0]["candidates"]) <= 3


def test_corrupt_cache_entries_are_survived(tmp_path):
    # Without PoCL's kernel cache, ours keeps the program binaries on every device, and so has them
    # corrupted here too.
    run(tmp_path, POCL_KERNEL_CACHE="0")
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert any(f.parent.name == "programs" for f in files)
    for i, f in enumerate(files):
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2] if i % 2 else b"garbage" + data[7:])
    result = run(tmp_path, POCL_KERNEL_CACHE="0")
    assert_correct(result)
    assert result["stats"]["program_builds"] > 0  # rebuilt what could not be read
    third = run(tmp_path, POCL_KERNEL_CACHE="0")  # and the rewritten entries are good again
    assert third["stats"]["program_builds"] == 0 and third["stats"]["timing_runs"] == 0


def test_unwritable_cache_directory_degrades_to_memory_with_a_warning(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would be")
    result = run(blocker / "cache")
    assert_correct(result)
    assert any("memory only" in w for w in result["warnings"])


def test_pinned_configuration_skips_tuning():
    import torch

    import ninetoothed
    from ninetoothed import Tensor

    def arrangement(x, y, BLOCK=ninetoothed.block_size()):
        return x.tile((BLOCK,)), y.tile((BLOCK,))

    def application(x, y):
        y = x * 3  # noqa: F841

    kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)))
    (name,) = kernel._last.meta_symbols
    kernel.pin({name: 64})
    before = ninetoothed._core.cache_stats()["timing_runs"]
    x = torch.randn(1001)
    y = torch.full_like(x, float("nan"))
    kernel(x, y)
    assert torch.equal(y, x * 3)
    assert ninetoothed._core.cache_stats()["timing_runs"] == before
    assert kernel.tuning_report() == []


ONE_BUILD = textwrap.dedent(
    """
    import json
    import torch
    import ninetoothed
    from ninetoothed import Tensor

    def arrangement(x, y, z, BLOCK=ninetoothed.block_size()):
        return x.tile((BLOCK,)), y.tile((BLOCK,)), z.tile((BLOCK,))

    def application(x, y, z):
        z = x * 2 - y

    kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1)))
    x, y = torch.randn(77_777), torch.randn(77_777)
    z = torch.full_like(x, float("nan"))
    kernel(x, y, z)
    (report,) = kernel.tuning_report()
    print(json.dumps({"ok": bool(torch.equal(z, x * 2 - y)), "report": report,
                      "builds": ninetoothed._core.cache_stats()["program_builds"], "source": kernel.source,
                      "options": kernel._binder.last.last_options}))
    """
)


def test_an_elementwise_kernel_times_every_candidate_on_one_build(tmp_path):
    """On a CPU an element-wise kernel's block sizes may be kernel arguments (-DNT_RUNTIME_META):
    tuning times all its candidates on that one build, and the launches run on it too. The
    candidates and the choice are reported as before; PoCL's cache is off, so each build is one."""
    import ninetoothed

    script = tmp_path / "one_build.py"
    script.write_text(ONE_BUILD)
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path / "ours"), POCL_CACHE_DIR=str(tmp_path / "pocl"),
               POCL_KERNEL_CACHE="0", PYTHONPATH=str(PYTHON_DIR))
    completed = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["ok"]
    work_groups = os.environ.get("NINETOOTHED_PROGRAM_LAYOUT") == "work-group"  # warps are tuned too
    times = [seconds for _, seconds in result["report"]["candidates"]]
    assert len(times) >= 6 if work_groups else len(times) == 6
    assert all(0 < t < float("inf") for t in times)
    chosen = [config for config, seconds in result["report"]["candidates"] if seconds == min(times)]
    assert result["report"]["chosen"] in chosen
    assert "#ifdef NT_RUNTIME_META" in result["source"]
    if ninetoothed._core.current_device()["is_cpu"] and not work_groups:
        assert result["builds"] == 1  # the one all candidates and the launch ran on
        assert result["report"]["one_build"] and "-DNT_RUNTIME_META" in result["options"]
    else:  # a GPU, or the work-group layout forced: a build per candidate, as before
        assert result["builds"] >= 6
        assert not result["report"]["one_build"] and "-DNT_RUNTIME_META" not in result["options"]


PROGRESS = textwrap.dedent('''
    import torch
    import ninetoothed
    from ninetoothed import Tensor

    def arrangement(x, y, BM=ninetoothed.block_size(8, 64), BN=ninetoothed.block_size(8, 64)):
        return x.tile((BM, BN)), y.tile((BM, BN))

    def scale_and_shift(x, y):
        y = x * 3 + 1  # noqa: F841

    kernel = ninetoothed.make(arrangement, scale_and_shift, (Tensor(2), Tensor(2)), max_num_configs=5)
    x = torch.randn(67, 93)
    y = torch.full_like(x, float("nan"))
    kernel(x, y)
    assert torch.allclose(y, x * 3 + 1, rtol=1e-6, atol=1e-6)
    print(len(kernel.tuning_report()[-1]["candidates"]))
''')


@pytest.mark.parametrize("every", ("0", "3600", "soon"))
def test_long_tuning_says_how_far_it_is(tmp_path, every):
    """Tuning that runs longer than NINETOOTHED_PROGRESS_SECONDS (default 5) says on stderr, that often,
    how many candidates it has built and timed and the fastest time so far; short tuning says
    nothing (0: a line after every step, as a long tuning on a GPU gives every few seconds; a value
    that is no number of seconds: the default)."""
    script = tmp_path / "progress.py"
    script.write_text(PROGRESS)
    env = dict(os.environ, NINETOOTHED_CACHE_DIR=str(tmp_path / "ours"), PYTHONPATH=str(PYTHON_DIR))
    env["NINETOOTHED_PROGRESS_SECONDS"] = every
    completed = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    timed = int(completed.stdout.strip().splitlines()[-1])
    lines = [line for line in completed.stderr.splitlines() if line.startswith("[ninetoothed] tuning ")]
    if every == "3600":
        assert lines == []  # well under an hour
        return
    if every == "soon":  # the default, every 5 s: not a line a step (a loaded machine may give one)
        assert len(lines) < timed
        return
    assert all(line.startswith("[ninetoothed] tuning scale_and_shift: ") for line in lines)
    last = lines[-1]
    assert f", {timed} timed, " in last and "; fastest " in last and last.endswith(" ms")
