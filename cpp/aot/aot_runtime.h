// The entry points of an ahead-of-time library's kernels.
//
// In: a kernel's LaunchPlan text (embedded in the library the AOT writer
// generates, python/ninetoothed/aot.py), the caller's command queue (a
// cl_command_queue: the kernel runs on its device, in its context, and is
// finished when the call returns; or NULL: the library's own queue on the
// device NINETOOTHED_DEVICE names) and one NineToothedTensor per parameter. Out: the kernel has run, or
// a non-zero NineToothedResult says why not; nothing is thrown across this
// boundary and no Python is involved. The first launch of a plan parses it
// into a CompiledKernel kept in `*state` (one per kernel of the library);
// meta symbols are tuned and programs cached as in the Python module
// (NINETOOTHED_CACHE_DIR), on the device NINETOOTHED_DEVICE names.
//
// A library built for caller="cuda" calls ninetoothed_aot_launch_cuda instead: the tensors are
// device memory of one CUDA device, the stream a CUstream of it (NULL: its legacy default
// stream), and the kernel's binaries (cubins and PTX, compiled when the library was built)
// come with the call, so no NVRTC is needed; the kernel is enqueued and the call returns
// without waiting for it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Layout-compatible with ninetoothed.h's NineToothedTensor.
typedef struct {
  void* data;
  uint64_t* shape;
  int64_t* strides;  // in elements
} NtAotTensor;

// Result codes: also in the generated ninetoothed.h (NINETOOTHED_ERROR_*).
enum NtAotResult {
  NT_AOT_SUCCESS = 0,
  NT_AOT_NO_VARIANT = 1,        // no built variant matches the configuration arguments
  NT_AOT_INVALID_ARGUMENT = 2,  // NULL data/shape/strides, a size beyond int64, a wrong count
  NT_AOT_INVALID_VALUE = 3,     // sizes or strides that disagree, values out of bounds
  NT_AOT_DEVICE = 4,            // no device (OpenCL, or CUDA for caller="cuda"), or a call to it failed
  NT_AOT_BUILD = 5,             // the program failed to build (or no binary fits the CUDA device)
  NT_AOT_FORKED = 6,            // a forked child of a process that used OpenCL
  NT_AOT_OUT_OF_MEMORY = 7,
  NT_AOT_STREAM = 8,    // the stream is not a command queue (or CUstream) this library can use
  NT_AOT_INTERNAL = 9,  // the embedded plan is unreadable, or another failure
};

// One binary of a CUDA library's kernel: for `architecture` (sm_90a; compute_80 for PTX, which
// holds its terminating NUL), built with `options`.
typedef struct {
  const char* architecture;
  const char* options;
  const void* data;
  size_t size;
} NtAotCudaImage;

int ninetoothed_aot_launch(const char* plan, size_t plan_size, void** state, void* stream,
                           const NtAotTensor* args, size_t num_args);
int ninetoothed_aot_launch_cuda(const char* plan, size_t plan_size, const NtAotCudaImage* images,
                                size_t num_images, void** state, void* stream, const NtAotTensor* args,
                                size_t num_args);
// A sentence for a result code (never NULL).
const char* ninetoothed_aot_error_string(int code);
// What the last failed launch in this thread said, in detail ("" if none).
const char* ninetoothed_aot_last_error(void);

#ifdef __cplusplus
}
#endif
