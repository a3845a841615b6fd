// Index tables (index_tables.h): which parts of a nest's Exprs are tabulated, the tables'
// declarations and fill loops, and the reads that replace the parts.
#include "codegen/c/index_tables.h"

#include <algorithm>

#include "codegen/c/c_expr.h"
#include "codegen/c/c_types.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

namespace {

// What decides whether a part is tabulated.
struct PartTraits {
  bool divides_index = false;  // a floor division or remainder of (or by) the index variable
  bool has_float = false;
  bool has_select = false;
};

void inspect(const Expr& e, const std::string& index, PartTraits& traits) {
  if (e->kind == ExprKind::Float || (e->kind == ExprKind::Binary && e->binary_op == BinaryOp::TrueDiv))
    traits.has_float = true;
  if (e->kind == ExprKind::Select) traits.has_select = true;
  if (e->kind == ExprKind::Binary && (e->binary_op == BinaryOp::FloorDiv || e->binary_op == BinaryOp::Mod)) {
    for (const Expr& v : collect_vars(e)) traits.divides_index = traits.divides_index || v->name == index;
  }
  for (const Expr& o : e->operands) inspect(o, index, traits);
}

}  // namespace

void IndexTables::begin_nest(std::vector<Expr> shape, std::vector<std::string> extents, int indent) {
  nest_.emplace();
  nest_->indent = indent;
  nest_->shape = std::move(shape);
  nest_->extents = std::move(extents);
}

std::string IndexTables::end_nest() {
  std::string text = scope_text(*nest_) + nest_->reads;
  nest_.reset();
  return text;
}

void IndexTables::add_index(const std::string& variable, bool complete) {
  nest_->index.push_back(variable);
  nest_->complete = complete;
}

void IndexTables::set_index(std::vector<std::string> index, std::vector<OnceRead> fixed) {
  nest_->index = std::move(index);
  nest_->fixed = std::move(fixed);
  nest_->complete = true;
}

std::vector<std::string> IndexTables::take_copy_reads() {
  std::vector<std::string> reads;
  if (nest_) reads.swap(nest_->copy_reads);
  return reads;
}

void IndexTables::begin_loop(int indent) {
  loops_.emplace_back();
  loops_.back().indent = indent;
}

std::string IndexTables::end_loop() {
  std::string text = scope_text(loops_.back());
  loops_.pop_back();
  return text;
}

void IndexTables::note_declared(const std::string& name) {
  if (nest_) nest_->inner.insert(name);
  for (TableScope& loop : loops_) loop.inner.insert(name);
}

std::string IndexTables::scope_text(const TableScope& scope) {
  if (!scope.barriers) return scope.text;
  // Before: no work-item still reads what the fills overwrite (the previous k step's tables).
  // After: every entry is written before any is read.
  const std::string barrier = std::string(scope.indent * 2, ' ') + "NT_BARRIER();\n";
  return barrier + scope.text + barrier;
}

Expr IndexTables::tabulated(const Expr& e) {
  if (!nest_ || !nest_->complete || e->operands.empty()) return e;
  std::optional<size_t> dim;
  bool alone = true;  // uses one index variable and nothing declared inside the nest
  for (const Expr& v : collect_vars(e)) {
    auto at = std::find(nest_->index.begin(), nest_->index.end(), v->name);
    if (at != nest_->index.end()) {
      size_t d = static_cast<size_t>(at - nest_->index.begin());
      if (dim && *dim != d) alone = false;
      dim = d;
    } else if (nest_->inner.count(v->name)) {
      alone = false;
    }
  }
  if (!dim) return e;  // the same at every element: the C compiler hoists it
  if (alone && !nest_->extents[*dim].empty()) {
    // Only divisions of the index pay for a table: an affine part stays inline, where it keeps
    // unit-stride loads (and vector_hint()'s judgement of them) intact. A part with a select
    // and a guarded division is left too: the guard would zero the branch taken.
    PartTraits traits;
    inspect(e, nest_->index[*dim], traits);
    bool guarded = !unproved_divisors(e, host_.bounds()).empty();
    if (traits.divides_index && !traits.has_float && !(traits.has_select && guarded))
      return table_of(e, *dim);
  }
  std::vector<Expr> operands;
  for (const Expr& o : e->operands) operands.push_back(tabulated(o));
  return with_operands(e, operands);
}

Expr IndexTables::table_of(const Expr& part, size_t dim) {
  const std::string& e = nest_->index[dim];
  const std::string& extent = nest_->extents[dim];
  // Where the table goes: before the outermost enclosing loop that leaves the part unchanged.
  TableScope* scope = &*nest_;
  std::vector<Expr> vars = collect_vars(part);
  for (TableScope& loop : loops_) {
    bool invariant = std::none_of(vars.begin(), vars.end(),
                                  [&](const Expr& v) { return v->name != e && loop.inner.count(v->name); });
    if (invariant) {
      scope = &loop;
      break;
    }
  }
  // The part by what it computes, whatever the nest names its index variable.
  std::string key = c_expr(substitute(part, {{e, var("nt_e")}}), host_.bounds()) + " for nt_e < " + extent;
  std::string value = c_expr(part, host_.bounds());
  auto found = scope->names.find(key);
  std::string name = found != scope->names.end() ? found->second : host_.fresh_name("nt_tab");
  // The read of the table, as a symbol with the part's bounds (so what contains it prints as
  // it did: plain `/` where its operands are proved non-negative).
  std::string read = name + "[" + e + "]";
  std::string guard;
  for (const Expr& d : unproved_divisors(part, host_.bounds()))
    guard += (guard.empty() ? "" : " && ") + ("(" + c_expr(d, host_.bounds()) + ") != 0");
  Interval bounds = bounds_of(part, host_.bounds());
  if (!guard.empty()) {  // the table holds 0 where a divisor is 0
    if (bounds.lo && *bounds.lo > 0) bounds.lo = 0;
    if (bounds.hi && *bounds.hi < 0) bounds.hi = 0;
  }
  // Where a work-item's elements all have one index (OnceRead), its entry is read once, into a
  // register: not once an element.
  auto read_of = [&] {
    if (!shared_ || dim >= nest_->fixed.size()) return read;
    const OnceRead& f = nest_->fixed[dim];
    if (!f.per_copy && f.test.empty()) return read;
    std::string& once = nest_->once[name + "#" + std::to_string(dim)];  // a table may serve two
    const bool first = once.empty();
    if (first) once = host_.fresh_name(name + "_");
    if (f.per_copy) {
      if (first) nest_->copy_reads.push_back("const nt_index " + once + " = " + read + ";");
      return once;
    }
    const std::string pad(nest_->indent * 2, ' ');
    if (first && f.run > 1) {
      const std::string n = std::to_string(f.run);
      nest_->reads += pad + "nt_index " + once + "[" + n + "];\n" + pad + "NT_UNROLL\n" + pad +
                      "for (int nt_r = 0; nt_r < " + (f.run_length.empty() ? n : f.run_length) +
                      "; ++nt_r) " + once + "[nt_r] = " + name + "[" + f.index + " + nt_r];\n";
    } else if (first) {
      nest_->reads += pad + "const nt_index " + once + " = " + name + "[" + f.index + "];\n";
    }
    return "(" + f.test + " ? " + once + (f.run > 1 ? "[" + f.run_at + "]" : "") + " : " + read + ")";
  };
  host_.bounds().set(read, bounds);
  const std::string r = read_of();
  host_.bounds().set(r, bounds);
  if (found != scope->names.end()) return var(r);
  scope->names.emplace(key, name);
  if (!guard.empty()) value = "(" + guard + ") ? (nt_index)(" + value + ") : 0";
  std::string pad(scope->indent * 2, ' ');
  if (shared_) {  // in local memory, the work-items taking every NT_WORK_ITEMS-th entry
    host_.declare_shared_table(name, extent, mul(nest_->shape[dim], 8));
    scope->barriers = true;
    scope->text += pad + "for (nt_index " + e + " = NT_LANE; " + e + " < " + extent + "; " + e +
                   " += NT_WORK_ITEMS) " + name + "[" + e + "] = " + value + ";\n";
    return var(r);
  }
  scope->text += pad + kIndexType + " " + name + "[" + extent + "];\n";
  scope->text += pad + "for (nt_index " + e + " = 0; " + e + " < " + extent + "; ++" + e + ") " + name + "[" +
                 e + "] = " + value + ";\n";
  host_.add_private_bytes(mul(nest_->shape[dim], 8));
  return var(read);
}

}  // namespace nt::codegen
