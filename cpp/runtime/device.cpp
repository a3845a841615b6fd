#include "runtime/device.h"

#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/disk_cache.h"
#include "support/errors.h"

namespace nt {

namespace {

struct Found {
  cl_platform_id platform;
  cl_device_id device;
  DeviceInfo info;
  bool hidden = false;  // a basic device added for small launches only: not listed
};

// PoCL's CPU devices by name: "pthread-<cpu>" / "basic-<cpu>" (3.x), "cpu-<cpu>" /
// "cpu-minimal-<cpu>" (4.x and later).
bool is_pocl(const DeviceInfo& info) { return info.is_cpu && info.platform.find("Portable") == 0; }
bool is_pocl_single_threaded(const DeviceInfo& info) {
  return is_pocl(info) && (info.name.rfind("basic-", 0) == 0 || info.name.rfind("cpu-minimal-", 0) == 0);
}

// Did the user leave POCL_DEVICES unset? Then PoCL's basic device, when
// there, was asked for by a copy of this runtime (the Python module's or an
// ahead-of-time library's) and serves small launches only: it is not listed.
bool g_basic_is_ours = false;

// Is a PoCL library already loaded in this process (by another copy of this
// runtime, or by the application)?
bool pocl_is_loaded() {
  auto visit = [](dl_phdr_info* info, size_t, void*) -> int {
    return info->dlpi_name && std::strstr(info->dlpi_name, "libpocl") != nullptr;
  };
  return dl_iterate_phdr(visit, nullptr) != 0;
}

// Before the ICD loader's first call: when the user has not chosen PoCL's
// devices, ask for the single-threaded one too. PoCL reads POCL_DEVICES once,
// while it sets up its devices (the first clGetPlatformIDs/clGetDeviceIDs);
// the variable is removed again at once, so that processes started later
// (which inherit the C environment) see the user's environment unchanged.
// Only the first copy of the runtime in a process does this: once PoCL is
// loaded the variable has no effect, and changing the environment again
// (setenv may move it while another thread's getenv reads it) is not safe.
void ask_pocl_for_a_small_device() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("POCL_DEVICES") != nullptr) return;
    g_basic_is_ours = true;
    if (pocl_is_loaded()) return;
    setenv("POCL_DEVICES", "basic pthread", 1);
    cl_uint num_platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &num_platforms) == CL_SUCCESS && num_platforms > 0) {
      std::vector<cl_platform_id> platforms(num_platforms);
      if (clGetPlatformIDs(num_platforms, platforms.data(), nullptr) == CL_SUCCESS) {
        for (cl_platform_id platform : platforms) {
          cl_uint num_devices = 0;
          clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
        }
      }
    }
    unsetenv("POCL_DEVICES");
  });
}

// A string property through an OpenCL `clGet*Info` query (size first, then text).
template <typename Object, typename Info, typename Query>
std::string info_string(Query query, const char* call, Object object, Info what) {
  size_t size = 0;
  check(query(object, what, 0, nullptr, &size), call);
  std::string text(size, '\0');
  check(query(object, what, size, text.data(), nullptr), call);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  return info_string(clGetPlatformInfo, "clGetPlatformInfo", platform, what);
}

std::string device_string(cl_device_id device, cl_device_info what) {
  return info_string(clGetDeviceInfo, "clGetDeviceInfo", device, what);
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

// Every device, the hidden ones included; a listed device's info.index is
// its position among the listed ones.
std::vector<Found> discover() {
  require_opencl_process();
  note_opencl_started();
  ask_pocl_for_a_small_device();
  cl_uint num_platforms = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || num_platforms == 0) return {};
  check(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(num_platforms);
  check(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Found> found;
  for (cl_platform_id platform : platforms) {
    cl_uint num_devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(num_devices);
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr),
          "clGetDeviceIDs");
    for (cl_device_id device : devices) {
      DeviceInfo info;
      info.platform = platform_string(platform, CL_PLATFORM_NAME);
      info.name = device_string(device, CL_DEVICE_NAME);
      info.version = device_string(device, CL_DEVICE_OPENCL_C_VERSION);
      info.is_cpu = (device_value<cl_device_type>(device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
      std::string extensions = device_string(device, CL_DEVICE_EXTENSIONS);
      info.has_fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
      info.has_fp16 = extensions.find("cl_khr_fp16") != std::string::npos;
      info.max_work_group_size = device_value<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.global_memory = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
      info.max_allocation = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.correctly_rounded_divide_sqrt =
          info.is_cpu || (device_value<cl_device_fp_config>(device, CL_DEVICE_SINGLE_FP_CONFIG) &
                          CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      info.local_memory = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
      info.compute_units = device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS);
      info.preferred_float_vector = device_value<cl_uint>(device, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
      info.is_pocl = is_pocl(info);
      // Deprecated since OpenCL 2.0: a driver that does not answer has no unified memory.
      cl_bool unified = CL_FALSE;
      info.host_unified_memory = clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified,
                                                 &unified, nullptr) == CL_SUCCESS &&
                                 unified != CL_FALSE;
      if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
        // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV and _MINOR_NV.
        cl_uint major = 0, minor = 0;
        if (clGetDeviceInfo(device, 0x4000, sizeof major, &major, nullptr) == CL_SUCCESS &&
            clGetDeviceInfo(device, 0x4001, sizeof minor, &minor, nullptr) == CL_SUCCESS)
          info.nv_compute_capability = static_cast<int>(major * 10 + minor);
      }
      found.push_back({platform, device, info, g_basic_is_ours && is_pocl_single_threaded(info)});
    }
  }
  int index = 0;
  for (Found& f : found) f.info.index = f.hidden ? -1 : index++;
  return found;
}

// The listed device `selector` names (all of `everything` that is not hidden).
const Found& choose(const std::vector<Found>& everything, const std::string& selector) {
  std::vector<Found> found;
  for (const Found& f : everything)
    if (!f.hidden) found.push_back(f);
  if (found.empty()) {
    throw RuntimeError("no OpenCL device found (is an OpenCL driver such as pocl-opencl-icd installed?)");
  }
  auto in_everything = [&](const Found& f) -> const Found& {
    return *std::find_if(everything.begin(), everything.end(),
                         [&](const Found& e) { return e.device == f.device; });
  };
  if (selector.empty()) {
    auto is_pocl_threaded = [](const Found& f) {
      return is_pocl(f.info) && !is_pocl_single_threaded(f.info);
    };
    if (auto it = std::find_if(found.begin(), found.end(), is_pocl_threaded); it != found.end())
      return in_everything(*it);
    auto is_pocl_cpu = [](const Found& f) { return is_pocl(f.info); };
    if (auto it = std::find_if(found.begin(), found.end(), is_pocl_cpu); it != found.end())
      return in_everything(*it);
    auto is_cpu = [](const Found& f) { return f.info.is_cpu; };
    if (auto it = std::find_if(found.begin(), found.end(), is_cpu); it != found.end())
      return in_everything(*it);
    return in_everything(found.front());
  }
  if (selector.size() < 10 && std::all_of(selector.begin(), selector.end(), ::isdigit)) {
    size_t index = std::stoul(selector);
    if (index < found.size()) return in_everything(found[index]);
  }
  for (const auto& f : found) {
    if ((f.info.platform + " " + f.info.name).find(selector) != std::string::npos) return in_everything(f);
  }
  std::string names;
  for (const auto& f : found)
    names += "\n  " + std::to_string(f.info.index) + ": " + f.info.platform + " " + f.info.name;
  throw RuntimeError("no OpenCL device matches '" + selector + "'; devices:" + names);
}

std::mutex g_mutex;
std::shared_ptr<Device> g_current;

// The Device for `f`, with PoCL's single-threaded device of the same
// platform as its companion when `f` is PoCL's multi-threaded one.
std::shared_ptr<Device> open(const Found& f, const std::vector<Found>& everything) {
  if (is_pocl(f.info) && !is_pocl_single_threaded(f.info)) {
    for (const Found& s : everything) {
      if (s.platform == f.platform && is_pocl_single_threaded(s.info))
        return std::make_shared<Device>(f.platform, f.device, f.info, s.device, s.info);
    }
  }
  return std::make_shared<Device>(f.platform, f.device, f.info);
}

std::atomic<uint64_t> g_next_serial{1};

// Per thread: a command queue and the last wrapped host buffers, per device serial.
struct Wrapped {
  void* data;
  size_t bytes;
  ClMem memory;
};
struct ThreadState {
  std::map<uint64_t, ClQueue> queues;
  std::map<uint64_t, std::vector<Wrapped>> wrapped;  // most recent last
};
ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// The innermost ScopedDevice of this thread, if any.
thread_local const ScopedDevice* t_scoped = nullptr;

}  // namespace

Device::Device(cl_platform_id platform, cl_device_id device, DeviceInfo info, cl_context context)
    : platform_(platform), device_(device), info_(std::move(info)), serial_(g_next_serial++) {
  cache_key_ = info_.platform + "|" + info_.name + "|" + device_string(device, CL_DRIVER_VERSION);
  check(clRetainContext(context), "clRetainContext");
  context_ = ClContext(context);
}

Device::Device(cl_platform_id platform, cl_device_id device, DeviceInfo info, cl_device_id small,
               DeviceInfo small_info)
    : platform_(platform), device_(device), info_(std::move(info)), serial_(g_next_serial++) {
  cache_key_ = info_.platform + "|" + info_.name + "|" + device_string(device, CL_DRIVER_VERSION);
  cl_int status = CL_SUCCESS;
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                        reinterpret_cast<cl_context_properties>(platform_), 0};
  cl_device_id devices[] = {device_, small};
  context_ = ClContext(clCreateContext(properties, small ? 2 : 1, devices, nullptr, nullptr, &status));
  check(status, "clCreateContext");
  if (small) small_ = std::shared_ptr<Device>(new Device(*this, small, std::move(small_info)));
}

Device::Device(const Device& main, cl_device_id device, DeviceInfo info)
    : platform_(main.platform_),
      device_(device),
      info_(std::move(info)),
      serial_(g_next_serial++),
      context_(main.context_) {
  cache_key_ = info_.platform + "|" + info_.name + "|" + device_string(device, CL_DRIVER_VERSION);
}

cl_command_queue Device::queue() const {
  require_opencl_process();
  if (t_scoped && t_scoped->device() == this) return t_scoped->queue();
  auto& queues = thread_state().queues;
  auto it = queues.find(serial_);
  if (it == queues.end()) {
    cl_int status = CL_SUCCESS;
    ClQueue queue(clCreateCommandQueue(context_.get(), device_, CL_QUEUE_PROFILING_ENABLE, &status));
    check(status, "clCreateCommandQueue");
    it = queues.emplace(serial_, std::move(queue)).first;
  }
  return it->second.get();
}

bool Device::shares_host_memory() {
  std::call_once(probed_, [this] {
    if (!info_.is_cpu) return;
    // Probed once per device and driver, the answer kept in the disk cache for later processes.
    const std::string key = "shares_host_memory|" + cache_key_;
    if (auto known = DiskCache::instance().read("devices", key); known && (*known == "0" || *known == "1")) {
      shares_host_memory_ = *known == "1";
      return;
    }
    // A fill by the device (no kernel, so no compiler run: a cold first launch pays no build for
    // it) into buffers over host memory, aligned and not: shared where the host sees it unmapped.
    alignas(128) int host[64] = {};
    bool shared = true;
    cl_int status = CL_SUCCESS;
    for (int offset : {0, 1, 3}) {
      ClMem memory(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 8 * sizeof(int),
                                  host + offset, &status));
      if (status != CL_SUCCESS) return;
      const int pattern = 7 + offset;
      if (clEnqueueFillBuffer(queue(), memory.get(), &pattern, sizeof pattern, 0, 8 * sizeof(int), 0, nullptr,
                              nullptr) != CL_SUCCESS ||
          clFinish(queue()) != CL_SUCCESS) {
        return;
      }
      for (int i = 0; i < 8; ++i) shared = shared && host[offset + i] == pattern;
      for (int& v : host) v = 0;
    }
    shares_host_memory_ = shared;
    DiskCache::instance().write("devices", key, shared ? "1" : "0");
  });
  return shares_host_memory_;
}

bool Device::keeps_host_memory() const {
  return (info_.is_cpu || info_.host_unified_memory) && !discrete_memory_forced();
}

DeviceMemory& Device::memory() {
  std::call_once(memory_made_, [this] {
    memory_ = std::make_unique<DeviceMemory>(context_.get(), device_, info_.global_memory);
  });
  return *memory_;
}

void Device::check_buffer_size(size_t bytes, const std::string& tensor_name) const {
  if (info_.max_allocation && bytes > info_.max_allocation) {
    throw ValueError("the tensor '" + tensor_name + "' spans " + std::to_string(bytes) +
                     " bytes, more than the " + std::to_string(info_.max_allocation) +
                     " bytes of the largest buffer " + info_.platform + " " + info_.name +
                     " allows (CL_DEVICE_MAX_MEM_ALLOC_SIZE); split the work into smaller tensors");
  }
}

ClMem Device::wrap_host_memory(void* data, size_t bytes, const std::string& tensor_name) {
  check_buffer_size(bytes, tensor_name);
  cl_int status = CL_SUCCESS;
  if (!shares_host_memory()) {
    ClMem memory(
        clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, data, &status));
    check(status, "clCreateBuffer");
    return memory;
  }
  std::vector<Wrapped>& wrapped = thread_state().wrapped[serial_];
  for (size_t i = wrapped.size(); i-- > 0;) {
    if (wrapped[i].data == data && wrapped[i].bytes == bytes) {
      ClMem memory = wrapped[i].memory;
      std::rotate(wrapped.begin() + i, wrapped.begin() + i + 1, wrapped.end());
      return memory;
    }
  }
  ClMem memory(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, data, &status));
  check(status, "clCreateBuffer");
  constexpr size_t kKept = 32;
  if (wrapped.size() == kKept) wrapped.erase(wrapped.begin());
  wrapped.push_back({data, bytes, memory});
  return memory;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> infos;
  for (const auto& f : discover())
    if (!f.hidden) infos.push_back(f.info);
  return infos;
}

std::shared_ptr<Device> current_device() {
  require_opencl_process();
  if (t_scoped) return t_scoped->shared_device();
  std::lock_guard lock(g_mutex);
  if (!g_current) {
    const char* env = std::getenv("NINETOOTHED_DEVICE");
    auto found = discover();
    g_current = open(choose(found, env ? env : ""), found);
  }
  return g_current;
}

std::shared_ptr<Device> select_device(const std::string& selector) {
  auto found = discover();
  auto device = open(choose(found, selector), found);
  std::lock_guard lock(g_mutex);
  g_current = device;
  return device;
}

std::shared_ptr<Device> device_of_queue(cl_command_queue queue) {
  cl_context context = nullptr;
  cl_device_id id = nullptr;
  check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr),
        "clGetCommandQueueInfo");
  check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof id, &id, nullptr), "clGetCommandQueueInfo");
  static std::mutex mutex;
  static std::map<std::pair<cl_context, cl_device_id>, std::shared_ptr<Device>> adopted;
  std::lock_guard lock(mutex);
  auto& device = adopted[{context, id}];
  if (!device) {
    for (const Found& f : discover()) {
      if (f.device == id) device = std::make_shared<Device>(f.platform, f.device, f.info, context);
    }
    if (!device) throw RuntimeError("the command queue's device is not one of list_devices()");
  }
  return device;
}

ScopedDevice::ScopedDevice(std::shared_ptr<Device> device, cl_command_queue queue)
    : device_(std::move(device)), queue_(queue), outer_(t_scoped) {
  t_scoped = this;
}

ScopedDevice::~ScopedDevice() { t_scoped = outer_; }

}  // namespace nt
