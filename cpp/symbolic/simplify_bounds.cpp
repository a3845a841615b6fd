// Symbol bounds and value types, and the bounds of expressions: structural (interval
// arithmetic over the tree) and symbolic (symbols replaced by their symbolic bounds).
#include "symbolic/simplify_internal.h"

namespace nt::simplify_internal {

// A symbol's upper bound counts for meta symbols only (tuning keeps them in it); on any other, as
// upstream has it, it is a hint for pruning tuning candidates, and a launch may pass more (ntops's
// attention bounds a mask's constexpr key length by 128 and passes longer ones).
void Simplifier::gather_attrs(const Expr& root) {
  // Every node of a name counts (collect_vars keeps only the first).
  std::vector<const ExprNode*> stack{root.get()};
  std::unordered_map<const ExprNode*, bool> seen;
  while (!stack.empty()) {
    const ExprNode* node = stack.back();
    stack.pop_back();
    if (!seen.emplace(node, true).second) continue;
    if (node->kind == ExprKind::Var) {
      Range& r = attr_bounds_[node->name];
      if (node->attrs.lower_bound) r.lo = std::max(r.lo, Wide(*node->attrs.lower_bound));
      if (node->attrs.upper_bound && node->attrs.meta) r.hi = std::min(r.hi, Wide(*node->attrs.upper_bound));
    }
    for (const auto& operand : node->operands) stack.push_back(operand.get());
  }
}

Range Simplifier::var_bounds(const Expr& v) {
  Range r = from_interval(env_.numeric(v->name));
  auto it = attr_bounds_.find(v->name);
  if (it != attr_bounds_.end()) r = meet(r, it->second);
  if (v->attrs.lower_bound) r.lo = std::max(r.lo, Wide(*v->attrs.lower_bound));
  if (v->attrs.upper_bound && v->attrs.meta) r.hi = std::min(r.hi, Wide(*v->attrs.upper_bound));
  const std::pair<Expr, Expr>* symbolic = env_.symbolic(v->name);
  if (!symbolic) return r;
  // Symbolic bounds count through their own ranges: 0 <= i <= BLOCK - 1
  // with BLOCK <= 1024 gives i <= 1023.
  auto cached = symbolic_var_bounds_.find(v->name);
  if (cached != symbolic_var_bounds_.end()) return meet(r, cached->second);
  if (depth_ >= kMaxProofDepth || !in_progress_.insert(v->name).second) return r;
  Range s;
  ++depth_;
  if (symbolic->first.defined() && type_of(symbolic->first) != VType::Float) s.lo = range(symbolic->first).lo;
  if (symbolic->second.defined() && type_of(symbolic->second) != VType::Float)
    s.hi = range(symbolic->second).hi;
  --depth_;
  in_progress_.erase(v->name);
  symbolic_var_bounds_.emplace(v->name, s);
  return meet(r, s);
}

VType Simplifier::type_of(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int:
    case ExprKind::Var:
      return VType::Int;
    case ExprKind::Float:
      return VType::Float;
    case ExprKind::Bool:
      return VType::Bool;
    default:
      break;
  }
  auto it = types_.find(e.get());
  if (it != types_.end()) return it->second.second;
  VType t = compute_type(e);
  types_.emplace(e.get(), std::make_pair(e, t));
  return t;
}

VType Simplifier::compute_type(const Expr& e) {
  auto join = [&](const Expr& a, const Expr& b) {
    VType ta = type_of(a), tb = type_of(b);
    if (ta == VType::Float || tb == VType::Float) return VType::Float;
    if (ta == VType::Bool && tb == VType::Bool) return VType::Bool;
    return VType::Int;
  };
  if (e->kind == ExprKind::Unary) {
    if (e->unary_op == UnaryOp::Not) return VType::Bool;
    return type_of(e->operands[0]) == VType::Float ? VType::Float : VType::Int;
  }
  if (e->kind == ExprKind::Select) return join(e->operands[1], e->operands[2]);
  BinaryOp op = e->binary_op;
  if (op == BinaryOp::TrueDiv) return VType::Float;
  if (is_comparison(op)) return VType::Bool;
  VType t = join(e->operands[0], e->operands[1]);
  switch (op) {
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::Min:
    case BinaryOp::Max:
      return t;
    default:
      return t == VType::Float ? VType::Float : VType::Int;
  }
}

Range Simplifier::compute_bounds(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int:
    case ExprKind::Bool:
      return exact(e->int_value);
    case ExprKind::Float:
      return unknown();
    case ExprKind::Var:
      return var_bounds(e);
    default:
      break;
  }
  if (type_of(e) == VType::Float) return unknown();
  if (e->kind == ExprKind::Unary) {
    Range a = bounds(e->operands[0]);
    if (e->unary_op == UnaryOp::Neg) return range_neg(a);
    if (excludes_zero(a)) return exact(0);
    if (is_zero(a)) return exact(1);
    return boolean_range();
  }
  if (e->kind == ExprKind::Select) {
    Range c = bounds(e->operands[0]);
    if (excludes_zero(c)) return bounds(e->operands[1]);
    if (is_zero(c)) return bounds(e->operands[2]);
    return hull(bounds(e->operands[1]), bounds(e->operands[2]));
  }
  Range a = bounds(e->operands[0]);
  Range b = bounds(e->operands[1]);
  switch (e->binary_op) {
    case BinaryOp::Add:
      return range_add(a, b);
    case BinaryOp::Sub:
      return range_sub(a, b);
    case BinaryOp::Mul:
      return range_mul(a, b);
    case BinaryOp::FloorDiv:
      return range_floor_div(a, b);
    case BinaryOp::Mod:
      return range_mod(a, b);
    case BinaryOp::Min:
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case BinaryOp::Max:
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case BinaryOp::Lt:
      if (a.hi < b.lo) return exact(1);
      if (a.lo >= b.hi) return exact(0);
      return boolean_range();
    case BinaryOp::Le:
      if (a.hi <= b.lo) return exact(1);
      if (a.lo > b.hi) return exact(0);
      return boolean_range();
    case BinaryOp::Gt:
      if (a.lo > b.hi) return exact(1);
      if (a.hi <= b.lo) return exact(0);
      return boolean_range();
    case BinaryOp::Ge:
      if (a.lo >= b.hi) return exact(1);
      if (a.hi < b.lo) return exact(0);
      return boolean_range();
    case BinaryOp::Eq:
      if (a.hi < b.lo || b.hi < a.lo) return exact(0);
      if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return exact(1);
      return boolean_range();
    case BinaryOp::Ne:
      if (a.hi < b.lo || b.hi < a.lo) return exact(1);
      if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return exact(0);
      return boolean_range();
    case BinaryOp::And:  // `a and b` is a when a is falsy, else b
      if (excludes_zero(a)) return b;
      if (is_zero(a)) return exact(0);
      return hull(exact(0), b);
    case BinaryOp::Or:  // `a or b` is a when a is truthy, else b
      if (excludes_zero(a)) return a;
      if (is_zero(a)) return b;
      return hull(a, b);
    case BinaryOp::BitAnd:
      // With one operand non-negative the result lies in [0, that operand].
      if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
      if (a.lo >= 0) return {0, a.hi};
      if (b.lo >= 0) return {0, b.hi};
      return unknown();
    case BinaryOp::BitOr:
      // For non-negative operands max(a, b) <= a | b <= a + b.
      if (a.lo >= 0 && b.lo >= 0) return {std::max(a.lo, b.lo), sat_hi(a.hi + b.hi)};
      return unknown();
    case BinaryOp::TrueDiv:
      return unknown();
  }
  return unknown();
}

Range Simplifier::symbolic_range(const Expr& s) {
  if (type_of(s) == VType::Float) return unknown();
  Linear l = to_linear(s);
  Linear lower = lin_const(l.constant), upper = lin_const(l.constant);
  bool lower_changed = false, upper_changed = false;
  for (const Term& t : l.terms) {
    Linear single;
    single.terms.push_back(t);
    const std::pair<Expr, Expr>* sb = nullptr;
    if (t.factors.size() == 1 && t.factors[0].is_var()) sb = env_.symbolic(t.factors[0]->name);
    const Expr* for_lower = sb ? (t.coef > 0 ? &sb->first : &sb->second) : nullptr;
    const Expr* for_upper = sb ? (t.coef > 0 ? &sb->second : &sb->first) : nullptr;
    if (for_lower && for_lower->defined() && type_of(*for_lower) != VType::Float) {
      lower = lin_add(lower, lin_scale(to_linear(simplify(*for_lower)), t.coef));
      lower_changed = true;
    } else {
      lower = lin_add(lower, single);
    }
    if (for_upper && for_upper->defined() && type_of(*for_upper) != VType::Float) {
      upper = lin_add(upper, lin_scale(to_linear(simplify(*for_upper)), t.coef));
      upper_changed = true;
    } else {
      upper = lin_add(upper, single);
    }
  }
  Range r;
  if (lower_changed) r.lo = range(build(lower)).lo;
  if (upper_changed) r.hi = range(build(upper)).hi;
  return r;
}

}  // namespace nt::simplify_internal
