// CUDA C -> a cubin, through NVRTC, and the cubins' disk cache.
//
// In: CUDA C source, build options (`-DNAME=value`, as for OpenCL) and an architecture
// (sm_90a). Out: the cubin's bytes, or a BuildError holding NVRTC's log and where the source
// was written for reading. Cubins are kept in the DiskCache ("cuda-programs") keyed by source,
// options, architecture and NVRTC's version, so a kernel is compiled once per configuration,
// not once per process. Compiling needs no GPU: CPU-only machines with the toolkit check
// generated sources this way (tests/python/test_cuda_source.py).
#pragma once

#include <string>

namespace nt::cuda {

std::string compile_to_cubin(const std::string& source, const std::string& options,
                             const std::string& architecture);

// Cubins compiled by NVRTC (not read from the disk cache) in this process.
size_t num_nvrtc_compiles();

}  // namespace nt::cuda
