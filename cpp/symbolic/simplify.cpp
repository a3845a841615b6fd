#include "symbolic/simplify.h"

#include "symbolic/simplify_internal.h"

namespace nt {

bool operator==(const Interval& a, const Interval& b) { return a.lo == b.lo && a.hi == b.hi; }

BoundsEnv& BoundsEnv::set(const std::string& name, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  numeric_[name] = Interval{lo, hi};
  return *this;
}

BoundsEnv& BoundsEnv::set_symbolic(const std::string& name, const Expr& lo, const Expr& hi) {
  symbolic_[name] = {lo, hi};
  return *this;
}

Interval BoundsEnv::numeric(const std::string& name) const {
  auto it = numeric_.find(name);
  return it == numeric_.end() ? Interval{} : it->second;
}

const std::pair<Expr, Expr>* BoundsEnv::symbolic(const std::string& name) const {
  auto it = symbolic_.find(name);
  return it == symbolic_.end() ? nullptr : &it->second;
}

namespace simplify_internal {

void Simplifier::gather_symbolic_bounds(const Expr& root) {
  for (const Expr& v : collect_vars(root)) {
    if (const auto* bounds = env_.symbolic(v->name)) {
      if (bounds->first.defined()) gather_attrs(bounds->first);
      if (bounds->second.defined()) gather_attrs(bounds->second);
    }
  }
}

Range Simplifier::bounds(const Expr& e) {
  if (e->kind == ExprKind::Var) return var_bounds(e);
  auto it = bounds_memo_.find(e.get());
  if (it != bounds_memo_.end()) return it->second.second;
  Range r = compute_bounds(e);
  bounds_memo_.emplace(e.get(), std::make_pair(e, r));
  return r;
}

Expr Simplifier::simplify(const Expr& e) {
  if (e->kind == ExprKind::Var) {
    Range r = bounds(e);
    return r.lo == r.hi ? int_const(static_cast<int64_t>(r.lo)) : e;  // a symbol with one value
  }
  if (e->operands.empty()) return e;
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second.second;
  Expr result;
  try {
    result = simplify_node(e);
  } catch (const std::overflow_error&) {
    result = e;  // a constant would leave int64: keep the node as it is
  }
  memo_.emplace(e.get(), std::make_pair(e, result));
  fixed(result);
  return result;
}

Range Simplifier::range(const Expr& e) {
  Range r = bounds(e);
  if (depth_ >= kMaxProofDepth || type_of(e) == VType::Float) return r;
  ++depth_;
  try {
    Expr s = simplify(e);
    r = meet(r, bounds(s));
    if (env_.has_symbolic()) r = meet(r, symbolic_range(s));
  } catch (...) {
    --depth_;
    throw;
  }
  --depth_;
  return r;
}

const std::string& Simplifier::key_of(const Expr& e) {
  auto it = keys_.find(e.get());
  if (it == keys_.end()) it = keys_.emplace(e.get(), std::make_pair(e, to_python(e))).first;
  return it->second.second;
}

void Simplifier::fixed(const Expr& e) {
  if (!e->operands.empty()) memo_.emplace(e.get(), std::make_pair(e, e));
}

Expr Simplifier::rebuild(const Expr& e, const std::vector<Expr>& operands) {
  bool changed = false;
  for (size_t i = 0; i < operands.size(); ++i) changed = changed || !operands[i].same_as(e->operands[i]);
  return changed ? with_operands(e, operands) : e;
}

std::vector<Expr> Simplifier::simplified_operands(const Expr& e) {
  std::vector<Expr> operands;
  for (const auto& operand : e->operands) operands.push_back(simplify(operand));
  return operands;
}

Expr Simplifier::simplify_node(const Expr& e) {
  VType t = type_of(e);
  if (t != VType::Float && is_linear_kind(e)) {
    Linear l = to_linear(e);
    combine_div_mod(l);
    return build(l);
  }
  std::vector<Expr> ops = simplified_operands(e);
  if (e->kind == ExprKind::Select) return simplify_select(e, ops);
  if (e->kind == ExprKind::Unary) {
    if (e->unary_op == UnaryOp::Not) return simplify_not(e, ops[0]);
    return rebuild(e, ops);
  }
  const Expr& a = ops[0];
  const Expr& b = ops[1];
  BinaryOp op = e->binary_op;
  if (op == BinaryOp::And || op == BinaryOp::Or) return simplify_logic(e, op, a, b);
  bool numeric = type_of(a) != VType::Float && type_of(b) != VType::Float;
  if (!numeric) return rebuild(e, ops);
  switch (op) {
    case BinaryOp::FloorDiv:
      return simplify_floordiv(e, a, b);
    case BinaryOp::Mod:
      return simplify_mod(e, a, b);
    case BinaryOp::Min:
    case BinaryOp::Max:
      return simplify_min_max(op, a, b);
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
      return simplify_bitwise(e, op, a, b);
    default:
      break;
  }
  if (is_comparison(op)) return simplify_comparison(op, a, b);
  return rebuild(e, ops);
}

}  // namespace simplify_internal

Interval bounds_of(const Expr& e, const BoundsEnv& env) {
  using namespace simplify_internal;
  Simplifier simplifier(e, env);
  return to_interval(simplifier.bounds(e));
}

Expr simplify(const Expr& e, const BoundsEnv& env) {
  using simplify_internal::Simplifier;
  Simplifier simplifier(e, env);
  simplifier.gather_symbolic_bounds(e);
  return simplifier.simplify(e);
}

std::optional<bool> prove(const Expr& condition, const BoundsEnv& env) {
  using namespace simplify_internal;
  Simplifier simplifier(condition, env);
  simplifier.gather_symbolic_bounds(condition);
  Expr s = simplifier.simplify(condition);
  if (s.is_const()) return truthy(s);
  Range r = simplifier.range(s);
  if (excludes_zero(r)) return true;
  if (is_zero(r)) return false;
  return std::nullopt;
}

}  // namespace nt
