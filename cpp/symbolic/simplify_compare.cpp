// Rules for comparisons, min and max (decided by the bounds of a difference), and, or, not,
// bitwise operators and selects with constant or decided operands.
#include "symbolic/simplify_internal.h"

namespace nt::simplify_internal {

Expr Simplifier::simplify_select(const Expr& e, const std::vector<Expr>& ops) {
  const Expr& c = ops[0];
  if (c->kind == ExprKind::Int || c->kind == ExprKind::Bool || c->kind == ExprKind::Float) {
    return truthy(c) ? ops[1] : ops[2];
  }
  Range rc = range(c);
  if (excludes_zero(rc)) return ops[1];
  if (is_zero(rc)) return ops[2];
  if (equal(ops[1], ops[2])) return ops[1];
  if (type_of(c) == VType::Bool && ops[1]->kind == ExprKind::Bool && ops[2]->kind == ExprKind::Bool) {
    return ops[1]->int_value ? c : simplify(logical_not(c));
  }
  return rebuild(e, ops);
}

Expr Simplifier::simplify_not(const Expr& e, const Expr& a) {
  if (a.is_const()) return bool_const(!truthy(a));
  Range r = range(a);
  if (excludes_zero(r)) return bool_const(false);
  if (is_zero(r)) return bool_const(true);
  if (a->kind == ExprKind::Unary && a->unary_op == UnaryOp::Not && type_of(a->operands[0]) == VType::Bool) {
    return a->operands[0];
  }
  if (a->kind == ExprKind::Binary && is_comparison(a->binary_op) && type_of(a->operands[0]) != VType::Float &&
      type_of(a->operands[1]) != VType::Float) {
    return binary(inverse_comparison(a->binary_op), a->operands[0], a->operands[1]);
  }
  return rebuild(e, {a});
}

Expr Simplifier::simplify_logic(const Expr& e, BinaryOp op, const Expr& a, const Expr& b) {
  bool is_and = op == BinaryOp::And;
  // `a and b` is a when a is falsy, else b; `a or b` is a when a is truthy, else b.
  std::optional<bool> a_truth;
  if (a.is_const()) {
    a_truth = truthy(a);
  } else if (type_of(a) != VType::Float) {
    Range r = range(a);
    if (excludes_zero(r)) a_truth = true;
    if (is_zero(r)) a_truth = false;
  }
  if (a_truth) return (*a_truth == is_and) ? b : a;
  if (type_of(a) == VType::Bool && b->kind == ExprKind::Bool) {
    // For a boolean a: `a and True` is a, `a and False` is False,
    // `a or False` is a, `a or True` is True.
    bool value = b->int_value != 0;
    return (value == is_and) ? a : b;
  }
  if (equal(a, b)) return a;
  return rebuild(e, {a, b});
}

Expr Simplifier::simplify_bitwise(const Expr& e, BinaryOp op, const Expr& a, const Expr& b) {
  bool both_bool = type_of(a) == VType::Bool && type_of(b) == VType::Bool;
  if (op == BinaryOp::BitAnd) {
    if (a.is_int(0) || b.is_int(0)) return int_const(0);
    if (both_bool) {
      if (a->kind == ExprKind::Bool) return a->int_value ? b : a;
      if (b->kind == ExprKind::Bool) return b->int_value ? a : b;
    }
  } else {
    if (a.is_int(0)) return b;
    if (b.is_int(0)) return a;
    if (both_bool) {
      if (a->kind == ExprKind::Bool) return a->int_value ? a : b;
      if (b->kind == ExprKind::Bool) return b->int_value ? b : a;
    }
  }
  if (equal(a, b)) return a;
  return rebuild(e, {a, b});
}

Expr Simplifier::simplify_min_max(BinaryOp op, const Expr& a, const Expr& b) {
  if (equal(a, b)) return a;
  Range d = range(sub(a, b));
  bool is_min = op == BinaryOp::Min;
  if (d.hi <= 0) return is_min ? a : b;
  if (d.lo >= 0) return is_min ? b : a;
  // Both are integers: the order of the operands does not matter.
  if (key_of(b) < key_of(a)) return binary(op, b, a);
  return binary(op, a, b);
}

Expr Simplifier::simplify_comparison(BinaryOp op, const Expr& a, const Expr& b) {
  Expr d = simplify(sub(a, b));
  Range r = range(d);
  auto decided = [&]() -> std::optional<bool> {
    switch (op) {
      case BinaryOp::Lt:
        if (r.hi < 0) return true;
        if (r.lo >= 0) return false;
        break;
      case BinaryOp::Le:
        if (r.hi <= 0) return true;
        if (r.lo > 0) return false;
        break;
      case BinaryOp::Gt:
        if (r.lo > 0) return true;
        if (r.hi <= 0) return false;
        break;
      case BinaryOp::Ge:
        if (r.lo >= 0) return true;
        if (r.hi < 0) return false;
        break;
      case BinaryOp::Eq:
        if (is_zero(r)) return true;
        if (excludes_zero(r)) return false;
        break;
      default:  // Ne
        if (is_zero(r)) return false;
        if (excludes_zero(r)) return true;
        break;
    }
    return std::nullopt;
  }();
  if (decided) return bool_const(*decided);
  // `P op Q` with the positive part of the difference on the left, the
  // negative part on the right, and the constant where it is positive.
  Linear l = to_linear(d);
  Linear left = lin_const(l.constant > 0 ? l.constant : 0);
  Linear right = lin_const(l.constant < 0 ? checked_neg(l.constant) : 0);
  for (const Term& t : l.terms) {
    Linear single;
    single.terms.push_back(t);
    if (t.coef > 0) {
      left = lin_add(left, single);
    } else {
      right = lin_add(right, single, -1);
    }
  }
  return binary(op, build(left), build(right));
}

}  // namespace nt::simplify_internal
