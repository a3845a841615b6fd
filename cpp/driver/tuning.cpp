// CompiledKernel::choose(): auto-tuning of meta symbols (and num_warps) per key.
//
// In: a bound launch (sizes, strides, constexpr values) and its arguments. Out: the chosen
// configuration, from this process, the disk cache, or timing candidates (block sizes from the
// symbols' bounds, then num_warps: make()'s candidates, or half and twice the default) on
// scratch copies of the written tensors; a TuningRecord. Also the one build of a CPU's
// element-wise kernel, which its candidates and its launches share (prepare_launch()).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <limits>
#include <thread>

#include "driver/compiled_kernel.h"
#include "runtime/cuda/nvrtc_compile.h"
#include "runtime/disk_cache.h"
#include "runtime/program.h"
#include "support/interrupts.h"
#include "symbolic/substitute.h"
#include "tune/config_space.h"
#include "tune/helper_gate.h"
#include "tune/neighbour_search.h"
#include "tune/parallel_builds.h"
#include "tune/tuning_progress.h"

namespace nt {

namespace {

// Candidates tried when make() gave no max_num_configs: block sizes, and num_warps (each other
// candidate, by default 2 and 8 warps, for the kWarpRetimed fastest) where it is tuned.
constexpr size_t kDefaultMaxConfigs = 12;
constexpr size_t kWarpRetimed = 2;
// On a CPU, the fastest candidates timed again, in turns, this many times each.
constexpr size_t kFinalists = 3;
constexpr int kFinalRuns = 2;
// Elements one block may hold in a candidate configuration; on a CPU, four times as many: a dot's
// operands are packed per step of k, and each program packs its blocks of both, so larger tiles
// pack less per multiply-add (a 2048² float32 matmul: 256 x 256 x 64 blocks 66 ms, 128 x 128 x 32
// 73 ms, docs/performance.md). Their private arrays stay within kPrivateMemoryBudget.
constexpr int64_t kTuningBlockBudget = 16384;
constexpr int64_t kCpuTuningBlockBudget = 4 * kTuningBlockBudget;
// set_default_max_num_configs_for_testing(): the cap of kernels made without one (0: the above).
std::atomic<size_t> g_default_cap{0};

std::atomic<size_t> g_timing_runs{0};

double seconds_of(const std::function<void()>& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Copies of the tensors a kernel writes, where tuning's candidates write instead: host memory,
// or memory of the target's CUDA device (copied on its stream), freed when this goes.
class ScratchOutputs {
 public:
  explicit ScratchOutputs(const LaunchTarget& target) : target_(target) {}
  ScratchOutputs(const ScratchOutputs&) = delete;
  ScratchOutputs& operator=(const ScratchOutputs&) = delete;
  ~ScratchOutputs() {
    if (device_.empty()) return;
    const cuda::DriverApi& api = cuda::driver();
    cuda::ScopedContext scoped(target_.cuda->context());
    api.cuStreamSynchronize(static_cast<cuda::CUstream>(target_.stream));
    for (cuda::CUdeviceptr p : device_) api.cuMemFree(p);
  }
  // A copy of the `bytes` at `base`.
  char* copy_of(const char* base, size_t bytes) {
    if (!target_.cuda) return host_.emplace_back(base, base + bytes).data();
    const cuda::DriverApi& api = cuda::driver();
    cuda::ScopedContext scoped(target_.cuda->context());
    cuda::CUdeviceptr copy = 0;
    cuda::check(api.cuMemAlloc(&copy, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    device_.push_back(copy);
    cuda::check(api.cuMemcpyDtoDAsync(copy, reinterpret_cast<uintptr_t>(base), bytes,
                                      static_cast<cuda::CUstream>(target_.stream)),
                "cuMemcpyDtoDAsync");
    return reinterpret_cast<char*>(copy);
  }

 private:
  const LaunchTarget& target_;
  std::vector<std::vector<char>> host_;
  std::vector<cuda::CUdeviceptr> device_;
};

}  // namespace

void set_default_max_num_configs_for_testing(size_t n) { g_default_cap = n; }

size_t num_timing_runs() { return g_timing_runs; }

void CompiledKernel::warp_candidates(bool warps_matter, SymbolValues& fixed,
                                     std::vector<size_t>& other_warps) const {
  // num_warps and num_stages. Every candidate carries `fixed`: make()'s first num_warps where it
  // gave several, its first num_stages where it gave any (CUDA C's NT_STAGES). Where
  // programs run on work-groups, the fastest configurations are timed again on `other_warps`:
  // make()'s other candidates, or, where it gave none, half and twice the default.
  auto unclaimed = [&](const char* name) {  // not the name of one of the kernel's own symbols
    return !plan_.source.symbols.count(name);
  };
  if (!num_warps_candidates_.empty() && unclaimed(kNumWarpsConfigKey)) {
    fixed[kNumWarpsConfigKey] = static_cast<int64_t>(num_warps_candidates_.front());
    if (warps_matter) other_warps.assign(num_warps_candidates_.begin() + 1, num_warps_candidates_.end());
  } else if (plan_.num_warps == 0 && warps_matter && unclaimed(kNumWarpsConfigKey) &&
             !plan_.meta_symbols.empty()) {
    other_warps = {kDefaultNumWarps / 2, kDefaultNumWarps * 2};
  }
  if (!num_stages_candidates_.empty() && unclaimed(kNumStagesConfigKey))
    fixed[kNumStagesConfigKey] = static_cast<int64_t>(num_stages_candidates_.front());
}

std::vector<tune::Config> CompiledKernel::tuning_space(const SymbolMap& values, size_t num_other_warps,
                                                       size_t& retimed, const Launchable& launchable,
                                                       bool cpu) const {
  std::vector<tune::MetaSymbol> symbols;
  for (const std::string& name : plan_.meta_symbols) symbols.push_back({name, plan_.source.symbols.at(name)});
  auto fits = [&](const tune::Config& config) {
    return in_tuning_space(values, config, launchable, cpu ? kCpuTuningBlockBudget : kTuningBlockBudget);
  };
  // Upstream's num_warps, where programs run on work-groups here: after the block sizes, the
  // fastest configurations again on the other warps (kernels of wide dots gain from more, of small
  // blocks from fewer). max_num_configs caps both together; by default the warps get
  // kWarpRetimed x their number more.
  const size_t default_cap =
      g_default_cap ? g_default_cap.load() : kDefaultMaxConfigs + kWarpRetimed * num_other_warps;
  const size_t cap = max_num_configs_ ? max_num_configs_ : default_cap;
  retimed = num_other_warps == 0 ? 0 : std::min(kWarpRetimed, (cap - 1) / num_other_warps);
  std::vector<tune::Config> space = tune::config_space(symbols, fits, cap - retimed * num_other_warps);
  // A space that fits the cap on every num_warps is timed whole on every one: the fastest tiles on
  // the default warps need not be the fastest on others (flash attention at head dim 128 on an
  // H200: 128 x 64 took 6.9 ms on 4 warps, last of the tiles, and 3.0 on 8, first).
  if (num_other_warps > 0 && space.size() * (1 + num_other_warps) <= cap) retimed = space.size();
  return space;
}

namespace {

// At most so many rounds of neighbours (tune/neighbour_search.h).
constexpr int kNeighbourRounds = 3;

// Whether tuning times the neighbours of its fastest sampled candidate: NINETOOTHED_TUNE_NEIGHBOURS
// where it is 1 or 0, else `by_default`.
bool refines_neighbours(bool by_default) {
  const char* asked = std::getenv("NINETOOTHED_TUNE_NEIGHBOURS");
  if (asked && std::string(asked) == "1") return true;
  if (asked && std::string(asked) == "0") return false;
  return by_default;
}

}  // namespace

bool CompiledKernel::in_tuning_space(const SymbolMap& values, const tune::Config& config,
                                     const Launchable& launchable, int64_t block_elements) const {
  for (const std::string& name : plan_.meta_symbols) {
    auto value = config.find(name);
    if (value == config.end()) return false;
    const std::vector<int64_t> range = tune::symbol_values(plan_.source.symbols.at(name));
    if (std::find(range.begin(), range.end(), value->second) == range.end()) return false;
  }
  // Values not known (an ahead-of-time build's sizes) rule nothing out.
  SymbolMap with_config = values;
  for (const auto& [name, value] : config) with_config[name] = Expr(value);
  auto bytes = evaluate_int(plan_.source.private_bytes, with_config);
  if (bytes && *bytes > kPrivateMemoryBudget) return false;
  for (const PlanParam& p : plan_.params) {
    if (p.scalar) continue;
    int64_t elements = 1;
    for (const Expr& size : p.block_shape)
      elements *= std::max<int64_t>(evaluate_int(size, with_config).value_or(1), 1);
    if (elements > block_elements) return false;
  }
  return !launchable || launchable(config, with_config);
}

std::vector<tune::Config> CompiledKernel::neighbours(const SymbolMap& values, const tune::Config& best,
                                                     size_t warps, const std::vector<size_t>& other_warps,
                                                     const Launchable& launchable,
                                                     int64_t block_elements) const {
  std::vector<tune::Config> near;
  // A tile twice as large on twice the warps keeps each warp's share (the float16 matmul's best
  // on Hopper, 128 x 256 x 64 on 8 warps, is next to 128 x 128 x 64 on 4).
  const bool more_warps = std::find(other_warps.begin(), other_warps.end(), 2 * warps) != other_warps.end();
  for (const std::string& name : plan_.meta_symbols) {
    auto value = best.find(name);
    if (value == best.end()) continue;
    for (int64_t next : {value->second * 2, value->second / 2}) {
      tune::Config config = best;
      config[name] = next;
      if (next <= 0 || !in_tuning_space(values, config, launchable, block_elements)) continue;
      near.push_back(config);
      if (next > value->second && more_warps) {
        config[kNumWarpsConfigKey] = static_cast<int64_t>(2 * warps);
        if (in_tuning_space(values, config, launchable, block_elements)) near.push_back(config);
      }
    }
  }
  return near;
}

// On a CPU, an element-wise kernel's one build (KernelSource::runtime_meta): tuning times its
// candidates on it, and launches run on it (choose() below).
bool CompiledKernel::launches_on_one_build(const LaunchTarget& target) const {
  if (target.cuda || !target.opencl->info().is_cpu || plan_.meta_symbols.empty() || one_build_failed_)
    return false;
  // Programs on work-groups (a layout forced on a CPU): warps are tuned too, on builds of their own.
  if (plan_.source.work_group_capable && program_work_items(target.opencl->info(), 0) > 1) return false;
  const auto& runtime = plan_.source.runtime_meta;
  return std::set<std::string>(runtime.begin(), runtime.end()) ==
         std::set<std::string>(plan_.meta_symbols.begin(), plan_.meta_symbols.end());
}

std::shared_ptr<const CompiledKernel::Prepared> CompiledKernel::prepare_one_build(const Bound& bound,
                                                                                  const SymbolValues& meta,
                                                                                  const LaunchTarget& target,
                                                                                  bool keep) const {
  try {
    auto prepared = prepare(bound, meta, target, /*runtime_meta=*/true);
    opencl_program(*prepared, keep);  // built once, then ProgramCache's
    return prepared;
  } catch (const std::exception&) {
    // that form does not build here: each configuration's own build, which says why where it fails
    one_build_failed_ = true;
    return nullptr;
  }
}

std::shared_ptr<const CompiledKernel::Prepared> CompiledKernel::prepare_launch(
    const Bound& bound, const SymbolValues& meta, const LaunchTarget& target) const {
  if (launches_on_one_build(target))
    if (auto prepared = prepare_one_build(bound, meta, target, /*keep=*/true)) return prepared;
  return prepare(bound, meta, target);
}

SymbolValues CompiledKernel::choose(const Bound& bound, const std::vector<LaunchArg>& args,
                                    const LaunchTarget& target) {
  const bool warps_matter =
      plan_.source.work_group_capable && (target.cuda || program_work_items(target.opencl->info(), 0) > 1);
  SymbolValues fixed;
  std::vector<size_t> other_warps;
  warp_candidates(warps_matter, fixed, other_warps);
  const bool nothing_to_time = plan_.meta_symbols.empty() && other_warps.empty();
  if (nothing_to_time && fixed.empty()) return {};

  std::string key = target.cache_key() + "|" + bound.key;
  // Times measured on builds with the target's other options (-cl-opt-disable, -DNT_NO_HELD_A)
  // choose apart.
  if (const std::string extra = target.cuda ? cuda::extra_nvrtc_options() : extra_opencl_options();
      !extra.empty())
    key += (target.cuda ? "|nvrtc_options=" : "|opencl_options=") + extra;
  // A library's kernel times only the configurations it holds binaries of: its own choices.
  if (has_cuda_images()) key += "|prebuilt";
  if (plan_.num_warps) key += "|num_warps=" + std::to_string(plan_.num_warps);
  for (size_t i = 1; i < num_warps_candidates_.size(); ++i)
    key.append(",").append(std::to_string(num_warps_candidates_[i]));  // (GCC 12 warns, wrongly, on "," + s)
  if (!num_stages_candidates_.empty()) key += "|num_stages=" + std::to_string(num_stages_candidates_.front());
  if (size_t forced = local_memory_for_testing(); forced && !target.cuda)
    key += "|local_memory=" + std::to_string(forced);  // what fits differs
  auto known = [&]() -> std::optional<SymbolValues> {
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(key); it != chosen_.end()) return it->second;
    return std::nullopt;
  };
  if (auto config = known()) return *config;
  // One thread tunes a kernel at a time; the others wait and take its choice.
  std::lock_guard tuning(tuning_mutex_);
  if (auto config = known()) return *config;
  auto keep = [&](const TuningRecord& record) {
    std::lock_guard lock(mutex_);
    chosen_[key] = record.chosen;
    report_.push_back(record);
  };
  if (nothing_to_time) {  // make()'s first num_warps and num_stages, reported with no candidates
    keep({key, {}, fixed, false});
    return fixed;
  }

  // Chosen by an earlier process, or by one tuning it now (whose lock we wait for)?
  std::string disk_key = plan_.source.name + "|" + std::to_string(fnv1a(plan_.source.source)) + "|" + key;
  EntryLock entry_lock = DiskCache::instance().lock("tuning", disk_key);
  if (auto text = DiskCache::instance().read("tuning", disk_key)) {
    auto config = tune::parse_config(*text);
    bool complete = config && config->size() == plan_.meta_symbols.size() +
                                                    config->count(kNumWarpsConfigKey) +
                                                    config->count(kNumStagesConfigKey);
    for (const std::string& name : plan_.meta_symbols) complete = complete && config->count(name);
    for (const auto& [name, value] : fixed) complete = complete && config->count(name);
    if (complete) {
      keep({key, {}, *config, true});
      return *config;
    }
  }

  // The candidates that fit.
  size_t retimed = 0;
  // Configurations the target cannot run as asked are no candidates where others remain: on CUDA,
  // those whose shared memory fits no block; on OpenCL devices that run programs on work-groups,
  // those whose blocks fit no work-group's local memory and need more than kOneItemPrivateBudget
  // of private memory (their programs run on one work-item, their blocks in private memory, which
  // a GPU's driver reserves for every thread it may run at once).
  auto launchable = [&](const tune::Config& config, const SymbolMap& with_config) {
    if (target.cuda) {
      SymbolValues meta(config.begin(), config.end());
      meta.insert(fixed.begin(), fixed.end());
      try {
        cuda_build(cuda_source(), cuda_limits(*target.cuda), with_config, meta);
      } catch (const ValueError&) {
        return false;
      }
      return true;
    }
    if (!plan_.source.work_group_capable) return true;
    const size_t num_warps = num_warps_of(fixed);
    if (!opencl_work_group(plan_.source, *target.opencl, with_config, num_warps).fits_no_work_group)
      return true;
    auto bytes = evaluate_int(plan_.source.private_bytes, with_config);
    return bytes && *bytes <= kOneItemPrivateBudget;
  };
  const bool cpu = !target.cuda && target.opencl->info().is_cpu;
  std::vector<tune::Config> space = tuning_space(bound.values, other_warps.size(), retimed, launchable, cpu);
  if (space.empty()) space = tuning_space(bound.values, other_warps.size(), retimed, {}, cpu);
  const size_t warp_configs = retimed * other_warps.size();
  if (space.empty()) {  // nothing fits: the default's launch says why
    SymbolValues config = plan_.default_config;
    config.insert(fixed.begin(), fixed.end());
    return config;
  }
  for (tune::Config& config : space) config.insert(fixed.begin(), fixed.end());
  // A library's kernel (CUDA binaries built ahead of time) times the candidates it holds binaries
  // of, whatever space its process would enumerate; NVRTC only where it holds none of the block
  // sizes' (the warps' variants are timed only where built).
  auto prebuilt = [&](const tune::Config& config) {
    try {
      return find_cuda_image(*target.cuda, prepare(bound, config, target)->options) != nullptr;
    } catch (const std::exception&) {
      return false;  // cannot run there: not a candidate
    }
  };
  auto prebuilt_only = [&](std::vector<tune::Config>& configs, bool keep_some) {
    if (!target.cuda || !has_cuda_images()) return;
    std::vector<tune::Config> kept;
    for (const tune::Config& config : configs)
      if (prebuilt(config)) kept.push_back(config);
    if (kept.empty() && keep_some) {  // the library's default configuration, at least
      tune::Config config = plan_.default_config;
      config.insert(fixed.begin(), fixed.end());
      if (prebuilt(config)) kept.push_back(config);
    }
    if (!kept.empty() || !keep_some) configs = std::move(kept);
  };
  prebuilt_only(space, true);

  // Outputs go to scratch copies: tuning never changes the caller's tensors
  // (nor applies atomics twice).
  ScratchOutputs scratch(target);
  std::vector<LaunchArg> scratch_args = args;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!plan_.params[i].written || !std::holds_alternative<TensorArg>(args[i])) continue;
    TensorArg& t = std::get<TensorArg>(scratch_args[i]);
    Span span = span_of(t);
    if (span.empty || t.meta) continue;
    int64_t item = dtype_bytes(plan_.params[i].dtype);
    const char* base = static_cast<const char*>(t.data) + span.lo * item;
    t.data = scratch.copy_of(base, static_cast<size_t>(span.elements() * item)) - span.lo * item;
  }

  // On a CPU, an element-wise kernel whose source takes its meta symbols as arguments
  // (KernelSource::runtime_meta) times every candidate on one build of that form: PoCL builds one
  // program at a time, each at a fixed cost of most of a build, so that six candidates took six
  // times as long. Launches run on that build too (prepare_launch()).
  // (Where it fails to build, each candidate is built on its own, as elsewhere.)
  const bool one_build = launches_on_one_build(target) && warp_configs == 0 &&
                         prepare_one_build(bound, space.front(), target, /*keep=*/false);
  // Build the candidates in parallel (tune/parallel_builds.h), then time them one by one.
  const size_t parallel_builds = tune::parallel_builds(
      target.cuda != nullptr, std::thread::hardware_concurrency(), tune::available_memory());
  tune::TuningProgress progress(plan_.source.name.starts_with("nt_kernel_") ? plan_.source.name.substr(10)
                                                                            : plan_.source.name);
  auto build_all = [&](const std::vector<tune::Config>& configs) {
    std::vector<std::future<void>> builds;
    for (const tune::Config& config : configs) {
      if (one_build) break;  // built above
      builds.push_back(std::async(std::launch::async, [this, &bound, &target, config] {
        try {  // for the device the candidate's launches will run on
          auto prepared = prepare(bound, config, target);
          if (target.cuda)
            cuda_function(*prepared);
          else
            opencl_program(*prepared, /*keep=*/false);
        } catch (const std::exception&) {
          // timed below as a failure
        }
      }));
      if (builds.size() == parallel_builds) {
        for (auto& b : builds) b.get();
        progress.built(builds.size());
        builds.clear();
        check_interrupts();
      }
    }
    for (auto& b : builds) b.get();
    progress.built(builds.size());
  };
  // On PoCL, helper processes compile candidates at the same time (driver/compile_ahead.cpp).
  TuningRecord record{key, {}, {}, false, one_build};
  if (!one_build)
    compile_ahead(bound, space, scratch_args, target, record, [&] { progress.ahead(space.size()); });
  build_all(space);
  // Nothing is timed while helper processes run, this thread's or another's (tune/helper_gate.h);
  // none start until this tuning ends.
  const tune::HelperGate::Timing timing = tune::HelperGate::process().timing([] { check_interrupts(); });
  // A candidate's time: on a CPU the wall time of its launch (launch costs included); elsewhere
  // the kernel's own time on the device, when the device reports it (host transfers, the same
  // for every candidate and far longer on a discrete GPU, would drown the differences).
  const bool device_time = target.cuda || !target.opencl->info().is_cpu;
  auto time_of = [&](const tune::Config& config) {
    double on_device = 0.0;
    double wall = seconds_of([&] { on_device = run(bound, config, scratch_args, target, true, one_build); });
    return device_time && on_device > 0.0 ? on_device : wall;
  };
  double best = std::numeric_limits<double>::infinity();
  SymbolValues chosen = space.front();
  auto time_all = [&](const std::vector<tune::Config>& configs) {
    for (const tune::Config& config : configs) {
      check_interrupts();  // between candidates: nothing is half-written
      double seconds = std::numeric_limits<double>::infinity();
      try {
        run(bound, config, scratch_args, target, true, one_build);  // warm-up
        seconds = time_of(config);
        g_timing_runs += 2;
        if (seconds < 1.25 * best) {
          seconds = std::min(seconds, time_of(config));
          ++g_timing_runs;
        }
      } catch (const std::exception&) {
        // A candidate that fails to build or run is never chosen.
      }
      record.candidates.emplace_back(config, seconds);
      if (seconds < best) {
        best = seconds;
        chosen = config;
      }
      progress.timed(best);
    }
  };
  time_all(space);
  // On a CPU a launch's time moves by 10% or more from run to run (the other core's work, other
  // processes), as much as the fastest candidates differ by (tiles of a 2048² matmul from 128 x 128
  // x 256 to 256 x 512 x 64 within 10%): the kFinalists fastest are timed kFinalRuns times more, in
  // turns, each keeping its best, so that one run that went well or badly decides less (before the
  // neighbours, which walk from the fastest).
  if (cpu && record.candidates.size() > 1) {
    std::vector<size_t> order(record.candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return record.candidates[x].second < record.candidates[y].second;
    });
    if (order.size() > kFinalists) order.erase(order.begin() + kFinalists, order.end());
    for (int round = 0; round < kFinalRuns; ++round) {
      for (size_t i : order) {
        auto& [config, seconds] = record.candidates[i];
        if (seconds == std::numeric_limits<double>::infinity()) continue;
        check_interrupts();
        try {
          seconds = std::min(seconds, time_of(config));
          ++g_timing_runs;
        } catch (const std::exception&) {
          // it ran before: keep its time
        }
        if (seconds < best) {
          best = seconds;
          chosen = config;
        }
      }
    }
  }
  auto timed = [&](const tune::Config& config) {
    return std::any_of(record.candidates.begin(), record.candidates.end(),
                       [&](const auto& candidate) { return candidate.first == config; });
  };
  // On a GPU, where the default cap left configurations untimed, the fastest one's untimed neighbours
  // (each block size doubled or halved), and again from a neighbour that wins, up to
  // kNeighbourRounds times: the spread samples the space coarsely, and the best tile is often a
  // step or two from a sampled one (the tutorial's float16 matmul on Hopper: 128 x 128 x 32
  // sampled, 128 x 128 x 64 on 4 warps next to it, 128 x 256 x 64 on 8 warps next to that).
  // CPUs skip this: their builds are serialized (PoCL's compiler lock) and first calls would wait.
  // NINETOOTHED_TUNE_NEIGHBOURS=1 asks for it on every device, 0 on none.
  // (Not where the test suite lowers the default cap to save builds, unless asked.)
  if (!max_num_configs_ &&
      refines_neighbours((target.cuda || !target.opencl->info().is_cpu) && !g_default_cap)) {
    size_t warps = kDefaultNumWarps;  // those the sampled candidates ran on
    if (auto given = fixed.find(kNumWarpsConfigKey); given != fixed.end())
      warps = static_cast<size_t>(given->second);
    // On CUDA the walk may step past the sampled space's blocks, to twice their elements: there
    // `launchable` knows what fits (shared memory), and big tensor-core tiles pay (the float16
    // matmul's 128 x 256 on 8 warps, 0.260 ms on an H200 against 0.297 for 128 x 128 on 4).
    const int64_t walk_elements = target.cuda ? 2 * kTuningBlockBudget
                                  : cpu       ? kCpuTuningBlockBudget
                                              : kTuningBlockBudget;
    auto untimed_neighbours = [&](const tune::Config& from) {
      size_t own = warps;
      if (auto w = from.find(kNumWarpsConfigKey); w != from.end()) own = static_cast<size_t>(w->second);
      std::vector<tune::Config> near;
      for (tune::Config config : neighbours(bound.values, from, own, other_warps, launchable, walk_elements))
        if (!timed(config)) near.push_back(std::move(config));
      prebuilt_only(near, false);
      return near;
    };
    tune::walk_neighbours(chosen, kNeighbourRounds, untimed_neighbours,
                          [&](const std::vector<tune::Config>& near) {
                            build_all(near);
                            time_all(near);
                            return chosen;
                          });
  }
  if (warp_configs > 0) {
    // The tiles timed on the sampled warps, fastest first: a neighbour the walk timed on other warps
    // is one of their variants already, not a tile to time again.
    std::vector<std::pair<double, tune::Config>> ranked;
    const auto sampled = fixed.find(kNumWarpsConfigKey);
    for (const auto& [config, seconds] : record.candidates) {
      const auto warps = config.find(kNumWarpsConfigKey);
      const bool on_sampled_warps = warps == config.end()
                                        ? sampled == fixed.end()
                                        : sampled != fixed.end() && warps->second == sampled->second;
      if (seconds < std::numeric_limits<double>::infinity() && on_sampled_warps)
        ranked.emplace_back(seconds, config);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<tune::Config> warps;
    for (size_t i = 0; i < std::min<size_t>(ranked.size(), retimed); ++i) {
      for (size_t n : other_warps) {
        tune::Config config = ranked[i].second;
        config[kNumWarpsConfigKey] = static_cast<int64_t>(n);
        if (!timed(config)) warps.push_back(config);  // a neighbour may have been
      }
    }
    prebuilt_only(warps, false);
    build_all(warps);
    time_all(warps);
  }
  record.chosen = chosen;
  // The chosen candidate's binary to the disk cache, for the next process (built without: build_all).
  if (!target.cuda) {
    try {
      opencl_program(*prepare_launch(bound, chosen, target), /*keep=*/true);
    } catch (const std::exception&) {
      // none was chosen that runs: the launch says why
    }
  }
  keep(record);
  DiskCache::instance().write("tuning", disk_key, tune::format_config(chosen));
  return chosen;
}

}  // namespace nt
