#include "codegen/c/shared_packs.h"

#include <set>
#include <string>

#include "symbolic/simplify.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

std::optional<SharedSlot> shared_slot(const lower::TensorAccess& access, const ir::Param& param,
                                      const lower::ProgramLayout& layout, const std::vector<Expr>& middle) {
  if (access.never) return std::nullopt;
  const std::vector<Expr>& grid = layout.outermost_shape();
  const std::vector<Expr> middle_shape = param.middle_shape();
  if (grid.empty() || middle.size() != middle_shape.size()) return std::nullopt;
  std::set<std::string> used;
  auto note = [&](const Expr& e) {
    for (const Expr& v : collect_vars(e)) used.insert(v->name);
  };
  note(access.offset);
  for (const Expr& condition : access.conditions()) note(condition);
  std::set<std::string> allowed;  // the program's own values the slot is keyed by
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
  // The generated code's own names begin with nt_; any other is a launch's symbol (a size, a
  // stride, a block size, a constexpr value), the same for every program.
  for (const std::string& name : used)
    if (name.rfind("nt_", 0) == 0 && !allowed.count(name)) return std::nullopt;
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

Expr aligned64(const Expr& bytes) { return mul(floordiv(add(bytes, Expr(63)), Expr(64)), Expr(64)); }

}  // namespace

Workspace::Region Workspace::add(const Expr& count, const Expr& slot_bytes) {
  Region region{bytes_, simplify(nt::add(bytes_, aligned64(mul(count, Expr(4)))))};
  bytes_ = simplify(nt::add(region.slots, aligned64(mul(count, slot_bytes))));
  ++regions_;
  return region;
}

const char* const kSharedSpace = "NT_SHARED_SPACE";

const char* const kSharedPackHelpers =
    R"(// Dot operands packed once per launch (codegen/c/shared_packs.h): a slot's flag is 2 epoch - 1
// while a program packs it, 2 epoch once published; older values are other launches'.
#ifdef NT_CPU
#define NT_SHARED_SPACE __global
#else
#define NT_SHARED_SPACE __private
#endif
inline int nt_claim_slot(volatile __global int* flag, long epoch, int shared) {
  if (epoch <= 0 || !shared) return 0;
  const int claimed = (int)(2 * epoch - 1), published = (int)(2 * epoch);
  for (;;) {
    const int seen = *flag;
    if (seen == published) {
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      return 2;
    }
    if (seen != claimed && atomic_cmpxchg(flag, seen, claimed) == seen) return 1;
  }
}
inline void nt_publish_slot(volatile __global int* flag, long epoch) {
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(flag, (int)(2 * epoch));
}
)";

}  // namespace nt::codegen
