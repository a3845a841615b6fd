// CompiledKernel on CUDA devices: which device a launch's tensors choose, the kernel's CUDA C
// source, a configuration's thread block, and the launch on the caller's stream.
//
// In: a launch's arguments (TensorArg::cuda_device says where each tensor lives) and the
// stream. Out: the kernel run by the CUDA driver on that device and stream, with the same
// arguments, in the same order, as the OpenCL source takes (both come from one emitter,
// codegen/c/). A launch does not wait for the kernel; tuning does (CUDA events).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/c/mma_ptx.h"
#include "driver/compiled_kernel.h"
#include "driver/index_width.h"
#include "runtime/program.h"
#include "support/errors.h"
#include "symbolic/substitute.h"

namespace nt {

namespace {

// Work-items of a warp.
constexpr size_t kCudaWarp = 32;

std::string place_of(int cuda_device) {
  return cuda_device < 0 ? std::string("cpu") : "cuda:" + std::to_string(cuda_device);
}

}  // namespace

std::string LaunchTarget::cache_key() const { return cuda ? cuda->cache_key() : opencl->cache_key(); }

LaunchTarget CompiledKernel::launch_target(const std::vector<LaunchArg>& args, void* cuda_stream) const {
  int place = -2;  // not seen yet
  bool mixed = false;
  for (const LaunchArg& a : args) {
    const TensorArg* t = std::get_if<TensorArg>(&a);
    if (!t || t->meta) continue;  // a meta tensor is on no device's memory
    if (place == -2) place = t->cuda_device;
    mixed = mixed || t->cuda_device != place;
  }
  if (mixed) {
    std::string where;
    for (size_t i = 0; i < args.size() && i < plan_.params.size(); ++i) {
      if (const TensorArg* t = std::get_if<TensorArg>(&args[i]); t && !t->meta)
        where +=
            (where.empty() ? "" : ", ") + ("'" + plan_.params[i].name + "' on " + place_of(t->cuda_device));
    }
    throw ValueError("the tensors of one launch must be on one device: " + where);
  }
  LaunchTarget target;
  if (place >= 0) {
    target.cuda = cuda::CudaDevice::get(place);
    target.stream = cuda_stream;
  } else {
    target.opencl = current_device();
  }
  return target;
}

const codegen::KernelSource& CompiledKernel::cuda_source() const {
  if (plan_.cuda_source) return *plan_.cuda_source;
  if (lowered_.params.empty() && !plan_.params.empty())
    throw ValueError(
        "this kernel was made from a launch plan without CUDA C (an ahead-of-time library built for "
        "caller='opencl'): it cannot run on CUDA tensors");
  std::call_once(cuda_source_once_,
                 [this] { cuda_source_ = codegen::generate_source(lowered_, codegen::cuda_dialect()); });
  return *cuda_source_;
}

const codegen::KernelSource& CompiledKernel::opencl_source(const std::set<int>& own) const {
  if (own.empty()) return plan_.source;
  return source_variant(own, false);
}

const codegen::KernelSource& CompiledKernel::cuda_source(const std::set<int>& own) const {
  if (own.empty()) return cuda_source();
  return source_variant(own, true);
}

const codegen::KernelSource& CompiledKernel::source_variant(const std::set<int>& own, bool cuda) const {
  std::lock_guard lock(variants_mutex_);
  auto& variants = cuda ? cuda_variants_ : opencl_variants_;
  if (auto it = variants.find(own); it != variants.end()) return *it->second;
  if (lowered_.params.empty() && !plan_.params.empty()) {
    std::string names;
    for (int i : own) names += (names.empty() ? "'" : ", '") + plan_.params[i].name + "'";
    throw ValueError("the outermost shapes of " + names +
                     " are not the grid's, which a kernel made from a launch plan (an ahead-of-time "
                     "library) cannot take: it has no IR to make their source from");
  }
  ir::Kernel kernel = lowered_;
  kernel.own_programs = own;
  auto source = std::make_unique<codegen::KernelSource>(
      codegen::generate_source(kernel, cuda ? codegen::cuda_dialect() : codegen::opencl_dialect()));
  const auto& a = source->args;
  const auto& b = plan_.source.args;
  bool same = a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i) same = a[i].kind == b[i].kind && a[i].symbol == b[i].symbol;
  if (!same) throw std::logic_error("a source variant takes other arguments than the plan's");
  return *variants.emplace(own, std::move(source)).first->second;
}

CompiledKernel::CudaBuild CompiledKernel::cuda_build(const codegen::KernelSource& source,
                                                     const cuda::CudaLimits& limits, const SymbolMap& values,
                                                     const SymbolValues& meta) const {
  const size_t num_warps = num_warps_of(meta);
  // A power of two within the device's largest block (the tile layouts rely on it).
  const size_t wanted = std::min<size_t>(num_warps ? num_warps : kDefaultNumWarps, 1024) * kCudaWarp;
  size_t items = 1;
  while (items * 2 <= std::min<size_t>(wanted, static_cast<size_t>(limits.max_threads_per_block))) items *= 2;
  // Tensor cores (mma.sync, native in CUDA C) from compute capability 8.0.
  const bool mma = source.work_group_capable && items % kCudaWarp == 0 && limits.compute_capability >= 80;
  // The buffers k loops load tensor-core operands ahead into (codegen/c/emitter_pipeline.cpp):
  // num_stages where make() or tuning gave it, else the default; 1 loads no iteration ahead.
  // Only sources with such a loop have NT_STAGES, and only tensor-core builds copy ahead (cp.async).
  bool pipelined = false;
  for (const Expr& symbol : collect_vars(source.local_bytes))
    pipelined = pipelined || symbol->name == codegen::kStagesSymbol;
  int64_t stages = mma ? codegen::kDefaultStages : 1;
  // NT_WGMMA: a tensor-core build for sm_90a (the CUDA dialect's header); NT_WGMMA_DEFER with it
  // on 256 work-items or more (codegen/c/emitter_pipeline.cpp).
  const bool wgmma = mma && limits.compute_capability == 90;
  if (auto tuned = meta.find(kNumStagesConfigKey); mma && tuned != meta.end() && tuned->second > 0)
    stages = tuned->second;
  auto shared_of = [&](size_t n) {
    SymbolMap with_items = values;
    with_items.emplace(codegen::kWorkItemsSymbol, Expr(static_cast<int64_t>(n)));
    with_items.emplace(codegen::kMmaLayoutSymbol, Expr(int64_t{mma}));
    with_items.emplace(codegen::kStagesSymbol, Expr(stages));
    with_items.emplace(codegen::kWgmmaDeferSymbol, Expr(int64_t{wgmma && n >= 256}));
    return evaluate_int(source.local_bytes, with_items);
  };
  auto fits = [&](const std::optional<int64_t>& bytes) {
    return bytes && static_cast<size_t>(std::max<int64_t>(*bytes, 0)) <= limits.shared_memory_per_block;
  };
  // Fewer stages where their buffers do not fit; then, where the blocks' shared memory grows
  // with the threads (reductions' partials, the dot's staging), fewer warps: a smaller block
  // runs where the asked one cannot (CUDA has no one-thread form to fall back to).
  auto shared = shared_of(items);
  while (!fits(shared) && stages > 1) {
    --stages;
    shared = shared_of(items);
  }
  while (!fits(shared) && items > kCudaWarp) {
    items /= 2;
    shared = shared_of(items);
  }
  if (!fits(shared)) {
    throw ValueError("this configuration needs " +
                     (shared ? std::to_string(*shared) : std::string("an unknown number of")) +
                     " bytes of shared memory per program, more than the " +
                     std::to_string(limits.shared_memory_per_block) +
                     " a thread block may have here; use smaller block sizes");
  }
  CudaBuild build;
  build.work_items = items;
  build.shared_bytes = static_cast<size_t>(std::max<int64_t>(*shared, 0));
  build.options = "-DNT_WORK_ITEMS=" + std::to_string(items);
  if (pipelined) build.options += " -DNT_STAGES=" + std::to_string(stages);
  if (mma) build.options += " -DNT_MMA_LAYOUT -DNT_MMA_SYNC";
  if (fits_index32(plan_.params, values)) build.options += " -DNT_INDEX32";
  return build;
}

std::vector<std::string> CompiledKernel::cuda_build_variants(const std::string& architecture) const {
  const cuda::CudaLimits limits = cuda::CudaLimits::of_architecture(architecture);
  const codegen::KernelSource& source = cuda_source();
  if (!plan_.constexpr_symbols.empty())
    throw ValueError("the constexpr symbols of a kernel built ahead of time need values");
  for (const auto& [name, attrs] : source.symbols) {
    if (std::find(plan_.meta_symbols.begin(), plan_.meta_symbols.end(), name) == plan_.meta_symbols.end())
      throw ValueError("the symbol '" + name +
                       "' takes its value from the tensors: its binaries cannot be built "
                       "before the sizes are known");
  }
  // Constexpr scalars are fixed in the plan; strides are either unknown or, for contiguous tensors,
  // 1 in each tensor's last dimension.
  Bound general;
  for (size_t i = 0; i < plan_.params.size(); ++i) {
    const PlanParam& p = plan_.params[i];
    if (!p.scalar || !p.constexpr_) continue;
    auto fixed = plan_.fixed_scalars.find(static_cast<int>(i));
    if (fixed == plan_.fixed_scalars.end())
      throw ValueError("the constexpr parameter '" + p.name +
                       "' needs a value fixed when the library is built");
    general.options.push_back(constexpr_option(static_cast<int>(i), fixed_scalar(fixed->second)));
  }
  Bound contiguous = general;
  add_unit_strides(contiguous.options, [&](const codegen::KernelArg& a) {
    const PlanParam& p = plan_.params[a.param];
    return !p.stride_symbols.empty() && p.stride_symbols.back() == a.symbol;
  });
  // The configurations: the default and tuning's candidates, on every num_warps tuning tries.
  SymbolValues fixed;
  std::vector<size_t> other_warps;
  warp_candidates(plan_.source.work_group_capable, fixed, other_warps);
  std::vector<SymbolValues> configs{plan_.default_config};
  if (!plan_.meta_symbols.empty()) {
    size_t retimed = 0;
    for (const tune::Config& c : tuning_space({}, other_warps.size(), retimed)) configs.push_back(c);
  }
  for (SymbolValues& c : configs) c.insert(fixed.begin(), fixed.end());
  const size_t n = configs.size();
  for (size_t warps : other_warps) {
    for (size_t i = 0; i < n; ++i) {
      SymbolValues c = configs[i];
      c[kNumWarpsConfigKey] = static_cast<int64_t>(warps);
      configs.push_back(c);
    }
  }
  std::vector<std::string> variants;
  for (const Bound* bound : {&general, &contiguous}) {
    for (const SymbolValues& meta : configs) {
      SymbolMap values;
      std::string options;
      try {
        options = build_options(*bound, meta, values);
        options += cuda_build(cuda_source(), limits, values, meta).options;
      } catch (const ValueError&) {
        continue;  // a configuration that cannot run there
      }
      if (std::find(variants.begin(), variants.end(), options) == variants.end()) variants.push_back(options);
    }
  }
  return variants;
}

void CompiledKernel::add_cuda_image(std::string architecture, std::string options, std::string image) {
  cuda::CudaLimits::of_architecture(architecture);  // checks the name
  std::lock_guard lock(mutex_);
  cuda_images_.push_back({std::move(architecture), std::move(options), std::move(image)});
  prepared_.clear();  // launches prepared before may choose another image now
}

namespace {

// `options` without NT_INDEX32 and the aligned-rows macros and, with `unit_strides`, without the
// unit-stride macros: each an
// optimisation that a binary built without it also serves.
std::string without_specializations(const std::string& options, bool unit_strides) {
  const std::string prefix = "-D" + codegen::unit_stride_macro("");
  std::string aligned = "-D" + codegen::aligned_rows_macro(0);
  aligned.pop_back();  // the macros of every parameter
  std::string out;
  size_t begin = 0;
  while (begin < options.size()) {
    size_t end = options.find(' ', begin);
    if (end == std::string::npos) end = options.size();
    std::string_view word(options.data() + begin, end - begin);
    if (word != "-DNT_INDEX32" && !word.starts_with(aligned) && !(unit_strides && word.starts_with(prefix)))
      out.append(word).append(end < options.size() ? " " : "");
    begin = end + 1;
  }
  while (out.ends_with(' ')) out.pop_back();
  return out;
}

}  // namespace

namespace {

// Can a binary for `architecture` run on a device of compute capability `capability` whose own
// architecture is `own`? Cubins: their own, or an earlier minor of the same major (not the
// architecture-specific `a` ones); PTX: any capability up to the device's (`a`: only its own).
// The rank orders the usable ones: its own cubin first, then the newest cubin, then the newest PTX.
std::optional<int> image_rank(const std::string& architecture, int capability, const std::string& own) {
  if (architecture == own) return 1000;
  const int needed = cuda::CudaLimits::of_architecture(architecture).compute_capability;
  const bool specific = architecture.ends_with("a");
  if (architecture.starts_with("sm_")) {
    if (specific || needed / 10 != capability / 10 || needed > capability) return std::nullopt;
    return 500 + needed;
  }
  if (specific ? needed != capability : needed > capability) return std::nullopt;
  return needed;
}

}  // namespace

std::optional<std::string> CompiledKernel::image_architecture(const cuda::CudaDevice& device) const {
  std::lock_guard lock(mutex_);
  std::optional<std::string> best;
  int best_rank = -1;
  for (const CudaImage& image : cuda_images_) {
    auto rank = image_rank(image.architecture, device.compute_capability(), device.architecture());
    if (rank && *rank > best_rank) {
      best = image.architecture;
      best_rank = *rank;
    }
  }
  return best;
}

cuda::CudaLimits CompiledKernel::cuda_limits(const cuda::CudaDevice& device) const {
  // A library's binaries were built for their architecture's limits: a launch asks for what they
  // hold (configurations that fit there fit the device).
  if (auto architecture = image_architecture(device); architecture && *architecture != device.architecture())
    return cuda::CudaLimits::of_architecture(*architecture);
  return device.limits();
}

const CompiledKernel::CudaImage* CompiledKernel::find_cuda_image(const cuda::CudaDevice& device,
                                                                 const std::string& options) const {
  auto architecture = image_architecture(device);
  if (!architecture) return nullptr;
  std::lock_guard lock(mutex_);
  for (const std::string& wanted :
       {options, without_specializations(options, false), without_specializations(options, true)}) {
    for (const CudaImage& image : cuda_images_)
      if (image.architecture == *architecture && image.options == wanted) return &image;
  }
  return nullptr;
}

cuda::CUfunction CompiledKernel::cuda_function(const Prepared& prepared) const {
  if (cuda::CUfunction known = prepared.cuda_function.load(std::memory_order_acquire)) return known;
  cuda::CUfunction function = find_cuda_function(prepared);
  prepared.cuda_function.store(function, std::memory_order_release);
  return function;
}

cuda::CUfunction CompiledKernel::find_cuda_function(const Prepared& prepared) const {
  const codegen::KernelSource& source = cuda_source(prepared.own_programs);
  if (!has_cuda_images()) return prepared.cuda->function(source.source, prepared.options, source.name);
  if (const CudaImage* image = find_cuda_image(*prepared.cuda, prepared.options))
    return prepared.cuda->function(source.source, image->options, source.name, image->image);
  if (!cuda::nvrtc_available()) {
    throw BuildError("the library holds no CUDA binary for " + prepared.cuda->architecture() +
                     " built with '" + prepared.options +
                     "', and NVRTC (libnvrtc.so) cannot be loaded to compile one; rebuild the library with "
                     "that architecture in NINETOOTHED_CUDA_ARCHITECTURES");
  }
  return prepared.cuda->function(source.source, prepared.options, source.name);
}

double CompiledKernel::execute_cuda(const Prepared& prepared, const std::vector<LaunchArg>& args,
                                    void* stream, bool timed) {
  if (prepared.num_programs == 0) return 0.0;
  if (prepared.num_programs > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw ValueError("a launch of " + std::to_string(prepared.num_programs) +
                     " programs is more than CUDA's grid takes");
  const codegen::KernelSource& source = cuda_source(prepared.own_programs);
  cuda::CUfunction function = cuda_function(prepared);
  const auto& params = plan_.params;
  // Every argument's value, 8 bytes each (kernel arguments are at most 8 bytes), and a pointer to it.
  std::vector<uint64_t> values(source.args.size(), 0);
  std::vector<void*> pointers(source.args.size());
  for (size_t k = 0; k < source.args.size(); ++k) {
    const codegen::KernelArg& a = source.args[k];
    void* slot = &values[k];
    pointers[k] = slot;
    // CUDA C has no work-item form, whose dots alone share packed operands: no workspace (null, 0).
    if (a.kind == codegen::KernelArg::Kind::Workspace || a.kind == codegen::KernelArg::Kind::WorkspaceOn)
      continue;  // null, 0
    const PlanParam& p = params[a.param];
    switch (a.kind) {
      case codegen::KernelArg::Kind::Buffer: {
        const auto& t = std::get<TensorArg>(args[a.param]);
        Span span = t.meta ? Span{0, 0, true} : span_of(t);  // a meta tensor's: null, never used
        char* base = t.meta ? nullptr : static_cast<char*>(t.data) + span.lo * dtype_bytes(p.dtype);
        std::memcpy(slot, &base, sizeof base);
        int64_t offset = -span.lo, extent = span.elements();
        std::memcpy(&values[k + 1], &offset, sizeof offset);
        std::memcpy(&values[k + 2], &extent, sizeof extent);
        break;
      }
      case codegen::KernelArg::Kind::SequenceOffsets: {
        const void* offsets = std::get<TensorArg>(args[a.param]).sequences->offsets;
        std::memcpy(slot, &offsets, sizeof offsets);
        break;
      }
      case codegen::KernelArg::Kind::Offset:
      case codegen::KernelArg::Kind::Extent:
        break;  // set with its buffer
      case codegen::KernelArg::Kind::Size:
      case codegen::KernelArg::Kind::Stride:
        std::memcpy(slot, &prepared.size_values[k], sizeof(int64_t));
        break;
      case codegen::KernelArg::Kind::Scalar: {
        with_kernel_value(std::get<ScalarArg>(args[a.param]), p.dtype,
                          [&](auto v) { std::memcpy(slot, &v, sizeof v); });
        break;
      }
      case codegen::KernelArg::Kind::Workspace:
      case codegen::KernelArg::Kind::WorkspaceOn:
        break;  // above
    }
  }
  const cuda::DriverApi& api = cuda::driver();
  cuda::ScopedContext scoped(prepared.cuda->context());
  auto cu_stream = static_cast<cuda::CUstream>(stream);
  cuda::CUevent start = nullptr, stop = nullptr;
  if (timed) {
    cuda::check(api.cuEventCreate(&start, cuda::kEventDefault), "cuEventCreate");
    cuda::check(api.cuEventCreate(&stop, cuda::kEventDefault), "cuEventCreate");
    api.cuEventRecord(start, cu_stream);
  }
  cuda::CUresult launched =
      api.cuLaunchKernel(function, static_cast<unsigned>(prepared.num_programs), 1, 1,
                         static_cast<unsigned>(prepared.work_items), 1, 1,
                         static_cast<unsigned>(prepared.shared_bytes), cu_stream, pointers.data(), nullptr);
  last_work_items_ = prepared.work_items;
  {
    std::lock_guard lock(mutex_);
    last_options_ = prepared.options;
  }
  double seconds = std::numeric_limits<double>::quiet_NaN();
  if (timed) {
    if (launched == 0) {
      api.cuEventRecord(stop, cu_stream);
      cuda::CUresult waited = api.cuEventSynchronize(stop);
      float ms = 0;
      if (waited == 0) api.cuEventElapsedTime(&ms, start, stop);
      seconds = waited == 0 ? ms * 1e-3 : seconds;
      launched = waited;
    }
    api.cuEventDestroy(start);
    api.cuEventDestroy(stop);
  }
  cuda::check(launched, "cuLaunchKernel");
  return seconds;
}

}  // namespace nt
