// Device memory for host tensors on a device that does not share the host's
// memory (a discrete GPU).
//
// In: the host memory regions of one launch, each with whether the kernel
// needs its contents (copy in) and whether it writes it (copy back). Out:
// device buffers holding them for the kernel, and the written ones copied
// back into the host memory.
//
// - Device buffers come from a DeviceBufferPool: a launch takes buffers of a
//   size class and gives them back afterwards, so repeated launches neither
//   allocate nor touch fresh device memory (an allocation's first use costs
//   about as much as the copy into it). Idle buffers are kept up to a limit,
//   the oldest freed first.
// - Transfers of more than 1 MiB go through pinned host memory: a
//   StagingRing of a few slots that the DMA engine can read and write
//   directly. A region moves slot by slot; the host's side of one slot
//   (a memcpy split over several threads, pageable memory being slow to copy
//   from on one core) overlaps the DMA of the slots before it. Small regions
//   are copied straight from and to the host memory.
//
// Threads: the pools are shared by every thread of a device (a mutex each);
// a launch holds its buffers and its ring alone until it returns them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/opencl.h"

namespace nt {

class DeviceBufferPool {
 public:
  // `idle_limit`: the bytes of idle buffers kept for later launches.
  DeviceBufferPool(cl_context context, size_t idle_limit);

  // A device buffer of at least `bytes` bytes, and its size class (what
  // release() takes back).
  struct Lease {
    ClMem memory;
    size_t capacity = 0;
  };
  Lease acquire(size_t bytes);
  void release(Lease lease);
  // Frees every idle buffer (when an allocation fails: the memory may be idle here).
  void clear();

  // Bytes a request of `bytes` is rounded up to: a power of two up to 1 MiB,
  // then a multiple of 1 MiB.
  static size_t size_class(size_t bytes);

 private:
  cl_context context_;
  size_t idle_limit_;
  std::mutex mutex_;
  std::vector<Lease> idle_;  // oldest first
  size_t idle_bytes_ = 0;
};

class StagingRing {
 public:
  // `slots` pinned slots of `slot_bytes` each, mapped for the host once.
  StagingRing(cl_context context, cl_device_id device, size_t slot_bytes, size_t slots);
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Enqueues on `queue` the copy of host [host, host + bytes) into `memory`
  // from offset 0. Returns once the host memory has been read into slots;
  // the last slots' DMA may still be in flight (commands enqueued behind it on
  // the in-order queue run after it).
  void write(cl_command_queue queue, cl_mem memory, const void* host, size_t bytes);
  // Copies `memory` [0, bytes) into host [host, host + bytes) after whatever
  // is enqueued on `queue` before it; returns when the host memory holds it.
  void read(cl_command_queue queue, cl_mem memory, void* host, size_t bytes);

  size_t slot_bytes() const { return slot_bytes_; }

 private:
  struct Slot {
    char* host = nullptr;
    ClEvent busy;  // the last DMA from or into the slot
  };
  void wait(Slot& slot);

  ClMem pinned_;
  ClQueue map_queue_;  // maps and unmaps the pinned buffer
  char* mapped_ = nullptr;
  size_t slot_bytes_;
  std::vector<Slot> slots_;
  size_t next_ = 0;
};

// Copies `bytes` from `src` to `dst` (not overlapping) with up to 8 threads
// for large copies.
void parallel_copy(void* dst, const void* src, size_t bytes);

// The memory of a discrete device: its buffer pool and its idle staging rings.
class DeviceMemory {
 public:
  DeviceMemory(cl_context context, cl_device_id device, cl_ulong global_memory);

  DeviceBufferPool& buffers() { return buffers_; }
  // A ring for one launch (an idle one, or a new one; null when pinned
  // memory cannot be had), and back (four idle ones are kept).
  std::unique_ptr<StagingRing> take_ring();
  void give_back(std::unique_ptr<StagingRing> ring);

  // Regions of at most this many bytes move straight between the host
  // memory and the device buffer, larger ones through a ring.
  size_t direct_limit() const;

 private:
  cl_context context_;
  cl_device_id device_;
  DeviceBufferPool buffers_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<StagingRing>> idle_rings_;
};

// One launch's transfers on its in-order queue. The queue must be finished
// (clFinish) before the Transfers goes: direct copies complete only then,
// and the ring taken on first need goes back to its DeviceMemory with it.
class Transfers {
 public:
  Transfers(DeviceMemory& memory, cl_command_queue queue);
  ~Transfers();
  Transfers(const Transfers&) = delete;
  Transfers& operator=(const Transfers&) = delete;

  // Enqueues host [host, host + bytes) into `memory` (host memory read by
  // the time the queue is finished).
  void to_device(cl_mem memory, const void* host, size_t bytes);
  // `memory` [0, bytes) into host memory after what is enqueued before it
  // (there by the time the queue is finished).
  void to_host(cl_mem memory, void* host, size_t bytes);

 private:
  StagingRing* ring();  // null when no pinned memory could be had

  DeviceMemory& memory_;
  cl_command_queue queue_;
  std::unique_ptr<StagingRing> ring_;
  bool no_ring_ = false;
};

// For tests: run launches on every device as on a discrete one (buffers in
// device memory, copies in and out), with staging slots of `slot_bytes` and
// regions above `direct_limit` bytes staged; `enabled` false restores the
// default (devices that share host memory wrap it).
void set_discrete_memory_for_testing(bool enabled, size_t slot_bytes, size_t direct_limit);
bool discrete_memory_forced();

// What launches moved to and from discrete devices in this process.
struct TransferCounts {
  size_t bytes_in = 0, bytes_out = 0;
  size_t staged_in = 0, staged_out = 0;  // of those, through staging rings
};
TransferCounts transfer_counts();

}  // namespace nt
