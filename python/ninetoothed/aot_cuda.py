"""The binaries of an ahead-of-time CUDA library (caller="cuda"): which architectures a build compiles
for, and NVRTC's images of every configuration a launch may ask for (CompiledKernel.cuda_build_variants).
ninetoothed.aot embeds them in the library's NAME.cpp.
"""

import concurrent.futures
import os

from ninetoothed import _core


def cuda_architectures():
    """The architectures a caller="cuda" build compiles for: NINETOOTHED_CUDA_ARCHITECTURES (names
    separated by commas or spaces: sm_90a, sm_80, compute_80, ...), else those of this machine's GPUs
    and PTX for compute_80 (which the driver compiles, at first load, for any device from 8.0 on)."""
    text = os.environ.get("NINETOOTHED_CUDA_ARCHITECTURES", "").replace(",", " ").split()
    if text:
        return list(dict.fromkeys(text))
    architectures = []
    if _core.cuda_available():
        for ordinal in range(_core.cuda_device_count()):
            architectures.append(_core.cuda_device(ordinal)["architecture"])
    return list(dict.fromkeys(architectures + ["compute_80"]))


def compile_cuda_images(kernel_name, plan, architectures):
    """NVRTC's binaries of every configuration the plan may launch on each architecture, compiled in
    parallel: [(architecture, options, bytes)]."""
    if not _core.nvrtc_available():
        raise RuntimeError(
            f"{kernel_name}: an ahead-of-time build for caller='cuda' compiles the kernel with NVRTC "
            "(libnvrtc.so of the CUDA toolkit), which cannot be loaded here; set CUDA_HOME"
        )
    kernel = _core.CompiledKernel(plan)
    source = kernel.cuda_source
    jobs = []
    for architecture in architectures:
        variants = kernel.cuda_build_variants(architecture)
        if not variants:
            raise ValueError(
                f"{kernel_name}: no configuration of the kernel fits a device of {architecture} (shared memory); "
                "leave it out of NINETOOTHED_CUDA_ARCHITECTURES or use smaller block sizes"
            )
        jobs += [(architecture, options) for options in variants]
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        images = list(pool.map(lambda job: _core.compile_cuda(source, job[1], job[0]), jobs))
    return [(architecture, options, image) for (architecture, options), image in zip(jobs, images)]
