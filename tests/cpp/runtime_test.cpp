// The OpenCL runtime: device choice, program build (and its errors), launch over host memory.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/program.h"

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

TEST(Runtime, AddRunsOverHostMemoryWithPartialLastProgram) {
  auto device = current_device();
  const long n = 1000 + std::random_device()() % 100;
  const long block = 64;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), z(n + 1, -12345.0f);  // one poisoned element past the end
  for (long i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);

  ClProgram program = ProgramCache::instance().get(*device, kAddSource, "-DBLOCK=" + std::to_string(block));
  KernelLauncher launcher(device, program, "add");
  launcher.set_buffer(0, x.data(), n * sizeof(float), false, "x");
  launcher.set_buffer(1, y.data(), n * sizeof(float), false, "y");
  launcher.set_buffer(2, z.data(), n * sizeof(float), true, "z");
  launcher.set_scalar<cl_long>(3, n);
  launcher.launch((n + block - 1) / block);
  for (long i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + y[i]) << "at " << i;
  EXPECT_EQ(z[n], -12345.0f);
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
