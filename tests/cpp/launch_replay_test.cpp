// Launches recorded for tuning's helper processes (runtime/launch_replay.h): what a LaunchRecorder is
// given, the description's round trip, and what the helpers' queue hands the caller without them.
#include "runtime/launch_replay.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <vector>

namespace nt {
namespace {

ReplayJobs two_launches(std::vector<float>& a, std::vector<float>& b) {
  ReplayJobs jobs;
  for (int i = 0; i < 2; ++i) {
    ReplayLaunch launch;
    launch.device_index = 1;
    launch.small = i == 1;
    launch.device_name = "basic-cpu";
    launch.source = jobs.source("nt_kernel_f", "__kernel void nt_kernel_f() {}");
    launch.options = "-DBLOCK=" + std::to_string(16 << i);
    launch.global_size = 7;
    launch.local_size = 1;
    LaunchRecorder recorder(jobs, launch);
    recorder.set_buffer(0, a.data(), a.size() * sizeof(float), true, false, "a");
    recorder.set_scalar<cl_long>(1, -3);
    recorder.set_buffer(2, b.data(), b.size() * sizeof(float), false, true, "b");
    recorder.set_buffer(3, nullptr, 0, false, false, "meta");
    jobs.launches.push_back(launch);
  }
  return jobs;
}

TEST(LaunchReplay, RecordsEachBufferOnceAndEachArgument) {
  std::vector<float> a(10, 1.0f), b(1000, 2.0f);
  ReplayJobs jobs = two_launches(a, b);
  ASSERT_EQ(jobs.sources.size(), 1u);  // one source for both
  ASSERT_EQ(jobs.buffers.size(), 2u);  // a and b, once each
  EXPECT_EQ(jobs.buffers[1].bytes, 4000u);
  EXPECT_EQ(jobs.buffer_bytes(), 4096u * 2);  // each on pages of its own
  const std::vector<ReplayArg>& args = jobs.launches[1].args;
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].kind, ReplayArg::Kind::Buffer);
  EXPECT_TRUE(args[0].needed && !args[0].written);
  EXPECT_EQ(args[1].kind, ReplayArg::Kind::Scalar);
  EXPECT_EQ(args[1].bytes.size(), sizeof(cl_long));
  EXPECT_EQ(args[2].buffer, 1u);
  EXPECT_TRUE(args[2].written);
  EXPECT_EQ(args[3].kind, ReplayArg::Kind::NoMemory);
}

TEST(LaunchReplay, TheDescriptionReadsBackAndNothingElseDoes) {
  std::vector<float> a(10), b(1000);
  ReplayJobs jobs = two_launches(a, b);
  const std::string text = jobs.serialize();
  std::optional<ReplayJobs> back = ReplayJobs::parse(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->serialize(), text);
  EXPECT_EQ(back->launches[1].options, "-DBLOCK=32");
  EXPECT_TRUE(back->launches[1].small);
  EXPECT_EQ(back->launches[0].device_index, 1);
  EXPECT_EQ(back->buffers[1].bytes, 4000u);
  EXPECT_EQ(back->buffers[1].data, nullptr);  // the bytes travel apart
  // Cut anywhere, or with more after it: not a description.
  for (size_t cut : {size_t{0}, size_t{8}, text.size() / 2, text.size() - 1})
    EXPECT_FALSE(ReplayJobs::parse(text.substr(0, cut)).has_value()) << cut;
  EXPECT_FALSE(ReplayJobs::parse(text + "x").has_value());
}

TEST(LaunchReplay, WithoutHelpersTheCallerClaimsEveryJobOnce) {
  std::vector<float> a(10), b(1000);
  ReplayJobs jobs = two_launches(a, b);
  for (const char* program : {"", "/nonexistent/helper"}) {
    ReplayHelpers helpers(jobs, program, 2);
    EXPECT_EQ(helpers.started(), 0u) << program;
    EXPECT_EQ(helpers.failed(), *program ? 2u : 0u) << program;  // "": none asked for
    EXPECT_EQ(helpers.claim(), std::optional<size_t>(0));
    EXPECT_EQ(helpers.claim(), std::optional<size_t>(1));
    EXPECT_EQ(helpers.claim(), std::nullopt);
    EXPECT_EQ(helpers.wait([] {}), 0u);
  }
}

TEST(LaunchReplay, HelpersThatFailAreCountedAndNoneIsLeftUnreaped) {
  std::vector<float> a(10), b(1000);
  ReplayJobs jobs = two_launches(a, b);
  {
    ReplayHelpers helpers(jobs, "/bin/false", 2);  // ends at once, with status 1
    EXPECT_EQ(helpers.started(), 2u);
    EXPECT_EQ(helpers.wait([] {}), 0u);
    EXPECT_EQ(helpers.failed(), 2u);
  }
  {
    ReplayHelpers helpers(jobs, "/bin/true", 1);
    helpers.wait([] {});
    EXPECT_EQ(helpers.failed(), 0u);
  }
  {
    // `sleep 3 PID` sleeps past the test: the destructor ends and reaps it.
    ReplayHelpers helpers(jobs, "/bin/sleep", 2);
    EXPECT_EQ(helpers.started(), 2u);
  }
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);  // no child left, running or unreaped
}

}  // namespace
}  // namespace nt
