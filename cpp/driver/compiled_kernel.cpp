#include "driver/compiled_kernel.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/c/mma_ptx.h"
#include "driver/index_width.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "lower/inline_lets.h"
#include "runtime/program.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt {

namespace {

// See small_launch_limit().
constexpr int64_t kDefaultSmallLaunchLimit = 1 << 16;

// codegen::aligned_rows_macro()'s promise: the first element 16-byte aligned, the last stride 1, the
// others multiples of 16 bytes (jagged tensors and empty ones not taken).
bool aligned_rows(const TensorArg& t, DType dtype) {
  if (t.sequences || t.meta || t.strides.empty() || t.strides.back() != 1 ||
      reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return false;
  const int64_t bytes = dtype_bytes(dtype);
  for (size_t d = 0; d + 1 < t.strides.size(); ++d)
    if (t.strides[d] * bytes % 16 != 0) return false;
  return true;
}

}  // namespace

Span span_of(const TensorArg& t) {
  Span span;
  const auto& shape = t.memory_shape();
  const auto& strides = t.memory_strides();
  for (size_t d = 0; d < shape.size(); ++d) {
    span.empty = span.empty || shape[d] == 0;
    int64_t extent = (shape[d] - 1) * strides[d];
    (extent < 0 ? span.lo : span.hi) += extent;
  }
  return span;
}

CompiledKernel::CompiledKernel(const ir::Kernel& traced) {
  ir::verify(traced);
  lowered_ = lower::inline_lets(traced);
  ir::verify(lowered_);
  plan_ = make_launch_plan(lowered_, codegen::generate_opencl(lowered_));
  layout_ = lower::ProgramLayout(ir::grid_shape(lowered_));
}

CompiledKernel::CompiledKernel(LaunchPlan prepared) : plan_(std::move(prepared)) {
  if (plan_.grid_param >= 0) layout_ = lower::ProgramLayout(plan_.params[plan_.grid_param].outer_shape);
}

namespace {

// Measured on PoCL 3.1 (docs/performance.md): below this many block elements
// the pthread device's ~45 us wake-up costs more than its second thread saves.
std::atomic<int64_t> g_small_launch_limit{kDefaultSmallLaunchLimit};
std::atomic<size_t> g_small_launches{0};
// Private memory per program on a small launch: its work-items run on the
// calling thread's stack, which may be a Python thread's.
constexpr int64_t kSmallPrivateBudget = 256 << 10;
// Plans kept per kernel before they are all dropped (a kernel called with
// ever new shapes).
constexpr size_t kMaxPrepared = 512;

}  // namespace

int64_t small_launch_limit() { return g_small_launch_limit; }
void set_small_launch_limit(int64_t elements) { g_small_launch_limit = elements; }
size_t num_small_launches() { return g_small_launches; }

size_t CompiledKernel::KeyHash::operator()(const std::vector<int64_t>& key) const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : key) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

bool CompiledKernel::signature(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values,
                               const std::optional<SymbolValues>& config, std::vector<int64_t>& key) const {
  const auto& params = plan_.params;
  if (args.size() != params.size()) return false;
  for (size_t i = 0; i < params.size(); ++i) {
    const PlanParam& p = params[i];
    if (p.scalar) {
      const ScalarArg* s = std::get_if<ScalarArg>(&args[i]);
      if (!s) return false;
      if (p.constexpr_) {
        key.push_back(s->is_float);
        int64_t bits = s->int_value;
        if (s->is_float) std::memcpy(&bits, &s->float_value, sizeof bits);
        key.push_back(bits);
      }
      continue;
    }
    const TensorArg* t = std::get_if<TensorArg>(&args[i]);
    if (!t || t->shape.size() != p.source_shape.size() || t->strides.size() != t->shape.size()) return false;
    if (t->sequences.has_value() != (p.jagged_dim >= 0)) return false;
    key.push_back(t->meta);  // bind() refuses a meta tensor the kernel reads or writes
    key.push_back(t->cuda_device >= 0 && aligned_rows(*t, p.dtype));
    key.insert(key.end(), t->shape.begin(), t->shape.end());
    key.insert(key.end(), t->strides.begin(), t->strides.end());
  }
  for (const std::string& name : plan_.constexpr_symbols) {
    auto it = constexpr_values.find(name);
    if (it == constexpr_values.end()) return false;
    key.push_back(it->second);
  }
  key.push_back(config.has_value());
  if (config) {
    const auto warps = config->find(kNumWarpsConfigKey);
    const bool has_warps = warps != config->end();
    const auto stages = config->find(kNumStagesConfigKey);  // CUDA C's NT_STAGES
    const bool has_stages = stages != config->end();
    if (config->size() != plan_.meta_symbols.size() + has_warps + has_stages) return false;
    for (const std::string& name : plan_.meta_symbols) {
      auto it = config->find(name);
      if (it == config->end()) return false;
      key.push_back(it->second);
    }
    key.push_back(has_warps ? warps->second : 0);
    key.push_back(has_stages ? stages->second : 0);
  }
  return true;
}

double CompiledKernel::launch(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values,
                              const std::optional<SymbolValues>& config, void* cuda_stream) {
  const LaunchTarget target = launch_target(args, cuda_stream);
  auto run_prepared = [&](const Prepared& prepared) {
    return target.cuda ? execute_cuda(prepared, args, target.stream, false) : execute(prepared, args);
  };
  std::vector<int64_t> key;
  key.reserve(32);
  bool keyed = signature(args, constexpr_values, config, key);
  key.push_back(target.cuda ? target.cuda->ordinal() : -1);
  if (keyed) {
    std::shared_ptr<const Prepared> prepared;
    {
      std::lock_guard lock(mutex_);
      if (auto it = prepared_.find(key);
          it != prepared_.end() && it->second->device == target.opencl && it->second->cuda == target.cuda)
        prepared = it->second;
    }
    if (prepared) return run_prepared(*prepared);
  }
  Bound bound = bind(args, constexpr_values);
  std::shared_ptr<const Prepared> prepared =
      prepare_launch(bound, config ? *config : choose(bound, args, target), target);
  if (keyed) {
    std::lock_guard lock(mutex_);
    if (prepared_.size() >= kMaxPrepared) prepared_.clear();
    prepared_[key] = prepared;
  }
  return run_prepared(*prepared);
}

ScalarArg CompiledKernel::fixed_scalar(double value) {
  ScalarArg s;
  s.is_float = value != static_cast<double>(static_cast<int64_t>(value));
  s.float_value = value;
  s.int_value = static_cast<int64_t>(value);
  return s;
}

void CompiledKernel::add_unit_strides(std::vector<std::string>& options,
                                      const std::function<bool(const codegen::KernelArg&)>& is_unit) const {
  for (const codegen::KernelArg& a : plan_.source.args) {
    if (a.kind == codegen::KernelArg::Kind::Stride && is_unit(a))
      options.push_back("-D" + codegen::unit_stride_macro(a.symbol) + "=1");
  }
}

std::string CompiledKernel::constexpr_option(int index, const ScalarArg& value) {
  char text[64];
  if (value.is_float)
    std::snprintf(text, sizeof text, "%.17g", value.float_value);
  else
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value.int_value));
  return "-D" + codegen::constexpr_param_macro(index) + "=" + text;
}

CompiledKernel::Bound CompiledKernel::bind(const std::vector<LaunchArg>& args,
                                           const SymbolValues& constexpr_values) const {
  const auto& params = plan_.params;
  if (args.size() != params.size()) {
    throw TypeError("the kernel takes " + std::to_string(params.size()) + " arguments, got " +
                    std::to_string(args.size()));
  }
  Bound bound;
  SymbolMap& values = bound.values;
  std::vector<std::string>& options = bound.options;
  // Constexpr and meta symbols.
  for (const std::string& name : plan_.constexpr_symbols) {
    auto it = constexpr_values.find(name);
    if (it == constexpr_values.end()) {
      throw TypeError("missing a value for the constexpr symbol '" + name + "': pass it by keyword, e.g. " +
                      name + "=...");
    }
    values.emplace(name, Expr(it->second));
  }
  // Sizes and strides of the tensors; constexpr scalars.
  for (size_t i = 0; i < params.size(); ++i) {
    const PlanParam& p = params[i];
    if (p.scalar) {
      if (!std::holds_alternative<ScalarArg>(args[i])) {
        throw TypeError("argument " + std::to_string(i) + " ('" + p.name + "') must be a scalar");
      }
      if (p.constexpr_) {
        ScalarArg s = std::get<ScalarArg>(args[i]);
        if (auto fixed = plan_.fixed_scalars.find(static_cast<int>(i)); fixed != plan_.fixed_scalars.end())
          s = fixed_scalar(fixed->second);
        options.push_back(constexpr_option(static_cast<int>(i), s));
      }
      continue;
    }
    if (!std::holds_alternative<TensorArg>(args[i])) {
      throw TypeError("argument " + std::to_string(i) + " ('" + p.name + "') must be a tensor");
    }
    const auto& t = std::get<TensorArg>(args[i]);
    const size_t ndim = p.source_shape.size();
    if (t.shape.size() != ndim || t.strides.size() != ndim) {
      throw ValueError("argument " + std::to_string(i) + " ('" + p.name + "') must have " +
                       std::to_string(ndim) + " dimensions, got " + std::to_string(t.shape.size()));
    }
    if (t.meta && (p.read || p.written)) {
      throw ValueError("argument " + std::to_string(i) + " ('" + p.name +
                       "') is on the meta device, which holds no data, and the kernel " +
                       (p.written ? "writes" : "reads") + " it");
    }
    if (t.sequences.has_value() != (p.jagged_dim >= 0)) {
      throw ValueError("argument " + std::to_string(i) + " ('" + p.name + "') must be " +
                       (p.jagged_dim >= 0 ? "a jagged tensor (its values and offsets)" : "a dense tensor"));
    }
    for (size_t d = 0; d < ndim; ++d) {
      const Expr& size = p.source_shape[d];
      if (size.is_var()) {
        auto [it, inserted] = values.emplace(size->name, Expr(t.shape[d]));
        if (!inserted && it->second.as_int() != t.shape[d]) {
          throw ValueError("'" + size->name + "' is " + to_python(it->second) + " but argument " +
                           std::to_string(i) + " has size " + std::to_string(t.shape[d]) + " in dimension " +
                           std::to_string(d));
        }
      } else if (auto n = evaluate_int(size, values); n && *n != t.shape[d]) {
        throw ValueError("argument " + std::to_string(i) + " ('" + p.name + "') must have size " +
                         std::to_string(*n) + " in dimension " + std::to_string(d) + ", got " +
                         std::to_string(t.shape[d]));
      }
      // Parameters arranged from one source tensor share its size and stride
      // symbols: their arguments must agree.
      const std::string& stride = p.stride_symbols[d];
      auto [it, inserted] = values.emplace(stride, Expr(t.strides[d]));
      if (!inserted && it->second.as_int() != t.strides[d]) {
        throw ValueError("'" + stride + "' is " + to_python(it->second) + " but argument " +
                         std::to_string(i) + " ('" + p.name + "') has stride " +
                         std::to_string(t.strides[d]) + " in dimension " + std::to_string(d) +
                         " (parameters arranged from one Tensor share its strides)");
      }
    }
  }
  add_unit_strides(options, [&](const codegen::KernelArg& a) { return values.at(a.symbol).as_int() == 1; });
  // Rows aligned for CUDA C's 16-byte copies (codegen/c/emitter_mma_staging.cpp): signature() keys
  // launches by it.
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorArg* t = std::get_if<TensorArg>(&args[i]);
    if (t && t->cuda_device >= 0 && aligned_rows(*t, params[i].dtype))
      options.push_back("-D" + codegen::aligned_rows_macro(static_cast<int>(i)) + "=1");
  }
  // What tuning depends on: the device, every bound value, the options
  // (only kernels with meta symbols are tuned).
  if (!plan_.meta_symbols.empty()) {
    for (const auto& [name, value] : values) bound.key += name + "=" + to_python(value) + ";";
    for (const std::string& o : options) bound.key += o + ";";
  }
  return bound;
}

std::string CompiledKernel::build_options(const Bound& bound, const SymbolValues& meta, SymbolMap& values,
                                          const std::vector<std::string>& runtime) const {
  values = bound.values;
  std::vector<std::string> options = bound.options;
  for (const std::string& name : plan_.meta_symbols) {
    auto it = meta.find(name);
    if (it == meta.end())
      throw ValueError("the configuration has no value for the meta symbol '" + name + "'");
    values.emplace(name, Expr(it->second));
  }
  // Every macro has its value now (constexpr sizes from the tensors).
  for (const auto& [name, attrs] : plan_.source.symbols) {
    int64_t v = *values.at(name).as_int();
    // Upper bounds of other than meta symbols are hints (symbolic/simplify_bounds.cpp): unchecked.
    if ((attrs.lower_bound && v < *attrs.lower_bound) ||
        (attrs.meta && attrs.upper_bound && v > *attrs.upper_bound)) {
      throw ValueError("'" + name + "' = " + std::to_string(v) + " is outside its bounds [" +
                       (attrs.lower_bound ? std::to_string(*attrs.lower_bound) : "") + ", " +
                       (attrs.upper_bound ? std::to_string(*attrs.upper_bound) : "") + "]");
    }
    if (std::find(runtime.begin(), runtime.end(), name) == runtime.end())
      options.push_back("-D" + name + "=" + std::to_string(v));
  }
  if (!runtime.empty()) options.push_back("-DNT_RUNTIME_META");
  for (const std::string& name : plan_.block_size_symbols) {
    auto it = values.find(name);
    if (it == values.end() || !it->second.as_int()) continue;
    if (int64_t v = *it->second.as_int(); v < 1) {
      throw ValueError("'" + name + "' = " + std::to_string(v) +
                       " is a block size (the size of a level under the outermost) and must be at least 1");
    }
  }
  if (auto bytes = evaluate_int(plan_.source.private_bytes, values); bytes && *bytes > kPrivateMemoryBudget) {
    throw ValueError("this configuration needs " + std::to_string(*bytes) +
                     " bytes of private memory per program (blocks held in memory), more than the " +
                     std::to_string(kPrivateMemoryBudget) + " allowed; use smaller block sizes");
  }
  std::string joined;
  for (const std::string& o : options) joined += o + " ";
  return joined;
}

ClProgram CompiledKernel::opencl_program(const Prepared& prepared, bool keep) const {
  return ProgramCache::instance().get(*target_device(prepared), opencl_source(prepared.own_programs).source,
                                      prepared.options, keep);
}

double CompiledKernel::run(const Bound& bound, const SymbolValues& meta, const std::vector<LaunchArg>& args,
                           const LaunchTarget& target, bool timed, bool runtime_meta) {
  auto prepared = prepare(bound, meta, target, runtime_meta);
  return target.cuda ? execute_cuda(*prepared, args, target.stream, timed) : execute(*prepared, args, !timed);
}

size_t CompiledKernel::num_warps_of(const SymbolValues& meta) const {
  if (auto tuned = meta.find(kNumWarpsConfigKey); tuned != meta.end() && tuned->second > 0)
    return static_cast<size_t>(tuned->second);
  return plan_.num_warps;
}

std::shared_ptr<const CompiledKernel::Prepared> CompiledKernel::prepare(const Bound& bound,
                                                                        const SymbolValues& meta,
                                                                        const LaunchTarget& target,
                                                                        bool runtime_meta) const {
  const auto& params = plan_.params;
  auto prepared = std::make_shared<Prepared>();
  prepared->device = target.opencl;
  prepared->cuda = target.cuda;
  SymbolMap values;
  const std::vector<std::string> no_names;
  const std::vector<std::string>& runtime = runtime_meta ? plan_.source.runtime_meta : no_names;
  prepared->options = build_options(bound, meta, values, runtime);
  for (const std::string& name : runtime) prepared->meta_args.push_back(*values.at(name).as_int());
  // The grid: the first tiled parameter's outermost shape. Another parameter of that shape (or, of
  // another rank, as many programs: upstream allows (1, 1, 1) against (1, 1)) shares its program
  // indices; any other unravels the program id over its own shape, as upstream has it, from a
  // source of its own (opencl_source(), cuda_source()).
  std::vector<int64_t> grid;
  const PlanParam* grid_param = plan_.grid_param >= 0 ? &params[plan_.grid_param] : nullptr;
  auto count = [](const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t v : s) n *= v;
    return n;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const PlanParam& p = params[i];
    if (!p.has_outer_level) continue;
    std::vector<int64_t> shape;
    for (const Expr& s : p.outer_shape) {
      auto n = evaluate_int(s, values);
      if (!n) {
        throw ValueError("cannot evaluate the outermost shape of '" + p.name + "': " + to_python(s));
      }
      shape.push_back(std::max<int64_t>(*n, 0));
    }
    if (&p == grid_param) {
      grid = shape;
      continue;
    }
    if (shape.size() == grid.size() ? shape != grid : count(shape) != count(grid))
      prepared->own_programs.insert(static_cast<int>(i));
  }
  const codegen::KernelSource& source = opencl_source(prepared->own_programs);
  if (!runtime.empty() && source.runtime_meta != runtime) {  // a variant without that form: its own build
    prepared->options = build_options(bound, meta, values);
    prepared->meta_args.clear();
  }
  // (build_options() ends in a space.) The options tell the variants' programs apart.
  for (int i : prepared->own_programs) prepared->options += "-DNT_OWN_PROGRAMS_" + std::to_string(i) + " ";
  if (target.cuda) {
    CudaBuild build =
        cuda_build(cuda_source(prepared->own_programs), cuda_limits(*target.cuda), values, meta);
    prepared->options += build.options;
    prepared->work_items = build.work_items;
    prepared->shared_bytes = build.shared_bytes;
  } else {
    prepared->options += "-cl-mad-enable";
    // The register width the source's micro-kernels are cut for (c_types.cpp's NT_VECTOR_BYTES).
    prepared->options += " -DNT_VECTOR_BYTES=" + std::to_string(vector_bytes(*prepared->device));
    if (prepared->device->info().is_cpu) prepared->options += " -DNT_CPU";
    // 32-bit index arithmetic where the tensors allow (driver/index_width.h), as on CUDA: half
    // the lanes of a 64-bit compare or add in a vectorised mask.
    prepared->index32 = fits_index32(params, values) && !opencl_index64_asked();
    if (prepared->index32) prepared->options += " -DNT_INDEX32";
  }
  if (!target.cuda && source.work_group_capable) {
    const OpenclWorkGroup group = opencl_work_group(source, *prepared->device, values, num_warps_of(meta));
    prepared->work_items = group.work_items;
    if (group.work_items > 1) {
      prepared->options += " -DNT_WORK_ITEMS=" + std::to_string(group.work_items);
      if (group.mma_layout)
        prepared->options += group.mma_sync ? " -DNT_MMA_LAYOUT -DNT_MMA_SYNC" : " -DNT_MMA_LAYOUT";
    }
  }
  size_t num_programs = 1;
  for (int64_t n : grid) num_programs *= static_cast<size_t>(n);
  prepared->num_programs = num_programs;
  // What the programs access: every block of every tensor parameter, its
  // middle levels included (a matmul program's whole row of blocks).
  for (const PlanParam& p : params) {
    if (p.scalar) continue;
    int64_t elements = 1;
    for (const Expr& size : p.middle_shape)
      elements *= std::max<int64_t>(evaluate_int(size, values).value_or(1), 1);
    for (const Expr& size : p.block_shape)
      elements *= std::max<int64_t>(evaluate_int(size, values).value_or(1), 1);
    prepared->work += elements;
  }
  prepared->work *= static_cast<int64_t>(num_programs);
  prepared->private_bytes = evaluate_int(source.private_bytes, values).value_or(kPrivateMemoryBudget);
  prepared->workspace_bytes = evaluate_int(source.workspace_bytes, values).value_or(0);
  prepared->workspace_flag_bytes = evaluate_int(source.workspace_flag_bytes, values).value_or(0);
  prepared->size_values.assign(plan_.source.args.size(), 0);
  for (size_t k = 0; k < plan_.source.args.size(); ++k) {
    const codegen::KernelArg& a = plan_.source.args[k];
    if (a.kind == codegen::KernelArg::Kind::Size || a.kind == codegen::KernelArg::Kind::Stride)
      prepared->size_values[k] = *values.at(a.symbol).as_int();
  }
  return prepared;
}

std::shared_ptr<Device> CompiledKernel::target_device(const Prepared& prepared) {
  int64_t limit = g_small_launch_limit;
  bool small = prepared.device->small() && limit >= 0 && prepared.private_bytes <= kSmallPrivateBudget &&
               (prepared.num_programs == 1 || prepared.work <= limit);
  return small ? prepared.device->small() : prepared.device;
}

double CompiledKernel::execute(const Prepared& prepared, const std::vector<LaunchArg>& args,
                               bool keep_binary) {
  if (prepared.num_programs == 0) return 0.0;
  const std::string& joined = prepared.options;
  const LaunchGeometry geometry = launch_geometry(prepared);
  const std::shared_ptr<Device>& device = geometry.device;
  const bool small = geometry.small;
  if (small) ++g_small_launches;

  // A launcher of this launch's own: launches from several threads never
  // share a cl_kernel's arguments. Idle launchers are kept per configuration.
  std::unique_ptr<KernelLauncher> owned;
  std::optional<ClProgram> program;
  {
    std::lock_guard lock(mutex_);
    if (prepared.device != device_) {  // another device was selected: build anew
      built_[0].clear();
      built_[1].clear();
      prepared_.clear();
      device_ = prepared.device;
    }
    if (auto it = built_[small].find(joined); it != built_[small].end()) {
      program = it->second.program;
      if (!it->second.idle.empty()) {
        owned = std::move(it->second.idle.back());
        it->second.idle.pop_back();
      }
    }
  }
  if (!owned) {
    const codegen::KernelSource& source = *geometry.source;
    if (!program) program = ProgramCache::instance().get(*device, source.source, joined, keep_binary);
    owned = std::make_unique<KernelLauncher>(device, *program, source.name);
  }
  KernelLauncher& launcher = *owned;
  // A workspace for the programs that share packed dot operands: the work-item form's, where kernels
  // work in host memory (a CPU's; not through device memory, as set_discrete_memory_for_testing()
  // makes it). Its flags are zeroed: none holds what another launch left.
  WorkspacePool::Lease workspace;
  if (prepared.workspace_bytes > 0 && prepared.work_items == 1 && device->info().is_cpu &&
      device->keeps_host_memory()) {
    workspace = WorkspacePool::instance().lease(static_cast<size_t>(prepared.workspace_bytes));
    if (workspace.data())
      std::memset(workspace.data(), 0,
                  static_cast<size_t>(std::min(prepared.workspace_flag_bytes, prepared.workspace_bytes)));
  }
  set_arguments(launcher, prepared, args, &workspace);
  double seconds = 0.0;
  try {
    seconds = launcher.launch(geometry.global_size, geometry.local_size);
  } catch (const ClError& error) {
    // A GPU's driver reserves a program's private memory for every thread it may run at once.
    const bool no_room = error.code == CL_OUT_OF_HOST_MEMORY || error.code == CL_OUT_OF_RESOURCES;
    if (!no_room || prepared.work_items != 1 || !plan_.source.work_group_capable || device->info().is_cpu)
      throw;
    throw RuntimeError(std::string(error.what()) +
                       ": this configuration's blocks fit no work-group's local memory on " +
                       device->info().name + ", so each program ran on one work-item that holds them in " +
                       std::to_string(prepared.private_bytes) +
                       " bytes of private memory, more than the device gave; use smaller block sizes");
  }
  last_work_items_ = prepared.work_items;
  // Back to the idle launchers (a launch that threw leaves its launcher to be freed).
  std::lock_guard lock(mutex_);
  last_options_ = joined;
  if (device_ == prepared.device) {
    Built& built = built_[small].try_emplace(joined, Built{*program, {}}).first->second;
    constexpr size_t kIdleLaunchers = 8;
    if (built.idle.size() < kIdleLaunchers) built.idle.push_back(std::move(owned));
  }
  return seconds;
}

}  // namespace nt
