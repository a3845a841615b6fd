// CompiledKernel::compile_ahead(): tuning's candidates compiled by this process and helper processes
// at once, on PoCL.
//
// PoCL compiles under one lock per process: each candidate's build (about 0.3 s for upstream's conv2d
// test) and, at its first launch, its work-group function (about 0.6 s). Tuning that kernel's 42
// candidates spent some 37 of its 40 s so, on one core of two. Here the candidates form a queue: this
// process takes them one by one and builds and launches each, as tuning's warm-up would, while
// helpers (runtime/launch_replay.h) replay the same launches, each its own copy of the buffers,
// filling PoCL's kernel cache. Tuning then builds and times every candidate as before, finding the
// helpers' in the cache. It times nothing until the helpers have ended: no candidate is timed while
// they take cores.
#include <cstdlib>
#include <thread>

#include "driver/compiled_kernel.h"
#include "runtime/launch_replay.h"
#include "runtime/program.h"
#include "support/interrupts.h"
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

}  // namespace

size_t CompiledKernel::compile_ahead(const Bound& bound, const std::vector<tune::Config>& space,
                                     const std::vector<LaunchArg>& args, const LaunchTarget& target,
                                     const std::function<void()>& after_each) {
  // Only where PoCL keeps what a helper compiles for this process to read.
  if (target.cuda || !target.opencl->info().is_pocl || pocl_kernel_cache_disabled()) return 0;
  const std::optional<uint64_t> available = tune::available_memory();
  const size_t helpers =
      tune::tuning_helpers(std::thread::hardware_concurrency(), space.size(), available, asked_helpers());
  const std::string program = helpers ? tuning_helper_program() : "";
  if (program.empty()) return 0;
  // Each candidate's launch as execute() would make it.
  ReplayJobs jobs;
  std::vector<const tune::Config*> configs;
  for (const tune::Config& config : space) {
    try {
      auto prepared = prepare(bound, config, target);
      if (prepared->num_programs == 0) continue;  // execute() launches nothing
      const std::shared_ptr<Device> device = target_device(*prepared);
      const codegen::KernelSource& source = opencl_source(prepared->own_programs);
      ReplayLaunch launch;
      launch.device_index = prepared->device->info().index;
      launch.small = device != prepared->device;
      launch.device_name = device->info().name;
      launch.source = jobs.source(source.name, source.source);
      launch.options = prepared->options;
      launch.global_size = lower::ProgramLayout::global_size(prepared->num_programs, prepared->work_items);
      launch.local_size = lower::ProgramLayout::local_size(prepared->work_items);
      LaunchRecorder recorder(jobs, launch);
      set_arguments(recorder, *prepared, args);
      jobs.launches.push_back(std::move(launch));
      configs.push_back(&config);
    } catch (const std::exception&) {
      // no launch: tuning's own try says why
    }
  }
  // The buffers' copies: one in the shared file, and what each process writes of it.
  if (jobs.launches.size() < tune::kHelpedCandidates ||
      (available && jobs.buffer_bytes() * (helpers + 1) > *available / 2))
    return 0;
  ReplayHelpers helping(jobs, program, helpers);
  while (std::optional<size_t> job = helping.claim()) {
    check_interrupts();  // (ReplayHelpers' destructor ends the helpers)
    try {
      run(bound, *configs[*job], args, target, /*timed=*/true);
    } catch (const std::exception&) {
      // tuning runs it again and records the failure
    }
    after_each();
  }
  return helping.wait([] { check_interrupts(); });
}

}  // namespace nt
