// The CUDA driver API and NVRTC, opened at run time.
//
// In: nothing at build time: no CUDA header or library is needed to build or import the module.
// Out: tables of the entry points this project calls, loaded on first use with dlopen
// (libcuda.so.1, the driver's; libnvrtc.so from the CUDA toolkit: CUDA_HOME, /usr/local/cuda,
// or the loader's path). Where one cannot be loaded, the call that needs it throws a
// ValueError that says which library is missing and why, so a CUDA tensor on a machine
// without CUDA is a clear error, not a crash. Only the handful of types the calls take are
// declared here, with the ABI of cuda.h and nvrtc.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

// cuDeviceGetAttribute's attributes this project reads (cuda.h's values).
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxSharedMemoryPerBlock = 8,
  kMultiprocessorCount = 16,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerBlockOptin = 97,
};
// cuPointerGetAttribute: the ordinal of the device a pointer's memory is on.
inline constexpr int kPointerAttributeDeviceOrdinal = 9;
// cuFuncGetAttribute: the registers and the static shared memory of a kernel.
inline constexpr int kFuncAttributeSharedSizeBytes = 1;
inline constexpr int kFuncAttributeNumRegs = 4;
inline constexpr int kFuncAttributeMaxThreadsPerBlock = 0;
inline constexpr int kFuncAttributeMaxDynamicSharedSizeBytes = 8;
inline constexpr unsigned kEventDefault = 0;
inline constexpr unsigned kEventDisableTiming = 2;

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext*);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

struct NvrtcApi {
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
};

// The driver's entry points, cuInit(0) done; throws ValueError when libcuda.so.1 cannot be
// loaded or initialised (no driver, no device).
const DriverApi& driver();
// NVRTC's; throws ValueError when no libnvrtc can be loaded.
const NvrtcApi& nvrtc();
// Whether each can be loaded (never throws; loads on first call).
bool driver_available();
// Has anything in this process asked for the driver yet (loading it)? Never loads it.
bool driver_opened();
bool nvrtc_available();
// "major.minor" of the NVRTC in use.
std::string nvrtc_version();

// Throws RuntimeError naming `what` and the driver's text for `result` unless it is success.
void check(CUresult result, const char* what);

// The current context is `context` while this lives (cuCtxPushCurrent / cuCtxPopCurrent); nothing
// is pushed where it is current already (torch's threads: a launch's common case).
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace nt::cuda
