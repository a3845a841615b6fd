// Tuning's builds at once (tune/parallel_builds.h): two on OpenCL; NVRTC's bounded by the cores,
// 4, and the memory available at kNvrtcBuildBytes a build, never fewer than one.
#include "tune/parallel_builds.h"

#include <gtest/gtest.h>

namespace nt::tune {
namespace {

TEST(ParallelBuilds, OpenClDriversBuildTwoAtOnce) {
  EXPECT_EQ(parallel_builds(false, 16, uint64_t{1} << 40), 2u);
  EXPECT_EQ(parallel_builds(false, 1, std::nullopt), 2u);
}

TEST(ParallelBuilds, NvrtcBuildsAsManyAsCoresAndMemoryAllowUpToFour) {
  const uint64_t plenty = 64 * kNvrtcBuildBytes;
  EXPECT_EQ(parallel_builds(true, 16, plenty), 4u);
  EXPECT_EQ(parallel_builds(true, 16, std::nullopt), 4u);  // memory unknown: the cores decide
  EXPECT_EQ(parallel_builds(true, 2, plenty), 2u);
  EXPECT_EQ(parallel_builds(true, 0, plenty), 1u);  // hardware_concurrency() may say 0
  // Memory for two builds and a half: two; for less than one: still one.
  EXPECT_EQ(parallel_builds(true, 16, kNvrtcBuildBytes * 5 / 2), 2u);
  EXPECT_EQ(parallel_builds(true, 16, kNvrtcBuildBytes / 3), 1u);
  EXPECT_EQ(parallel_builds(true, 16, 0), 1u);
}

TEST(ParallelBuilds, AvailableMemoryIsReadWhereTheSystemSaysIt) {
  const auto available = available_memory();
#ifdef __linux__
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, uint64_t{1} << 20);  // this machine has more than a MiB free
#endif
}

}  // namespace
}  // namespace nt::tune

namespace nt::tune {
namespace {

// Helper processes (tune/parallel_builds.h): a core each but the tuning process's, none for few
// candidates, never more than the candidates left to them nor than the memory holds.
TEST(TuningHelpers, OneACoreButTheTuningProcesssOwn) {
  const uint64_t plenty = uint64_t{64} << 30;
  EXPECT_EQ(tuning_helpers(2, 42, plenty), 1u);
  EXPECT_EQ(tuning_helpers(16, 42, plenty), 15u);
  EXPECT_EQ(tuning_helpers(1, 42, plenty), 0u);
  EXPECT_EQ(tuning_helpers(0, 42, std::nullopt), 0u);  // hardware_concurrency() may say 0
}

TEST(TuningHelpers, NoneForFewCandidatesNorMoreThanTheyLeave) {
  const uint64_t plenty = uint64_t{64} << 30;
  EXPECT_EQ(tuning_helpers(16, kHelpedCandidates - 1, plenty), 0u);
  EXPECT_EQ(tuning_helpers(16, kHelpedCandidates, plenty), kHelpedCandidates - 1);
  EXPECT_EQ(tuning_helpers(16, 2, plenty, 8), 0u);  // asked for, still too few
}

TEST(TuningHelpers, AskedForAndBoundedByMemory) {
  EXPECT_EQ(tuning_helpers(2, 42, uint64_t{64} << 30, 0), 0u);
  EXPECT_EQ(tuning_helpers(2, 42, uint64_t{64} << 30, 3), 3u);
  EXPECT_EQ(tuning_helpers(16, 42, kHelperBytes * 5 / 2), 2u);
  EXPECT_EQ(tuning_helpers(16, 42, kHelperBytes / 2), 0u);
}

}  // namespace
}  // namespace nt::tune
