// Workspaces of launches that share packed dot operands (runtime/workspace_pool.h): epochs no
// earlier lease of the memory used, zeroed memory, one lease a launch, limits.
#include "runtime/workspace_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace nt {
namespace {

bool all_zero(const WorkspacePool::Lease& lease) {
  const auto* bytes = static_cast<const unsigned char*>(lease.data());
  for (size_t i = 0; i < lease.bytes(); ++i)
    if (bytes[i] != 0) return false;
  return true;
}

TEST(WorkspacePool, LeasesZeroedAlignedMemoryWithRisingEpochs) {
  WorkspacePool pool;
  void* first_data = nullptr;
  {
    WorkspacePool::Lease lease = pool.lease(1000);
    ASSERT_NE(lease.data(), nullptr);
    EXPECT_GE(lease.bytes(), 1000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lease.data()) % 64, 0u);
    EXPECT_TRUE(all_zero(lease));
    EXPECT_EQ(lease.epoch(), 1);
    first_data = lease.data();
    std::memset(lease.data(), 0x7f, 100);  // a launch's flags
  }
  EXPECT_EQ(pool.idle(), 1u);
  WorkspacePool::Lease again = pool.lease(500);  // the same memory, a later epoch, flags kept
  EXPECT_EQ(again.data(), first_data);
  EXPECT_EQ(again.epoch(), 2);
  EXPECT_EQ(static_cast<unsigned char*>(again.data())[0], 0x7f);
  EXPECT_EQ(pool.leases(), 2u);
}

TEST(WorkspacePool, MemoryIsZeroedBeforeEpochsRunOut) {
  WorkspacePool pool(/*max_epoch=*/3);
  for (int64_t expected : {1, 2, 3}) {
    WorkspacePool::Lease lease = pool.lease(64);
    EXPECT_EQ(lease.epoch(), expected);
    std::memset(lease.data(), 0x55, lease.bytes());
  }
  WorkspacePool::Lease lease = pool.lease(64);
  EXPECT_EQ(lease.epoch(), 1);
  EXPECT_TRUE(all_zero(lease));
}

TEST(WorkspacePool, LeasesHeldAtOnceAreApart) {
  WorkspacePool pool;
  WorkspacePool::Lease a = pool.lease(4096), b = pool.lease(4096);
  EXPECT_NE(a.data(), b.data());
  std::vector<std::thread> threads;
  std::vector<void*> seen(8);
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      WorkspacePool::Lease lease = pool.lease(4096);
      seen[t] = lease.data();
      static_cast<unsigned char*>(lease.data())[0] = static_cast<unsigned char>(t);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (void* data : seen) EXPECT_NE(data, nullptr);
  EXPECT_LE(pool.idle(), WorkspacePool::kIdle);
}

TEST(WorkspacePool, TooLargeOrZeroGivesAnEmptyLease) {
  WorkspacePool pool;
  EXPECT_EQ(pool.lease(0).data(), nullptr);
  EXPECT_EQ(pool.lease(WorkspacePool::kMaxBytes + 1).epoch(), 0);
  pool.set_max_bytes(100);
  EXPECT_EQ(pool.lease(101).data(), nullptr);
  EXPECT_NE(pool.lease(100).data(), nullptr);
  EXPECT_EQ(pool.leases(), 1u);
}

TEST(WorkspacePool, KeepsTheLargestIdleRegions) {
  WorkspacePool pool;
  {
    std::vector<WorkspacePool::Lease> held;
    for (size_t i = 1; i <= WorkspacePool::kIdle + 2; ++i) held.push_back(pool.lease(i << 20));
  }
  EXPECT_EQ(pool.idle(), WorkspacePool::kIdle);
  WorkspacePool::Lease small = pool.lease(1 << 20);  // the smallest kept: 3 MiB
  EXPECT_EQ(small.bytes(), size_t{3} << 20);
}

}  // namespace
}  // namespace nt
