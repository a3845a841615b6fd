// Row vectors held in the rows of their blocks' layout (Triton's slice layouts), Mode::WorkGroup.
//
// In: the kernel's row_warps shapes (collect_mma_shapes(): flash attention's scores, p and output,
// whose rows a warp holds whole) and the 1-D values of as many elements as they have rows (the
// running maximum and sum, alpha). Out: a row family per such count (lower/program_layout.h's
// RowFamily: the members' rows lie alike in every configuration) and a slice layout for the row
// vectors, in which each work-item holds the elements of the rows it holds of the family's blocks.
// Then a row reduction of a member's block ends in the registers of the row's work-items
// (emit_reduce_rows()), and `x[:, None]` inside a member's nest reads them (element_of()): no
// local memory and no barriers between the statistics and the blocks they scale.
//
// A row vector's elements are held by the NT_TX work-items of its row alike, so nothing that folds
// or adds a row vector's elements across work-items may walk the slice layout: a kernel that reduces
// a row vector, passes one to an atomic or a block operation, or stores one to a tensor it also reads
// (each holder would read what another wrote), keeps the plain layout for its size.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/c/emitter.h"
#include "ir/mutator.h"
#include "lower/program_layout.h"

namespace nt::codegen {

using namespace nt::ir;

void Emitter::collect_row_families() {
  std::map<std::string, std::vector<std::vector<Expr>>> members;  // slice key -> members' shapes
  std::set<std::string> seen;
  struct Shapes : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (!visited.insert(v.get()).second) return;  // a node shared by several trees: once
      values.push_back(v);
      IRVisitor::visit(v);
    }
    void visit(const Stmt& s) override {
      stmts.push_back(s.get());
      IRVisitor::visit(s);
    }
    std::set<const ValueNode*> visited;
    std::vector<Value> values;
    std::vector<const StmtNode*> stmts;
  } all;
  all.visit(k_.body);
  // The members, in the order the kernel's values show them (which makes the family's head).
  for (const Value& v : all.values) {
    const std::vector<Expr>& shape = v->type.shape;
    const std::string key = shape_key(shape);
    if (shape.size() != 2 || !row_warp_shapes_.count(key) || wgmma_shapes_.count(key) ||
        !seen.insert(key).second)
      continue;
    members[shape_key({shape[0]})].push_back(shape);
  }
  // Sizes whose row vectors something folds across work-items keep their plain layout.
  auto elementwise = [](ValueKind kind) {
    switch (kind) {
      case ValueKind::Unary:
      case ValueKind::Binary:
      case ValueKind::Where:
      case ValueKind::Cast:
      case ValueKind::ExpandDims:
      case ValueKind::Broadcast:
      case ValueKind::Fma:
      case ValueKind::Random:
      case ValueKind::LoadPointer:
      case ValueKind::Call:  // an element-wise function (math_fns.h)
        return true;
      default:
        return false;
    }
  };
  std::set<std::string> refused;
  for (const Value& v : all.values) {
    if (elementwise(v->kind)) continue;
    for (const Value& o : v->operands) refused.insert(shape_key(o->type.shape));
  }
  // Atomics add once per work-item holding an element. A store whose parameter the kernel also
  // reads would have each holder read, then write, what another may have written already.
  std::set<int> loaded;
  for (const Value& v : all.values)
    if (v->kind == ValueKind::Load || v->kind == ValueKind::LoadAt || v->kind == ValueKind::LoadPointer)
      loaded.insert(v->param);
  for (const StmtNode* s : all.stmts) {
    const bool atomic = s->kind == StmtKind::Atomic || s->kind == StmtKind::AtomicAdd;
    const bool store =
        s->kind == StmtKind::Store || s->kind == StmtKind::StoreAt || s->kind == StmtKind::StorePointer;
    if (!atomic && !(store && loaded.count(s->param))) continue;
    if (s->value) refused.insert(shape_key(s->value->type.shape));
    for (const Value& o : s->indices) refused.insert(shape_key(o->type.shape));
  }
  for (auto& [slice, shapes] : members) {
    if (refused.count(slice)) continue;
    for (const auto& shape : shapes) family_of_[shape_key(shape)] = slice;
    row_families_[slice].members = std::move(shapes);
  }
}

int Emitter::family_layout(const std::string& key) {
  const bool is_slice = row_families_.count(key) > 0;
  auto member = family_of_.find(key);
  if (!is_slice && member == family_of_.end()) return -1;
  RowFamily& family = row_families_.at(is_slice ? key : member->second);
  if (family.head < 0) {
    // Every member at once, the first the head: their macros name the head's.
    const std::vector<std::vector<Expr>>& shapes = family.members;
    std::vector<std::string> columns;
    for (const auto& shape : shapes) columns.push_back(c(simplify(shape[1], env_)));
    family.head = static_cast<int>(layouts_.size());
    for (size_t m = 0; m < shapes.size(); ++m) {
      const int id = static_cast<int>(layouts_.size());
      lower::ProgramLayout::RowFamily role{family.head, {}};
      if (m == 0) role.other_columns.assign(columns.begin() + 1, columns.end());
      layout_macros_ += lower::ProgramLayout::tile_layout(id, "1 * (" + c(simplify(shapes[m][0], env_)) + ")",
                                                          columns[m], /*mma=*/true, /*warpgroups=*/false,
                                                          /*row_warps=*/true, &role);
      layouts_.emplace(shape_key(shapes[m]), id);
    }
  }
  if (!is_slice) return layouts_.at(key);
  if (auto found = layouts_.find(key); found != layouts_.end()) return found->second;
  const int id = static_cast<int>(layouts_.size());
  layout_macros_ += lower::ProgramLayout::slice_layout(id, family.head);
  layouts_.emplace(key, id);
  return id;
}

std::optional<std::string> Emitter::slice_element(const std::string& name, const Type& type,
                                                  const std::vector<Expr>& index) {
  // A row vector read at the row of the member's nest being emitted: the work-item's own slot.
  if (!aligned_ || type.shape.size() != 1 || index.size() != 1 || !index[0].is_var()) return std::nullopt;
  auto shape = distributed_shapes_.find(name);
  if (shape == distributed_shapes_.end() || !row_families_.count(shape->second)) return std::nullopt;
  auto member = family_of_.find(aligned_->shape);
  if (member == family_of_.end() || member->second != shape->second || aligned_->index.size() != 2 ||
      index[0]->name != aligned_->index[0])
    return std::nullopt;
  return name + "[" + aligned_->row_slot + "]";
}

bool Emitter::reduces_into_slice(const Value& v) {
  const auto fn = static_cast<ReduceFn>(v->op);
  if (v->type.shape.size() != 1 || fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) return false;
  auto member = family_of_.find(shape_key(v->operands[0]->type.shape));
  return member != family_of_.end() && member->second == shape_key(v->type.shape);
}

}  // namespace nt::codegen
