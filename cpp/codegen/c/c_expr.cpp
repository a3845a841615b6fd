#include "codegen/c/c_expr.h"

#include <cmath>

#include "symbolic/printer.h"

namespace nt::codegen {

namespace {

std::string float_literal(double v, bool single) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  std::string s = format_float(v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  if (v < 0) return "(" + s + (single ? "f" : "") + ")";
  return s + (single ? "f" : "");
}

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807L - 1)";
  std::string s = std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "L" : "");
  return v < 0 ? "(" + s + ")" : s;
}

bool non_negative(const Expr& e, const BoundsEnv& env) {
  Interval b = bounds_of(e, env);
  return b.lo && *b.lo >= 0;
}

bool positive(const Expr& e, const BoundsEnv& env) {
  Interval b = bounds_of(e, env);
  return b.lo && *b.lo > 0;
}

void collect_unproved_divisors(const Expr& e, const BoundsEnv& env, std::vector<Expr>& out) {
  for (const Expr& o : e->operands) collect_unproved_divisors(o, env, out);
  if (e->kind != ExprKind::Binary || (e->binary_op != BinaryOp::FloorDiv && e->binary_op != BinaryOp::Mod))
    return;
  Interval b = bounds_of(e->operands[1], env);
  if (!((b.lo && *b.lo >= 1) || (b.hi && *b.hi <= -1))) out.push_back(e->operands[1]);
}

}  // namespace

std::vector<Expr> unproved_divisors(const Expr& e, const BoundsEnv& env) {
  std::vector<Expr> out;
  collect_unproved_divisors(e, env, out);
  return out;
}

std::string c_literal(const Expr& value, DType dtype) {
  bool is_float = dtype_is_float(dtype);
  switch (value->kind) {
    case ExprKind::Float:
      if (is_float) return float_literal(value->float_value, dtype != DType::float64);
      return "(" + float_literal(value->float_value, false) + ")";
    case ExprKind::Int:
    case ExprKind::Bool:
      if (is_float) return float_literal(static_cast<double>(value->int_value), dtype != DType::float64);
      return int_literal(value->int_value);
    default:
      return "(" + c_expr(value, {}) + ")";
  }
}

std::string c_expr(const Expr& e, const BoundsEnv& env, const std::string& widen) {
  switch (e->kind) {
    case ExprKind::Int:
      return int_literal(e->int_value);
    case ExprKind::Bool:
      return e->int_value ? "1" : "0";
    case ExprKind::Float:
      return float_literal(e->float_value, false);
    case ExprKind::Var:
      return widen.empty() ? e->name : "((" + widen + ")" + e->name + ")";
    case ExprKind::Select:
      return "(" + c_expr(e->operands[0], env, widen) + " ? " + c_expr(e->operands[1], env, widen) + " : " +
             c_expr(e->operands[2], env, widen) + ")";
    case ExprKind::Unary:
      return std::string(e->unary_op == UnaryOp::Neg ? "(-" : "(!") + c_expr(e->operands[0], env, widen) +
             ")";
    case ExprKind::Binary: {
      const Expr& a = e->operands[0];
      const Expr& b = e->operands[1];
      std::string x = c_expr(a, env, widen), y = c_expr(b, env, widen);
      switch (e->binary_op) {
        case BinaryOp::FloorDiv:
          if (non_negative(a, env) && positive(b, env)) return "(" + x + " / " + y + ")";
          return "nt_floordiv(" + x + ", " + y + ")";
        case BinaryOp::Mod:
          if (non_negative(a, env) && positive(b, env)) return "(" + x + " % " + y + ")";
          return "nt_floormod(" + x + ", " + y + ")";
        case BinaryOp::TrueDiv:
          return "((double)" + x + " / (double)" + y + ")";
        case BinaryOp::Min:
          return "nt_min(" + x + ", " + y + ")";
        case BinaryOp::Max:
          return "nt_max(" + x + ", " + y + ")";
        case BinaryOp::And:
          return "(" + x + " && " + y + ")";
        case BinaryOp::Or:
          return "(" + x + " || " + y + ")";
        default:
          return "(" + x + " " + binary_op_token(e->binary_op) + " " + y + ")";
      }
    }
  }
  return "0";
}

}  // namespace nt::codegen
