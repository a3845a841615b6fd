#include "codegen/c/shared_packs.h"

#include "ir/mutator.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

std::optional<SharedSlot> shared_slot(const lower::TensorAccess& access, const ir::Param& param,
                                      const lower::ProgramLayout& layout, const std::vector<Expr>& middle,
                                      const std::set<std::string>& uniform) {
  if (access.never || param.arranged->source_ref().jagged_dim()) return std::nullopt;
  const std::vector<Expr>& grid = layout.outermost_shape();
  const std::vector<Expr> middle_shape = param.middle_shape();
  if (grid.empty() || middle.size() != middle_shape.size()) return std::nullopt;
  std::set<std::string> used;
  auto note = [&](const Expr& e) {
    for (const Expr& v : collect_vars(e))
      if (!v->attrs.constexpr_ && !v->attrs.meta) used.insert(v->name);  // else the launch's
  };
  note(access.offset);
  for (const Expr& condition : access.conditions()) note(condition);
  std::set<std::string> allowed = uniform;  // and the program's own values the slot is keyed by
  for (const Expr& m : middle)
    for (const Expr& v : collect_vars(m)) allowed.insert(v->name);
  for (size_t d = 0; d < access.block_shape.size(); ++d) allowed.insert(lower::element_index(d)->name);
  std::vector<size_t> digits;
  Expr readers = Expr(1);  // the programs that read each block: the digits the access leaves out
  for (size_t d = 0; d < grid.size(); ++d) {
    const std::string name = layout.program_index(d)->name;
    if (used.count(name))
      digits.push_back(d);
    else
      readers = mul(readers, grid[d]);
    allowed.insert(name);
  }
  readers = simplify(readers);
  if (readers.is_int(1)) return std::nullopt;  // no two programs read the same block
  for (const std::string& name : used)
    if (!allowed.count(name)) return std::nullopt;
  // A launch whose grid gives each block one reader packs privately (a matmul of one column of blocks).
  SharedSlot slot{Expr(0), Expr(1), gt(readers, Expr(1))};
  for (size_t d : digits) {
    slot.index = add(mul(slot.index, grid[d]), layout.program_index(d));
    slot.count = mul(slot.count, grid[d]);
  }
  for (size_t i = 0; i < middle.size(); ++i) {
    slot.index = add(mul(slot.index, middle_shape[i]), middle[i]);
    slot.count = mul(slot.count, middle_shape[i]);
    slot.shares =
        logical_and(slot.shares, logical_and(le(Expr(0), middle[i]), lt(middle[i], middle_shape[i])));
  }
  slot.index = simplify(slot.index);
  slot.count = simplify(slot.count);
  slot.shares = simplify(slot.shares);
  return slot;
}

namespace {

struct KernelScan : ir::IRVisitor {
  using IRVisitor::visit;
  void visit(const ir::Value& v) override {
    found.dots = found.dots || v->kind == ir::ValueKind::Dot;
    IRVisitor::visit(v);
  }
  void visit(const ir::Stmt& s) override {
    switch (s->kind) {
      case ir::StmtKind::Store:
      case ir::StmtKind::StorePointer:
      case ir::StmtKind::AtomicAdd:
      case ir::StmtKind::StoreAt:
      case ir::StmtKind::Atomic:
        found.stored.insert(s->param);
        break;
      default:
        break;
    }
    IRVisitor::visit(s);
  }
  SharedPackKernel found;
};

}  // namespace

SharedPackKernel scan_for_shared_packs(const ir::Kernel& kernel) {
  KernelScan scan;
  scan.visit(kernel.body);
  for (const ir::Param& p : kernel.params) {
    if (p.scalar) continue;
    const Tensor& source = p.arranged->source_ref();
    for (size_t d = 0; d < source.ndim(); ++d) {
      for (const Expr& v : collect_vars(source.shape()[d])) scan.found.uniform.insert(v->name);
      scan.found.uniform.insert(source.stride_symbol(d)->name);
    }
  }
  return std::move(scan.found);
}

namespace {

Expr aligned64(const Expr& bytes) { return mul(floordiv(add(bytes, Expr(63)), Expr(64)), Expr(64)); }

}  // namespace

Workspace::Region Workspace::add(const Expr& count, const Expr& slot_bytes) {
  Region region{flags_, slots_};
  flags_ = simplify(nt::add(flags_, count));
  slots_ = simplify(nt::add(slots_, aligned64(mul(count, slot_bytes))));
  return region;
}

Expr Workspace::flag_bytes() const { return simplify(aligned64(mul(flags_, Expr(4)))); }

Expr Workspace::bytes() const { return simplify(nt::add(flag_bytes(), slots_)); }

const char* const kSharedSpace = "NT_SHARED_SPACE";

const char* const kSharedPackHelpers =
    R"(// Dot operands packed once per launch (codegen/c/shared_packs.h): a slot's flag is 0 until a
// program claims it (1), then 2 once published; the host zeroes the flags before each launch.
#ifdef NT_CPU
#define NT_SHARED_SPACE __global
#else
#define NT_SHARED_SPACE __private
#endif
inline int nt_claim_slot(volatile __global int* flag, int shared) {
  if (!shared) return 0;
  for (;;) {
    const int seen = atomic_or(flag, 0);
    if (seen == 2) {
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      return 2;
    }
    if (seen == 0 && atomic_cmpxchg(flag, 0, 1) == 0) return 1;
  }
}
inline void nt_publish_slot(volatile __global int* flag) {
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(flag, 2);
}
)";

}  // namespace nt::codegen
