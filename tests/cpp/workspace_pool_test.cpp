// Workspaces of launches that share packed dot operands (runtime/workspace_pool.h): aligned memory
// a launch holds alone, reused by later launches, limits.
#include "runtime/workspace_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace nt {
namespace {

TEST(WorkspacePool, LeasesAlignedMemoryAndReusesIt) {
  WorkspacePool pool;
  void* first = nullptr;
  {
    WorkspacePool::Lease lease = pool.lease(1000);
    ASSERT_NE(lease.data(), nullptr);
    EXPECT_GE(lease.bytes(), 1000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lease.data()) % 64, 0u);
    std::memset(lease.data(), 0x7f, lease.bytes());  // all of it is the lease's
    first = lease.data();
  }
  EXPECT_EQ(pool.idle(), 1u);
  WorkspacePool::Lease again = pool.lease(500);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(pool.idle(), 0u);
  EXPECT_EQ(pool.leases(), 2u);
}

TEST(WorkspacePool, LeasesHeldAtOnceAreApart) {
  WorkspacePool pool;
  std::vector<std::thread> threads;
  std::vector<void*> seen(8);
  std::vector<WorkspacePool::Lease> held(seen.size());
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      held[t] = pool.lease(4096);
      seen[t] = held[t].data();
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<void*> distinct(seen.begin(), seen.end());
  EXPECT_EQ(distinct.size(), seen.size());
  EXPECT_EQ(distinct.count(nullptr), 0u);
  held.clear();  // all back: the pool keeps kIdle of them
  EXPECT_EQ(pool.idle(), WorkspacePool::kIdle);
}

TEST(WorkspacePool, TooLargeOrZeroGivesAnEmptyLease) {
  WorkspacePool pool;
  EXPECT_EQ(pool.lease(0).data(), nullptr);
  EXPECT_EQ(pool.lease(WorkspacePool::kMaxBytes + 1).data(), nullptr);
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

TEST(WorkspacePool, IdleRegionsStayWithinTheirBytes) {
  WorkspacePool pool;
  {
    WorkspacePool::Lease big = pool.lease(WorkspacePool::kIdleBytes / 2 + 1);
    WorkspacePool::Lease other = pool.lease(WorkspacePool::kIdleBytes / 2 + 1);
  }
  EXPECT_EQ(pool.idle(), 1u);  // two would pass kIdleBytes
}

}  // namespace
}  // namespace nt
