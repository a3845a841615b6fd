// Workspaces of launches whose programs pack dot operands once for all that read them
// (codegen/c/shared_packs.h), on devices whose kernels work in host memory (CPUs).
//
// In: the bytes a launch's workspace needs. Out: a lease on 64-byte-aligned host memory of at
// least that size, not zeroed (the launch zeroes its flags itself). A lease is one launch's alone:
// launches at once (other threads) lease other memory. A released lease's memory waits for the
// next launch; at most kIdle regions wait, and at most kIdleBytes in all, the smallest let go
// first. An empty lease (no memory: every program packs its own blocks) where more than kMaxBytes
// (or set_max_bytes()'s limit) are asked for or the memory cannot be had.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace nt {

class WorkspacePool {
 public:
  static constexpr size_t kMaxBytes = size_t{1} << 30;
  static constexpr size_t kIdle = 4;
  static constexpr size_t kIdleBytes = size_t{1} << 30;

  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    void* data() const;
    size_t bytes() const;

   private:
    friend class WorkspacePool;
    struct Region;
    Lease(WorkspacePool* pool, std::unique_ptr<Region> region);
    WorkspacePool* pool_ = nullptr;
    std::unique_ptr<Region> region_;
  };

  WorkspacePool();
  // The process's pool.
  static WorkspacePool& instance();
  Lease lease(size_t bytes);
  // Regions waiting for a launch, and the leases with memory given so far (for tests).
  size_t idle() const;
  size_t leases() const { return leases_.load(); }
  // A lower limit than kMaxBytes (for tests: 0 gives every launch an empty lease).
  void set_max_bytes(size_t bytes) { max_bytes_.store(std::min(bytes, kMaxBytes)); }

 private:
  void give_back(std::unique_ptr<Lease::Region> region) noexcept;
  std::atomic<size_t> max_bytes_{kMaxBytes};
  std::atomic<size_t> leases_{0};
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Lease::Region>> idle_;  // capacity kIdle + 1: give_back() allocates nothing
};

struct WorkspacePool::Lease::Region {
  explicit Region(size_t bytes);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  void* data = nullptr;
  size_t bytes = 0;
};

}  // namespace nt
