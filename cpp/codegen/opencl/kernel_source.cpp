#include "codegen/opencl/kernel_source.h"

#include <set>
#include <string>

#include "codegen/opencl/block_ops.h"
#include "codegen/opencl/c_types.h"
#include "codegen/opencl/emitter.h"
#include "codegen/opencl/math_calls.h"

namespace nt::codegen {

using namespace nt::ir;

const char* const kWorkGroupBody = "// A program on a work-group of NT_WORK_ITEMS work-items.\n";
const char* const kWorkItemBody = "// A program on one work-item.\n";

std::string unit_stride_macro(const std::string& stride_symbol) { return "NT_UNIT_" + stride_symbol; }

std::string constexpr_param_macro(int param) { return "NT_CONSTEXPR_" + std::to_string(param); }

KernelSource generate_opencl(const Kernel& kernel) {
  Emitter elementwise(kernel, Mode::Elementwise);
  KernelSource out = elementwise.run();
  if (elementwise.distributable()) return out;  // one source for both layouts
  Emitter item(kernel, Mode::WorkItem);
  out = item.run();
  // The work-group source, emitted again with what turned out to be read elsewhere shared,
  // until nothing is (each round shares at least one more value).
  std::set<std::string> shared;
  for (;;) {
    Emitter group(kernel, Mode::WorkGroup, shared);
    KernelSource g;
    try {
      g = group.run();
    } catch (const ValueError&) {
      return out;  // a program on one work-item only
    }
    size_t before = shared.size();
    shared.insert(group.misaligned().begin(), group.misaligned().end());
    if (group.misaligned().empty()) {
      out.source = std::string(kPreamble) + kMathPreamble + kAtomicPreamble + "\n#if NT_WORK_ITEMS > 1\n" +
                   kWorkGroupBody + group.kernel_text() + "#else\n" + kWorkItemBody + item.kernel_text() +
                   "#endif  // NT_WORK_ITEMS > 1\n";
      out.symbols.insert(g.symbols.begin(), g.symbols.end());
      out.local_bytes = g.local_bytes;
      out.work_group_capable = true;
      return out;
    }
    if (shared.size() == before) return out;
  }
}

}  // namespace nt::codegen
