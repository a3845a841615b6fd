// OpenCL headers and RAII ownership of OpenCL objects.
//
// Every OpenCL object the runtime creates is held by a ClHandle, which
// releases it exactly once; copying retains. check() turns an error code
// into an nt::RuntimeError that names the call.
//
// fork: OpenCL drivers keep worker threads that a forked child does not
// have, so a child of a process that started OpenCL must not call into it.
// The child notices (pthread_atfork), refuses to launch with a RuntimeError
// (require_opencl_process), and leaks rather than releases the handles it
// inherited, so that nothing it does waits for threads that are gone.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "support/errors.h"

namespace nt {

std::string cl_error_name(cl_int code);

// An OpenCL call failed with `code` (a Python RuntimeError).
struct ClError : RuntimeError {
  ClError(const std::string& what, cl_int code) : RuntimeError(what), code(code) {}
  cl_int code;
};

inline void check(cl_int code, const char* call) {
  if (code != CL_SUCCESS) throw ClError(std::string(call) + " failed: " + cl_error_name(code), code);
}

// Records that this process uses OpenCL (before its first OpenCL call).
void note_opencl_started();
// Is this process a fork of one that had started OpenCL?
bool is_forked_opencl_child();
// Throws RuntimeError (saying what to do instead) in such a child.
void require_opencl_process();

template <typename T, cl_int (*Retain)(T), cl_int (*Release)(T)>
class ClHandle {
 public:
  ClHandle() = default;
  explicit ClHandle(T handle) : handle_(handle) {}  // takes ownership
  ClHandle(const ClHandle& other) : handle_(other.handle_) {
    if (handle_) Retain(handle_);
  }
  ClHandle(ClHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  ClHandle& operator=(ClHandle other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~ClHandle() {
    if (handle_ && !is_forked_opencl_child()) Release(handle_);
  }
  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  T handle_ = nullptr;
};

using ClContext = ClHandle<cl_context, clRetainContext, clReleaseContext>;
using ClQueue = ClHandle<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using ClProgram = ClHandle<cl_program, clRetainProgram, clReleaseProgram>;
using ClKernel = ClHandle<cl_kernel, clRetainKernel, clReleaseKernel>;
using ClMem = ClHandle<cl_mem, clRetainMemObject, clReleaseMemObject>;
using ClEvent = ClHandle<cl_event, clRetainEvent, clReleaseEvent>;

}  // namespace nt
