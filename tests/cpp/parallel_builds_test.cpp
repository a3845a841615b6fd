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
// candidates, never more than the candidates left to them nor than half the memory holds.
TEST(TuningHelpers, OneACoreButTheTuningProcesssOwnOrAsManyAsAsked) {
  EXPECT_EQ(helper_budget(2, std::nullopt), 1u);
  EXPECT_EQ(helper_budget(16, std::nullopt), 15u);
  EXPECT_EQ(helper_budget(1, std::nullopt), 0u);
  EXPECT_EQ(helper_budget(0, std::nullopt), 0u);  // hardware_concurrency() may say 0
  EXPECT_EQ(helper_budget(2, 3), 3u);
  EXPECT_EQ(helper_budget(16, 0), 0u);
}

TEST(TuningHelpers, NoneForFewCandidatesNorMoreThanTheyLeave) {
  EXPECT_EQ(tuning_helpers(15, 42), 15u);
  EXPECT_EQ(tuning_helpers(15, kHelpedCandidates - 1), 0u);
  EXPECT_EQ(tuning_helpers(15, kHelpedCandidates), kHelpedCandidates - 1);
  EXPECT_EQ(tuning_helpers(0, 42), 0u);
}

TEST(TuningHelpers, EachHelperAndTheSharedCopyWithinHalfTheMemory) {
  const uint64_t buffers = uint64_t{100} << 20;
  // n x (kHelperBytes + buffers) + buffers <= available / 2
  const uint64_t for_two = 2 * (2 * (kHelperBytes + buffers) + buffers);
  EXPECT_EQ(helpers_for_memory(8, for_two, buffers), 2u);
  EXPECT_EQ(helpers_for_memory(8, for_two - 2, buffers), 1u);
  EXPECT_EQ(helpers_for_memory(1, for_two, buffers), 1u);  // no more than wanted
  EXPECT_EQ(helpers_for_memory(8, 2 * buffers, buffers), 0u);
  EXPECT_EQ(helpers_for_memory(8, buffers, buffers), 0u);  // not even the shared copy
  EXPECT_EQ(helpers_for_memory(8, std::nullopt, 0), 0u);   // unknown: none
}

}  // namespace
}  // namespace nt::tune
