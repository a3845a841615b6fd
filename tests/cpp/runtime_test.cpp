// The OpenCL runtime: device choice, program build (and its errors), launch over host memory.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/program.h"
#include "support/errors.h"

namespace nt {
namespace {

const char* kAddSource = R"(
__kernel void add(__global const float* x, __global const float* y, __global float* z, long n) {
  long i = get_global_id(0) * BLOCK + 0;
  for (long k = i; k < i + BLOCK && k < n; ++k) z[k] = x[k] + y[k];
}
)";

TEST(Runtime, DefaultDeviceIsACpu) {
  auto device = current_device();
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(device->info().is_cpu);
  EXPECT_FALSE(device->info().name.empty());
  EXPECT_FALSE(list_devices().empty());
}

TEST(Runtime, UnknownDeviceSelectorNamesTheDevices) {
  try {
    select_device("no such device anywhere");
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(current_device()->info().name), std::string::npos);
  }
}

void add_over_host_memory() {
  auto device = current_device();
  const long n = 1000 + std::random_device()() % 100;
  const long block = 64;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), z(n + 1, -12345.0f);  // one poisoned element past the end
  for (long i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);

  ClProgram program = ProgramCache::instance().get(*device, kAddSource, "-DBLOCK=" + std::to_string(block));
  KernelLauncher launcher(device, program, "add");
  launcher.set_buffer(0, x.data(), n * sizeof(float), true, false, "x");
  launcher.set_buffer(1, y.data(), n * sizeof(float), true, false, "y");
  launcher.set_buffer(2, z.data(), n * sizeof(float), false, true, "z");
  launcher.set_scalar<cl_long>(3, n);
  launcher.launch((n + block - 1) / block);
  for (long i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + y[i]) << "at " << i;
  EXPECT_EQ(z[n], -12345.0f);
}

TEST(Runtime, AddRunsOverHostMemoryWithPartialLastProgram) { add_over_host_memory(); }

TEST(Runtime, WorkGroupsLargerThanTheKernelAllowsAreAValueError) {
  auto device = current_device();
  ClProgram program = ProgramCache::instance().get(*device, kAddSource, "-DBLOCK=1");
  KernelLauncher launcher(device, program, "add");
  std::vector<float> x(4), y(4), z(4);
  launcher.set_buffer(0, x.data(), sizeof x[0] * 4, true, false, "x");
  launcher.set_buffer(1, y.data(), sizeof y[0] * 4, true, false, "y");
  launcher.set_buffer(2, z.data(), sizeof z[0] * 4, false, true, "z");
  launcher.set_scalar<cl_long>(3, 4);
  const size_t too_many = device->info().max_work_group_size * 2;
  try {
    launcher.launch(too_many, too_many);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("use a smaller num_warps"), std::string::npos) << e.what();
  }
}

// As on a discrete GPU: pooled device buffers, regions over 1000 bytes staged
// through 96-byte slots (many pieces per region, a partial last one), the
// smaller ones copied directly; twice, so that the second launch reuses the
// pool's buffers and the ring.
TEST(Runtime, AddRunsOverDeviceMemoryWithStagedCopies) {
  set_discrete_memory_for_testing(true, 96, 1000);
  TransferCounts before = transfer_counts();
  add_over_host_memory();
  add_over_host_memory();
  TransferCounts after = transfer_counts();
  set_discrete_memory_for_testing(false, 0, 0);
  EXPECT_GT(after.staged_in, before.staged_in);
  EXPECT_GT(after.staged_out, before.staged_out);
  // x and y copied in, z (needed: false) only out.
  EXPECT_EQ(after.bytes_in - before.bytes_in, 2 * (after.bytes_out - before.bytes_out));
}

// PoCL's basic device, when the process did not choose POCL_DEVICES, is the
// pthread device's companion: one context, separate programs, the same memory.
TEST(Runtime, SmallCompanionSharesTheContextAndHasItsOwnPrograms) {
  auto device = current_device();
  const std::shared_ptr<Device>& small = device->small();
  if (!small) GTEST_SKIP() << "no single-threaded companion (POCL_DEVICES set without basic?)";
  EXPECT_EQ(small->context(), device->context());
  EXPECT_NE(small->id(), device->id());
  EXPECT_NE(small->cache_key(), device->cache_key());
  for (const DeviceInfo& info : list_devices()) EXPECT_NE(info.name, small->info().name);

  const long n = 257, block = 16;
  std::vector<float> x(n), y(n), z(n, -1.0f);
  for (long i = 0; i < n; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  ClProgram on_small = ProgramCache::instance().get(*small, kAddSource, "-DBLOCK=16");
  ClProgram on_device = ProgramCache::instance().get(*device, kAddSource, "-DBLOCK=16");
  EXPECT_NE(on_small.get(), on_device.get());
  // The same host memory through both devices in turn: z = x + y, then z = z + y.
  KernelLauncher first(small, on_small, "add");
  first.set_buffer(0, x.data(), n * sizeof(float), true, false, "x");
  first.set_buffer(1, y.data(), n * sizeof(float), true, false, "y");
  first.set_buffer(2, z.data(), n * sizeof(float), false, true, "z");
  first.set_scalar<cl_long>(3, n);
  first.launch((n + block - 1) / block);
  KernelLauncher second(device, on_device, "add");
  second.set_buffer(0, z.data(), n * sizeof(float), true, false, "z");
  second.set_buffer(1, y.data(), n * sizeof(float), true, false, "y");
  second.set_buffer(2, z.data(), n * sizeof(float), false, true, "z");
  second.set_scalar<cl_long>(3, n);
  second.launch((n + block - 1) / block);
  for (long i = 0; i < n; ++i) ASSERT_EQ(z[i], (x[i] + y[i]) + y[i]) << "at " << i;
}

TEST(Runtime, CacheBuildsEachConfigurationOnce) {
  auto device = current_device();
  auto& cache = ProgramCache::instance();
  // A program comes from source or, built by an earlier process, from the disk cache.
  auto made = [&] { return cache.num_builds() + cache.num_binary_loads(); };
  cache.get(*device, kAddSource, "-DBLOCK=3");
  size_t before = made();
  cache.get(*device, kAddSource, "-DBLOCK=3");
  EXPECT_EQ(made(), before);
  cache.get(*device, kAddSource, "-DBLOCK=5");
  EXPECT_EQ(made(), before + 1);
}

TEST(Runtime, BuildFailureCarriesTheLog) {
  auto device = current_device();
  try {
    build_program(*device, "__kernel void broken(__global float* x) { x[0] = undefined_name; }", "");
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("undefined_name"), std::string::npos) << message;
    EXPECT_NE(message.find(".cl"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace nt
