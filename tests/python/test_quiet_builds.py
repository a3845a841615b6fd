"""Builds are quiet: the generated OpenCL compiles without warnings, and a build's log reaches stderr
only when the build fails or NINETOOTHED_DEBUG asks for it.

Each case runs in a fresh process with empty caches (ours and PoCL's), so that the compiler runs
and whatever it prints is seen.
"""

import os
import subprocess
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK = ninetoothed.Symbol("BLOCK", constexpr=True)


def arrangement(x, divisor, remainder, quotient):
    return x.tile((BLOCK,)), divisor, remainder.tile((BLOCK,)), quotient.tile((BLOCK,))


def by_literals(x, divisor, remainder, quotient):
    remainder = (x * 7 + 3) % 16  # noqa: F841
    quotient = (x * 5) // ntl.full((BLOCK,), 8, ntl.int32)  # noqa: F841


def by_a_scalar(x, divisor, remainder, quotient):
    remainder = x % divisor  # noqa: F841
    quotient = x // divisor  # noqa: F841


def make(application):
    tensors = (Tensor(1, dtype=ninetoothed.int32), Tensor(0, dtype=ninetoothed.int32),
               Tensor(1, dtype=ninetoothed.int32), Tensor(1, dtype=ninetoothed.int32))
    return ninetoothed.make(arrangement, application, tensors)


def test_literal_divisors_need_no_guard():
    source = make(by_literals).source
    assert "== -1" not in source.split("__kernel")[-1]
    # A divisor known only at run time keeps its guards against 0 and -1.
    assert "== -1" in make(by_a_scalar).source.split("__kernel")[-1]


@pytest.mark.host_tensors
def test_results_of_both_forms():
    x = torch.randint(-1000, 1000, (1001,), dtype=torch.int32)
    for application, divisor in ((by_literals, 3), (by_a_scalar, -7), (by_a_scalar, 0), (by_a_scalar, -1)):
        remainder, quotient = torch.full_like(x, -99), torch.full_like(x, -99)
        make(application)(x, divisor, remainder, quotient, BLOCK=128)
        if application is by_literals:
            r, q = x * 7 + 3, x * 5
            expected_r = torch.fmod(r, 16)  # C's %: the dividend's sign, as Triton's
            expected_q = torch.div(q, 8, rounding_mode="trunc")
        elif divisor == 0:  # Triton's C semantics as this project defines them: x % 0 = 0, x // 0 = x
            expected_r, expected_q = torch.zeros_like(x), x
        else:
            expected_r = torch.fmod(x, divisor)
            expected_q = torch.div(x, divisor, rounding_mode="trunc")
        assert torch.equal(remainder, expected_r), (application.__name__, divisor)
        assert torch.equal(quotient, expected_q), (application.__name__, divisor)


_SCRIPT = r"""
import sys
sys.path.insert(0, {tests!r})
import torch
import test_quiet_builds as t
x = torch.arange(-500, 501, dtype=torch.int32)
for application in (t.by_literals, t.by_a_scalar):
    r, q = torch.empty_like(x), torch.empty_like(x)
    t.make(application)(x, 3, r, q, BLOCK=64)
# A constexpr index in the arrangement: its bounds checks are constants at build time.
sys.path.insert(0, {tests!r} + "/ops")
from corpus import select_copy
y = torch.randn(5, 70)
assert torch.equal(select_copy.select_copy(y, 0, 2), y[2])
print("done")
"""


@pytest.mark.host_tensors
@pytest.mark.parametrize("debug", (None, "1"))
def test_a_build_prints_nothing(tmp_path, debug):
    script = tmp_path / "build.py"
    script.write_text(_SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NINETOOTHED_CACHE_DIR=str(tmp_path / "cache"),
               POCL_KERNEL_CACHE="0", POCL_CACHE_DIR=str(tmp_path / "pocl"))
    env.pop("NINETOOTHED_DEBUG", None)
    if debug:
        env["NINETOOTHED_DEBUG"] = debug
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("done")
    assert "warning" not in result.stderr.lower(), result.stderr
    assert "build log" not in result.stderr, result.stderr
