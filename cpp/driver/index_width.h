// The width of a launch's index arithmetic: 32 bits where its tensors allow (NT_INDEX32).
//
// In: a launch plan's parameters and the symbols' values of one launch (sizes, strides, block
// sizes). Out: whether every index the kernel computes fits an int, so that the source's
// nt_index (codegen/c/c_types.h's kIndexType) may be int, as Triton's int32 offsets: each
// tensor's elements, the memory they span, and each level of its arrangement (what a flattened
// index reaches) within 2^30. The offsets of elements a block holds past an edge (masked: never
// read or written, since masks test coordinates) may still wrap, as Triton's do; values the
// kernel's code sees (program ids, loop variables, offsets()) are widened to int64 where read.
// Jagged tensors (offsets read from memory as long) and unknown sizes (a library's general
// binaries) keep long.
//
// Both targets build with -DNT_INDEX32 where this holds. CUDA passes every argument in an
// 8-byte slot (an int reads its low half); OpenCL sets the kernel's size, stride, offset and
// extent arguments as cl_int then (CompiledKernel::Prepared::index32). On OpenCL,
// -DNT_NO_INDEX32 in NINETOOTHED_OPENCL_OPTIONS keeps them 64-bit (for comparisons), as it does
// in NINETOOTHED_NVRTC_OPTIONS on CUDA.
#pragma once

#include <string>
#include <vector>

#include "driver/launch_plan.h"
#include "symbolic/substitute.h"

namespace nt {

bool fits_index32(const std::vector<PlanParam>& params, const SymbolMap& values);

// Do build options ask for 64-bit indices (NT_NO_INDEX32 defined: -DNT_NO_INDEX32, -D NT_NO_INDEX32,
// either with =value)?
bool asks_index64(const std::string& options);
// Does NINETOOTHED_OPENCL_OPTIONS, read once a process as for every OpenCL build, ask for them?
bool opencl_index64_asked();

}  // namespace nt
