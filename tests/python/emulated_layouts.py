"""The layouts a CPU runs only when a test forces them, and how the tests build them.

On a CPU, programs on work-groups (NINETOOTHED_PROGRAM_LAYOUT=work-group, and the mma layout under
it) only emulate what GPUs run: a CPU's programs are work-items unless a test forces the layout.
Such builds are made with -cl-opt-disable in the tests (NINETOOTHED_OPENCL_OPTIONS, part of the
caches' keys): they check the generated code's semantics, PoCL's optimiser is not what a GPU runs,
and it takes four to five times longer on these sources. Kernels in the layout CPUs run are built as
users' are. Set NINETOOTHED_OPENCL_OPTIONS yourself (empty, say) to test them optimised.

conftest.py applies this to the test processes of the work-group pass (scripts/test.sh);
work_group_environment() to the subprocesses that tests start with the layout forced. (A module of
its own: layout scripts import test modules, and must not import conftest's settings with them.)
"""

import os

import ninetoothed._core

EMULATED_LAYOUT_OPTIONS = "-cl-opt-disable"


def emulates_work_groups():
    """Whether this device runs programs on work-groups only when a test forces it (a CPU), and no
    OpenCL options are chosen already."""
    return ninetoothed._core.current_device()["is_cpu"] and "NINETOOTHED_OPENCL_OPTIONS" not in os.environ


def work_group_environment(**extra):
    """The environment of a subprocess that forces programs onto work-groups (see above)."""
    env = dict(os.environ, NINETOOTHED_PROGRAM_LAYOUT="work-group", **extra)
    if emulates_work_groups():
        env["NINETOOTHED_OPENCL_OPTIONS"] = EMULATED_LAYOUT_OPTIONS
    return env
