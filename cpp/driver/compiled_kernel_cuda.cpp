// CompiledKernel on CUDA devices: which device a launch's tensors choose, the kernel's CUDA C
// source, a configuration's thread block, and the launch on the caller's stream.
//
// In: a launch's arguments (TensorArg::cuda_device says where each tensor lives) and the
// stream. Out: the kernel run by the CUDA driver on that device and stream, with the same
// arguments, in the same order, as the OpenCL source takes (both come from one emitter,
// codegen/c/). A launch does not wait for the kernel; tuning does (CUDA events).
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/c/mma_ptx.h"
#include "driver/compiled_kernel.h"
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
    if (!t) continue;
    if (place == -2) place = t->cuda_device;
    mixed = mixed || t->cuda_device != place;
  }
  if (mixed) {
    std::string where;
    for (size_t i = 0; i < args.size() && i < plan_.params.size(); ++i) {
      if (const TensorArg* t = std::get_if<TensorArg>(&args[i]))
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
  if (lowered_.params.empty() && !plan_.params.empty())
    throw ValueError(
        "this kernel was made from a launch plan (an ahead-of-time library's): it has no CUDA source");
  std::call_once(cuda_source_once_,
                 [this] { cuda_source_ = codegen::generate_source(lowered_, codegen::cuda_dialect()); });
  return *cuda_source_;
}

void CompiledKernel::prepare_cuda(Prepared& prepared, const SymbolMap& values,
                                  const SymbolValues& meta) const {
  const codegen::KernelSource& source = cuda_source();
  const cuda::CudaDevice& device = *prepared.cuda;
  size_t num_warps = plan_.num_warps;
  if (auto tuned = meta.find(kNumWarpsConfigKey); tuned != meta.end() && tuned->second > 0)
    num_warps = static_cast<size_t>(tuned->second);
  // A power of two within the device's largest block (the tile layouts rely on it).
  const size_t wanted = std::min<size_t>(num_warps ? num_warps : kDefaultNumWarps, 1024) * kCudaWarp;
  size_t items = 1;
  while (items * 2 <= std::min<size_t>(wanted, static_cast<size_t>(device.max_threads_per_block())))
    items *= 2;
  prepared.work_items = items;
  // Tensor cores (mma.sync, native in CUDA C) from compute capability 8.0.
  const bool mma = source.work_group_capable && items % kCudaWarp == 0 && device.compute_capability() >= 80;
  SymbolMap with_items = values;
  with_items.emplace(codegen::kWorkItemsSymbol, Expr(static_cast<int64_t>(items)));
  with_items.emplace(codegen::kMmaLayoutSymbol, Expr(int64_t{mma}));
  auto shared = evaluate_int(source.local_bytes, with_items);
  if (!shared || static_cast<size_t>(std::max<int64_t>(*shared, 0)) > device.shared_memory_per_block()) {
    throw ValueError("this configuration needs " +
                     (shared ? std::to_string(*shared) : std::string("an unknown number of")) +
                     " bytes of shared memory per program, more than the " +
                     std::to_string(device.shared_memory_per_block()) + " a thread block may have on " +
                     device.name() + "; use smaller block sizes");
  }
  prepared.shared_bytes = static_cast<size_t>(std::max<int64_t>(*shared, 0));
  prepared.options += "-DNT_WORK_ITEMS=" + std::to_string(items);
  if (mma) prepared.options += " -DNT_MMA_LAYOUT -DNT_MMA_SYNC";
}

cuda::CUfunction CompiledKernel::cuda_function(const Prepared& prepared) const {
  const codegen::KernelSource& source = cuda_source();
  return prepared.cuda->function(source.source, prepared.options, source.name);
}

double CompiledKernel::execute_cuda(const Prepared& prepared, const std::vector<LaunchArg>& args,
                                    void* stream, bool timed) {
  if (prepared.num_programs == 0) return 0.0;
  if (prepared.num_programs > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw ValueError("a launch of " + std::to_string(prepared.num_programs) +
                     " programs is more than CUDA's grid takes");
  const codegen::KernelSource& source = cuda_source();
  cuda::CUfunction function = cuda_function(prepared);
  const auto& params = plan_.params;
  // Every argument's value, 8 bytes each (kernel arguments are at most 8 bytes), and a pointer to it.
  std::vector<uint64_t> values(source.args.size(), 0);
  std::vector<void*> pointers(source.args.size());
  for (size_t k = 0; k < source.args.size(); ++k) {
    const codegen::KernelArg& a = source.args[k];
    const PlanParam& p = params[a.param];
    void* slot = &values[k];
    pointers[k] = slot;
    switch (a.kind) {
      case codegen::KernelArg::Kind::Buffer: {
        const auto& t = std::get<TensorArg>(args[a.param]);
        Span span = span_of(t);
        char* base = static_cast<char*>(t.data) + span.lo * dtype_bytes(p.dtype);
        std::memcpy(slot, &base, sizeof base);
        int64_t offset = -span.lo, extent = span.elements();
        std::memcpy(&values[k + 1], &offset, sizeof offset);
        std::memcpy(&values[k + 2], &extent, sizeof extent);
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
