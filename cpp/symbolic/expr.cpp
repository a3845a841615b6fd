#include "symbolic/expr.h"

#include <functional>
#include <limits>
#include <stdexcept>

#include "support/errors.h"

namespace nt {

namespace {

std::shared_ptr<ExprNode> make_node(ExprKind kind) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  return node;
}

bool fold_comparison(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::Eq: return a == b;
    default: return a != b;
  }
}

template <typename F>
int64_t checked(F operation, int64_t a, int64_t b) {
  int64_t result = 0;
  if (operation(a, b, &result)) throw std::overflow_error("integer constant does not fit in 64 bits");
  return result;
}

// Integer folding; nullopt when the operation does not fold (e.g. x // 0,
// which is left for evaluation to report).
std::optional<Expr> fold_ints(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::Add: return int_const(checked([](auto x, auto y, auto* r) { return __builtin_add_overflow(x, y, r); }, a, b));
    case BinaryOp::Sub: return int_const(checked([](auto x, auto y, auto* r) { return __builtin_sub_overflow(x, y, r); }, a, b));
    case BinaryOp::Mul: return int_const(checked([](auto x, auto y, auto* r) { return __builtin_mul_overflow(x, y, r); }, a, b));
    case BinaryOp::FloorDiv:
      if (b == 0) return std::nullopt;
      return int_const(floor_div(a, b));
    case BinaryOp::Mod:
      if (b == 0) return std::nullopt;
      return int_const(floor_mod(a, b));
    case BinaryOp::Min: return int_const(a < b ? a : b);
    case BinaryOp::Max: return int_const(a < b ? b : a);
    case BinaryOp::BitAnd: return int_const(a & b);
    case BinaryOp::BitOr: return int_const(a | b);
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne: return bool_const(fold_comparison(op, a, b));
    default: return std::nullopt;  // TrueDiv, And, Or keep their form
  }
}

}  // namespace

Expr::Expr(int value) : Expr(int_const(value)) {}
Expr::Expr(int64_t value) : Expr(int_const(value)) {}

bool Expr::is_int() const { return node_ && node_->kind == ExprKind::Int; }
bool Expr::is_int(int64_t value) const { return is_int() && node_->int_value == value; }
bool Expr::is_const() const {
  return node_ && (node_->kind == ExprKind::Int || node_->kind == ExprKind::Float ||
                   node_->kind == ExprKind::Bool);
}
bool Expr::is_var() const { return node_ && node_->kind == ExprKind::Var; }
std::optional<int64_t> Expr::as_int() const {
  if (is_int()) return node_->int_value;
  return std::nullopt;
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) throw ZeroDivisionError("integer division or modulo by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) {
    throw std::overflow_error("integer division result does not fit in 64 bits");
  }
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) throw ZeroDivisionError("integer division or modulo by zero");
  if (b == -1) return 0;  // also for the minimum, where `%` would trap
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Expr int_const(int64_t value) {
  auto node = make_node(ExprKind::Int);
  node->int_value = value;
  return Expr(std::move(node));
}

Expr float_const(double value) {
  auto node = make_node(ExprKind::Float);
  node->float_value = value;
  return Expr(std::move(node));
}

Expr bool_const(bool value) {
  auto node = make_node(ExprKind::Bool);
  node->int_value = value ? 1 : 0;
  return Expr(std::move(node));
}

Expr var(const std::string& name, const SymbolAttrs& attrs) {
  if (name.empty()) throw ValueError("a symbol needs a name");
  auto node = make_node(ExprKind::Var);
  node->name = name;
  node->attrs = attrs;
  return Expr(std::move(node));
}

Expr unary(UnaryOp op, const Expr& a) {
  if (op == UnaryOp::Neg) {
    if (a.is_int()) {
      if (a->int_value == std::numeric_limits<int64_t>::min()) {
        throw std::overflow_error("integer constant does not fit in 64 bits");
      }
      return int_const(-a->int_value);
    }
    if (a->kind == ExprKind::Float) return float_const(-a->float_value);
  }
  if (op == UnaryOp::Not && a->kind == ExprKind::Bool) return bool_const(a->int_value == 0);
  auto node = make_node(ExprKind::Unary);
  node->unary_op = op;
  node->operands = {a};
  return Expr(std::move(node));
}

Expr binary(BinaryOp op, const Expr& a, const Expr& b) {
  if (a.is_int() && b.is_int()) {
    if (auto folded = fold_ints(op, a->int_value, b->int_value)) return *folded;
  }
  switch (op) {
    case BinaryOp::Add:
      if (a.is_int(0)) return b;
      if (b.is_int(0)) return a;
      break;
    case BinaryOp::Sub:
      if (b.is_int(0)) return a;
      if (a.is_int(0)) return neg(b);
      break;
    case BinaryOp::Mul:
      if (a.is_int(1)) return b;
      if (b.is_int(1)) return a;
      break;
    case BinaryOp::FloorDiv:
      if (b.is_int(1)) return a;
      break;
    default: break;
  }
  auto node = make_node(ExprKind::Binary);
  node->binary_op = op;
  node->operands = {a, b};
  return Expr(std::move(node));
}

Expr select(const Expr& cond, const Expr& a, const Expr& b) {
  if (cond->kind == ExprKind::Bool) return cond->int_value ? a : b;
  auto node = make_node(ExprKind::Select);
  node->operands = {cond, a, b};
  return Expr(std::move(node));
}

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case ExprKind::Int:
    case ExprKind::Bool: return a->int_value == b->int_value;
    case ExprKind::Float: return a->float_value == b->float_value;
    case ExprKind::Var: return a->name == b->name;
    case ExprKind::Unary:
      return a->unary_op == b->unary_op && equal(a->operands[0], b->operands[0]);
    case ExprKind::Binary:
      if (a->binary_op != b->binary_op) return false;
      break;
    case ExprKind::Select: break;
  }
  for (size_t i = 0; i < a->operands.size(); ++i) {
    if (!equal(a->operands[i], b->operands[i])) return false;
  }
  return true;
}

size_t structural_hash(const Expr& e) {
  auto combine = [](size_t seed, size_t value) {
    return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  };
  size_t h = std::hash<int>()(static_cast<int>(e->kind));
  switch (e->kind) {
    case ExprKind::Int:
    case ExprKind::Bool: return combine(h, std::hash<int64_t>()(e->int_value));
    case ExprKind::Float: return combine(h, std::hash<double>()(e->float_value));
    case ExprKind::Var: return combine(h, std::hash<std::string>()(e->name));
    case ExprKind::Unary: h = combine(h, static_cast<size_t>(e->unary_op)); break;
    case ExprKind::Binary: h = combine(h, static_cast<size_t>(e->binary_op)); break;
    case ExprKind::Select: break;
  }
  for (const auto& operand : e->operands) h = combine(h, structural_hash(operand));
  return h;
}

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne: return true;
    default: return false;
  }
}

const char* binary_op_token(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::TrueDiv: return "/";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
  }
  return "?";
}

}  // namespace nt
