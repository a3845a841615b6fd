// Tuning's helpers and timing across threads (tune/helper_gate.h): leases within the budget and the
// memory, none while a thread times or waits to, and timing only once no lease is held.
#include "tune/helper_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "tune/parallel_builds.h"

namespace nt::tune {
namespace {

const std::optional<uint64_t> kPlenty = uint64_t{1} << 50;

TEST(HelperGate, LeasesShareOneBudget) {
  HelperGate gate;
  {
    HelperGate::Lease first = gate.lease(2, 3, kPlenty, 0);
    EXPECT_EQ(first.helpers(), 2u);
    HelperGate::Lease second = gate.lease(2, 3, kPlenty, 0);
    EXPECT_EQ(second.helpers(), 1u);  // what the first left
    EXPECT_EQ(gate.lease(2, 3, kPlenty, 0).helpers(), 0u);
    EXPECT_EQ(gate.running(), 3u);
  }
  EXPECT_EQ(gate.running(), 0u);
  EXPECT_EQ(gate.lease(5, 3, kPlenty, 0).helpers(), 3u);
}

TEST(HelperGate, LeasesShareTheMemory) {
  HelperGate gate;
  const uint64_t buffers = uint64_t{64} << 20;
  const uint64_t for_two = 2 * (2 * (kHelperBytes + buffers) + buffers);
  HelperGate::Lease first = gate.lease(2, 8, for_two, buffers);
  EXPECT_EQ(first.helpers(), 2u);
  EXPECT_EQ(gate.lease(2, 8, for_two, buffers).helpers(), 0u);  // the first holds that half
  EXPECT_EQ(gate.lease(2, 8, std::nullopt, buffers).helpers(), 0u);
}

TEST(HelperGate, NoLeaseWhileAThreadTimes) {
  HelperGate gate;
  {
    HelperGate::Timing timing = gate.timing([] {});
    EXPECT_EQ(gate.lease(2, 3, kPlenty, 0).helpers(), 0u);
  }
  EXPECT_EQ(gate.lease(2, 3, kPlenty, 0).helpers(), 2u);
}

TEST(HelperGate, TimingWaitsForTheHelpersAndHoldsOffNewOnes) {
  HelperGate gate;
  std::optional<HelperGate::Lease> lease(gate.lease(1, 1, kPlenty, 0));
  ASSERT_EQ(lease->helpers(), 1u);
  std::atomic<bool> timing{false};
  std::thread timer([&] {
    HelperGate::Timing t = gate.timing([] {});
    timing = true;
  });
  while (gate.waiting_to_time() == 0) std::this_thread::yield();
  EXPECT_FALSE(timing.load());                            // the helper still runs
  EXPECT_EQ(gate.lease(1, 2, kPlenty, 0).helpers(), 0u);  // a thread waits to time
  lease.reset();
  timer.join();
  EXPECT_TRUE(timing.load());
  EXPECT_EQ(gate.waiting_to_time(), 0u);
}

TEST(HelperGate, AnInterruptedWaitHoldsNothing) {
  HelperGate gate;
  HelperGate::Lease lease = gate.lease(1, 1, kPlenty, 0);
  EXPECT_THROW(gate.timing([] { throw std::runtime_error("interrupted"); }), std::runtime_error);
  EXPECT_EQ(gate.waiting_to_time(), 0u);
}

}  // namespace
}  // namespace nt::tune
