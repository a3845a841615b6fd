// Helpers shared by the core tests: a reference evaluator with Python's
// semantics (independent of BatchProgram) and random expression trees.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "symbolic/expr.h"

namespace nt::testing {

using Point = std::map<std::string, int64_t>;

// The value of an integer/boolean expression at `point` as Python computes it
// (`//` and `%` floor, `and`/`or`/`if` evaluate lazily, booleans are 0/1).
// nullopt when Python would raise (division by zero), when a value leaves
// int64, or for float-valued nodes.
inline std::optional<int64_t> eval_python(const Expr& e, const Point& point) {
  using Wide = __int128;
  auto fits = [](Wide v) -> std::optional<int64_t> {
    if (v < INT64_MIN || v > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(v);
  };
  switch (e->kind) {
    case ExprKind::Int:
    case ExprKind::Bool:
      return e->int_value;
    case ExprKind::Float:
      return std::nullopt;
    case ExprKind::Var: {
      auto it = point.find(e->name);
      if (it == point.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::Unary: {
      auto a = eval_python(e->operands[0], point);
      if (!a) return std::nullopt;
      if (e->unary_op == UnaryOp::Not) return *a == 0 ? 1 : 0;
      return fits(-Wide(*a));
    }
    case ExprKind::Select: {
      auto c = eval_python(e->operands[0], point);
      if (!c) return std::nullopt;
      return eval_python(e->operands[*c != 0 ? 1 : 2], point);
    }
    case ExprKind::Binary:
      break;
  }
  BinaryOp op = e->binary_op;
  auto a = eval_python(e->operands[0], point);
  if (!a) return std::nullopt;
  if (op == BinaryOp::And) return *a == 0 ? a : eval_python(e->operands[1], point);
  if (op == BinaryOp::Or) return *a != 0 ? a : eval_python(e->operands[1], point);
  auto b = eval_python(e->operands[1], point);
  if (!b) return std::nullopt;
  Wide x = *a, y = *b;
  switch (op) {
    case BinaryOp::Add:
      return fits(x + y);
    case BinaryOp::Sub:
      return fits(x - y);
    case BinaryOp::Mul:
      return fits(x * y);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (y == 0) return std::nullopt;
      Wide q = x / y;
      if (q * y != x && ((x < 0) != (y < 0))) --q;
      return fits(op == BinaryOp::FloorDiv ? q : x - q * y);
    }
    case BinaryOp::TrueDiv:
      return std::nullopt;
    case BinaryOp::Lt:
      return x < y;
    case BinaryOp::Le:
      return x <= y;
    case BinaryOp::Gt:
      return x > y;
    case BinaryOp::Ge:
      return x >= y;
    case BinaryOp::Eq:
      return x == y;
    case BinaryOp::Ne:
      return x != y;
    case BinaryOp::BitAnd:
      return *a & *b;
    case BinaryOp::BitOr:
      return *a | *b;
    case BinaryOp::Min:
      return std::min(*a, *b);
    case BinaryOp::Max:
      return std::max(*a, *b);
    default:
      return std::nullopt;
  }
}

// A bounded symbol of the random tests.
struct BoundedVar {
  std::string name;
  int64_t lo, hi;
};

// Random expression trees built through the construction functions.
class RandomExprs {
 public:
  struct Options {
    bool booleans = true;  // comparisons, and/or/not, &, |, if-else
    bool floats = false;   // float constants and true division (printing/parsing only)
    bool symbolic_divisors = true;
    int64_t max_constant = 12;
  };

  RandomExprs(uint64_t seed, std::vector<Expr> vars, Options options)
      : rng_(seed), vars_(std::move(vars)), options_(options) {}
  RandomExprs(uint64_t seed, std::vector<Expr> vars) : RandomExprs(seed, std::move(vars), Options()) {}

  std::mt19937_64& rng() { return rng_; }

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  Expr constant() {
    if (chance(0.1)) return int_const(uniform(-1000, 1000));
    return int_const(uniform(-options_.max_constant, options_.max_constant));
  }
  Expr positive_constant() { return int_const(chance(0.5) ? uniform(1, 4) : uniform(1, 16)); }
  Expr leaf() {
    if (options_.floats && chance(0.1)) return float_const(static_cast<double>(uniform(-20, 20)) / 4.0);
    if (options_.booleans && chance(0.05)) return bool_const(chance(0.5));
    if (chance(0.35)) return constant();
    return vars_[static_cast<size_t>(uniform(0, static_cast<int64_t>(vars_.size()) - 1))];
  }

  // An integer-valued tree (booleans may appear as operands).
  Expr integer(int depth) {
    if (depth <= 0 || chance(0.2)) return leaf();
    switch (uniform(0, 15)) {
      case 0:
      case 1:
        return add(integer(depth - 1), integer(depth - 1));
      case 2:
      case 3:
        return sub(integer(depth - 1), integer(depth - 1));
      case 4:
        return mul(constant(), integer(depth - 1));
      case 5:
        return mul(integer(depth - 1), chance(0.5) ? integer(depth - 1) : constant());
      case 6:
        return floordiv(integer(depth - 1), divisor(depth - 1));
      case 7:
        return mod(integer(depth - 1), divisor(depth - 1));
      case 8:
        return neg(integer(depth - 1));
      case 9:
        return min(integer(depth - 1), integer(depth - 1));
      case 10:
        return max(integer(depth - 1), integer(depth - 1));
      case 11: {  // the shapes tile/flatten produce: (c*x + y) // c, % c
        Expr c = positive_constant();
        Expr inner = add(mul(integer(depth - 1), c), integer(depth - 1));
        return chance(0.5) ? floordiv(inner, c) : mod(inner, c);
      }
      case 12: {  // c * (x // c) + x % c
        Expr c = divisor(depth - 1);
        Expr x = integer(depth - 1);
        return add(mul(floordiv(x, c), c), mod(x, c));
      }
      case 13:
        if (options_.booleans) return select(boolean(depth - 1), integer(depth - 1), integer(depth - 1));
        return add(integer(depth - 1), constant());
      case 14:
        if (options_.floats && chance(0.3)) return truediv(integer(depth - 1), integer(depth - 1));
        return sub(add(integer(depth - 1), constant()), constant());
      default:
        if (options_.booleans && chance(0.3)) {
          return binary(chance(0.5) ? BinaryOp::BitAnd : BinaryOp::BitOr, integer(depth - 1),
                        integer(depth - 1));
        }
        return add(integer(depth - 1), mul(constant(), integer(depth - 1)));
    }
  }

  // A divisor that is never zero when the symbols are positive-bounded.
  Expr divisor(int depth) {
    if (!options_.symbolic_divisors || chance(0.6)) return positive_constant();
    std::vector<Expr> positive;
    for (const auto& v : vars_) {
      if (v->attrs.lower_bound && *v->attrs.lower_bound >= 1) positive.push_back(v);
    }
    if (positive.empty()) return positive_constant();
    Expr d = positive[static_cast<size_t>(uniform(0, static_cast<int64_t>(positive.size()) - 1))];
    if (depth > 0 && chance(0.3)) d = add(d, uniform(0, 3));
    if (depth > 0 && chance(0.2)) d = mul(d, uniform(1, 3));
    return d;
  }

  Expr boolean(int depth) {
    if (depth <= 0) return lt(leaf(), leaf());
    switch (uniform(0, 7)) {
      case 0:
        return lt(integer(depth - 1), integer(depth - 1));
      case 1:
        return le(integer(depth - 1), integer(depth - 1));
      case 2:
        return chance(0.5) ? gt(integer(depth - 1), integer(depth - 1))
                           : ge(integer(depth - 1), integer(depth - 1));
      case 3:
        return chance(0.5) ? eq(integer(depth - 1), integer(depth - 1))
                           : ne(integer(depth - 1), integer(depth - 1));
      case 4:
        return logical_and(boolean(depth - 1), boolean(depth - 1));
      case 5:
        return logical_or(boolean(depth - 1), boolean(depth - 1));
      case 6:
        return logical_not(boolean(depth - 1));
      default:
        return binary(chance(0.5) ? BinaryOp::BitAnd : BinaryOp::BitOr, boolean(depth - 1),
                      boolean(depth - 1));
    }
  }

  Expr any(int depth) { return chance(0.3) && options_.booleans ? boolean(depth) : integer(depth); }

 private:
  std::mt19937_64 rng_;
  std::vector<Expr> vars_;
  Options options_;
};

}  // namespace nt::testing
