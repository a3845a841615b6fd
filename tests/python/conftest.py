"""Shared setup of the Python tests: import `ninetoothed` from this checkout."""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"

if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

# float32 dots multiply in float unless a test asks for TF32: the suite checks them against float64 at
# float's precision on every device. (Users get Triton's default, TF32 where the device has tensor
# cores; tests/python/test_cuda_tensor_cores.py checks that default and TF32 themselves.)
os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")
# Tuning on PoCL starts no helper processes (cpp/driver/compile_ahead.cpp) unless a test asks for them
# (tests/python/test_tuning_helpers.py): the suite's processes already take the machine's cores.
os.environ.setdefault("NINETOOTHED_TUNING_HELPERS", "0")


def _sigaction(signum, new=None):
    """The C-level action of `signum` (raw struct sigaction bytes), after installing `new` if given."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    old = ctypes.create_string_buffer(512)  # larger than any struct sigaction
    if libc.sigaction(signum, new, old) != 0:
        raise OSError(ctypes.get_errno(), "sigaction")
    return old


def pytest_runtest_setup(item):
    """Re-arms faulthandler before every test.

    PoCL compiles kernels with LLVM, which installs its own SIGABRT/SIGSEGV handlers over
    faulthandler's: a crash would then end the run without naming the test or printing a
    traceback. (enable() alone keeps handlers it believes installed, hence disable() first.)
    SIGFPE keeps its handler: PoCL's skips an integer division by zero in a kernel (OpenCL leaves
    its result undefined), which a padding lane may do.
    """
    import faulthandler
    import signal

    import _pytest.faulthandler as plugin

    # pytest 7 keeps a file, pytest 8 a file descriptor (faulthandler takes either).
    key = getattr(plugin, "fault_handler_stderr_key", None) or getattr(plugin, "fault_handler_stderr_fd_key", None)
    stream = item.config.stash.get(key, None) if key is not None else None
    if stream is not None:
        fpe = _sigaction(signal.SIGFPE)
        faulthandler.disable()
        faulthandler.enable(file=stream, all_threads=True)
        _sigaction(signal.SIGFPE, fpe)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "host_tensors: checks what launches on host tensors do on OpenCL (copies to a discrete device, "
        "device times); not run with NINETOOTHED_TEST_DEVICE=cuda, where no launch copies or waits",
    )


# The files that take longest (mostly PoCL building kernels in a subprocess or in the work-group
# layout), slowest first. Test runs spread files over processes in the order collected
# (scripts/test.sh: pytest-xdist, --dist loadfile), so these start first, and no process is left
# with one of them when the others are done.
SLOWEST_FILES = (
    "test_program_layout.py",
    "test_stress.py",
    "test_kernels_dot.py",
    "test_kernels_attention.py",
    "test_mma_layout.py",
    "test_cuda_tensor_cores.py",
    "test_tuning.py",
    "test_local_memory_limits.py",
    "test_cuda_source.py",
    "test_aot.py",
    "test_ops_norms.py",
)


def pytest_collection_modifyitems(config, items):
    import pytest

    rank = {name: order for order, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as collected
    if os.environ.get("NINETOOTHED_TEST_DEVICE") != "cuda":
        return
    skip = pytest.mark.skip(reason="host tensors on OpenCL only (NINETOOTHED_TEST_DEVICE=cuda moves them to CUDA)")
    for item in items:
        if "host_tensors" in item.keywords:
            item.add_marker(skip)


# Tuning in the tests: a kernel made without max_num_configs times two candidates here, not twelve
# (and the num_warps variants where programs run on work-groups). Each candidate is a build, most of
# the suite's time on PoCL; the tests check the chosen configuration's results, and tuning itself,
# with the default cap, is tested by test_tuning.py's and layout_scripts/num_warps.py's processes,
# which this does not reach. (NINETOOTHED_TEST_MAX_NUM_CONFIGS does the same for the layout scripts.)
import ninetoothed._core  # noqa: E402

ninetoothed._core.set_default_max_num_configs_for_testing(2)


# The work-group pass on a CPU builds its kernels unoptimised (emulated_layouts.py says why).
from emulated_layouts import EMULATED_LAYOUT_OPTIONS, emulates_work_groups  # noqa: E402

if os.environ.get("NINETOOTHED_PROGRAM_LAYOUT") == "work-group" and emulates_work_groups():
    os.environ["NINETOOTHED_OPENCL_OPTIONS"] = EMULATED_LAYOUT_OPTIONS  # read at the first build


if os.environ.get("NINETOOTHED_TEST_DEVICE") == "cuda":
    # The kernel tests on CUDA tensors (scripts/gpu/): every kernel call's torch and numpy
    # arguments are moved to cuda:0 as they are (each tensor's whole storage, so views keep
    # their strides and offsets and arguments that share memory still do), the kernel runs on
    # the CUDA target, and what it wrote is copied back. Data and references are the tests' own.
    import ninetoothed.kernel

    _host_call = ninetoothed.kernel.Kernel.__call__

    def _on_cuda(arg, storages):
        import numpy
        import torch

        if isinstance(arg, numpy.ndarray):
            arg = torch.from_numpy(arg)
        if not isinstance(arg, torch.Tensor) or arg.device.type != "cpu" or arg.dim() == 0:
            return arg
        storage = arg.untyped_storage()
        key = storage.data_ptr()
        if key not in storages:
            whole = torch.empty(0, dtype=torch.uint8).set_(storage)
            storages[key] = (whole, whole.to("cuda"))
        device_bytes = storages[key][1]
        view = torch.empty(0, dtype=arg.dtype, device="cuda").set_(
            device_bytes.untyped_storage(), arg.storage_offset(), arg.shape, arg.stride()
        )
        return view

    def _call_on_cuda(self, *args, **constexpr_values):
        storages = {}
        try:
            moved = [_on_cuda(a, storages) for a in args]
        except ValueError:
            # numpy arrays torch cannot view (negative strides, another byte order): the call
            # stays on the host, where the kernel takes or refuses them itself.
            return _host_call(self, *args, **constexpr_values)
        try:
            return _host_call(self, *moved, **constexpr_values)
        finally:
            for host, device in storages.values():
                host.copy_(device.cpu())

    ninetoothed.kernel.Kernel.__call__ = _call_on_cuda


if os.environ.get("NINETOOTHED_CHECK_CUDA_SOURCES"):
    # On a machine without a GPU: after every kernel call, the CUDA C of the same kernel is
    # generated and compiled by NVRTC (when it can be loaded) for a Hopper GPU with the call's own
    # configuration, on 4 warps, with and without tensor cores; an error fails the test.
    import re

    import ninetoothed.kernel
    from ninetoothed import _core

    _checked_call = ninetoothed.kernel.Kernel.__call__
    _compiled_sources = set()

    def _call_and_check_cuda(self, *args, **constexpr_values):
        result = _checked_call(self, *args, **constexpr_values)
        compiled = self._binder.last
        source = compiled.cuda_source
        options = re.sub(r"-cl-mad-enable|-DNT_VECTOR_BYTES=\S+|-DNT_WORK_ITEMS=\S+|-DNT_MMA_\S+", "", compiled.last_options)
        if "-DNT_RUNTIME_META" in options:  # a CPU's one build: the block sizes were arguments
            report = compiled.tuning_report()
            config = {**(report[-1]["chosen"] if report else {}), **(self._pinned or {})}
            options = options.replace("-DNT_RUNTIME_META", "") + "".join(
                f" -D{name}={value}" for name, value in config.items() if name not in ("num_warps", "num_stages"))
        if _core.nvrtc_available():
            for extra in (" -DNT_WORK_ITEMS=128", " -DNT_WORK_ITEMS=128 -DNT_MMA_LAYOUT -DNT_MMA_SYNC"):
                if (source, options + extra) not in _compiled_sources:
                    _core.compile_cuda(source, options + extra, "sm_90a")
                    _compiled_sources.add((source, options + extra))
        return result

    ninetoothed.kernel.Kernel.__call__ = _call_and_check_cuda
