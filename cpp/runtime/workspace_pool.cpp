#include "runtime/workspace_pool.h"

#include <cstdlib>
#include <new>

namespace nt {

WorkspacePool::Lease::Region::Region(size_t size) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 64, size) != 0) throw std::bad_alloc();
  data = memory;
  bytes = size;
}

WorkspacePool::Lease::Region::~Region() { std::free(data); }

WorkspacePool::Lease::Lease(WorkspacePool* pool, std::unique_ptr<Region> region)
    : pool_(pool), region_(std::move(region)) {}

WorkspacePool::Lease::Lease(Lease&& other) noexcept : pool_(other.pool_), region_(std::move(other.region_)) {
  other.pool_ = nullptr;
}

WorkspacePool::Lease& WorkspacePool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    if (pool_ && region_) pool_->give_back(std::move(region_));
    pool_ = other.pool_;
    region_ = std::move(other.region_);
    other.pool_ = nullptr;
  }
  return *this;
}

WorkspacePool::Lease::~Lease() {
  if (pool_ && region_) pool_->give_back(std::move(region_));
}

void* WorkspacePool::Lease::data() const { return region_ ? region_->data : nullptr; }
size_t WorkspacePool::Lease::bytes() const { return region_ ? region_->bytes : 0; }

WorkspacePool::WorkspacePool() { idle_.reserve(kIdle + 1); }

WorkspacePool& WorkspacePool::instance() {
  static WorkspacePool* pool = new WorkspacePool;  // never destroyed: launches may outlive statics
  return *pool;
}

WorkspacePool::Lease WorkspacePool::lease(size_t bytes) {
  if (bytes == 0 || bytes > max_bytes_.load()) return {};
  std::unique_ptr<Lease::Region> region;
  {
    std::lock_guard lock(mutex_);
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if ((*it)->bytes >= bytes && (best == idle_.end() || (*it)->bytes < (*best)->bytes)) best = it;
    if (best != idle_.end()) {
      region = std::move(*best);
      idle_.erase(best);
    }
  }
  if (!region) {
    constexpr size_t kGrain = size_t{1} << 20;  // a slightly larger launch reuses the region
    try {
      region = std::make_unique<Lease::Region>(std::min(kMaxBytes, (bytes + kGrain - 1) / kGrain * kGrain));
    } catch (const std::bad_alloc&) {
      return {};
    }
  }
  ++leases_;
  return Lease(this, std::move(region));
}

size_t WorkspacePool::idle() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

void WorkspacePool::give_back(std::unique_ptr<Lease::Region> region) noexcept {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(region));  // within the capacity reserved
  auto smallest = [&] {
    return std::min_element(idle_.begin(), idle_.end(),
                            [](const auto& a, const auto& b) { return a->bytes < b->bytes; });
  };
  size_t total = 0;
  for (const auto& r : idle_) total += r->bytes;
  while (!idle_.empty() && (idle_.size() > kIdle || total > kIdleBytes)) {
    auto it = smallest();
    total -= (*it)->bytes;
    idle_.erase(it);
  }
}

}  // namespace nt
