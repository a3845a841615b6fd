#include "runtime/launch.h"

#include <chrono>
#include <cstring>
#include <functional>

#include "support/errors.h"

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
                                const std::string& tensor_name, const ElementLayout* scattered) {
  // OpenCL has no empty buffers: an empty tensor still gets one byte of storage.
  static char empty = 0;
  if (bytes == 0) {
    data = &empty;
    bytes = 1;
    needed = written = false;
  }
  Buffer buffer{{}, data, bytes, needed, written, 0, {}};
  if (scattered && written) buffer.scattered = *scattered;
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

// Copies the elements `layout` places in a region from `src` to `dst`
// (both regions of the same size), and nothing between them.
void copy_elements(char* dst, const char* src, const ElementLayout& layout) {
  const size_t ndim = layout.shape.size();
  for (int64_t n : layout.shape)
    if (n <= 0) return;
  std::vector<int64_t> index(ndim, 0);
  const int64_t inner = ndim ? layout.shape.back() : 1;
  const int64_t inner_stride = ndim ? layout.strides.back() : 0;
  while (true) {
    int64_t at = layout.origin;
    for (size_t d = 0; d + 1 < ndim; ++d) at += index[d] * layout.strides[d];
    if (inner_stride == 1) {
      std::memcpy(dst + at * layout.item, src + at * layout.item, inner * layout.item);
    } else {
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t e = (at + k * inner_stride) * static_cast<int64_t>(layout.item);
        std::memcpy(dst + e, src + e, layout.item);
      }
    }
    size_t d = ndim > 0 ? ndim - 1 : 0;
    while (d-- > 0) {
      if (++index[d] < layout.shape[d]) break;
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

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
  std::vector<std::vector<char>> copies;  // written regions of scattered elements, copied back whole
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
    for (const Buffer& buffer : buffers_) {
      if (!buffer.written) continue;
      void* host = buffer.host;
      if (buffer.scattered) host = copies.emplace_back(buffer.bytes).data();
      transfers.to_host(buffer.memory.get(), host, buffer.bytes);
    }
    wait_for(queue, event);
  } catch (...) {
    // Nothing enqueued may outlive the launch: it reads and writes the caller's memory.
    clFinish(queue);
    buffers_.clear();
    // An allocation the driver made lazily may have failed: idle buffers give their memory back.
    device_->memory().buffers().clear();
    throw;
  }
  size_t copy = 0;
  for (const Buffer& buffer : buffers_) {
    if (buffer.written && buffer.scattered)
      copy_elements(static_cast<char*>(buffer.host), copies[copy++].data(), *buffer.scattered);
  }
  release_buffers();
}

void KernelLauncher::release_buffers() {
  for (Buffer& buffer : buffers_)
    if (buffer.capacity) device_->memory().buffers().release({std::move(buffer.memory), buffer.capacity});
  buffers_.clear();
}

double KernelLauncher::launch(size_t num_programs, size_t local_size) {
  if (local_size > 1) {
    // The work-groups a compiled kernel can run are bounded by its registers and local memory,
    // below the device's largest: say so rather than fail in the enqueue.
    if (!largest_work_group_) {
      check(clGetKernelWorkGroupInfo(kernel_.get(), device_->id(), CL_KERNEL_WORK_GROUP_SIZE,
                                     sizeof largest_work_group_, &largest_work_group_, nullptr),
            "clGetKernelWorkGroupInfo");
    }
    const size_t largest = largest_work_group_;
    if (local_size > largest) {
      release_buffers();
      throw ValueError("this kernel's programs run on work-groups of " + std::to_string(local_size) +
                       " work-items (num_warps x 32), but " + device_->info().name + " runs it on at most " +
                       std::to_string(largest) + "; use a smaller num_warps");
    }
  }
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
