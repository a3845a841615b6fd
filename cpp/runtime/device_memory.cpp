#include "runtime/device_memory.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>

namespace nt {

namespace {

constexpr size_t kMiB = size_t(1) << 20;

// Defaults: slots large enough that the threads of a slot's memcpy start
// rarely, few enough that a ring's pinned memory stays small.
constexpr size_t kSlotBytes = 32 * kMiB;
constexpr size_t kSlots = 3;
constexpr size_t kDirectLimit = 1 * kMiB;

std::atomic<bool> g_forced{false};
std::atomic<size_t> g_forced_slot_bytes{kSlotBytes};
std::atomic<size_t> g_forced_direct_limit{kDirectLimit};

std::atomic<size_t> g_bytes_in{0}, g_bytes_out{0}, g_staged_in{0}, g_staged_out{0};

}  // namespace

DeviceBufferPool::DeviceBufferPool(cl_context context, size_t idle_limit)
    : context_(context), idle_limit_(idle_limit) {}

size_t DeviceBufferPool::size_class(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes <= kMiB) {
    size_t size = 256;
    while (size < bytes) size *= 2;
    return size;
  }
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

DeviceBufferPool::Lease DeviceBufferPool::acquire(size_t bytes) {
  const size_t capacity = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i].capacity == capacity) {
        Lease lease = std::move(idle_[i]);
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        idle_bytes_ -= capacity;
        return lease;
      }
    }
  }
  cl_int status = CL_SUCCESS;
  ClMem memory(clCreateBuffer(context_, CL_MEM_READ_WRITE, capacity, nullptr, &status));
  if (status != CL_SUCCESS) {  // the memory may be held by idle buffers here
    clear();
    memory = ClMem(clCreateBuffer(context_, CL_MEM_READ_WRITE, capacity, nullptr, &status));
  }
  check(status, "clCreateBuffer");
  return {std::move(memory), capacity};
}

void DeviceBufferPool::release(Lease lease) {
  if (!lease.memory || lease.capacity > idle_limit_) return;
  std::vector<Lease> freed;  // released outside the lock
  std::lock_guard lock(mutex_);
  idle_bytes_ += lease.capacity;
  idle_.push_back(std::move(lease));
  while (idle_bytes_ > idle_limit_) {
    idle_bytes_ -= idle_.front().capacity;
    freed.push_back(std::move(idle_.front()));
    idle_.erase(idle_.begin());
  }
}

void DeviceBufferPool::clear() {
  std::vector<Lease> freed;
  std::lock_guard lock(mutex_);
  freed.swap(idle_);
  idle_bytes_ = 0;
}

void parallel_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPerThread = 4 * kMiB;
  size_t threads =
      std::min<size_t>({8, std::max(1u, std::thread::hardware_concurrency()), bytes / kPerThread});
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const size_t part = (bytes + threads - 1) / threads;
  auto copy_part = [&](size_t i) {
    size_t lo = i * part, hi = std::min(bytes, lo + part);
    if (lo < hi) std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  size_t i = 1;
  try {
    for (; i < threads; ++i) helpers.emplace_back(copy_part, i);
  } catch (const std::system_error&) {  // no more threads: this one copies the rest
  }
  for (size_t rest = i; rest < threads; ++rest) copy_part(rest);
  copy_part(0);
  for (std::thread& t : helpers) t.join();
}

StagingRing::StagingRing(cl_context context, cl_device_id device, size_t slot_bytes, size_t slots)
    : slot_bytes_(slot_bytes), slots_(slots) {
  cl_int status = CL_SUCCESS;
  map_queue_ = ClQueue(clCreateCommandQueue(context, device, 0, &status));
  check(status, "clCreateCommandQueue");
  const size_t total = slot_bytes * slots;
  pinned_ =
      ClMem(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, total, nullptr, &status));
  check(status, "clCreateBuffer");
  mapped_ = static_cast<char*>(clEnqueueMapBuffer(map_queue_.get(), pinned_.get(), CL_TRUE,
                                                  CL_MAP_READ | CL_MAP_WRITE, 0, total, 0, nullptr, nullptr,
                                                  &status));
  check(status, "clEnqueueMapBuffer");
  for (size_t i = 0; i < slots; ++i) slots_[i].host = mapped_ + i * slot_bytes;
}

StagingRing::~StagingRing() {
  if (!mapped_ || is_forked_opencl_child()) return;
  for (Slot& slot : slots_) {
    cl_event event = slot.busy.get();
    if (event) clWaitForEvents(1, &event);
  }
  if (clEnqueueUnmapMemObject(map_queue_.get(), pinned_.get(), mapped_, 0, nullptr, nullptr) == CL_SUCCESS)
    clFinish(map_queue_.get());
}

void StagingRing::wait(Slot& slot) {
  if (!slot.busy) return;
  cl_event event = slot.busy.get();
  check(clWaitForEvents(1, &event), "clWaitForEvents");
  slot.busy = ClEvent();
}

void StagingRing::write(cl_command_queue queue, cl_mem memory, const void* host, size_t bytes) {
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(slot_bytes_, bytes - done);
    Slot& slot = slots_[next_];
    next_ = (next_ + 1) % slots_.size();
    wait(slot);
    parallel_copy(slot.host, static_cast<const char*>(host) + done, n);
    cl_event event = nullptr;
    check(clEnqueueWriteBuffer(queue, memory, CL_FALSE, done, n, slot.host, 0, nullptr, &event),
          "clEnqueueWriteBuffer");
    slot.busy = ClEvent(event);
    check(clFlush(queue), "clFlush");  // the DMA starts while the next slot is filled
    done += n;
  }
}

void StagingRing::read(cl_command_queue queue, cl_mem memory, void* host, size_t bytes) {
  const size_t pieces = (bytes + slot_bytes_ - 1) / slot_bytes_;
  auto issue = [&](size_t piece) {
    Slot& slot = slots_[piece % slots_.size()];
    wait(slot);
    const size_t offset = piece * slot_bytes_, n = std::min(slot_bytes_, bytes - offset);
    cl_event event = nullptr;
    check(clEnqueueReadBuffer(queue, memory, CL_FALSE, offset, n, slot.host, 0, nullptr, &event),
          "clEnqueueReadBuffer");
    slot.busy = ClEvent(event);
  };
  for (size_t piece = 0; piece < std::min(pieces, slots_.size()); ++piece) issue(piece);
  check(clFlush(queue), "clFlush");
  for (size_t piece = 0; piece < pieces; ++piece) {
    Slot& slot = slots_[piece % slots_.size()];
    wait(slot);
    const size_t offset = piece * slot_bytes_, n = std::min(slot_bytes_, bytes - offset);
    parallel_copy(static_cast<char*>(host) + offset, slot.host, n);
    if (piece + slots_.size() < pieces) {
      issue(piece + slots_.size());
      check(clFlush(queue), "clFlush");
    }
  }
}

DeviceMemory::DeviceMemory(cl_context context, cl_device_id device, cl_ulong global_memory)
    : context_(context),
      device_(device),
      buffers_(context, static_cast<size_t>(std::min<cl_ulong>(global_memory / 4, cl_ulong(4) << 30))) {}

std::unique_ptr<StagingRing> DeviceMemory::take_ring() {
  const size_t slot_bytes = g_forced ? g_forced_slot_bytes.load() : kSlotBytes;
  {
    std::lock_guard lock(mutex_);
    while (!idle_rings_.empty()) {
      std::unique_ptr<StagingRing> ring = std::move(idle_rings_.back());
      idle_rings_.pop_back();
      if (ring->slot_bytes() == slot_bytes) return ring;
    }
  }
  try {
    return std::make_unique<StagingRing>(context_, device_, slot_bytes, kSlots);
  } catch (const RuntimeError&) {  // no pinned memory to be had: copy directly
    return nullptr;
  }
}

void DeviceMemory::give_back(std::unique_ptr<StagingRing> ring) {
  constexpr size_t kIdleRings = 4;
  std::lock_guard lock(mutex_);
  if (idle_rings_.size() < kIdleRings) idle_rings_.push_back(std::move(ring));
}

size_t DeviceMemory::direct_limit() const { return g_forced ? g_forced_direct_limit.load() : kDirectLimit; }

void set_discrete_memory_for_testing(bool enabled, size_t slot_bytes, size_t direct_limit) {
  g_forced_slot_bytes = std::max<size_t>(slot_bytes, 1);
  g_forced_direct_limit = direct_limit;
  g_forced = enabled;
}

bool discrete_memory_forced() { return g_forced; }

Transfers::Transfers(DeviceMemory& memory, cl_command_queue queue) : memory_(memory), queue_(queue) {}

Transfers::~Transfers() {
  if (ring_) memory_.give_back(std::move(ring_));
}

StagingRing* Transfers::ring() {
  if (!ring_ && !no_ring_) {
    ring_ = memory_.take_ring();
    no_ring_ = !ring_;
  }
  return ring_.get();
}

void Transfers::to_device(cl_mem memory, const void* host, size_t bytes) {
  StagingRing* ring = bytes > memory_.direct_limit() ? this->ring() : nullptr;
  if (ring) {
    ring->write(queue_, memory, host, bytes);
    g_staged_in += bytes;
  } else {
    check(clEnqueueWriteBuffer(queue_, memory, CL_FALSE, 0, bytes, host, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  }
  g_bytes_in += bytes;
}

void Transfers::to_host(cl_mem memory, void* host, size_t bytes) {
  StagingRing* ring = bytes > memory_.direct_limit() ? this->ring() : nullptr;
  if (ring) {
    ring->read(queue_, memory, host, bytes);
    g_staged_out += bytes;
  } else {
    check(clEnqueueReadBuffer(queue_, memory, CL_FALSE, 0, bytes, host, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  }
  g_bytes_out += bytes;
}

TransferCounts transfer_counts() { return {g_bytes_in, g_bytes_out, g_staged_in, g_staged_out}; }

}  // namespace nt
