#include "runtime/launch.h"

#include <chrono>
#include <functional>

namespace nt {

namespace {

// The turns of PoCL launches (see launch.h), by the kernel's name. Names
// that share a mutex only take turns they need not.
std::mutex& turns_of(const std::string& kernel_name) {
  static std::mutex turns[64];
  return turns[std::hash<std::string>()(kernel_name) % 64];
}

}  // namespace

KernelLauncher::KernelLauncher(std::shared_ptr<Device> device, const ClProgram& program,
                               const std::string& kernel_name)
    : device_(std::move(device)) {
  cl_int status = CL_SUCCESS;
  kernel_ = ClKernel(clCreateKernel(program.get(), kernel_name.c_str(), &status));
  check(status, "clCreateKernel");
  if (device_->info().is_pocl) turns_ = &turns_of(kernel_name);
}

void KernelLauncher::set_buffer(cl_uint index, void* data, size_t bytes, bool needed, bool written,
                                const std::string& tensor_name) {
  // OpenCL has no empty buffers: an empty tensor still gets one byte of storage.
  static char empty = 0;
  if (bytes == 0) {
    data = &empty;
    bytes = 1;
    needed = written = false;
  }
  Buffer buffer{{}, data, bytes, needed, written, 0};
  if (buffers_.empty()) discrete_ = !device_->keeps_host_memory();
  if (!discrete_) {
    buffer.memory = device_->wrap_host_memory(data, bytes, tensor_name);
  } else {
    device_->check_buffer_size(bytes, tensor_name);
    DeviceBufferPool::Lease lease = device_->memory().buffers().acquire(bytes);
    buffer.memory = std::move(lease.memory);
    buffer.capacity = lease.capacity;
  }
  cl_mem handle = buffer.memory.get();
  check(clSetKernelArg(kernel_.get(), index, sizeof(cl_mem), &handle), "clSetKernelArg");
  buffers_.push_back(std::move(buffer));
}

void KernelLauncher::set_scalar(cl_uint index, const void* value, size_t size) {
  check(clSetKernelArg(kernel_.get(), index, size, value), "clSetKernelArg");
}

namespace {

// Waits for the queue. A short kernel finishes in microseconds: polling its
// event for a moment answers sooner than sleeping in clFinish.
void wait_for(cl_command_queue queue, const ClEvent& event) {
  check(clFlush(queue), "clFlush");
  if (event) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    cl_int status = CL_QUEUED;
    while (std::chrono::steady_clock::now() < deadline) {
      check(clGetEventInfo(event.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
            "clGetEventInfo");
      if (status <= CL_COMPLETE) break;
    }
  }
  check(clFinish(queue), "clFinish");
}

}  // namespace

void KernelLauncher::run_on_device_memory(cl_command_queue queue, size_t num_programs, size_t local_size,
                                          ClEvent& event) {
  Transfers transfers(device_->memory(), queue);
  try {
    for (const Buffer& buffer : buffers_)
      if (buffer.needed) transfers.to_device(buffer.memory.get(), buffer.host, buffer.bytes);
    if (num_programs > 0) {
      cl_event raw_event = nullptr;
      check(clEnqueueNDRangeKernel(queue, kernel_.get(), 1, nullptr, &num_programs, &local_size, 0, nullptr,
                                   &raw_event),
            "clEnqueueNDRangeKernel");
      event = ClEvent(raw_event);
    }
    for (const Buffer& buffer : buffers_)
      if (buffer.written) transfers.to_host(buffer.memory.get(), buffer.host, buffer.bytes);
    wait_for(queue, event);
  } catch (...) {
    // Nothing enqueued may outlive the launch: it reads and writes the caller's memory.
    clFinish(queue);
    buffers_.clear();
    throw;
  }
  for (Buffer& buffer : buffers_)
    device_->memory().buffers().release({std::move(buffer.memory), buffer.capacity});
}

double KernelLauncher::launch(size_t num_programs, size_t local_size) {
  cl_command_queue queue = device_->queue();
  std::unique_lock<std::mutex> turn;
  if (turns_) turn = std::unique_lock(*turns_);
  ClEvent event;
  if (buffers_.empty()) discrete_ = !device_->keeps_host_memory();
  if (discrete_) {
    run_on_device_memory(queue, num_programs, local_size, event);
  } else if (num_programs > 0) {
    cl_event raw_event = nullptr;
    check(clEnqueueNDRangeKernel(queue, kernel_.get(), 1, nullptr, &num_programs, &local_size, 0, nullptr,
                                 &raw_event),
          "clEnqueueNDRangeKernel");
    event = ClEvent(raw_event);
  }
  // A device that shares host memory has written into it already. Other
  // devices that keep host memory need a map to make their writes visible in
  // the host memory they wrap, enqueued behind the kernel and waited for once.
  std::vector<void*> mapped(buffers_.size(), nullptr);
  if (!discrete_) {
    for (size_t i = 0; i < buffers_.size(); ++i) {
      Buffer& buffer = buffers_[i];
      cl_int status = CL_SUCCESS;
      if (!buffer.written || device_->shares_host_memory()) continue;
      mapped[i] = clEnqueueMapBuffer(queue, buffer.memory.get(), CL_FALSE, CL_MAP_READ, 0, buffer.bytes, 0,
                                     nullptr, nullptr, &status);
      check(status, "clEnqueueMapBuffer");
    }
    wait_for(queue, event);
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (mapped[i]) {
      check(clEnqueueUnmapMemObject(queue, buffers_[i].memory.get(), mapped[i], 0, nullptr, nullptr),
            "clEnqueueUnmapMemObject");
    }
  }
  double seconds = 0.0;
  cl_ulong start = 0, end = 0;
  if (event.get() &&
      clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) ==
          CL_SUCCESS &&
      clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) ==
          CL_SUCCESS) {
    seconds = static_cast<double>(end - start) * 1e-9;
  }
  // The buffers are released now; OpenCL keeps them until the unmaps are done.
  buffers_.clear();
  return seconds;
}

}  // namespace nt
