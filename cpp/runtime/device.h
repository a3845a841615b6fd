// OpenCL devices: discovery, choice, the per-device context and the
// per-thread command queues.
//
// In: the platforms the ICD loader reports, and the user's choice
// (NINETOOTHED_DEVICE or select_device()). Out: a Device with its context,
// created once and shared by every thread. Default choice: PoCL's
// multi-threaded CPU device, else the first CPU device, else the first device.
//
// Small launches: PoCL's pthread device wakes a thread pool for every
// command (~45 us a round trip); its single-threaded `basic` device runs the
// command in the calling thread (~1 us). When the process has not set
// POCL_DEVICES, the first OpenCL call asks PoCL for both ("basic pthread",
// the variable set only for that call), hides the basic device from
// list_devices() and gives it to the pthread Device as its small()
// companion, in the same context (so buffers and host-memory views are
// shared). A user's own POCL_DEVICES is kept as is: the basic device is
// then listed when it names it, and still the companion of pthread.
//
// Threads: the context, the device's properties and the probe are shared
// (the probe runs once, under call_once). Each thread has its own in-order
// command queue per device and its own cache of wrapped host buffers, so
// launches from different threads neither wait for each other's kernels
// nor share a cl_mem while it is in use.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device_memory.h"
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
  cl_ulong max_allocation = 0;  // the largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)
  // Are float32 `/` and `sqrt` correctly rounded when asked for
  // (-cl-fp32-correctly-rounded-divide-sqrt)? CPU devices always are.
  bool correctly_rounded_divide_sqrt = false;
  cl_ulong local_memory = 0;
  cl_uint compute_units = 1;
  // CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: 16 on AVX-512 CPUs, 8 on AVX2, 1 on GPUs.
  cl_uint preferred_float_vector = 1;
  bool is_pocl = false;  // a CPU device of PoCL (Portable Computing Language)
  // Does the device use the host's memory (an integrated GPU)? CL_DEVICE_HOST_UNIFIED_MEMORY.
  bool host_unified_memory = false;
  // NVIDIA's compute capability as major * 10 + minor (cl_nv_device_attribute_query); 0 elsewhere.
  int nv_compute_capability = 0;
};

class Device {
 public:
  // `small`: a single-threaded device of the same platform to share the
  // context with (see above), or null.
  Device(cl_platform_id platform, cl_device_id device, DeviceInfo info, cl_device_id small = nullptr,
         DeviceInfo small_info = {});
  // A device in a caller's context (retained, not created), with no companion.
  Device(cl_platform_id platform, cl_device_id device, DeviceInfo info, cl_context context);

  const DeviceInfo& info() const { return info_; }
  cl_device_id id() const { return device_; }
  cl_context context() const { return context_.get(); }
  // This thread's in-order command queue on this device (made on first use).
  cl_command_queue queue() const;
  // A key that tells devices apart in caches: platform, name and driver.
  const std::string& cache_key() const { return cache_key_; }
  // The single-threaded companion for small launches (same context), or null.
  const std::shared_ptr<Device>& small() const { return small_; }

  // Do launches wrap host memory (CL_MEM_USE_HOST_PTR: CPUs and integrated
  // GPUs, zero-copy) rather than copy it to device memory (discrete GPUs,
  // through memory())?
  bool keeps_host_memory() const;
  // Does a CL_MEM_USE_HOST_PTR buffer on this device read and write the host
  // memory itself (no copies, so no map needed to see a kernel's writes)?
  // Probed by a device fill of buffers over aligned and unaligned host memory, once per device and
  // driver: the answer is kept in the disk cache ("devices").
  bool shares_host_memory();

  // A buffer over host memory [data, data + bytes), on a device that keeps
  // host memory. On a device that shares it, buffers are views of it and
  // this thread's last few are reused.
  ClMem wrap_host_memory(void* data, size_t bytes, const std::string& tensor_name);
  // A region larger than the device's largest buffer is a ValueError naming
  // the tensor `tensor_name`.
  void check_buffer_size(size_t bytes, const std::string& tensor_name) const;
  // The device buffers and staging memory of launches on a device that does
  // not keep host memory (made on first use).
  DeviceMemory& memory();

 private:
  // The companion: a device of `main`'s context.
  Device(const Device& main, cl_device_id device, DeviceInfo info);

  cl_platform_id platform_;
  cl_device_id device_;
  DeviceInfo info_;
  std::string cache_key_;
  uint64_t serial_;  // tells devices apart in the per-thread tables
  ClContext context_;
  std::once_flag probed_;
  bool shares_host_memory_ = false;
  std::once_flag memory_made_;
  std::unique_ptr<DeviceMemory> memory_;
  std::shared_ptr<Device> small_;
};

// Every device of every platform (but a basic device added for small
// launches only, see above).
std::vector<DeviceInfo> list_devices();

// The device kernels run on. The first call chooses it: `NINETOOTHED_DEVICE`
// (an index into list_devices(), or text found in "platform name") if set,
// else the default choice above. Throws RuntimeError when there is no device.
std::shared_ptr<Device> current_device();

// Make `selector` (an index or text, as NINETOOTHED_DEVICE) the current device.
std::shared_ptr<Device> select_device(const std::string& selector);

// The device of a caller's command queue (an ahead-of-time kernel's stream),
// in the queue's own context: one Device per (context, device), kept for the
// process. Throws RuntimeError when the queue is not a valid command queue.
std::shared_ptr<Device> device_of_queue(cl_command_queue queue);

// While it lives, on this thread, current_device() is `device` and
// device->queue() is `queue`: launches go to a caller's command queue.
class ScopedDevice {
 public:
  ScopedDevice(std::shared_ptr<Device> device, cl_command_queue queue);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  const Device* device() const { return device_.get(); }
  const std::shared_ptr<Device>& shared_device() const { return device_; }
  cl_command_queue queue() const { return queue_; }

 private:
  std::shared_ptr<Device> device_;
  cl_command_queue queue_;
  const ScopedDevice* outer_;
};

}  // namespace nt
