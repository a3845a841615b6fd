// Which dimension of a 2-D loop nest goes innermost (Emitter::ordered_loops()).
//
// In: a nest whose body writes its element and nothing else (a store, a materialisation, a dot
// operand's packing: nest()'s `reorder`), its shape, the values it reads and the tensor it writes.
// Out: the nest's loops, columns innermost as loops() writes them, or, where every tensor the nest
// reads through elementwise operations (broadcasts and new axes included) and the one it writes
// step through memory by a few elements along the rows and by a whole stride along the columns,
// also a second copy with the rows innermost, chosen by the preprocessor from the launch's
// unit-stride macros. Scatters and stores through pointers keep their order: which of two writes
// to one place lands last is theirs to see.
//
// A block's columns are innermost because they are usually its contiguous dimension. A block
// whose columns are a tensor's outer dimension (the filters of an NCHW output, the channels of
// an NCHW input, with the rows along its width) gets one cache line, on its own page, per
// element of a row; with the rows innermost the elements of a cache line are written or read
// together. The swapped loops are plain (no vector hint, strips, index tables or work-items' lanes: a
// distributed nest is swapped only where a program is one work-item): their accesses
// have no unit stride to vectorise, and index tables serve divided rows, which are not affine.

#include <cstdlib>
#include <functional>

#include "codegen/c/c_expr.h"
#include "codegen/c/emitter.h"
#include "lower/tensor_access.h"
#include "symbolic/printer.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

// Rows within this many elements of each other count as near: a few cache lines.
constexpr int64_t kNearRowStep = 16;

}  // namespace

void Emitter::ordered_loops(const std::vector<Expr>& shape, const std::vector<Value>& trees,
                            const lower::TensorAccess* target,
                            const std::function<void(const std::vector<Expr>&)>& body) {
  if (group_ || shape.size() != 2 || shape[0].is_int(1) || tables_.in_nest()) {
    loops(shape, body);
    return;
  }
  Expr row = index_variable("e", shape[0]), column = index_variable("e", shape[1]);
  std::set<std::string> unit, not_unit;
  bool near_rows = false, keep = false;
  auto consider = [&](const lower::TensorAccess& a, const std::vector<Expr>& index) {
    if (a.never || keep) return;
    Expr offset = simplify(a.offset_at(index), env_);
    auto row_step = coefficient(offset, row->name), column_step = coefficient(offset, column->name);
    if (!row_step || !column_step) {  // not affine: loops() (its index tables, say)
      keep = true;
      return;
    }
    Expr r = simplify(*row_step, env_), col = simplify(*column_step, env_);
    if (col.is_int(0)) return;  // one element along a row: either order
    if (col.is_int()) {         // columns a constant step apart: already near
      keep = true;
      return;
    }
    if (auto macro = unit_macro_of(col)) not_unit.insert(*macro);
    if (r.is_int(0)) return;
    if (r.is_int()) {
      near_rows = near_rows || std::llabs(*r.as_int()) <= kNearRowStep;
      keep = keep || std::llabs(*r.as_int()) > kNearRowStep;
      return;
    }
    // A small multiple of a stride that may be 1 (2 * stride_3: every other column of a row).
    Expr stride = r;
    int64_t factor = 1;
    if (r->kind == ExprKind::Binary && r->binary_op == BinaryOp::Mul && r->operands[0].is_int()) {
      factor = *r->operands[0].as_int();
      stride = r->operands[1];
    }
    auto macro = unit_macro_of(stride);
    if (!macro || std::llabs(factor) > kNearRowStep) {
      keep = true;
      return;
    }
    unit.insert(*macro);
    near_rows = true;
  };
  // The loads of elementwise trees, each at the element it reads; anything else (a transpose, a
  // rearrangement, a gather, a pointer) keeps the order.
  auto read = [&](const Value& v, const std::vector<Expr>& at) {
    if (v->kind == ValueKind::Load && !materialized_.count(v.get())) consider(access_of(v), at);
    return !keep;
  };
  for (const Value& t : trees) {
    if (t->type.shape.size() != 2 || !elementwise_reads(t, {row, column}, read)) keep = true;
  }
  if (target) consider(*target, {row, column});
  for (const std::string& m : unit) keep = keep || not_unit.count(m);
  if (keep || !near_rows) {
    loops(shape, body);
    return;
  }
  std::string test = "1";
  for (const std::string& m : unit) test += " && " + m;
  for (const std::string& m : not_unit) test += " && !" + m;
  // A distributed nest's elements are spread over a program's work-items; where a program is
  // one work-item (a CPU's), the swapped loops take them all.
  if (distribute_) test += " && NT_WORK_ITEMS == 1";
  // The swapped copy's body is not loops()' nest: no hint or prefetches of the original are its.
  const std::vector<Value>* hinted = vector_trees_;
  std::vector<Value> prefetch;
  vector_trees_ = nullptr;
  prefetch.swap(prefetch_loads_);
  // With no macro to test (every step a constant but the columns'), the swapped copy is the nest.
  const bool always = test == "1";
  if (!always) line_("#if " + test);
  open("for (nt_index " + column->name + " = 0; " + column->name + " < " + c(simplify(shape[1], env_)) +
       "; ++" + column->name + ")");
  open("for (nt_index " + row->name + " = 0; " + row->name + " < " + c(simplify(shape[0], env_)) + "; ++" +
       row->name + ")");
  body({row, column});
  close();
  close();
  if (always) return;
  line_("#else");
  vector_trees_ = hinted;
  prefetch_loads_.swap(prefetch);
  loops(shape, body);
  line_("#endif");
}

}  // namespace nt::codegen
