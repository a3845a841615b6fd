// OpenCL devices: discovery, choice, and the per-device context and queue.
//
// In: the platforms the ICD loader reports, and the user's choice
// (NINETOOTHED_DEVICE or select_device()). Out: a Device with its context and
// in-order command queue, created once and shared. Default choice: PoCL's
// CPU device, else the first CPU device, else the first device.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/opencl.h"

namespace nt {

struct DeviceInfo {
  int index = 0;  // position in list_devices()
  std::string platform;
  std::string name;
  std::string version;  // "OpenCL C 1.2 ..."
  bool is_cpu = false;
  bool has_fp64 = false;
  bool has_fp16 = false;
  size_t max_work_group_size = 1;
  cl_ulong global_memory = 0;
  cl_ulong local_memory = 0;
  cl_uint compute_units = 1;
};

class Device {
 public:
  Device(cl_platform_id platform, cl_device_id device, DeviceInfo info);

  const DeviceInfo& info() const { return info_; }
  cl_device_id id() const { return device_; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }
  // A key that tells devices apart in caches: platform, name and driver.
  const std::string& cache_key() const { return cache_key_; }

  // Does a CL_MEM_USE_HOST_PTR buffer on this device read and write the host
  // memory itself (no copies, so no map needed to see a kernel's writes)?
  // Probed once with a small kernel over aligned and unaligned memory.
  bool shares_host_memory();

  // A buffer over host memory [data, data + bytes). On a device that shares
  // host memory, buffers are views of it and the last few are reused.
  ClMem wrap_host_memory(void* data, size_t bytes);

 private:
  cl_platform_id platform_;
  cl_device_id device_;
  DeviceInfo info_;
  std::string cache_key_;
  ClContext context_;
  ClQueue queue_;
  std::once_flag probed_;
  bool shares_host_memory_ = false;
  struct Wrapped {
    void* data;
    size_t bytes;
    ClMem memory;
  };
  std::vector<Wrapped> wrapped_;  // most recent last
  std::mutex wrapped_mutex_;
};

// Every device of every platform.
std::vector<DeviceInfo> list_devices();

// The device kernels run on. The first call chooses it: `NINETOOTHED_DEVICE`
// (an index into list_devices(), or text found in "platform name") if set,
// else the default choice above. Throws RuntimeError when there is no device.
std::shared_ptr<Device> current_device();

// Make `selector` (an index or text, as NINETOOTHED_DEVICE) the current device.
std::shared_ptr<Device> select_device(const std::string& selector);

}  // namespace nt
