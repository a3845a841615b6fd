// CompiledKernel: a traced kernel made runnable.
//
// In: the traced IR of one specialisation (parameter dtypes fixed), or the
// LaunchPlan an ahead-of-time library embeds. From IR, at construction it is
// verified, lowered (single-use Lets inlined) and turned into OpenCL C and a
// LaunchPlan once; everything after reads the plan alone. A launch binds the caller's tensors and scalars to
// the arranged parameters: sizes and strides (in elements) from the tensors, constexpr values by name, meta
// values from the configuration; checks that every arranged tensor has the same outermost shape; builds the
// program for that configuration (`-DNAME=value`, kept in the ProgramCache); wraps the tensors' memory and
// runs one program per element of the outermost shape.
//
// Per-launch cost: everything a launch's signature (shapes, strides,
// constexpr values, configuration, device) determines is a Prepared launch, kept per
// signature, so a repeated launch only hashes the signature, wraps the
// memory and enqueues. A small launch (one program, or at most
// small_launch_limit() elements of blocks in all) runs on the device's
// single-threaded companion (Device::small()), a big one on the device.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "codegen/c/kernel_source.h"
#include "driver/launch_plan.h"
#include "driver/work_group.h"
#include "ir/ir.h"
#include "lower/program_layout.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/workspace_pool.h"
#include "tune/config_space.h"

namespace nt {

// A jagged tensor's sequences (PlanParam::jagged_dim): its TensorArg's shape is the longest
// sequence's in the jagged dimension, its stride 0 in dimension 0; `data` is where its values start.
struct SequencesArg {
  const void* offsets = nullptr;  // count + 1 int64 values, checked: 0 <= o[0] <= ... <= the values' size
  int64_t count = 0;
  std::vector<int64_t> values_shape, values_strides;  // what the sequences lie in (its span)
};

struct TensorArg {
  void* data = nullptr;  // the element at index (0, ..., 0)
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;           // in elements, any sign
  int cuda_device = -1;                   // the ordinal of the CUDA device `data` is on; -1: host memory
  std::optional<SequencesArg> sequences;  // a jagged tensor's
  // A tensor on torch's meta device: a shape and strides, no memory. Taken for a parameter the
  // kernel neither reads nor writes (ntops passes one for an absent mask), as Triton takes it.
  bool meta = false;

  // The elements in memory (span_of, copies to a discrete device): a jagged tensor's values'.
  const std::vector<int64_t>& memory_shape() const { return sequences ? sequences->values_shape : shape; }
  const std::vector<int64_t>& memory_strides() const {
    return sequences ? sequences->values_strides : strides;
  }
};

// Where a launch runs: on an OpenCL device (host tensors), or on a CUDA device's stream (the
// tensors all on that device): launch_target().
struct LaunchTarget {
  std::shared_ptr<Device> opencl;
  std::shared_ptr<cuda::CudaDevice> cuda;
  void* stream = nullptr;  // a CUstream (nullptr: the legacy default stream)
  // What tuning choices are kept by.
  std::string cache_key() const;
};

struct ScalarArg {
  bool is_float = false;
  double float_value = 0;
  int64_t int_value = 0;
};

using LaunchArg = std::variant<TensorArg, ScalarArg>;

// Calls `f` with a scalar argument as the kernel parameter of `dtype` takes it (its compute type:
// float16 and bfloat16 as float, booleans as int), for either target's launcher.
template <typename F>
void with_kernel_value(const ScalarArg& s, DType dtype, F&& f) {
  switch (dtype) {
    case DType::float64:
      return f(static_cast<double>(s.is_float ? s.float_value : static_cast<double>(s.int_value)));
    case DType::float32:
    case DType::float16:
    case DType::bfloat16:
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return f(static_cast<float>(s.is_float ? s.float_value : static_cast<double>(s.int_value)));
    case DType::int8:
      return f(static_cast<int8_t>(s.int_value));
    case DType::uint8:
      return f(static_cast<uint8_t>(s.int_value));
    case DType::int16:
      return f(static_cast<int16_t>(s.int_value));
    case DType::uint16:
      return f(static_cast<uint16_t>(s.int_value));
    case DType::int32:
    case DType::boolean:
      return f(static_cast<int32_t>(s.int_value));
    case DType::uint32:
      return f(static_cast<uint32_t>(s.int_value));
    case DType::int64:
      return f(static_cast<int64_t>(s.int_value));
    case DType::uint64:
      return f(static_cast<uint64_t>(s.int_value));
  }
}

// The elements a tensor spans, relative to its element (0, ..., 0): from
// `lo` (<= 0) to `hi`; `empty` when it has no elements.
struct Span {
  int64_t lo = 0, hi = 0;
  bool empty = false;
  int64_t elements() const { return empty ? 0 : hi - lo + 1; }
};
Span span_of(const TensorArg& t);

// Private memory one program may use: work-items run on the device's worker
// threads, whose stacks hold their private arrays.
inline constexpr int64_t kPrivateMemoryBudget = 2 << 20;

// What auto-tuning did for one key (sizes, strides, constexpr values, device).
struct TuningRecord {
  std::string key;
  std::vector<std::pair<SymbolValues, double>> candidates;  // seconds; infinity if it failed
  SymbolValues chosen;
  bool from_disk = false;  // chosen by an earlier process
  // The candidates were timed on one build that takes the block sizes as arguments (a CPU's
  // element-wise kernel: KernelSource::runtime_meta), not each on its own.
  bool one_build = false;
  // Candidates compiled ahead by helper processes (driver/compile_ahead.cpp); the helpers started,
  // and those asked for that did not start or ended other than with status 0.
  size_t compiled_by_helpers = 0, helpers_started = 0, helpers_failed = 0;
};

// The entry of a tuned configuration that gives num_warps (work-items of a program on a work-group:
// program_work_items()), where make() gave none or several and the device runs programs on work-groups.
inline constexpr const char* kNumWarpsConfigKey = "num_warps";
// The entry that carries upstream's num_stages, where make() gave it: on CUDA the buffers a k loop
// loads tensor-core operands ahead into (NT_STAGES, codegen/c/emitter_pipeline.cpp; the default is
// codegen::kDefaultStages). Its first candidate is used, not timed; OpenCL's code ignores it.
inline constexpr const char* kNumStagesConfigKey = "num_stages";

// Timed runs of candidates in this process (every kernel).
size_t num_timing_runs();

// Launches of more than one program go to a device's single-threaded
// companion when their programs access at most this many block elements
// in all (programs x the elements of every block a program loads or
// stores); launches of one program always do. Negative: never. For tests
// and measurements; the default is measured (docs/performance.md).
int64_t small_launch_limit();
void set_small_launch_limit(int64_t elements);
// Launches run on a small companion device in this process.
size_t num_small_launches();
// For tests: the number of candidates tuning times for kernels made without max_num_configs
// (0: the default, 12, and 4 of num_warps where those are tuned).
void set_default_max_num_configs_for_testing(size_t n);

class CompiledKernel {
 public:
  explicit CompiledKernel(const ir::Kernel& traced);
  explicit CompiledKernel(LaunchPlan plan);

  const std::string& source() const { return plan_.source.source; }
  // The lowered IR (empty for a kernel made from a plan).
  const ir::Kernel& lowered() const { return lowered_; }
  const LaunchPlan& plan() const { return plan_; }
  // Symbols the caller must give by keyword, and those the compiler chooses.
  const std::vector<std::string>& constexpr_symbols() const { return plan_.constexpr_symbols; }
  const std::vector<std::string>& meta_symbols() const { return plan_.meta_symbols; }
  // The configuration used for meta symbols when none is given.
  const SymbolValues& default_config() const { return plan_.default_config; }

  // Runs the kernel; returns the device time in seconds. Without `config`,
  // meta symbols take the configuration tuned for these arguments: chosen by
  // timing the candidates on scratch copies of the written tensors the first
  // time a key is seen, kept in memory and on disk (DiskCache "tuning").
  // Tensors on a CUDA device run there, on `cuda_stream` (a CUstream; nullptr: the legacy default
  // stream), without waiting for the kernel: the device time is then not known (NaN), but during
  // tuning.
  double launch(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values,
                const std::optional<SymbolValues>& config = std::nullopt, void* cuda_stream = nullptr);
  // The kernel in CUDA C (made on first use; ValueError for a kernel made from a plan, or one
  // that cannot run a program on a thread block).
  const codegen::KernelSource& cuda_source() const;
  // The kernel's sources for launches where the parameters `own` have outermost shapes other
  // than the grid's (ir::Kernel::own_programs; none: the plan's source and cuda_source()), made
  // on first use. ValueError for a kernel made from a plan: it has no IR to make them from.
  const codegen::KernelSource& opencl_source(const std::set<int>& own) const;
  const codegen::KernelSource& cuda_source(const std::set<int>& own) const;

  // Ahead-of-time CUDA (caller="cuda"): the build options of every configuration a launch on a
  // device of `architecture` ("sm_90a"; "compute_80": PTX for 8.0 and later) may ask for: each
  // candidate tuning times (and the default), for tensors of any strides and for contiguous
  // ones. A library embeds their binaries (add_cuda_image), so that it launches with no NVRTC.
  // ValueError where the configurations depend on more than the plan holds (sizes).
  std::vector<std::string> cuda_build_variants(const std::string& architecture) const;
  // A binary of cuda_source() for `architecture` built with `options` (one of
  // cuda_build_variants()): launches whose configuration it fits load it instead of compiling.
  // A launch with unit-stride options no image has takes the image without them (a stride of 1
  // is one value of any stride). Call before the first launch.
  void add_cuda_image(std::string architecture, std::string options, std::string image);

  void set_max_num_configs(size_t n) { max_num_configs_ = n; }
  // Warps of 32 work-items per program where programs run on work-groups
  // (program_work_items()); 0: the default.
  void set_num_warps(size_t n) {
    std::lock_guard lock(mutex_);
    plan_.num_warps = n;
    num_warps_candidates_.clear();
    prepared_.clear();  // they hold the work-items of the old value
  }
  // Upstream's tuning spaces: make(num_warps=(4, 8), num_stages=(1, 3)). Several num_warps are
  // tuned with the meta symbols where programs run on work-groups (the block sizes on the first,
  // then the fastest configurations again on the others); elsewhere, and where no configuration
  // is tuned, the first is used. Configurations carry a num_warps entry then, and a num_stages
  // entry (the first candidate: CUDA C's NT_STAGES) whenever num_stages was given.
  void set_tuning_candidates(std::vector<size_t> num_warps, std::vector<size_t> num_stages) {
    std::lock_guard lock(mutex_);
    plan_.num_warps = num_warps.empty() ? 0 : num_warps.front();
    num_warps_candidates_ = num_warps.size() > 1 ? std::move(num_warps) : std::vector<size_t>{};
    num_stages_candidates_ = std::move(num_stages);
    prepared_.clear();
  }
  // The build options of the last launch (its configuration's macros).
  std::string last_options() const {
    std::lock_guard lock(mutex_);
    return last_options_;
  }
  // The work-items each program of the last launch ran on (1: one work-item per program).
  size_t last_work_items() const { return last_work_items_; }
  std::vector<TuningRecord> tuning_report() const {
    std::lock_guard lock(mutex_);
    return report_;
  }

 private:
  // What one launch's arguments determine (everything but meta values).
  struct Bound {
    SymbolMap values;                  // sizes, strides, constexpr symbols
    std::vector<std::string> options;  // constexpr scalars, unit strides
    std::string key;                   // for tuning
  };
  Bound bind(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values) const;
  // What a bound launch with a configuration runs: built on first use of a
  // signature, then looked up.
  struct Prepared {
    std::shared_ptr<Device> device;          // the (main) device it was made for
    std::shared_ptr<cuda::CudaDevice> cuda;  // or the CUDA device
    std::string options;                     // the build options
    size_t num_programs = 0;
    int64_t work = 0;                  // programs x block elements they access
    int64_t private_bytes = 0;         // per program
    int64_t workspace_bytes = 0;       // the launch's (KernelSource::workspace_bytes)
    int64_t workspace_flag_bytes = 0;  // its first, zeroed before each launch
    size_t work_items = 1;             // per program (lower/program_layout.h)
    size_t shared_bytes = 0;           // CUDA: the dynamic shared memory of a program
    mutable std::atomic<cuda::CUfunction> cuda_function{nullptr};  // CUDA: once found, for every launch
    std::vector<cl_long> size_values;  // by kernel argument (sizes and strides; others unused)
    std::set<int> own_programs;        // parameters of other outermost shapes (opencl_source())
    std::vector<cl_long> meta_args;    // `runtime_meta`: the meta symbols' values, after the arguments
    bool index32 = false;              // OpenCL: built with -DNT_INDEX32, index arguments as cl_int
  };
  // `runtime_meta`: the build that takes the source's meta symbols as arguments
  // (KernelSource::runtime_meta, -DNT_RUNTIME_META), one program for every configuration.
  std::shared_ptr<const Prepared> prepare(const Bound& bound, const SymbolValues& meta,
                                          const LaunchTarget& target, bool runtime_meta = false) const;
  // Do launches on `target` run on that one build (a CPU running programs on one work-item, and a
  // source that takes every meta symbol as an argument)? Then tuning's candidates and the chosen
  // configuration share one PoCL build.
  bool launches_on_one_build(const LaunchTarget& target) const;
  // prepare(..., runtime_meta) with its program built (`keep`: its binary to the disk cache), or
  // null where that build fails (one_build_failed_ is then set).
  std::shared_ptr<const Prepared> prepare_one_build(const Bound& bound, const SymbolValues& meta,
                                                    const LaunchTarget& target, bool keep) const;
  // prepare() for a launch: on the one build where launches_on_one_build() and it builds, else on
  // the configuration's own.
  std::shared_ptr<const Prepared> prepare_launch(const Bound& bound, const SymbolValues& meta,
                                                 const LaunchTarget& target) const;
  // The one build failed here once (tuning's or a launch's try): not tried again.
  mutable std::atomic<bool> one_build_failed_{false};
  // The warps a configuration asks for: its num_warps entry (tuning's), else make()'s (0: the default).
  size_t num_warps_of(const SymbolValues& meta) const;
  // What a configuration (symbols' `values`, `meta`) builds on a CUDA device with `limits`: the
  // options after build_options()'s, the threads of a block and its dynamic shared memory.
  // ValueError where the configuration needs more shared memory than the device has.
  struct CudaBuild {
    std::string options;
    size_t work_items = 0;
    size_t shared_bytes = 0;
  };
  const codegen::KernelSource& source_variant(const std::set<int>& own, bool cuda) const;
  CudaBuild cuda_build(const codegen::KernelSource& source, const cuda::CudaLimits& limits,
                       const SymbolMap& values, const SymbolValues& meta) const;
  // The target of a launch with `args`: ValueError when tensors are on different devices.
  LaunchTarget launch_target(const std::vector<LaunchArg>& args, void* cuda_stream) const;
  double run(const Bound& bound, const SymbolValues& meta, const std::vector<LaunchArg>& args,
             const LaunchTarget& target, bool timed = false, bool runtime_meta = false);
  // A prepared launch's arguments, with `args`' values, to a KernelLauncher, or to a LaunchRecorder
  // (runtime/launch_replay.h: the same launch in a helper process). `workspace`: the launch's
  // (KernelSource::workspace_bytes, its flags zeroed), or none: every program packs its own dot
  // operands.
  template <typename Sink>
  void set_arguments(Sink& sink, const Prepared& prepared, const std::vector<LaunchArg>& args,
                     const WorkspacePool::Lease* workspace = nullptr) const;
  // Before tuning times `space` on a PoCL CPU device: each candidate built and launched once on
  // `args` (tuning's scratch outputs), by this process and helper processes at once, so that PoCL's
  // kernel cache holds them all (driver/compile_ahead.cpp). `after_each`: called after each
  // candidate this process compiled. What the helpers did goes to `record` (compiled_by_helpers,
  // helpers_started, helpers_failed).
  void compile_ahead(const Bound& bound, const std::vector<tune::Config>& space,
                     const std::vector<LaunchArg>& args, const LaunchTarget& target, TuningRecord& record,
                     const std::function<void()>& after_each);
  // `keep_binary`: the program's binary goes to the disk cache (not for tuning's runs: ProgramCache).
  double execute(const Prepared& prepared, const std::vector<LaunchArg>& args, bool keep_binary = true);
  // execute() on a CUDA device's stream; `timed`: wait for the kernel and return its device
  // time (CUDA events), else NaN at once.
  double execute_cuda(const Prepared& prepared, const std::vector<LaunchArg>& args, void* stream, bool timed);
  // Compiles (or finds, among the images added) a prepared CUDA launch's kernel; kept in the
  // Prepared, so that later launches look nothing up.
  cuda::CUfunction cuda_function(const Prepared& prepared) const;
  cuda::CUfunction find_cuda_function(const Prepared& prepared) const;
  struct CudaImage {
    std::string architecture, options, image;
  };
  // The image for `options` on `device`: of the best architecture the device runs
  // (image_architecture()), with those options or without their unit-stride macros.
  const CudaImage* find_cuda_image(const cuda::CudaDevice& device, const std::string& options) const;
  // Among the images added, the architecture `device` runs best: its own cubin, an earlier cubin
  // of its major version, the newest PTX it runs; nullopt where none runs there.
  std::optional<std::string> image_architecture(const cuda::CudaDevice& device) const;
  // The limits a launch on `device` builds its configuration for: the device's, or where a
  // library's binaries are of another architecture, that architecture's.
  cuda::CudaLimits cuda_limits(const cuda::CudaDevice& device) const;
  bool has_cuda_images() const {
    std::lock_guard lock(mutex_);
    return !cuda_images_.empty();
  }
  // The prepared launch's device, or its single-threaded companion for a small launch.
  static std::shared_ptr<Device> target_device(const Prepared& prepared);
  // Where and how an OpenCL launch runs (execute(), and the launches compile_ahead() records).
  struct LaunchGeometry {
    std::shared_ptr<Device> device;  // target_device()
    bool small = false;              // the device's small companion
    const codegen::KernelSource* source = nullptr;
    size_t global_size = 0, local_size = 1;
  };
  LaunchGeometry launch_geometry(const Prepared& prepared) const;
  // The OpenCL program of a prepared launch on target_device(), built where ProgramCache has none;
  // `keep`: its binary goes to the disk cache.
  ClProgram opencl_program(const Prepared& prepared, bool keep) const;
  // The launch's signature (appended to `key`); false when the arguments do
  // not fit the parameters (the slow path then says why).
  bool signature(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values,
                 const std::optional<SymbolValues>& config, std::vector<int64_t>& key) const;
  SymbolValues choose(const Bound& bound, const std::vector<LaunchArg>& args, const LaunchTarget& target);
  // `runtime`: the meta symbols of KernelSource::runtime_meta get no -D (kernel arguments instead).
  std::string build_options(const Bound& bound, const SymbolValues& meta, SymbolMap& values,
                            const std::vector<std::string>& runtime = {}) const;
  // Appends the unit-stride option of each stride argument `is_unit` takes, in the arguments' order
  // (bind()'s for a launch's strides of 1; cuda_build_variants()'s for contiguous tensors).
  void add_unit_strides(std::vector<std::string>& options,
                        const std::function<bool(const codegen::KernelArg&)>& is_unit) const;
  // A constexpr scalar's value fixed in the plan, as an argument.
  static ScalarArg fixed_scalar(double value);
  // The option of a constexpr scalar parameter's value (`index`: the parameter's).
  static std::string constexpr_option(int index, const ScalarArg& value);
  // make()'s num_warps and num_stages as tuning sees them: what every candidate carries (`fixed`),
  // and the warps the fastest candidates are timed again on where `warps_matter` (programs on
  // work-groups).
  void warp_candidates(bool warps_matter, SymbolValues& fixed, std::vector<size_t>& other_warps) const;
  // Tuning's block-size candidates for launches whose sizes and strides are `values` (those not
  // known rule nothing out), before `num_other_warps` warps; `retimed`: how many of the fastest
  // are timed again on each of those.
  // `launchable` (where given) rules out more: configurations a target cannot run as asked.
  // `cpu`: for a CPU device, whose blocks may be larger (tuning.cpp's budgets).
  using Launchable = std::function<bool(const tune::Config& config, const SymbolMap& with_config)>;
  std::vector<tune::Config> tuning_space(const SymbolMap& values, size_t num_other_warps, size_t& retimed,
                                         const Launchable& launchable = {}, bool cpu = false) const;
  // Does `config` lie in tuning's space for `values` (its symbols' ranges, the memory budgets, at
  // most `block_elements` elements a block, and `launchable`)?
  bool in_tuning_space(const SymbolMap& values, const tune::Config& config, const Launchable& launchable,
                       int64_t block_elements) const;
  // The configurations next to `best` (run on `warps` warps) in tuning's space, blocks of up to
  // `block_elements` elements: each block size doubled or halved alone, and doubled on twice the
  // warps where `other_warps` holds that number.
  std::vector<tune::Config> neighbours(const SymbolMap& values, const tune::Config& best, size_t warps,
                                       const std::vector<size_t>& other_warps, const Launchable& launchable,
                                       int64_t block_elements) const;

  struct Built {
    ClProgram program;
    std::vector<std::unique_ptr<KernelLauncher>> idle;  // launchers no launch is using
  };

  ir::Kernel lowered_;
  LaunchPlan plan_;
  lower::ProgramLayout layout_{{}};
  // Threads: launch() may run in many threads at once. mutex_ guards the
  // members below it; tuning_mutex_ lets one thread tune at a time (the
  // others then find its choice). Everything above is set by the constructor.
  mutable std::mutex mutex_;
  std::mutex tuning_mutex_;
  std::shared_ptr<Device> device_;
  std::map<std::string, Built> built_[2];  // by build options; [1]: on the small companion
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& key) const;
  };
  std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Prepared>, KeyHash> prepared_;
  size_t max_num_configs_ = 0;                 // 0: the default cap
  std::vector<size_t> num_warps_candidates_;   // several, or none (plan_.num_warps alone)
  std::vector<size_t> num_stages_candidates_;  // recorded: the first goes into configurations
  std::atomic<size_t> last_work_items_{0};
  std::string last_options_;
  std::map<std::string, SymbolValues> chosen_;  // by tuning key
  mutable std::once_flag cuda_source_once_;
  mutable std::optional<codegen::KernelSource> cuda_source_;
  // Sources for launches with parameters of other outermost shapes, by those parameters.
  mutable std::mutex variants_mutex_;
  mutable std::map<std::set<int>, std::unique_ptr<codegen::KernelSource>> opencl_variants_, cuda_variants_;
  std::vector<CudaImage> cuda_images_;  // set before launches
  std::vector<TuningRecord> report_;
};

}  // namespace nt
