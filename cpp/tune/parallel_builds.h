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

// The memory the system could give this process now (Linux: /proc/meminfo's MemAvailable, and
// where the process's cgroup (v2) has a limit, memory.max less memory.current if that is less), or
// nothing where it does not say.
std::optional<uint64_t> available_memory();

// Helper processes that compile tuning's candidates beside the tuning process on PoCL, whose
// compiler holds one lock per process (runtime/launch_replay.h, driver/compile_ahead.cpp).
//
// helper_budget(): the helpers this process runs at once, over all its threads (tune/helper_gate.h):
// `asked` (NINETOOTHED_TUNING_HELPERS) or one per core but the tuning process's own.
// tuning_helpers(): those one tuning wants: the budget, but none for fewer than kHelpedCandidates
// candidates (a helper's start, PoCL loading its kernel library, costs about what a candidate
// does), and never more than the candidates the tuning process leaves them.
// helpers_for_memory(): no more than `wanted` helpers such that each helper's kHelperBytes and its
// copy of the buffers (`buffer_bytes`), plus the shared file's copy, take at most half the
// available memory; none where that is unknown.
inline constexpr size_t kHelpedCandidates = 4;
inline constexpr uint64_t kHelperBytes = uint64_t{1} << 30;

size_t helper_budget(unsigned cores, std::optional<size_t> asked);
size_t tuning_helpers(size_t budget, size_t candidates);
size_t helpers_for_memory(size_t wanted, std::optional<uint64_t> available_bytes, uint64_t buffer_bytes);

}  // namespace nt::tune
