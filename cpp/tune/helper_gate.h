// Tuning's helper processes and tuning's timing, kept apart across a process's threads.
//
// Two threads may tune two kernels at once (CompiledKernel's tuning lock is per kernel): one's helper
// processes (driver/compile_ahead.cpp) must not run while the other times candidates, and together
// they must not run more helpers than the budget (tune::helper_budget()) nor take more memory than
// tune::helpers_for_memory() allows. One HelperGate per process (process()) holds:
// - leases: the helpers a compile-ahead phase runs. lease() grants what the budget and the memory
//   leave after the leases held, and none while a thread times or waits to: it never waits.
// - timing phases: timing() waits until no lease is held, then holds off new ones until it ends.
// Several threads may time at once; a thread that times never waits for a lease, so nothing waits
// in a circle.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

namespace nt::tune {

class HelperGate {
 public:
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    size_t helpers() const { return helpers_; }

   private:
    friend class HelperGate;
    Lease(HelperGate* gate, size_t helpers, uint64_t bytes) : gate_(gate), helpers_(helpers), bytes_(bytes) {}
    HelperGate* gate_ = nullptr;
    size_t helpers_ = 0;
    uint64_t bytes_ = 0;
  };
  class Timing {
   public:
    Timing(Timing&& other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    Timing& operator=(Timing&&) = delete;
    ~Timing();

   private:
    friend class HelperGate;
    explicit Timing(HelperGate* gate) : gate_(gate) {}
    HelperGate* gate_;
  };

  static HelperGate& process();

  // Up to `wanted` helpers, no more than `budget` with those of the leases held, and no more than
  // helpers_for_memory() allows of `available` less the memory those leases hold (`buffer_bytes`:
  // what each helper and the shared file copy).
  Lease lease(size_t wanted, size_t budget, std::optional<uint64_t> available, uint64_t buffer_bytes);
  // Waits until no helper runs, calling `between` every few milliseconds meanwhile (it may throw).
  Timing timing(const std::function<void()>& between);

  size_t running() const;
  size_t waiting_to_time() const;

 private:
  void release(size_t helpers, uint64_t bytes);
  mutable std::mutex mutex_;
  std::condition_variable no_helpers_;
  size_t running_ = 0, timing_ = 0, waiting_ = 0;
  uint64_t reserved_bytes_ = 0;
};

}  // namespace nt::tune
