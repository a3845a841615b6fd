// Index tables: the integer arithmetic of one index variable of a nest, computed once per
// value of that variable before the nest (emitter.h, "index tables").
//
// In: the Exprs the nest's body prints (offsets, masks). Out: the same Exprs with each
// maximal part that divides and depends on one index variable alone replaced by a read of
// a table `nt_tab<n>[e]`; the tables' declarations and fill loops go before the nest.
//
// Mode::WorkItem: private tables, each filled by its work-item (with_index_tables()).
// Mode::WorkGroup: the element-by-element copies of a staged tensor-core operand
// (stage_block(): an implicit GEMM's gathered rows and its filter's flattened (C R S) rows),
// whose work-items each copy elements of many rows. Their tables are in local memory, filled
// by the work-group together, between barriers (with_group_tables()): the output positions'
// once per program, before the k loop; the reduction step's once per k step, at the start of
// the step's copies (stage_ahead() makes those a scope of their own), shared by both operands.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "codegen/c/emitter.h"

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

// An exception leaves these scopes as they are: the emitter that threw is not used again
// (generate_opencl() drops it).
void Emitter::written_after(const std::function<void()>& emit, const std::function<std::string()>& before) {
  std::ostringstream outer;
  outer.swap(body_);
  emit();
  std::string text = body_.str();
  body_.swap(outer);
  body_ << before() << text;
}

void Emitter::with_index_tables(const std::vector<Expr>& shape, const std::function<void()>& emit_nest) {
  tables_.emplace();
  tables_->indent = indent_;
  tables_->shape = shape;
  for (const Expr& s : shape) tables_->extents.push_back(is_compile_time(s) ? c(simplify(s, env_)) : "");
  written_after(emit_nest, [&] { return scope_text(*tables_) + tables_->reads; });
  tables_.reset();
}

void Emitter::with_loop_scope(const std::function<void()>& emit_loop) {
  loop_scopes_.emplace_back();
  loop_scopes_.back().indent = indent_;
  written_after(emit_loop, [&] { return scope_text(loop_scopes_.back()); });
  loop_scopes_.pop_back();
}

void Emitter::with_group_tables(const std::vector<Expr>& shape, const std::vector<std::string>& index,
                                const std::vector<std::pair<std::string, std::string>>& fixed,
                                const std::function<void()>& emit_nest) {
  if (!group_ || serial_ || tables_) {
    emit_nest();
    return;
  }
  with_index_tables(shape, [&] {  // its index variables declared already
    tables_->index = index;
    tables_->complete = true;
    tables_->fixed = fixed;
    emit_nest();
  });
}

std::string Emitter::scope_text(const TableScope& scope) const {
  if (!scope.shared) return scope.text;
  // Before: no work-item still reads what the fills overwrite (the previous k step's tables).
  // After: every entry is written before any is read.
  const std::string barrier = std::string(scope.indent * 2, ' ') + "NT_BARRIER();\n";
  return barrier + scope.text + barrier;
}

Expr Emitter::tabulated(const Expr& e) {
  if (!tables_ || !tables_->complete || e->operands.empty()) return e;
  std::optional<size_t> dim;
  bool alone = true;  // uses one index variable and nothing declared inside the nest
  for (const Expr& v : collect_vars(e)) {
    auto at = std::find(tables_->index.begin(), tables_->index.end(), v->name);
    if (at != tables_->index.end()) {
      size_t d = static_cast<size_t>(at - tables_->index.begin());
      if (dim && *dim != d) alone = false;
      dim = d;
    } else if (tables_->inner.count(v->name)) {
      alone = false;
    }
  }
  if (!dim) return e;  // the same at every element: the C compiler hoists it
  if (alone && !tables_->extents[*dim].empty()) {
    // Only divisions of the index pay for a table: an affine part stays inline, where it keeps
    // unit-stride loads (and vector_hint()'s judgement of them) intact. A part with a select
    // and a guarded division is left too: the guard would zero the branch taken.
    PartTraits traits;
    inspect(e, tables_->index[*dim], traits);
    bool guarded = !unproved_divisors(e, env_).empty();
    if (traits.divides_index && !traits.has_float && !(traits.has_select && guarded))
      return table_of(e, *dim);
  }
  std::vector<Expr> operands;
  for (const Expr& o : e->operands) operands.push_back(tabulated(o));
  return with_operands(e, operands);
}

Expr Emitter::table_of(const Expr& part, size_t dim) {
  const std::string& e = tables_->index[dim];
  const std::string& extent = tables_->extents[dim];
  // Where the table goes: before the outermost enclosing loop that leaves the part unchanged.
  TableScope* scope = &*tables_;
  std::vector<Expr> vars = collect_vars(part);
  for (TableScope& loop : loop_scopes_) {
    bool invariant = std::none_of(vars.begin(), vars.end(),
                                  [&](const Expr& v) { return v->name != e && loop.inner.count(v->name); });
    if (invariant) {
      scope = &loop;
      break;
    }
  }
  // The part by what it computes, whatever the nest names its index variable.
  std::string key = c_expr(substitute(part, {{e, var("nt_e")}}), env_) + " for nt_e < " + extent;
  std::string value = c_expr(part, env_);
  auto found = scope->names.find(key);
  std::string name = found != scope->names.end() ? found->second : fresh("nt_tab");
  // The read of the table, as a symbol with the part's bounds (so what contains it prints as
  // it did: plain `/` where its operands are proved non-negative).
  std::string read = name + "[" + e + "]";
  std::string guard;
  for (const Expr& d : unproved_divisors(part, env_))
    guard += (guard.empty() ? "" : " && ") + ("(" + c_expr(d, env_) + ") != 0");
  Interval bounds = bounds_of(part, env_);
  if (!guard.empty()) {  // the table holds 0 where a divisor is 0
    if (bounds.lo && *bounds.lo > 0) bounds.lo = 0;
    if (bounds.hi && *bounds.hi < 0) bounds.hi = 0;
  }
  // Where a work-item's elements all have one index (IndexTables::fixed), its entry is read once,
  // before the nest, into a register: not once an element.
  auto read_of = [&] {
    if (!group_ || dim >= tables_->fixed.size() || tables_->fixed[dim].first.empty()) return read;
    const auto& [test, index] = tables_->fixed[dim];
    std::string& once = tables_->once[name];
    if (once.empty()) {
      once = fresh(name + "_");
      tables_->reads += std::string(tables_->indent * 2, ' ') + "const nt_index " + once + " = " + name +
                        "[" + index + "];\n";
    }
    return "(" + test + " ? " + once + " : " + read + ")";
  };
  env_.set(read, bounds);
  const std::string r = read_of();
  env_.set(r, bounds);
  if (found != scope->names.end()) return var(r);
  scope->names.emplace(key, name);
  if (!guard.empty()) value = "(" + guard + ") ? (nt_index)(" + value + ") : 0";
  std::string pad(scope->indent * 2, ' ');
  if (group_) {  // in local memory, the work-items taking every NT_WORK_ITEMS-th entry
    declare_local("nt_index", name, extent, mul(tables_->shape[dim], 8));
    scope->shared = true;
    scope->text += pad + "for (nt_index " + e + " = NT_LANE; " + e + " < " + extent + "; " + e +
                   " += NT_WORK_ITEMS) " + name + "[" + e + "] = " + value + ";\n";
    return var(r);
  }
  scope->text += pad + kIndexType + " " + name + "[" + extent + "];\n";
  scope->text += pad + "for (nt_index " + e + " = 0; " + e + " < " + extent + "; ++" + e + ") " + name + "[" +
                 e + "] = " + value + ";\n";
  private_bytes_ = add(private_bytes_, mul(tables_->shape[dim], 8));
  return var(read);
}

}  // namespace nt::codegen
