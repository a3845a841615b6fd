#include "tune/helper_gate.h"

#include <algorithm>
#include <chrono>

#include "tune/parallel_builds.h"

namespace nt::tune {

HelperGate& HelperGate::process() {
  static HelperGate gate;
  return gate;
}

HelperGate::Lease::Lease(Lease&& other) noexcept
    : gate_(other.gate_), helpers_(other.helpers_), bytes_(other.bytes_) {
  other.gate_ = nullptr;
  other.helpers_ = 0;
  other.bytes_ = 0;
}

HelperGate::Lease::~Lease() {
  if (gate_ && helpers_) gate_->release(helpers_, bytes_);
}

HelperGate::Timing::~Timing() {
  if (!gate_) return;
  std::lock_guard lock(gate_->mutex_);
  --gate_->timing_;
}

HelperGate::Lease HelperGate::lease(size_t wanted, size_t budget, std::optional<uint64_t> available,
                                    uint64_t buffer_bytes) {
  std::lock_guard lock(mutex_);
  if (timing_ || waiting_ || running_ >= budget) return {};
  if (available) *available = *available > reserved_bytes_ ? *available - reserved_bytes_ : 0;
  const size_t helpers = helpers_for_memory(std::min(wanted, budget - running_), available, buffer_bytes);
  if (!helpers) return {};
  const uint64_t bytes = helpers * (kHelperBytes + buffer_bytes) + buffer_bytes;
  running_ += helpers;
  reserved_bytes_ += bytes;
  return Lease(this, helpers, bytes);
}

void HelperGate::release(size_t helpers, uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    running_ -= helpers;
    reserved_bytes_ -= bytes;
  }
  no_helpers_.notify_all();
}

HelperGate::Timing HelperGate::timing(const std::function<void()>& between) {
  std::unique_lock lock(mutex_);
  ++waiting_;
  try {
    while (running_) {
      if (no_helpers_.wait_for(lock, std::chrono::milliseconds(20), [&] { return running_ == 0; })) break;
      lock.unlock();
      between();
      lock.lock();
    }
  } catch (...) {
    if (!lock.owns_lock()) lock.lock();
    --waiting_;
    throw;
  }
  --waiting_;
  ++timing_;
  return Timing(this);
}

size_t HelperGate::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

size_t HelperGate::waiting_to_time() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

}  // namespace nt::tune
