// A C dialect: how one target spells what the shared C emitter (codegen/c/) writes.
//
// OpenCL C and CUDA C differ in spelling, not in structure: the emitter writes the same
// statements for both and asks this table for the few words that differ (qualifiers, ids,
// barriers, the kernel's signature). Each target's table is one small file:
// codegen/opencl/opencl_dialect.cpp and codegen/cuda/cuda_dialect.cpp. A target's built-in
// functions the emitter calls by OpenCL's names (vload_half, as_uint, mul_hi, atomic_add, ...)
// are defined for it in its `header`, so no emitter file tests which target it writes for.
#pragma once

#include <string>
#include <string_view>

namespace nt::codegen {

struct Dialect {
  std::string_view name;  // "opencl", "cuda"
  // Before a kernel's name: `__kernel void`.
  std::string_view kernel;
  // Address-space qualifiers of pointers (with their trailing space, or empty).
  std::string_view global_pointer;
  std::string_view local_pointer;
  std::string_view private_pointer;
  // Before a declaration of work-group memory at kernel scope: `__local `.
  std::string_view local_declaration;
  // Where work-group memory is one buffer sized at launch instead (CUDA's dynamic shared
  // memory, which may exceed the 48 KiB a kernel may declare): its declaration and its name.
  // Each array is then a pointer into it, 16-byte aligned; empty: declared one by one.
  std::string_view dynamic_local_base;
  std::string_view dynamic_local_name;
  // Before a helper function of the preambles, in place of `inline`.
  std::string_view helper;
  // The program (work-group) id, the work-item's id in it, and the global id, as long.
  std::string_view group_id;
  std::string_view local_id;
  std::string_view global_id;
  // The number of work-items of the launch.
  std::string_view global_size;
  // A barrier over the work-group's local and global memory.
  std::string_view barrier;
  // The preprocessor line that opens what a compiler that unrolls `_Pragma("unroll")` loops
  // (a GPU's) is given.
  std::string_view if_unrolls;
  // The dialect's own header: what a kernel's source starts with (types, extensions, and the
  // built-in functions of the other dialect that it lacks).
  std::string_view header;
  // Can a program run on one work-item (the CPU's work-item form)? Sources for a target that
  // cannot hold only the work-group and element-wise forms.
  bool work_item_form = true;
  // Are tensor-core dots' operands staged in work-group memory in their own type (float16 and
  // bfloat16 as 16-bit values, float32 as floats), filled by asynchronous copies (cp.async), the
  // 16-bit ones read as fragments by ldmatrix, and loaded iterations ahead in k loops? Those PTX
  // instructions take shared-memory addresses, which CUDA C can name
  // (__cvta_generic_to_shared); elsewhere the operands are staged as floats.
  bool mma_async_staging = false;
  // Can the work-items of a warp (32 consecutive ones) exchange registers? Then the header defines
  // NT_SHUFFLE_XOR(x, m): work-item i's x from work-item i ^ m (m < 32, all 32 taking part), for
  // int, uint, long, ulong, float and double x; row reductions start with it
  // (emitter_work_group.cpp).
  bool warp_shuffles = false;
  // Can a work-item store two adjacent 16-bit values as one 32-bit word? Then the header defines,
  // where NT_MMA_SYNC is, nt_store_half2_rte(a, b, i, p) and nt_store_bf16x2_rte(a, b, i, p): a at
  // p[i] and b at p[i + 1], each rounded to nearest even (emitter_pair_stores.cpp).
  bool pair_stores = false;
};

const Dialect& opencl_dialect();
const Dialect& cuda_dialect();

// The shared preambles' text (written with OpenCL's qualifiers and `inline` helpers) in
// `dialect`'s spelling: word by word, `inline` -> helper, `__global ` -> global_pointer, ...
std::string respell(std::string_view text, const Dialect& dialect);

}  // namespace nt::codegen
