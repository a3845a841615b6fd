// Launching a built kernel over host memory.
//
// A KernelLauncher holds one cl_kernel and the arguments of one launch: a
// thread uses it from set_buffer() to launch() alone (CompiledKernel hands
// each launch a launcher of its own), on its own command queue.
//
// In: a built program, a kernel name, arguments (host memory regions and
// scalars) and the number of programs. Out: the kernel has run over a 1-D
// grid of that many work-items (one program per work-item) and its writes
// are visible in the host memory when launch() returns. On a device that
// keeps host memory (CPUs, integrated GPUs) it is wrapped, not copied
// (CL_MEM_USE_HOST_PTR; see Device::wrap_host_memory). On a discrete device
// each region lives in a pooled device buffer (device_memory.h): copied in
// when the kernel needs its contents, back when the kernel writes it.
//
// PoCL: launches of one kernel (by name) take turns, process-wide within
// this copy of the runtime. PoCL 3.1 keeps one loaded work-group function
// per kernel hash, local size and grid width, and releases a finished
// launch's entry by hash and local size alone: when a launch over a wider
// grid added an entry while a narrower one was running, the narrower one's
// release drops the wrong entry and PoCL aborts (common.c,
// pocl_release_dlhandle_cache: `found->ref_count > 0`). Each PoCL kernel
// already runs on every core, and PoCL's single-threaded basic device runs
// one command at a time anyway, so turns cost no throughput; kernels whose
// names share one of the 64 turns wait for each other needlessly. Copies of
// the runtime (each ahead-of-time library holds one) keep their own turns: the
// Python module and a library launching the same source at once could still
// meet PoCL's bug.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/opencl.h"

namespace nt {

// Where a tensor's elements lie in its host memory region, when they do not
// fill it (a strided view: its region holds other tensors' elements too).
struct ElementLayout {
  size_t item = 0;                      // bytes per element
  std::vector<int64_t> shape, strides;  // strides in elements, any sign
  int64_t origin = 0;                   // element (0, ..., 0), in elements from the region's start
};

class KernelLauncher {
 public:
  KernelLauncher(std::shared_ptr<Device> device, const ClProgram& program, const std::string& kernel_name);

  // Argument `index` is the host memory [data, data + bytes) of the tensor
  // `tensor_name` (named in errors). `needed`: the kernel reads it, or may
  // leave some of it unwritten (a discrete device copies it in); `written`:
  // the kernel writes it (its writes must reach the host memory).
  // `scattered`: where the elements lie when they do not fill the region; a
  // discrete device then copies back those elements alone, so a launch never
  // writes what lies between them (another tensor's elements, or another
  // launch's results).
  void set_buffer(cl_uint index, void* data, size_t bytes, bool needed, bool written,
                  const std::string& tensor_name, const ElementLayout* scattered = nullptr);
  // Argument `index` is a scalar passed by value.
  void set_scalar(cl_uint index, const void* value, size_t size);
  template <typename T>
  void set_scalar(cl_uint index, T value) {
    set_scalar(index, &value, sizeof(T));
  }

  // Run `num_programs` programs in work-groups of `local_size` and wait for
  // them. Returns the kernel's execution time on the device in seconds.
  double launch(size_t num_programs, size_t local_size = 1);

 private:
  struct Buffer {
    ClMem memory;
    void* host;
    size_t bytes;
    bool needed;
    bool written;
    size_t capacity;  // a pooled device buffer's size class; 0 for wrapped host memory
    std::optional<ElementLayout> scattered;
  };
  // Pooled device buffers back to their pool; every buffer let go.
  void release_buffers();
  // The copies in, the kernel and the copies back on a discrete device.
  void run_on_device_memory(cl_command_queue queue, size_t num_programs, size_t local_size, ClEvent& event);

  std::shared_ptr<Device> device_;
  ClKernel kernel_;
  std::mutex* turns_ = nullptr;  // on PoCL: the kernel name's turns (see above)
  std::vector<Buffer> buffers_;
  bool discrete_ = false;          // this launch's buffers are pooled device buffers
  size_t largest_work_group_ = 0;  // CL_KERNEL_WORK_GROUP_SIZE, once asked
};

}  // namespace nt
