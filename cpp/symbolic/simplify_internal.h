// The simplifier's parts, shared by its files (not part of the symbolic layer's interface).
//
// In: what simplify.h's entry points get (an Expr, a BoundsEnv). Out: the pieces they are built
// from: interval arithmetic over 128-bit integers (Range), linear forms (Linear, Monomial), and
// the Simplifier, whose rules live one family to a file, as Halide's Simplify_*.cpp do:
//   simplify.cpp           the entry points, the walk (memo, depth), rules' dispatch by node kind
//   simplify_bounds.cpp    symbol bounds and types, structural and symbolic bounds of expressions
//   simplify_linear.cpp    sums and products as canonical linear forms, and back to expressions
//   simplify_compare.cpp   comparisons, min/max, and/or/not, bitwise operators, selects
//   simplify_div_mod.cpp   floor division and modulo, by constants and by symbols proved positive
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "symbolic/printer.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"

namespace nt::simplify_internal {

// ---------------------------------------------------------------------------
// Interval arithmetic over 128-bit integers. A lower bound is -kInf or lies in
// the int64 range; an upper bound lies in the int64 range or is +kInf. Results
// beyond int64 are rounded outwards (or to the nearest int64 on the inner
// side), so every Range stays a sound over-approximation.

using Wide = __int128;
constexpr Wide kInf = Wide(1) << 100;
constexpr Wide kMin = std::numeric_limits<int64_t>::min();
constexpr Wide kMax = std::numeric_limits<int64_t>::max();

inline Wide sat_lo(Wide v) { return v < kMin ? -kInf : (v > kMax ? kMax : v); }
inline Wide sat_hi(Wide v) { return v > kMax ? kInf : (v < kMin ? kMin : v); }

struct Range {
  Wide lo = -kInf;
  Wide hi = kInf;
};

inline Range exact(int64_t v) { return {v, v}; }
inline Range unknown() { return {}; }
inline Range boolean_range() { return {0, 1}; }

inline Range from_interval(const Interval& i) {
  return {i.lo ? Wide(*i.lo) : -kInf, i.hi ? Wide(*i.hi) : kInf};
}

inline Interval to_interval(const Range& r) {
  Interval i;
  if (r.lo != -kInf) i.lo = static_cast<int64_t>(r.lo);
  if (r.hi != kInf) i.hi = static_cast<int64_t>(r.hi);
  return i;
}

inline Range meet(const Range& a, const Range& b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }
inline Range hull(const Range& a, const Range& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

inline Range range_add(const Range& a, const Range& b) { return {sat_lo(a.lo + b.lo), sat_hi(a.hi + b.hi)}; }
inline Range range_neg(const Range& a) { return {sat_lo(-a.hi), sat_hi(-a.lo)}; }
inline Range range_sub(const Range& a, const Range& b) { return range_add(a, range_neg(b)); }

inline Wide corner_mul(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return ((a < 0) != (b < 0)) ? -kInf : kInf;
  return a * b;
}

inline Range range_mul(const Range& a, const Range& b) {
  Wide c[] = {corner_mul(a.lo, b.lo), corner_mul(a.lo, b.hi), corner_mul(a.hi, b.lo), corner_mul(a.hi, b.hi)};
  return {sat_lo(*std::min_element(c, c + 4)), sat_hi(*std::max_element(c, c + 4))};
}

inline Wide wide_floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// floor(a / d) for d >= 1 (d may be +kInf).
inline Wide corner_div(Wide a, Wide d) {
  if (a == kInf || a == -kInf) return a;
  if (d == kInf) return a >= 0 ? 0 : -1;
  return wide_floor_div(a, d);
}

inline Range range_floor_div(const Range& a, const Range& d) {
  if (d.lo >= 1) {
    // For a fixed positive divisor the quotient grows with the dividend.
    return {sat_lo(std::min(corner_div(a.lo, d.lo), corner_div(a.lo, d.hi))),
            sat_hi(std::max(corner_div(a.hi, d.lo), corner_div(a.hi, d.hi)))};
  }
  if (d.hi <= -1) return range_floor_div(range_neg(a), range_neg(d));  // a // d == -a // -d
  return unknown();
}

inline Range range_mod(const Range& a, const Range& d) {
  if (d.lo >= 1) {
    if (a.lo >= 0 && a.hi < d.lo) return a;
    Range r{0, d.hi == kInf ? kInf : d.hi - 1};
    if (a.lo >= 0) r.hi = std::min(r.hi, a.hi);
    return r;
  }
  if (d.hi <= -1) {
    if (a.hi <= 0 && a.lo > d.hi) return a;
    Range r{d.lo == -kInf ? -kInf : d.lo + 1, 0};
    if (a.hi <= 0) r.lo = std::max(r.lo, a.lo);
    return r;
  }
  return unknown();
}

inline bool excludes_zero(const Range& r) { return r.lo > 0 || r.hi < 0; }
inline bool is_zero(const Range& r) { return r.lo == 0 && r.hi == 0; }

// ---------------------------------------------------------------------------
// Value types, checked integer arithmetic, small helpers.

enum class VType { Int, Bool, Float };

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("simplify: integer overflow");
  return r;
}

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("simplify: integer overflow");
  return r;
}

inline int64_t checked_neg(int64_t a) { return checked_mul(a, -1); }

inline bool is_binary(const Expr& e, BinaryOp op) {
  return e->kind == ExprKind::Binary && e->binary_op == op;
}

inline bool is_linear_kind(const Expr& e) {
  if (e->kind == ExprKind::Unary) return e->unary_op == UnaryOp::Neg;
  return is_binary(e, BinaryOp::Add) || is_binary(e, BinaryOp::Sub) || is_binary(e, BinaryOp::Mul);
}

// Python truthiness of a constant.
inline bool truthy(const Expr& c) {
  return c->kind == ExprKind::Float ? c->float_value != 0.0 : c->int_value != 0;
}

inline BinaryOp inverse_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt:
      return BinaryOp::Ge;
    case BinaryOp::Le:
      return BinaryOp::Gt;
    case BinaryOp::Gt:
      return BinaryOp::Le;
    case BinaryOp::Ge:
      return BinaryOp::Lt;
    case BinaryOp::Eq:
      return BinaryOp::Ne;
    default:
      return BinaryOp::Eq;
  }
}

// ---------------------------------------------------------------------------
// Linear forms: constant + sum of coefficient * monomial, a monomial being a
// product of non-constant factors. Terms and factors are sorted by key (the
// printed form), which makes the form canonical.

struct Term {
  int64_t coef = 0;
  std::vector<Expr> factors;  // sorted by key; empty only transiently
  std::vector<std::string> factor_keys;
  std::string key;  // factor keys joined by " * "
};

struct Linear {
  int64_t constant = 0;
  std::vector<Term> terms;  // sorted by key, keys distinct, coefficients nonzero
};

inline void set_term_key(Term& t) {
  t.key.clear();
  for (size_t i = 0; i < t.factor_keys.size(); ++i) {
    if (i) t.key += " * ";
    t.key += t.factor_keys[i];
  }
}

inline Linear lin_const(int64_t c) {
  Linear l;
  l.constant = c;
  return l;
}

// a + sign * b
inline Linear lin_add(const Linear& a, const Linear& b, int64_t sign = 1) {
  Linear r;
  r.constant = checked_add(a.constant, checked_mul(sign, b.constant));
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].key < b.terms[j].key)) {
      r.terms.push_back(a.terms[i++]);
    } else if (i == a.terms.size() || b.terms[j].key < a.terms[i].key) {
      Term t = b.terms[j++];
      t.coef = checked_mul(sign, t.coef);
      r.terms.push_back(std::move(t));
    } else {
      Term t = a.terms[i++];
      t.coef = checked_add(t.coef, checked_mul(sign, b.terms[j++].coef));
      if (t.coef != 0) r.terms.push_back(std::move(t));
    }
  }
  return r;
}

inline Linear lin_scale(const Linear& a, int64_t k) {
  if (k == 0) return {};
  Linear r = a;
  r.constant = checked_mul(r.constant, k);
  for (auto& t : r.terms) t.coef = checked_mul(t.coef, k);
  return r;
}

inline int64_t lin_content(const Linear& a) {
  uint64_t g = 0;
  auto magnitude = [](int64_t v) { return v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v); };
  for (const auto& t : a.terms) g = std::gcd(g, magnitude(t.coef));
  g = std::gcd(g, magnitude(a.constant));
  return g > uint64_t(std::numeric_limits<int64_t>::max()) ? 1 : static_cast<int64_t>(g);
}

// a / b when b divides a exactly (nullopt otherwise or on overflow).
inline std::optional<int64_t> exact_quotient(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) {
    if (a == std::numeric_limits<int64_t>::min()) return std::nullopt;
    return -a;
  }
  if (a % b != 0) return std::nullopt;
  return a / b;
}

// Divides every coefficient by `g`, which divides them all.
inline Linear lin_exact_div(const Linear& a, int64_t g) {
  if (g < 0) return lin_exact_div(lin_scale(a, -1), checked_neg(g));
  Linear r = a;
  r.constant /= g;
  for (auto& t : r.terms) t.coef /= g;
  return r;
}

// If the sorted multiset `part` is contained in `whole`, the rest of `whole`.
inline std::optional<std::vector<size_t>> remove_factors(const std::vector<std::string>& whole,
                                                         const std::vector<std::string>& part) {
  std::vector<size_t> rest;
  size_t j = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    if (j < part.size() && whole[i] == part[j]) {
      ++j;
    } else {
      rest.push_back(i);
    }
  }
  if (j != part.size()) return std::nullopt;
  return rest;
}

// A monomial as a coefficient times sorted factors.
struct Monomial {
  int64_t coef = 1;
  std::vector<Expr> factors;
  std::vector<std::string> keys;
};

// ---------------------------------------------------------------------------

constexpr int kMaxProofDepth = 6;

class Simplifier {
 public:
  Simplifier(const Expr& root, const BoundsEnv& env) : env_(env) { gather_attrs(root); }
  void gather_symbolic_bounds(const Expr& root);
  // Structural interval of `e`.
  Range bounds(const Expr& e);
  Expr simplify(const Expr& e);
  // The best bounds known for `e`: structural bounds of `e` and of its
  // simplified form, refined through symbolic symbol bounds.
  Range range(const Expr& e);
  bool prove_ge(const Expr& e, int64_t k) { return range(e).lo >= k; }

 private:
  // -------------------------------------------------------------------------
  // Symbol bounds, types, keys.

  void gather_attrs(const Expr& root);
  Range var_bounds(const Expr& v);
  VType type_of(const Expr& e);
  VType compute_type(const Expr& e);
  const std::string& key_of(const Expr& e);
  // Records `e` as already simplified.
  void fixed(const Expr& e);
  // -------------------------------------------------------------------------
  // Structural bounds.

  Range compute_bounds(const Expr& e);
  // Lower and upper bounds of `s` after replacing symbols by their symbolic
  // bounds (the lower one where the coefficient is positive for the lower
  // bound, and so on): lo(s') <= s' <= s.
  Range symbolic_range(const Expr& s);
  // -------------------------------------------------------------------------
  // Linear forms.

  Linear lin_atom(const Expr& atom);
  // `e` is integer or boolean valued.
  Linear to_linear(const Expr& e);
  // A non-constant linear form as one monomial: itself if it is one term, else
  // content * (the primitive sum, as one factor, first coefficient positive).
  Monomial as_monomial(const Linear& l);
  Linear lin_monomial(const Monomial& m);
  Linear lin_mul(const Linear& a, const Linear& b);
  Expr term_expr(int64_t coef, const std::vector<Expr>& factors);
  // The canonical expression of a linear form: terms in key order, the first
  // positive term first, the constant last.
  Expr build(const Linear& l);
  // c * (x // c) + x % c -> x (also for a symbolic c proved nonzero).
  void combine_div_mod(Linear& l);
  // -------------------------------------------------------------------------
  // Node rules.

  Expr rebuild(const Expr& e, const std::vector<Expr>& operands);
  std::vector<Expr> simplified_operands(const Expr& e);
  Expr simplify_node(const Expr& e);
  Expr simplify_select(const Expr& e, const std::vector<Expr>& ops);
  Expr simplify_not(const Expr& e, const Expr& a);
  Expr simplify_logic(const Expr& e, BinaryOp op, const Expr& a, const Expr& b);
  Expr simplify_bitwise(const Expr& e, BinaryOp op, const Expr& a, const Expr& b);
  Expr simplify_min_max(BinaryOp op, const Expr& a, const Expr& b);
  Expr simplify_comparison(BinaryOp op, const Expr& a, const Expr& b);
  // Is `range` within one period [k*c, (k+1)*c)? Then k.
  static std::optional<int64_t> single_period(const Range& r, int64_t c);
  // The only factor of a one-term, coefficient-1, constant-free form.
  static const Expr* single_factor(const Linear& l);
  bool positive(const Expr& d) { return d.is_int() ? d->int_value > 0 : prove_ge(d, 1); }
  Expr simplify_floordiv(const Expr& e, const Expr& a, const Expr& b);
  Expr simplify_mod(const Expr& e, const Expr& a, const Expr& b);
  // (q_part * c + r) // c == q_part + r // c, for a constant c > 0.
  Expr div_const(Linear a, int64_t c);
  Expr mod_const(Linear a, int64_t c);
  // Splits `a` into q * b + r by the terms whose monomial is a multiple of
  // b's (b is symbolic and proved positive).
  void split_multiples(const Linear& a, const Expr& b, Linear& q, Linear& r);
  Expr div_symbolic(const Linear& a, const Expr& b);
  Expr mod_symbolic(const Linear& a, const Expr& b);
  const BoundsEnv& env_;
  std::unordered_map<std::string, Range> attr_bounds_;
  std::unordered_map<std::string, Range> symbolic_var_bounds_;
  std::unordered_set<std::string> in_progress_;
  std::unordered_map<const ExprNode*, std::pair<Expr, Expr>> memo_;
  std::unordered_map<const ExprNode*, std::pair<Expr, Range>> bounds_memo_;
  std::unordered_map<const ExprNode*, std::pair<Expr, VType>> types_;
  std::unordered_map<const ExprNode*, std::pair<Expr, std::string>> keys_;
  int depth_ = 0;
};

}  // namespace nt::simplify_internal
