// What an OpenCL device runs a program on: how many work-items, in which tile layout, with
// which micro-kernels.
//
// In: a device's description, upstream's num_warps, and (for opencl_work_group) a kernel source's
// local memory as an expression of the configuration and the work-items. Out: the work-items of a
// program, whether the mma tile layout and tensor cores are used, the register width of the
// micro-kernels. Also the switches tests use to make one machine take every path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codegen/c/kernel_source.h"
#include "runtime/device.h"
#include "symbolic/expr.h"

namespace nt {

// Warps of a program in the work-group layout when make() gave no num_warps: upstream's 4.
inline constexpr size_t kDefaultNumWarps = 4;
// Work-items of a warp: programs in the work-group layout run on num_warps of them.
inline constexpr size_t kWarpItems = 32;

// Work-items per program on `device` for a kernel that can run a program on a
// work-group (lower/program_layout.h): `num_warps` warps of 32 (upstream's
// num_warps; 0: its default of 4, so 128) on GPUs and accelerators, 1 (one
// work-item per program) on CPUs; NINETOOTHED_PROGRAM_LAYOUT=work-group or
// work-item chooses for every device. Rounded down to a power of two (the
// work-group bodies' tile layouts rely on it) within the device's largest work-group.
size_t program_work_items(const DeviceInfo& device, size_t num_warps = 0);
// Can dots of float16 and bfloat16 on `device` use tensor cores (codegen/c/mma_ptx.h)?
// NVIDIA GPUs of compute capability 8.0 or later whose compiler builds the helpers' probe
// (once per device and process). Sources for them are built with -DNT_MMA_LAYOUT
// -DNT_MMA_SYNC when a program has whole warps.
bool tensor_cores(const Device& device);
// For tests: build with -DNT_MMA_LAYOUT (the mma tile layout, lower/program_layout.h) on every
// device where programs have whole warps, so that devices without tensor cores check it.
void set_mma_layout_for_testing(bool enabled);
// The register width, in bytes, that a source's micro-kernels are built for on `device`
// (-DNT_VECTOR_BYTES: codegen/c/dot_kernel.h): 4 x its preferred float vector width.
int vector_bytes(const Device& device);
// For tests: build for `bytes` instead on every device (0: each device's own), so that one
// machine checks every micro-kernel. Launches prepared before keep theirs.
void set_vector_bytes_for_testing(int bytes);

// The work-group a program of a configuration runs on, on an OpenCL device (and, where launches
// may go to it, its small companion): program_work_items(num_warps), halved while the blocks'
// local memory (`source.local_bytes`, which may grow with the work-items: reductions' partials,
// the dot's staging) does not fit the device's and a warp remains; where none fits, 1 (the
// work-item form, which holds the blocks in private memory). `values`: the symbols' values.
// Private memory a program on one work-item may use, as tuning prefers it, where the device runs
// programs on work-groups (a GPU's driver reserves it for each of its ~270 thousand threads: 64 KiB
// is 17 GB on an H200, where the corpus's attention on 64 x 128 blocks, 217 KB, failed at enqueue
// once several processes shared the GPU).
inline constexpr int64_t kOneItemPrivateBudget = 64 << 10;
struct OpenclWorkGroup {
  size_t work_items = 1;
  bool mma_layout = false;  // -DNT_MMA_LAYOUT: the mma tile layout
  bool mma_sync = false;    // -DNT_MMA_SYNC: on tensor cores
  // No work-group of at least a warp fits, where the device runs programs on work-groups.
  bool fits_no_work_group = false;
};
OpenclWorkGroup opencl_work_group(const codegen::KernelSource& source, const Device& device,
                                  const SymbolMap& values, size_t num_warps);
// For tests: devices have at most `bytes` of local memory (0: their own), as NVIDIA's OpenCL
// gives 48 KiB. Launches prepared before keep their work-groups.
void set_local_memory_for_testing(size_t bytes);
size_t local_memory_for_testing();

}  // namespace nt
