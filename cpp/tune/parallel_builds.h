// How many of tuning's candidates are built at once (driver/tuning.cpp).
//
// In: the target (CUDA through NVRTC, or an OpenCL driver), the machine's cores and the memory
// available to the process. Out: the builds to run together. An OpenCL driver's compiler gets two
// (PoCL's holds a lock through most of a build). NVRTC gets up to 4 cores (8 gained nothing
// measurable), and no more builds than the available memory holds at kNvrtcBuildBytes a build. The
// bound was set when a flash attention's build for Hopper took 9.7 GB of a process's memory (its
// wgmma widths as if-chains); with the widths as templates it takes 2.7 GB (docs/performance.md),
// so the bound is now generous: lowering it is untimed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace nt::tune {

inline constexpr uint64_t kNvrtcBuildBytes = uint64_t{8} << 30;

size_t parallel_builds(bool nvrtc, unsigned cores, std::optional<uint64_t> available_bytes);

// The memory the system could give this process now (Linux: /proc/meminfo's MemAvailable), or
// nothing where it does not say.
std::optional<uint64_t> available_memory();

}  // namespace nt::tune

namespace nt::tune {

// Helper processes that compile tuning's candidates beside the tuning process on PoCL, whose
// compiler holds one lock per process (runtime/launch_replay.h, driver/compile_ahead.cpp): `asked`
// (NINETOOTHED_TUNING_HELPERS) or one per core but the tuning process's own; none for fewer than
// kHelpedCandidates candidates (a helper's start, PoCL loading its kernel library, costs about what
// a candidate does), never more than the candidates the tuning process leaves them, nor more than
// the available memory holds at kHelperBytes a helper.
inline constexpr size_t kHelpedCandidates = 4;
inline constexpr uint64_t kHelperBytes = uint64_t{1} << 30;

size_t tuning_helpers(unsigned cores, size_t candidates, std::optional<uint64_t> available_bytes,
                      std::optional<size_t> asked = std::nullopt);

}  // namespace nt::tune
