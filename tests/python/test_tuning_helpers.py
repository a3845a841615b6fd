"""Tuning's helper processes on PoCL (cpp/runtime/launch_replay.h, cpp/driver/compile_ahead.cpp):
they compile candidates into PoCL's kernel cache beside the tuning process, which then finds them
there. Each case runs the kernels of test_tuning.py in fresh processes with caches of its own, and
sets NINETOOTHED_TUNING_HELPERS itself (conftest.py turns helpers off for the rest of the suite)."""

import json

import pytest
from test_tuning import assert_correct, files_under, run

import ninetoothed

pytestmark = pytest.mark.skipif(
    not ninetoothed._core.current_device()["is_pocl"], reason="helpers compile for PoCL's kernel cache"
)

CANDIDATES = "6"  # the matmul's and the sum's: enough for helpers (tune::kHelpedCandidates)


def compiled(pocl_cache):
    """What PoCL compiled: the programs' and work-group functions' files, by their hashes' names
    (each program's last_accessed stamp left out)."""
    return sorted(
        str(f.relative_to(pocl_cache)) for f in map(pocl_cache.joinpath, files_under(pocl_cache))
        if f.name != "last_accessed"
    )


def by_helpers(result, field="compiled_by_helpers"):
    return {name: report[0][field] for name, report in result["reports"].items()}


def test_helpers_compile_exactly_what_tuning_runs(tmp_path):
    """With a helper that takes every candidate of the matmul (NINETOOTHED_TUNING_HELPERS_ONLY: the
    tuning process claims none itself), results are exact (the sum is an atomic one: nothing ran on
    the caller's tensors but the chosen launch), the fastest candidate is chosen, and PoCL's cache
    holds the very files that tuning alone compiles: the helper replayed the tuning process's
    launches (source, options, work-group sizes), nothing else."""
    alone = run(tmp_path / "ours-alone", CANDIDATES, POCL_CACHE_DIR=str(tmp_path / "pocl-alone"),
                NINETOOTHED_TUNING_HELPERS="0")
    helped = run(tmp_path / "ours-helped", CANDIDATES, POCL_CACHE_DIR=str(tmp_path / "pocl-helped"),
                 NINETOOTHED_TUNING_HELPERS="1", NINETOOTHED_TUNING_HELPERS_ONLY="1")
    assert_correct(alone)
    assert_correct(helped)
    assert set(by_helpers(alone).values()) == {0}
    assert set(by_helpers(alone, "helpers_started").values()) == {0}
    helpers = by_helpers(helped)
    assert helpers["add"] == 0  # one build for all its candidates: nothing to share out
    assert helpers["matmul"] == len(helped["reports"]["matmul"][0]["candidates"])
    assert by_helpers(helped, "helpers_started")["matmul"] == 1
    assert by_helpers(helped, "helpers_failed")["matmul"] == 0
    for name, report in helped["reports"].items():
        (record,) = report
        times = {json.dumps(config, sort_keys=True): seconds for config, seconds in record["candidates"]}
        assert times[json.dumps(record["chosen"], sort_keys=True)] == min(times.values()), name
    assert compiled(tmp_path / "pocl-helped") == compiled(tmp_path / "pocl-alone")
    # Every program in PoCL's cache is one this process built (from the cache where a helper had).
    assert len(list((tmp_path / "pocl-helped").rglob("program.bc"))) == helped["stats"]["program_builds"]


@pytest.mark.parametrize("helper", ("/bin/false", "/nonexistent/helper"))
def test_tuning_does_everything_itself_where_helpers_fail(tmp_path, helper):
    """A helper that ends at once, or that cannot be started: the tuning process compiles every
    candidate itself, with the same results."""
    result = run(tmp_path / "ours", CANDIDATES, POCL_CACHE_DIR=str(tmp_path / "pocl"),
                 NINETOOTHED_TUNING_HELPERS="1", NINETOOTHED_TUNING_HELPER=helper)
    assert_correct(result)
    assert set(by_helpers(result).values()) == {0}
    assert by_helpers(result, "helpers_failed")["matmul"] == 1  # did not start, or ended with status 1
    assert len(result["reports"]["matmul"][0]["candidates"]) == int(CANDIDATES)
    assert all(seconds != float("inf") for _, seconds in result["reports"]["matmul"][0]["candidates"])


def test_no_helpers_without_pocls_kernel_cache(tmp_path):
    """POCL_KERNEL_CACHE=0: what a helper compiled would reach no other process."""
    result = run(tmp_path / "ours", CANDIDATES, POCL_CACHE_DIR=str(tmp_path / "pocl"), POCL_KERNEL_CACHE="0",
                 NINETOOTHED_TUNING_HELPERS="1")
    assert_correct(result)
    assert set(by_helpers(result).values()) == {0}
