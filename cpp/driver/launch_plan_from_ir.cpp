// make_launch_plan: a lowered kernel and its OpenCL C -> the LaunchPlan.
//
// Besides copying what a launch reads from the IR's parameters, this decides
// two things once: which symbols the caller gives (constexpr symbols that are
// not sizes of a source) and which tuning chooses (meta symbols), and the
// default configuration of the meta symbols.
#include <algorithm>
#include <set>

#include "driver/launch_plan.h"
#include "ir/ir.h"
#include "support/errors.h"
#include "symbolic/substitute.h"

namespace nt {

namespace {

// Elements one block may hold in the default configuration.
constexpr int64_t kDefaultBlockBudget = 4096;

void collect_symbols(const Expr& e, std::map<std::string, SymbolAttrs>& out) {
  for (const Expr& v : collect_vars(e)) {
    if (v->attrs.constexpr_ || v->attrs.meta) out.emplace(v->name, v->attrs);
  }
}

void collect_written(const ir::StmtList& stmts, std::vector<PlanParam>& params) {
  for (const ir::Stmt& s : stmts) {
    if (s->kind == ir::StmtKind::Store || s->kind == ir::StmtKind::StorePointer ||
        s->kind == ir::StmtKind::StoreAt || s->kind == ir::StmtKind::AtomicAdd ||
        s->kind == ir::StmtKind::Atomic) {
      params[s->param].written = true;
    }
    collect_written(s->body, params);
    collect_written(s->orelse, params);
  }
}

// Marks the parameters whose memory `v` reads (loads, pointers into a
// source) as read. `seen` skips shared subterms.
void collect_read(const ir::Value& v, std::vector<PlanParam>& params, std::set<const ir::ValueNode*>& seen) {
  if (!v || !seen.insert(v.get()).second) return;
  switch (v->kind) {
    case ir::ValueKind::Load:
    case ir::ValueKind::LoadAt:
    case ir::ValueKind::PointerBase:
      params[v->param].read = true;
      break;
    default:
      break;
  }
  if (v->type.pointer >= 0) params[v->type.pointer].read = true;
  for (const ir::Value& operand : v->operands) collect_read(operand, params, seen);
  for (const ir::Value& result : v->combine) collect_read(result, params, seen);
}

void collect_read(const ir::StmtList& stmts, std::vector<PlanParam>& params,
                  std::set<const ir::ValueNode*>& seen) {
  for (const ir::Stmt& s : stmts) {
    // Atomics read what they update.
    if (s->kind == ir::StmtKind::AtomicAdd || s->kind == ir::StmtKind::Atomic) params[s->param].read = true;
    for (const ir::Value* v : {&s->value, &s->start, &s->stop, &s->step}) collect_read(*v, params, seen);
    for (const ir::Value& v : s->indices) collect_read(v, params, seen);
    collect_read(s->body, params, seen);
    collect_read(s->orelse, params, seen);
  }
}

// Every meta symbol as large as its bounds allow (at most 1024), then the
// largest halved while a block holds more than the budget.
SymbolValues default_config(const LaunchPlan& plan) {
  const auto& symbols = plan.source.symbols;
  SymbolValues config;
  for (const std::string& name : plan.meta_symbols) {
    const SymbolAttrs& a = symbols.at(name);
    int64_t hi = std::min<int64_t>(a.upper_bound.value_or(1024), 1024);
    int64_t lo = a.lower_bound.value_or(1);
    int64_t v = std::max(hi, lo);
    if (a.power_of_two) {
      int64_t p = 1;
      while (p * 2 <= v) p *= 2;
      v = p < lo ? v : p;
    }
    config[name] = v;
  }
  for (int round = 0; round < 64; ++round) {
    int64_t worst = 0;
    std::string worst_symbol;
    for (const PlanParam& p : plan.params) {
      if (p.scalar) continue;
      int64_t elements = 1;
      std::string largest;
      for (const Expr& s : p.block_shape) {
        SymbolMap values;
        bool pure_meta = true;
        for (const Expr& v : collect_vars(s)) {
          auto it = config.find(v->name);
          if (it == config.end())
            pure_meta = false;
          else
            values.emplace(v->name, Expr(it->second));
        }
        if (!pure_meta) continue;
        auto n = evaluate_int(s, values);
        if (!n) continue;
        elements *= std::max<int64_t>(*n, 1);
        for (const Expr& v : collect_vars(s)) {
          if (largest.empty() || config[v->name] > config[largest]) largest = v->name;
        }
      }
      if (elements > worst && !largest.empty()) worst = elements, worst_symbol = largest;
    }
    if (worst <= kDefaultBlockBudget) break;
    const SymbolAttrs& a = symbols.at(worst_symbol);
    int64_t& v = config[worst_symbol];
    if (v / 2 < a.lower_bound.value_or(1)) break;
    v /= 2;
  }
  return config;
}

}  // namespace

LaunchPlan make_launch_plan(const ir::Kernel& lowered, codegen::KernelSource source) {
  LaunchPlan plan;
  plan.source = std::move(source);
  plan.block_size_symbols = ir::block_size_symbols(lowered);
  std::set<std::string> size_symbols;  // sizes of the sources: bound from the tensors
  for (const ir::Param& p : lowered.params) {
    PlanParam q;
    q.name = p.name;
    q.dtype = p.dtype;
    q.scalar = p.scalar;
    q.constexpr_ = p.constexpr_;
    if (!p.scalar) {
      const Tensor& src = p.arranged->source_ref();
      q.source_shape = src.shape();
      for (size_t d = 0; d < src.ndim(); ++d) q.stride_symbols.push_back(src.stride_symbol(d)->name);
      for (const Expr& size : q.source_shape) {
        if (size.is_var()) size_symbols.insert(size->name);
      }
      q.has_outer_level = p.has_outer_level();
      q.outer_shape = p.outer_shape();
      q.middle_shape = p.middle_shape();
      q.block_shape = p.block_shape();
      if (src.jagged_dim()) q.jagged_dim = static_cast<int>(*src.jagged_dim());
      for (const Expr& s : q.outer_shape) collect_symbols(s, plan.source.symbols);
    }
    plan.params.push_back(std::move(q));
  }
  if (const ir::Param* g = ir::grid_param(lowered))
    plan.grid_param = static_cast<int>(g - lowered.params.data());
  for (const auto& [name, attrs] : plan.source.symbols) {
    if (attrs.meta)
      plan.meta_symbols.push_back(name);
    else if (!size_symbols.count(name))
      plan.constexpr_symbols.push_back(name);
  }
  collect_written(lowered.body, plan.params);
  std::set<const ir::ValueNode*> seen;
  collect_read(lowered.body, plan.params, seen);
  // A whole block stored by every program: a Store of no middle-level
  // indices, at the top of the kernel (not under an `if` or a loop).
  for (const ir::Stmt& s : lowered.body) {
    if (s->kind != ir::StmtKind::Store || !s->indices.empty()) continue;
    const ir::Param& p = lowered.params[s->param];
    // A jagged tensor's values may hold elements of no sequence (a view's): never all written.
    if (!p.scalar && p.arranged->covers_source() && !p.arranged->jagged_dim())
      plan.params[s->param].overwritten = true;
  }
  plan.default_config = default_config(plan);
  return plan;
}

}  // namespace nt
