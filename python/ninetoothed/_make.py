"""`make` and `jit`: an arrangement and an application made into a kernel called from Python
(ninetoothed.kernel.Kernel), or built ahead of time into a C library (ninetoothed.aot).

Above both: kernel.py knows nothing of ahead-of-time libraries, and aot.py makes its kernels with
kernel.py's Kernel.
"""

import inspect

from ninetoothed._core import Tensor
from ninetoothed.kernel import Kernel, _launch_options, check_declared_dtypes


def make(
    arrangement,
    application,
    tensors,
    caller="torch",
    kernel_name=None,
    output_dir=None,
    num_warps=None,
    num_stages=None,
    max_num_configs=None,
):
    """Integrates an arrangement and an application into a kernel.

    `arrangement(*tensors)` gives the arranged tensors; `application`'s
    parameters match them by position. The keywords are upstream's:
    `kernel_name` names the kernel; `max_num_configs` caps the auto-tuning
    candidates; `num_warps` sets the work-items of a program where programs
    run on work-groups (GPUs): num_warps x 32, rounded down to a power of two
    (default 4, so 128); `num_stages` is kept on the kernel and recorded in
    tuned configurations (the generated code does not depend on it). Either
    may be a tuple or list of candidates: tuning chooses among num_warps'
    where programs run on work-groups (the first elsewhere). A `caller`
    other than "torch" ("opencl", "cuda") builds the kernel ahead of time into a C
    library in `output_dir` named `kernel_name` (ninetoothed.aot) and returns
    a callable over that library.
    """
    options = _launch_options(num_warps, num_stages, max_num_configs)
    tensors = tuple(tensors)  # any iterable, read once
    if caller != "torch":
        from ninetoothed import aot  # on first use: kernels called from Python never load it

        check_declared_dtypes(tensors, kernel_name or "make(caller=...)")
        num_warps = options["num_warps"]
        if isinstance(num_warps, tuple):
            if len(num_warps) > 1:
                raise ValueError(
                    f"an ahead-of-time kernel is built for one num_warps, got the candidates {num_warps}; give "
                    "one, or build a variant for each with ninetoothed.build (compilation_configs="
                    "{'num_warps': (...)}), which tunes over them at build time"
                )
            num_warps = num_warps[0]
        return aot.make(arrangement, application, tensors, caller, kernel_name, output_dir, num_warps)
    if output_dir is not None:
        raise ValueError(
            "output_dir is where an ahead-of-time build is written: give caller='opencl' with it, "
            "or leave it out for a kernel called from Python"
        )
    arranged = arrangement(*tensors)
    if not isinstance(arranged, (tuple, list)):
        arranged = (arranged,)
    return Kernel(application, tuple(arranged), kernel_name=kernel_name, **options)


def jit(func=None, *, caller="torch", kernel_name=None, num_warps=None, num_stages=None, max_num_configs=None):
    """Compiles a function whose parameters are annotated with arranged tensors (keywords as make())."""
    if caller != "torch":
        raise NotImplementedError(
            f"jit(caller={caller!r}): ahead-of-time kernels are built with ninetoothed.make(..., "
            "caller='opencl' or 'cuda', kernel_name=..., output_dir=...) or ninetoothed.build; jit makes kernels "
            "called from Python (caller='torch')"
        )
    options = _launch_options(num_warps, num_stages, max_num_configs)

    def decorate(function):
        annotations = []
        for name, parameter in inspect.signature(function).parameters.items():
            if not isinstance(parameter.annotation, Tensor):
                raise TypeError(f"parameter '{name}' of {function.__name__} must be annotated with a Tensor")
            annotations.append(parameter.annotation)
        return Kernel(function, tuple(annotations), kernel_name=kernel_name, **options)

    return decorate(func) if func is not None else decorate
