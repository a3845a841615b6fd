#include "tune/parallel_builds.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace nt::tune {

size_t parallel_builds(bool nvrtc, unsigned cores, std::optional<uint64_t> available_bytes) {
  if (!nvrtc) return 2;
  size_t n = std::clamp<size_t>(cores, 1, 4);
  if (available_bytes) n = std::min<size_t>(n, std::max<uint64_t>(1, *available_bytes / kNvrtcBuildBytes));
  return n;
}

size_t helper_budget(unsigned cores, std::optional<size_t> asked) {
  return asked ? *asked : (cores > 1 ? cores - 1 : 0);
}

size_t tuning_helpers(size_t budget, size_t candidates) {
  return candidates < kHelpedCandidates ? 0 : std::min(budget, candidates - 1);
}

size_t helpers_for_memory(size_t wanted, std::optional<uint64_t> available_bytes, uint64_t buffer_bytes) {
  if (!available_bytes || *available_bytes / 2 < buffer_bytes) return 0;
  return std::min<uint64_t>(wanted, (*available_bytes / 2 - buffer_bytes) / (kHelperBytes + buffer_bytes));
}

namespace {

// A cgroup v2 file's one number ("max": none).
std::optional<uint64_t> cgroup_number(const std::string& path) {
  std::ifstream file(path);
  uint64_t value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
    uint64_t available = kib * 1024;
    // The process's own cgroup's limit (where /sys/fs/cgroup is its cgroup, as in a container).
    if (auto limit = cgroup_number("/sys/fs/cgroup/memory.max")) {
      const uint64_t used = cgroup_number("/sys/fs/cgroup/memory.current").value_or(*limit);
      available = std::min(available, *limit > used ? *limit - used : 0);
    }
    return available;
  }
  return std::nullopt;
}

}  // namespace nt::tune
