#include "codegen/c/kernel_source.h"

#include <optional>
#include <set>
#include <string>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_types.h"
#include "codegen/c/emitter.h"
#include "codegen/c/math_calls.h"

namespace nt::codegen {

using namespace nt::ir;

const char* const kWorkGroupBody = "// A program on a work-group of NT_WORK_ITEMS work-items.\n";
const char* const kWorkItemBody = "// A program on one work-item.\n";

std::string unit_stride_macro(const std::string& stride_symbol) { return "NT_UNIT_" + stride_symbol; }

std::string aligned_rows_macro(int param) { return "NT_ALIGNED_ROWS_" + std::to_string(param); }

std::string constexpr_param_macro(int param) { return "NT_CONSTEXPR_" + std::to_string(param); }

KernelSource generate_source(const Kernel& kernel, const Dialect& dialect) {
  Emitter elementwise(kernel, Mode::Elementwise, {}, dialect);
  KernelSource out = elementwise.run();
  if (elementwise.distributable()) return out;  // one source for both layouts
  // A target without the work-item form has nothing to fall back on.
  auto no_work_group_form = [&](const std::string& why) {
    return ValueError("this kernel cannot run a program on a " + std::string(dialect.name) +
                      " thread block (" + why + "), and " + std::string(dialect.name) +
                      " has no form that runs a program on one thread");
  };
  std::optional<Emitter> item;
  if (dialect.work_item_form) {
    item.emplace(kernel, Mode::WorkItem, std::set<std::string>{}, dialect);
    out = item->run();
  }
  // The work-group source, emitted again with what turned out to be read elsewhere shared,
  // until nothing is (each round shares at least one more value).
  std::set<std::string> shared;
  for (;;) {
    Emitter group(kernel, Mode::WorkGroup, shared, dialect);
    KernelSource g;
    try {
      g = group.run();
    } catch (const ValueError& e) {
      if (!item) throw no_work_group_form(e.what());
      return out;  // a program on one work-item only
    }
    size_t before = shared.size();
    shared.insert(group.misaligned().begin(), group.misaligned().end());
    if (group.misaligned().empty()) {
      if (!item) {
        g.source = preambles(dialect, group.kernel_text()) + "\n" + kWorkGroupBody + group.kernel_text();
        g.work_group_capable = true;
        return g;
      }
      out.source = preambles(dialect, group.kernel_text() + item->kernel_text()) +
                   "\n#if NT_WORK_ITEMS > 1\n" + kWorkGroupBody + group.kernel_text() + "#else\n" +
                   kWorkItemBody + item->kernel_text() + "#endif  // NT_WORK_ITEMS > 1\n";
      out.symbols.insert(g.symbols.begin(), g.symbols.end());
      out.local_bytes = g.local_bytes;
      out.work_group_capable = true;
      return out;
    }
    if (shared.size() == before) {
      if (!item) throw no_work_group_form("values read by other work-items could not all be shared");
      return out;
    }
  }
}

KernelSource generate_opencl(const Kernel& kernel) { return generate_source(kernel, opencl_dialect()); }

}  // namespace nt::codegen
