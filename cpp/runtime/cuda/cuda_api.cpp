#include "runtime/cuda/cuda_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "support/errors.h"

namespace nt::cuda {

namespace {

// A loaded library and the entry points read from it, or why it could not be loaded.
template <typename Api>
struct Loaded {
  Api api{};
  bool ok = false;
  std::string error;
};

void* open_first(const std::vector<std::string>& names, std::string& tried) {
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = dlerror();
    tried += "\n  " + name + ": " + (why ? why : "not found");
  }
  return nullptr;
}

// Reads `symbol` into `entry`; false (and `error` says which) when it is missing.
template <typename F>
bool read_symbol(void* handle, const char* symbol, F& entry, std::string& error) {
  entry = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!entry) error = std::string("the library has no ") + symbol;
  return entry != nullptr;
}

std::atomic<bool> g_driver_opened{false};

const Loaded<DriverApi>& loaded_driver() {
  static const Loaded<DriverApi> loaded = [] {
    g_driver_opened = true;
    Loaded<DriverApi> l;
    std::string tried;
    void* h = open_first({"libcuda.so.1", "libcuda.so"}, tried);  // never closed: used until exit
    if (!h) {
      l.error = "the CUDA driver (libcuda.so.1) cannot be loaded:" + tried;
      return l;
    }
    DriverApi& a = l.api;
    std::string& e = l.error;
    bool ok = read_symbol(h, "cuInit", a.cuInit, e) &&
              read_symbol(h, "cuDriverGetVersion", a.cuDriverGetVersion, e) &&
              read_symbol(h, "cuDeviceGetCount", a.cuDeviceGetCount, e) &&
              read_symbol(h, "cuDeviceGet", a.cuDeviceGet, e) &&
              read_symbol(h, "cuDeviceGetName", a.cuDeviceGetName, e) &&
              read_symbol(h, "cuDeviceGetAttribute", a.cuDeviceGetAttribute, e) &&
              read_symbol(h, "cuDeviceTotalMem_v2", a.cuDeviceTotalMem, e) &&
              read_symbol(h, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain, e) &&
              read_symbol(h, "cuDevicePrimaryCtxRelease_v2", a.cuDevicePrimaryCtxRelease, e) &&
              read_symbol(h, "cuCtxPushCurrent_v2", a.cuCtxPushCurrent, e) &&
              read_symbol(h, "cuCtxPopCurrent_v2", a.cuCtxPopCurrent, e) &&
              read_symbol(h, "cuCtxGetCurrent", a.cuCtxGetCurrent, e) &&
              read_symbol(h, "cuModuleLoadData", a.cuModuleLoadData, e) &&
              read_symbol(h, "cuModuleUnload", a.cuModuleUnload, e) &&
              read_symbol(h, "cuModuleGetFunction", a.cuModuleGetFunction, e) &&
              read_symbol(h, "cuFuncGetAttribute", a.cuFuncGetAttribute, e) &&
              read_symbol(h, "cuFuncSetAttribute", a.cuFuncSetAttribute, e) &&
              read_symbol(h, "cuLaunchKernel", a.cuLaunchKernel, e) &&
              read_symbol(h, "cuEventCreate", a.cuEventCreate, e) &&
              read_symbol(h, "cuEventRecord", a.cuEventRecord, e) &&
              read_symbol(h, "cuEventSynchronize", a.cuEventSynchronize, e) &&
              read_symbol(h, "cuEventElapsedTime", a.cuEventElapsedTime, e) &&
              read_symbol(h, "cuEventDestroy_v2", a.cuEventDestroy, e) &&
              read_symbol(h, "cuStreamSynchronize", a.cuStreamSynchronize, e) &&
              read_symbol(h, "cuMemAlloc_v2", a.cuMemAlloc, e) &&
              read_symbol(h, "cuMemFree_v2", a.cuMemFree, e) &&
              read_symbol(h, "cuMemcpyDtoDAsync_v2", a.cuMemcpyDtoDAsync, e) &&
              read_symbol(h, "cuPointerGetAttribute", a.cuPointerGetAttribute, e) &&
              read_symbol(h, "cuGetErrorString", a.cuGetErrorString, e);
    if (!ok) {
      l.error = "the CUDA driver (libcuda.so.1) is too old: " + l.error;
      return l;
    }
    if (CUresult r = a.cuInit(0); r != 0) {
      const char* text = nullptr;
      a.cuGetErrorString(r, &text);
      l.error = "the CUDA driver cannot be initialised (cuInit: " + std::string(text ? text : "error") + " " +
                std::to_string(r) + ")";
      return l;
    }
    l.ok = true;
    return l;
  }();
  return loaded;
}

const Loaded<NvrtcApi>& loaded_nvrtc() {
  static const Loaded<NvrtcApi> loaded = [] {
    Loaded<NvrtcApi> l;
    std::vector<std::string> names;
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* dir = std::getenv(env); dir && *dir)
        names.push_back(std::string(dir) + "/lib64/libnvrtc.so");
    }
    for (const char* name :
         {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
      names.emplace_back(name);
    std::string tried;
    void* h = open_first(names, tried);
    if (!h) {
      l.error =
          "NVRTC (libnvrtc.so, CUDA's runtime compiler) cannot be loaded; set CUDA_HOME to the CUDA "
          "toolkit:" +
          tried;
      return l;
    }
    NvrtcApi& a = l.api;
    std::string& e = l.error;
    l.ok = read_symbol(h, "nvrtcVersion", a.nvrtcVersion, e) &&
           read_symbol(h, "nvrtcCreateProgram", a.nvrtcCreateProgram, e) &&
           read_symbol(h, "nvrtcCompileProgram", a.nvrtcCompileProgram, e) &&
           read_symbol(h, "nvrtcGetProgramLogSize", a.nvrtcGetProgramLogSize, e) &&
           read_symbol(h, "nvrtcGetProgramLog", a.nvrtcGetProgramLog, e) &&
           read_symbol(h, "nvrtcGetCUBINSize", a.nvrtcGetCUBINSize, e) &&
           read_symbol(h, "nvrtcGetCUBIN", a.nvrtcGetCUBIN, e) &&
           read_symbol(h, "nvrtcGetPTXSize", a.nvrtcGetPTXSize, e) &&
           read_symbol(h, "nvrtcGetPTX", a.nvrtcGetPTX, e) &&
           read_symbol(h, "nvrtcDestroyProgram", a.nvrtcDestroyProgram, e) &&
           read_symbol(h, "nvrtcGetErrorString", a.nvrtcGetErrorString, e);
    if (!l.ok) l.error = "NVRTC is too old: " + l.error;
    return l;
  }();
  return loaded;
}

}  // namespace

const DriverApi& driver() {
  const auto& l = loaded_driver();
  if (!l.ok) throw ValueError(l.error);
  return l.api;
}

const NvrtcApi& nvrtc() {
  const auto& l = loaded_nvrtc();
  if (!l.ok) throw ValueError(l.error);
  return l.api;
}

bool driver_available() { return loaded_driver().ok; }

bool driver_opened() { return g_driver_opened; }

bool nvrtc_available() { return loaded_nvrtc().ok; }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc().nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

void check(CUresult result, const char* what) {
  if (result == 0) return;
  const char* text = nullptr;
  if (loaded_driver().ok) loaded_driver().api.cuGetErrorString(result, &text);
  throw RuntimeError(std::string(what) + " failed: " + (text ? text : "CUDA error") + " (" +
                     std::to_string(result) + ")");
}

ScopedContext::ScopedContext(CUcontext context) {
  CUcontext current = nullptr;
  if (driver().cuCtxGetCurrent(&current) == 0 && current == context) return;
  check(driver().cuCtxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = true;
}

ScopedContext::~ScopedContext() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  driver().cuCtxPopCurrent(&popped);
}

}  // namespace nt::cuda
