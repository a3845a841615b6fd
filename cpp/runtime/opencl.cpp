#include "runtime/opencl.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace nt {

namespace {

std::atomic<pid_t> g_opencl_pid{0};  // the process that started OpenCL (0: none yet)
std::atomic<bool> g_forked_child{false};

void after_fork_in_child() {
  if (g_opencl_pid.load() != 0) g_forked_child.store(true);
}

}  // namespace

void note_opencl_started() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    g_opencl_pid.store(getpid());
  });
}

bool is_forked_opencl_child() { return g_forked_child.load(std::memory_order_relaxed); }

void require_opencl_process() {
  if (!is_forked_opencl_child()) return;
  throw RuntimeError("this process was forked from process " + std::to_string(g_opencl_pid.load()) +
                     " after it had started OpenCL, whose driver threads a forked child does not have; "
                     "launch kernels in a process started with multiprocessing's 'spawn' or 'forkserver' "
                     "method, or fork before the first kernel launch");
}

std::string cl_error_name(cl_int code) {
  switch (code) {
#define NT_CL_ERROR(name) \
  case name:              \
    return #name;
    NT_CL_ERROR(CL_DEVICE_NOT_FOUND)
    NT_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    NT_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    NT_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NT_CL_ERROR(CL_OUT_OF_RESOURCES)
    NT_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    NT_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    NT_CL_ERROR(CL_INVALID_VALUE)
    NT_CL_ERROR(CL_INVALID_DEVICE)
    NT_CL_ERROR(CL_INVALID_CONTEXT)
    NT_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    NT_CL_ERROR(CL_INVALID_HOST_PTR)
    NT_CL_ERROR(CL_INVALID_MEM_OBJECT)
    NT_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    NT_CL_ERROR(CL_INVALID_BINARY)
    NT_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    NT_CL_ERROR(CL_INVALID_PROGRAM)
    NT_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    NT_CL_ERROR(CL_INVALID_KERNEL_NAME)
    NT_CL_ERROR(CL_INVALID_KERNEL)
    NT_CL_ERROR(CL_INVALID_ARG_INDEX)
    NT_CL_ERROR(CL_INVALID_ARG_VALUE)
    NT_CL_ERROR(CL_INVALID_ARG_SIZE)
    NT_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    NT_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    NT_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    NT_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    NT_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    NT_CL_ERROR(CL_INVALID_EVENT)
    NT_CL_ERROR(CL_INVALID_OPERATION)
    NT_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef NT_CL_ERROR
    default:
      return "OpenCL error " + std::to_string(code);
  }
}

}  // namespace nt
