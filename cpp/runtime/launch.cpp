#include "runtime/launch.h"

namespace nt {

KernelLauncher::KernelLauncher(std::shared_ptr<Device> device, const ClProgram& program,
                               const std::string& kernel_name)
    : device_(std::move(device)) {
  cl_int status = CL_SUCCESS;
  kernel_ = ClKernel(clCreateKernel(program.get(), kernel_name.c_str(), &status));
  check(status, "clCreateKernel");
}

void KernelLauncher::set_buffer(cl_uint index, void* data, size_t bytes, bool written) {
  // OpenCL has no empty buffers: an empty tensor still gets one byte of storage.
  static char empty = 0;
  if (bytes == 0) {
    data = &empty;
    bytes = 1;
    written = false;
  }
  cl_int status = CL_SUCCESS;
  ClMem memory;
  if (device_->info().is_cpu) {
    memory = ClMem(
        clCreateBuffer(device_->context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, data, &status));
  } else {
    memory = ClMem(
        clCreateBuffer(device_->context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, data, &status));
  }
  check(status, "clCreateBuffer");
  cl_mem handle = memory.get();
  check(clSetKernelArg(kernel_.get(), index, sizeof(cl_mem), &handle), "clSetKernelArg");
  buffers_.push_back({std::move(memory), data, bytes, written});
}

void KernelLauncher::set_scalar(cl_uint index, const void* value, size_t size) {
  check(clSetKernelArg(kernel_.get(), index, size, value), "clSetKernelArg");
}

double KernelLauncher::launch(size_t num_programs) {
  double seconds = 0.0;
  if (num_programs > 0) {
    cl_event raw_event = nullptr;
    size_t local_size = 1;  // one program per work-item, one work-item per group (lower/program_layout.h)
    check(clEnqueueNDRangeKernel(device_->queue(), kernel_.get(), 1, nullptr, &num_programs, &local_size, 0,
                                 nullptr, &raw_event),
          "clEnqueueNDRangeKernel");
    ClEvent event(raw_event);
    check(clWaitForEvents(1, &raw_event), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) ==
            CL_SUCCESS) {
      seconds = static_cast<double>(end - start) * 1e-9;
    }
  }
  for (auto& buffer : buffers_) {
    if (device_->info().is_cpu) {
      // Mapping makes the device's writes visible in the host memory it wraps.
      cl_int status = CL_SUCCESS;
      void* mapped = clEnqueueMapBuffer(device_->queue(), buffer.memory.get(), CL_TRUE, CL_MAP_READ, 0,
                                        buffer.bytes, 0, nullptr, nullptr, &status);
      check(status, "clEnqueueMapBuffer");
      check(clEnqueueUnmapMemObject(device_->queue(), buffer.memory.get(), mapped, 0, nullptr, nullptr),
            "clEnqueueUnmapMemObject");
    } else if (buffer.written) {
      check(clEnqueueReadBuffer(device_->queue(), buffer.memory.get(), CL_TRUE, 0, buffer.bytes, buffer.host,
                                0, nullptr, nullptr),
            "clEnqueueReadBuffer");
    }
  }
  check(clFinish(device_->queue()), "clFinish");
  buffers_.clear();
  return seconds;
}

}  // namespace nt
