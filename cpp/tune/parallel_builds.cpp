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

size_t tuning_helpers(unsigned cores, size_t candidates, std::optional<uint64_t> available_bytes,
                      std::optional<size_t> asked) {
  if (candidates < kHelpedCandidates) return 0;
  size_t n = asked ? *asked : (cores > 1 ? cores - 1 : 0);
  n = std::min(n, candidates - 1);
  if (available_bytes) n = std::min<uint64_t>(n, *available_bytes / kHelperBytes);
  return n;
}

std::optional<uint64_t> available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace nt::tune
