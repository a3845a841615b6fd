// CompiledKernel::compile_ahead(): tuning's candidates compiled by this process and helper processes
// at once, on PoCL.
//
// PoCL compiles under one lock per process: each candidate's build (about 0.3 s for upstream's conv2d
// test) and, at its first launch, its work-group function (about 0.6 s). Tuning that kernel's 42
// candidates spent some 37 of its 40 s so, on one core of two. Here the candidates form a queue: this
// process takes them one by one and builds and launches each, as tuning's warm-up would, while
// helpers (runtime/launch_replay.h) replay the same launches, each its own copy of the buffers,
// filling PoCL's kernel cache. Tuning then builds and times every candidate as before, finding the
// helpers' in the cache. It times nothing until the helpers have ended, nor while another thread's
// run (tune/helper_gate.h: the helpers are leased from one process-wide budget, none while a thread
// times): no candidate is timed while helpers take cores.
#include <cstdlib>
#include <string_view>
#include <thread>

#include "driver/compiled_kernel.h"
#include "runtime/launch_replay.h"
#include "runtime/program.h"
#include "support/interrupts.h"
#include "tune/helper_gate.h"
#include "tune/parallel_builds.h"

namespace nt {

namespace {

// NINETOOTHED_TUNING_HELPERS: at most so many helpers (0: none), where it is a number.
std::optional<size_t> asked_helpers() {
  const char* asked = std::getenv("NINETOOTHED_TUNING_HELPERS");
  if (!asked || !*asked) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(asked, &end, 10);
  if (*end != '\0' || n < 0) return std::nullopt;
  return static_cast<size_t>(n);
}

// For tests (tests/python/test_tuning_helpers.py): NINETOOTHED_TUNING_HELPERS_ONLY=1 leaves every job
// to the helpers where one started, so that what they compile does not depend on who claims first.
bool helpers_only() {
  const char* only = std::getenv("NINETOOTHED_TUNING_HELPERS_ONLY");
  return only && std::string_view(only) == "1";
}

}  // namespace

void CompiledKernel::compile_ahead(const Bound& bound, const std::vector<tune::Config>& space,
                                   const std::vector<LaunchArg>& args, const LaunchTarget& target,
                                   TuningRecord& record, const std::function<void()>& after_each) {
  // Only where PoCL keeps what a helper compiles for this process to read.
  if (target.cuda || !target.opencl->info().is_pocl || pocl_kernel_cache_disabled()) return;
  const size_t budget = tune::helper_budget(std::thread::hardware_concurrency(), asked_helpers());
  const size_t wanted = tune::tuning_helpers(budget, space.size());
  const std::string program = wanted ? tuning_helper_program() : "";
  if (program.empty()) return;
  // Each candidate's launch as execute() would make it.
  ReplayJobs jobs;
  std::vector<const tune::Config*> configs;
  for (const tune::Config& config : space) {
    try {
      auto prepared = prepare(bound, config, target);
      if (prepared->num_programs == 0) continue;  // execute() launches nothing
      const LaunchGeometry geometry = launch_geometry(*prepared);
      ReplayLaunch launch;
      launch.device_index = prepared->device->info().index;
      launch.small = geometry.small;
      launch.device_name = geometry.device->info().name;
      launch.source = jobs.source(geometry.source->name, geometry.source->source);
      launch.options = prepared->options;
      launch.global_size = geometry.global_size;
      launch.local_size = geometry.local_size;
      LaunchRecorder recorder(jobs, launch);
      set_arguments(recorder, *prepared, args);
      jobs.launches.push_back(std::move(launch));
      configs.push_back(&config);
    } catch (const std::exception&) {
      // no launch: tuning's own try says why
    }
  }
  if (jobs.launches.size() < tune::kHelpedCandidates) return;
  // The helpers this process's budget and memory leave (the buffers' copies: one in the shared
  // file, and one for what each helper writes); none while another thread times (tune/helper_gate.h).
  tune::HelperGate::Lease lease = tune::HelperGate::process().lease(
      std::min(wanted, jobs.launches.size() - 1), budget, tune::available_memory(), jobs.buffer_bytes());
  if (!lease.helpers()) return;
  ReplayHelpers helping(jobs, program, lease.helpers());  // ended before the lease is given back
  record.helpers_started = helping.started();
  if (!helpers_only() || !helping.started()) {
    while (std::optional<size_t> job = helping.claim()) {
      check_interrupts();  // (ReplayHelpers' destructor ends the helpers)
      try {
        run(bound, *configs[*job], args, target, /*timed=*/true);
      } catch (const std::exception&) {
        // tuning runs it again and records the failure
      }
      after_each();
    }
  }
  record.compiled_by_helpers = helping.wait([] { check_interrupts(); });
  record.helpers_failed = helping.failed();
}

}  // namespace nt
