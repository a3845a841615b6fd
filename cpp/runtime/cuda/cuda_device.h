// A CUDA device as NineToothed uses it: the device's primary context (the one torch and CuPy
// use, so their memory and streams are ours), its limits, and its loaded kernels.
//
// In: a device ordinal (cuda:N). Out: the device, made on first use and kept for the process
// (its primary context is retained once and never released: modules and launches may
// outlive any one caller). Nothing here runs in a process that only uses host tensors: the
// driver is opened by the first CUDA tensor's launch.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/cuda/cuda_api.h"

namespace nt::cuda {

// What the build of a kernel for a device depends on: its compute capability and limits.
struct CudaLimits {
  int compute_capability = 0;  // 90 for 9.0
  int max_threads_per_block = 1024;
  size_t shared_memory_per_block = 48 * 1024;  // the opt-in limit of dynamic shared memory

  // The limits every device of an architecture has ("sm_90a", "sm_86", or "compute_80" for PTX,
  // which runs on 8.0 and later): what an ahead-of-time build compiles for with no device at
  // hand. ValueError for a name that is neither.
  static CudaLimits of_architecture(const std::string& architecture);
};

class CudaDevice {
 public:
  // The device of ordinal `ordinal`, made on first use; ValueError for an ordinal that does
  // not exist, or when the driver cannot be loaded.
  static std::shared_ptr<CudaDevice> get(int ordinal);

  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  const std::string& name() const { return name_; }
  int compute_capability() const { return compute_capability_; }  // 90 for 9.0
  // NVRTC's --gpu-architecture for it: sm_90a on Hopper (its own instructions), else sm_XY.
  std::string architecture() const;
  int multiprocessors() const { return multiprocessors_; }
  int max_threads_per_block() const { return max_threads_per_block_; }
  // The dynamic shared memory a thread block may have (the opt-in limit: 227 KiB on Hopper).
  size_t shared_memory_per_block() const { return shared_memory_per_block_; }
  CudaLimits limits() const {
    return {compute_capability_, max_threads_per_block_, shared_memory_per_block_};
  }
  // What tuning and the disk cache key choices by.
  std::string cache_key() const;

  // The kernel `name` of the source built with `options`: loaded once into this device's
  // context and kept for the process, from `image` (a cubin or PTX built before: an
  // ahead-of-time library's) or else compiled by NVRTC (or read from the disk cache).
  CUfunction function(const std::string& source, const std::string& options, const std::string& name,
                      std::string_view image = {});

 private:
  explicit CudaDevice(int ordinal);

  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int compute_capability_ = 0;
  int multiprocessors_ = 0;
  int max_threads_per_block_ = 0;
  size_t shared_memory_per_block_ = 0;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, CUfunction> functions_;  // by (options, source)
};

// The ordinal of the device a device pointer's memory is on (cuPointerGetAttribute).
int device_of_pointer(const void* pointer);

}  // namespace nt::cuda
