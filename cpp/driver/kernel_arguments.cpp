// CompiledKernel's OpenCL launch as arguments and sizes: set_arguments() and launch_geometry(), for
// execute() and for the launches tuning's helper processes replay (driver/compile_ahead.cpp).
#include <algorithm>

#include "driver/compiled_kernel.h"
#include "runtime/launch_replay.h"

namespace nt {

namespace {

// Does the tensor hold each element of its span exactly once (no gaps, no
// overlaps)?
bool fills_its_span(const TensorArg& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, size
  const auto& shape = t.memory_shape();
  const auto& strides = t.memory_strides();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return true;  // no elements, an empty span
    if (shape[d] > 1) dims.emplace_back(strides[d] < 0 ? -strides[d] : strides[d], shape[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

}  // namespace

CompiledKernel::LaunchGeometry CompiledKernel::launch_geometry(const Prepared& prepared) const {
  LaunchGeometry geometry;
  geometry.device = target_device(prepared);
  geometry.small = geometry.device != prepared.device;
  geometry.source = &opencl_source(prepared.own_programs);
  geometry.global_size = lower::ProgramLayout::global_size(prepared.num_programs, prepared.work_items);
  geometry.local_size = lower::ProgramLayout::local_size(prepared.work_items);
  return geometry;
}

template <typename Sink>
void CompiledKernel::set_arguments(Sink& launcher, const Prepared& prepared,
                                   const std::vector<LaunchArg>& args,
                                   const WorkspacePool::Lease* workspace) const {
  const auto& params = plan_.params;
  const bool has_workspace = workspace && workspace->data();
  // Sizes, strides, offsets, extents and runtime meta values are the source's nt_index: int under
  // -DNT_INDEX32 (driver/index_width.h), else long.
  auto set_index = [&](cl_uint index, int64_t value) {
    if (prepared.index32)
      launcher.template set_scalar<cl_int>(index, static_cast<cl_int>(value));
    else
      launcher.template set_scalar<cl_long>(index, value);
  };
  for (size_t k = 0; k < plan_.source.args.size(); ++k) {
    const codegen::KernelArg& a = plan_.source.args[k];
    cl_uint index = static_cast<cl_uint>(k);
    if (a.kind == codegen::KernelArg::Kind::Workspace) {
      if (has_workspace)
        launcher.set_buffer(index, workspace->data(), workspace->bytes(), true, true, "the workspace",
                            nullptr);
      else
        launcher.set_buffer(index, nullptr, 0, false, false, "the workspace", nullptr);
      continue;
    }
    if (a.kind == codegen::KernelArg::Kind::WorkspaceOn) {
      launcher.template set_scalar<cl_long>(index, has_workspace ? 1 : 0);
      continue;
    }
    const PlanParam& p = params[a.param];
    switch (a.kind) {
      case codegen::KernelArg::Kind::Buffer: {
        const auto& t = std::get<TensorArg>(args[a.param]);
        if (t.meta) {  // never read nor written (bind): OpenCL's one-byte stand-in for no memory
          launcher.set_buffer(index, nullptr, 0, false, false, p.name, nullptr);
          set_index(index + 1, 0);
          set_index(index + 2, 0);
          break;
        }
        Span span = span_of(t);
        int64_t item = dtype_bytes(p.dtype);
        char* base = static_cast<char*>(t.data) + span.lo * item;
        // On a discrete device, a tensor the kernel overwrites whole is not
        // copied in; one whose elements do not fill their span is copied back
        // element by element, never over what lies between them.
        // A parameter with programs of its own (more than the grid's) has blocks no program stores.
        const bool needed = p.read || (p.written && (!p.overwritten || prepared.own_programs.count(a.param)));
        ElementLayout layout;
        const bool scattered = p.written && !fills_its_span(t);
        if (scattered) layout = {static_cast<size_t>(item), t.memory_shape(), t.memory_strides(), -span.lo};
        launcher.set_buffer(index, base, static_cast<size_t>(span.elements() * item), needed, p.written,
                            p.name, scattered ? &layout : nullptr);
        set_index(index + 1, -span.lo);
        set_index(index + 2, span.elements());
        break;
      }
      case codegen::KernelArg::Kind::SequenceOffsets: {
        const SequencesArg& q = *std::get<TensorArg>(args[a.param]).sequences;
        launcher.set_buffer(index, const_cast<void*>(q.offsets),
                            static_cast<size_t>(q.count + 1) * sizeof(int64_t), true, false,
                            p.name + "'s offsets", nullptr);
        break;
      }
      case codegen::KernelArg::Kind::Offset:
      case codegen::KernelArg::Kind::Extent:
        break;  // set with its buffer
      case codegen::KernelArg::Kind::Size:
      case codegen::KernelArg::Kind::Stride:
        set_index(index, prepared.size_values[k]);
        break;
      case codegen::KernelArg::Kind::Scalar: {
        with_kernel_value(std::get<ScalarArg>(args[a.param]), p.dtype,
                          [&](auto v) { launcher.template set_scalar<decltype(v)>(index, v); });
        break;
      }
      case codegen::KernelArg::Kind::Workspace:
      case codegen::KernelArg::Kind::WorkspaceOn:
        break;  // above
    }
  }
  for (size_t j = 0; j < prepared.meta_args.size(); ++j)  // a build with -DNT_RUNTIME_META (prepare())
    set_index(static_cast<cl_uint>(plan_.source.args.size() + j), prepared.meta_args[j]);
}

template void CompiledKernel::set_arguments(KernelLauncher&, const Prepared&, const std::vector<LaunchArg>&,
                                            const WorkspacePool::Lease*) const;
template void CompiledKernel::set_arguments(LaunchRecorder&, const Prepared&, const std::vector<LaunchArg>&,
                                            const WorkspacePool::Lease*) const;

}  // namespace nt
