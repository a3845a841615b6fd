#include "driver/work_group.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "codegen/c/mma_ptx.h"
#include "runtime/program.h"
#include "support/errors.h"
#include "symbolic/substitute.h"

namespace nt {

size_t program_work_items(const DeviceInfo& device, size_t num_warps) {
  static const std::string chosen = [] {
    const char* env = std::getenv("NINETOOTHED_PROGRAM_LAYOUT");
    return std::string(env ? env : "");
  }();
  bool work_group;
  if (chosen == "work-group") {
    work_group = true;
  } else if (chosen == "work-item") {
    work_group = false;
  } else if (chosen.empty()) {
    work_group = !device.is_cpu;
  } else {
    throw ValueError("NINETOOTHED_PROGRAM_LAYOUT is '" + chosen + "'; use 'work-group' or 'work-item'");
  }
  if (!work_group) return 1;
  // A power of two (the tile layouts' grids of work-items are).
  const size_t wanted = std::min<size_t>(num_warps ? num_warps : kDefaultNumWarps, 1024) * kWarpItems;
  size_t items = 1;
  while (items * 2 <= std::min<size_t>(wanted, device.max_work_group_size)) items *= 2;
  return items;
}

namespace {

std::atomic<bool> g_mma_layout_forced{false};
std::atomic<int> g_vector_bytes_forced{0};

}  // namespace

bool tensor_cores(const Device& device) {
  if (device.info().nv_compute_capability < 80) return false;
  static std::mutex mutex;
  static std::map<cl_device_id, bool> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(device.id());
  if (it != probed.end()) return it->second;
  bool builds = true;
  try {
    build_program(device, std::string(codegen::kMmaHelpers) + codegen::kMmaProbe, "");
  } catch (const std::exception&) {
    builds = false;  // an older compiler (or none at all): the dots multiply-add in float
  }
  probed.emplace(device.id(), builds);
  return builds;
}

void set_mma_layout_for_testing(bool enabled) { g_mma_layout_forced = enabled; }

void set_vector_bytes_for_testing(int bytes) { g_vector_bytes_forced = bytes; }

int vector_bytes(const Device& device) {
  if (int forced = g_vector_bytes_forced; forced > 0) return forced;
  return 4 * static_cast<int>(device.info().preferred_float_vector);
}

namespace {

std::atomic<size_t> g_local_memory_forced{0};

}  // namespace

void set_local_memory_for_testing(size_t bytes) { g_local_memory_forced = bytes; }

size_t local_memory_for_testing() { return g_local_memory_forced; }

OpenclWorkGroup opencl_work_group(const codegen::KernelSource& source, const Device& device,
                                  const SymbolMap& values, size_t num_warps) {
  OpenclWorkGroup group;
  group.work_items = program_work_items(device.info(), num_warps);
  if (group.work_items == 1) return group;
  // Launches may go to the device's small companion (target_device()): both must have room.
  cl_ulong room = device.info().local_memory;
  if (device.small()) room = std::min(room, device.small()->info().local_memory);
  if (size_t forced = g_local_memory_forced; forced > 0) room = std::min<cl_ulong>(room, forced);
  const bool tensor_cores_here = tensor_cores(device);
  auto layout = [&](size_t items) {
    // Tensor cores, or their layout forced for tests, where a program has whole warps.
    group.mma_sync = items % kWarpItems == 0 && tensor_cores_here;
    group.mma_layout = items % kWarpItems == 0 && (group.mma_sync || g_mma_layout_forced);
  };
  auto fits = [&](size_t items) {
    layout(items);
    SymbolMap with_items = values;
    with_items.emplace(codegen::kWorkItemsSymbol, Expr(static_cast<int64_t>(items)));
    with_items.emplace(codegen::kMmaLayoutSymbol, Expr(int64_t{group.mma_layout}));
    auto local = evaluate_int(source.local_bytes, with_items);
    return local && static_cast<cl_ulong>(std::max<int64_t>(*local, 0)) <= room;
  };
  while (!fits(group.work_items) && group.work_items > kWarpItems) group.work_items /= 2;
  if (!fits(group.work_items)) {
    // Blocks too large for the device's local memory: the program on one work-item.
    group = OpenclWorkGroup{};
    group.fits_no_work_group = true;
  }
  return group;
}

}  // namespace nt
