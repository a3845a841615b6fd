#include "runtime/cuda/cuda_device.h"

#include <algorithm>
#include <vector>

#include "runtime/cuda/nvrtc_compile.h"
#include "support/errors.h"

namespace nt::cuda {

std::shared_ptr<CudaDevice> CudaDevice::get(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<CudaDevice>> devices;
  std::lock_guard lock(mutex);
  if (auto it = devices.find(ordinal); it != devices.end()) return it->second;
  int count = 0;
  check(driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    throw ValueError("there is no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                     std::to_string(count) + ")");
  }
  std::shared_ptr<CudaDevice> device(new CudaDevice(ordinal));
  devices.emplace(ordinal, device);
  return device;
}

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
  const DriverApi& api = driver();
  check(api.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  check(api.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  char name[256] = {};
  api.cuDeviceGetName(name, sizeof name, device_);
  name_ = name;
  auto attribute = [&](int which) {
    int value = 0;
    check(api.cuDeviceGetAttribute(&value, which, device_), "cuDeviceGetAttribute");
    return value;
  };
  compute_capability_ = 10 * attribute(kComputeCapabilityMajor) + attribute(kComputeCapabilityMinor);
  multiprocessors_ = attribute(kMultiprocessorCount);
  max_threads_per_block_ = attribute(kMaxThreadsPerBlock);
  // Dynamic shared memory up to the opt-in limit (227 KiB on Hopper): function() raises each
  // kernel's limit to it.
  shared_memory_per_block_ = static_cast<size_t>(
      std::max(attribute(kMaxSharedMemoryPerBlock), attribute(kMaxSharedMemoryPerBlockOptin)));
}

std::string CudaDevice::architecture() const {
  // The architecture-specific target where the device has instructions of its own (wgmma, TMA
  // on 9.0; 10.0 and 12.0 likewise), the portable one elsewhere.
  std::string arch = "sm_" + std::to_string(compute_capability_);
  if (compute_capability_ == 90 || compute_capability_ == 100 || compute_capability_ == 120) arch += "a";
  return arch;
}

std::string CudaDevice::cache_key() const { return "cuda|" + name_ + "|" + architecture(); }

CUfunction CudaDevice::function(const std::string& source, const std::string& options,
                                const std::string& name) {
  auto key = std::make_pair(options, source);
  {
    std::lock_guard lock(mutex_);
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  }
  std::string cubin = compile_to_cubin(source, options, architecture());  // outside the lock: slow
  std::lock_guard lock(mutex_);
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;  // another thread's
  ScopedContext scoped(context_);
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");  // kept for the process
  CUfunction function = nullptr;
  check(driver().cuModuleGetFunction(&function, module, name.c_str()), "cuModuleGetFunction");
  check(driver().cuFuncSetAttribute(function, kFuncAttributeMaxDynamicSharedSizeBytes,
                                    static_cast<int>(shared_memory_per_block_)),
        "cuFuncSetAttribute");
  functions_.emplace(key, function);
  return function;
}

int device_of_pointer(const void* pointer) {
  int ordinal = -1;
  check(driver().cuPointerGetAttribute(&ordinal, kPointerAttributeDeviceOrdinal,
                                       static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer))),
        "cuPointerGetAttribute");
  return ordinal;
}

}  // namespace nt::cuda
