// CUDA C -> a cubin (or PTX), through NVRTC, and the binaries' disk cache.
//
// In: CUDA C source, build options (`-DNAME=value`, as for OpenCL) and an architecture: a real
// one (sm_90a) gives a cubin, a virtual one (compute_80) PTX text that the driver compiles for
// any later device when it loads it (what an ahead-of-time library carries for devices it was
// not built on). Out: the image's bytes, or a BuildError holding NVRTC's log and where the
// source was written for reading. Cubins are kept in the DiskCache ("cuda-programs") keyed by source,
// options, architecture and NVRTC's version, so a kernel is compiled once per configuration,
// not once per process. Compiling needs no GPU: CPU-only machines with the toolkit check
// generated sources this way (tests/python/test_cuda_source.py).
#pragma once

#include <string>

namespace nt::cuda {

std::string compile_cuda_image(const std::string& source, const std::string& options,
                               const std::string& architecture);

// NINETOOTHED_NVRTC_OPTIONS: options added to every build ("" where unset).
std::string extra_nvrtc_options();

// Cubins compiled by NVRTC (not read from the disk cache) in this process.
size_t num_nvrtc_compiles();

}  // namespace nt::cuda
