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

CudaLimits CudaLimits::of_architecture(const std::string& architecture) {
  std::string digits;
  for (const char* prefix : {"sm_", "compute_"}) {
    if (architecture.starts_with(prefix)) digits = architecture.substr(std::string_view(prefix).size());
  }
  if (!digits.empty() && digits.back() == 'a') digits.pop_back();
  if (digits.size() < 2 || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) {
    throw ValueError("'" + architecture +
                     "' is not a CUDA architecture (sm_XY, sm_XYa or compute_XY, e.g. sm_90a, compute_80)");
  }
  CudaLimits limits;
  limits.compute_capability = std::stoi(digits);
  // The opt-in shared memory per block of each generation (the CUDA programming guide's table);
  // virtual architectures assume the least of the devices they run on.
  const int cc = limits.compute_capability;
  const bool virtual_architecture = architecture.starts_with("compute_");
  size_t kib = 48;
  if (cc == 70 || cc == 72) kib = 96;
  if (cc == 75) kib = 64;
  if (cc == 80 || cc == 87) kib = virtual_architecture ? 99 : 163;
  if (cc == 86 || cc == 89 || cc == 120) kib = 99;
  if (cc == 90 || cc == 100) kib = virtual_architecture ? 99 : 227;
  limits.shared_memory_per_block = kib * 1024;
  return limits;
}

CUfunction CudaDevice::function(const std::string& source, const std::string& options,
                                const std::string& name, std::string_view image) {
  auto key = std::make_pair(options, source);
  {
    std::lock_guard lock(mutex_);
    if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  }
  std::string compiled;
  if (image.empty()) {
    compiled = compile_cuda_image(source, options, architecture());  // outside the lock: slow
    image = compiled;
  }
  std::lock_guard lock(mutex_);
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;  // another thread's
  ScopedContext scoped(context_);
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, image.data()), "cuModuleLoadData");  // kept for the process
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
