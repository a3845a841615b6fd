#include "symbolic/simplify.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_set>
#include <utility>
#include <vector>

#include "symbolic/printer.h"
#include "symbolic/substitute.h"

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

namespace {

// ---------------------------------------------------------------------------
// Interval arithmetic over 128-bit integers. A lower bound is -kInf or lies in
// the int64 range; an upper bound lies in the int64 range or is +kInf. Results
// beyond int64 are rounded outwards (or to the nearest int64 on the inner
// side), so every Range stays a sound over-approximation.

using Wide = __int128;
constexpr Wide kInf = Wide(1) << 100;
constexpr Wide kMin = std::numeric_limits<int64_t>::min();
constexpr Wide kMax = std::numeric_limits<int64_t>::max();

Wide sat_lo(Wide v) { return v < kMin ? -kInf : (v > kMax ? kMax : v); }
Wide sat_hi(Wide v) { return v > kMax ? kInf : (v < kMin ? kMin : v); }

struct Range {
  Wide lo = -kInf;
  Wide hi = kInf;
};

Range exact(int64_t v) { return {v, v}; }
Range unknown() { return {}; }
Range boolean_range() { return {0, 1}; }

Range from_interval(const Interval& i) { return {i.lo ? Wide(*i.lo) : -kInf, i.hi ? Wide(*i.hi) : kInf}; }

Interval to_interval(const Range& r) {
  Interval i;
  if (r.lo != -kInf) i.lo = static_cast<int64_t>(r.lo);
  if (r.hi != kInf) i.hi = static_cast<int64_t>(r.hi);
  return i;
}

Range meet(const Range& a, const Range& b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Range hull(const Range& a, const Range& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Range range_add(const Range& a, const Range& b) { return {sat_lo(a.lo + b.lo), sat_hi(a.hi + b.hi)}; }
Range range_neg(const Range& a) { return {sat_lo(-a.hi), sat_hi(-a.lo)}; }
Range range_sub(const Range& a, const Range& b) { return range_add(a, range_neg(b)); }

Wide corner_mul(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return ((a < 0) != (b < 0)) ? -kInf : kInf;
  return a * b;
}

Range range_mul(const Range& a, const Range& b) {
  Wide c[] = {corner_mul(a.lo, b.lo), corner_mul(a.lo, b.hi), corner_mul(a.hi, b.lo), corner_mul(a.hi, b.hi)};
  return {sat_lo(*std::min_element(c, c + 4)), sat_hi(*std::max_element(c, c + 4))};
}

Wide wide_floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// floor(a / d) for d >= 1 (d may be +kInf).
Wide corner_div(Wide a, Wide d) {
  if (a == kInf || a == -kInf) return a;
  if (d == kInf) return a >= 0 ? 0 : -1;
  return wide_floor_div(a, d);
}

Range range_floor_div(const Range& a, const Range& d) {
  if (d.lo >= 1) {
    // For a fixed positive divisor the quotient grows with the dividend.
    return {sat_lo(std::min(corner_div(a.lo, d.lo), corner_div(a.lo, d.hi))),
            sat_hi(std::max(corner_div(a.hi, d.lo), corner_div(a.hi, d.hi)))};
  }
  if (d.hi <= -1) return range_floor_div(range_neg(a), range_neg(d));  // a // d == -a // -d
  return unknown();
}

Range range_mod(const Range& a, const Range& d) {
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

bool excludes_zero(const Range& r) { return r.lo > 0 || r.hi < 0; }
bool is_zero(const Range& r) { return r.lo == 0 && r.hi == 0; }

// ---------------------------------------------------------------------------
// Value types, checked integer arithmetic, small helpers.

enum class VType { Int, Bool, Float };

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("simplify: integer overflow");
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("simplify: integer overflow");
  return r;
}

int64_t checked_neg(int64_t a) { return checked_mul(a, -1); }

bool is_binary(const Expr& e, BinaryOp op) { return e->kind == ExprKind::Binary && e->binary_op == op; }

bool is_linear_kind(const Expr& e) {
  if (e->kind == ExprKind::Unary) return e->unary_op == UnaryOp::Neg;
  return is_binary(e, BinaryOp::Add) || is_binary(e, BinaryOp::Sub) || is_binary(e, BinaryOp::Mul);
}

// Python truthiness of a constant.
bool truthy(const Expr& c) { return c->kind == ExprKind::Float ? c->float_value != 0.0 : c->int_value != 0; }

BinaryOp inverse_comparison(BinaryOp op) {
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

void set_term_key(Term& t) {
  t.key.clear();
  for (size_t i = 0; i < t.factor_keys.size(); ++i) {
    if (i) t.key += " * ";
    t.key += t.factor_keys[i];
  }
}

Linear lin_const(int64_t c) {
  Linear l;
  l.constant = c;
  return l;
}

// a + sign * b
Linear lin_add(const Linear& a, const Linear& b, int64_t sign = 1) {
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

Linear lin_scale(const Linear& a, int64_t k) {
  if (k == 0) return {};
  Linear r = a;
  r.constant = checked_mul(r.constant, k);
  for (auto& t : r.terms) t.coef = checked_mul(t.coef, k);
  return r;
}

int64_t lin_content(const Linear& a) {
  uint64_t g = 0;
  auto magnitude = [](int64_t v) { return v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v); };
  for (const auto& t : a.terms) g = std::gcd(g, magnitude(t.coef));
  g = std::gcd(g, magnitude(a.constant));
  return g > uint64_t(std::numeric_limits<int64_t>::max()) ? 1 : static_cast<int64_t>(g);
}

// a / b when b divides a exactly (nullopt otherwise or on overflow).
std::optional<int64_t> exact_quotient(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) {
    if (a == std::numeric_limits<int64_t>::min()) return std::nullopt;
    return -a;
  }
  if (a % b != 0) return std::nullopt;
  return a / b;
}

// Divides every coefficient by `g`, which divides them all.
Linear lin_exact_div(const Linear& a, int64_t g) {
  if (g < 0) return lin_exact_div(lin_scale(a, -1), checked_neg(g));
  Linear r = a;
  r.constant /= g;
  for (auto& t : r.terms) t.coef /= g;
  return r;
}

// If the sorted multiset `part` is contained in `whole`, the rest of `whole`.
std::optional<std::vector<size_t>> remove_factors(const std::vector<std::string>& whole,
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

  void gather_symbolic_bounds(const Expr& root) {
    for (const Expr& v : collect_vars(root)) {
      if (const auto* bounds = env_.symbolic(v->name)) {
        if (bounds->first.defined()) gather_attrs(bounds->first);
        if (bounds->second.defined()) gather_attrs(bounds->second);
      }
    }
  }

  // Structural interval of `e`.
  Range bounds(const Expr& e) {
    if (e->kind == ExprKind::Var) return var_bounds(e);
    auto it = bounds_memo_.find(e.get());
    if (it != bounds_memo_.end()) return it->second.second;
    Range r = compute_bounds(e);
    bounds_memo_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  Expr simplify(const Expr& e) {
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

  // The best bounds known for `e`: structural bounds of `e` and of its
  // simplified form, refined through symbolic symbol bounds.
  Range range(const Expr& e) {
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

  bool prove_ge(const Expr& e, int64_t k) { return range(e).lo >= k; }

 private:
  // -------------------------------------------------------------------------
  // Symbol bounds, types, keys.

  void gather_attrs(const Expr& root) {
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
        if (node->attrs.upper_bound) r.hi = std::min(r.hi, Wide(*node->attrs.upper_bound));
      }
      for (const auto& operand : node->operands) stack.push_back(operand.get());
    }
  }

  Range var_bounds(const Expr& v) {
    Range r = from_interval(env_.numeric(v->name));
    auto it = attr_bounds_.find(v->name);
    if (it != attr_bounds_.end()) r = meet(r, it->second);
    if (v->attrs.lower_bound) r.lo = std::max(r.lo, Wide(*v->attrs.lower_bound));
    if (v->attrs.upper_bound) r.hi = std::min(r.hi, Wide(*v->attrs.upper_bound));
    const std::pair<Expr, Expr>* symbolic = env_.symbolic(v->name);
    if (!symbolic) return r;
    // Symbolic bounds count through their own ranges: 0 <= i <= BLOCK - 1
    // with BLOCK <= 1024 gives i <= 1023.
    auto cached = symbolic_var_bounds_.find(v->name);
    if (cached != symbolic_var_bounds_.end()) return meet(r, cached->second);
    if (depth_ >= kMaxProofDepth || !in_progress_.insert(v->name).second) return r;
    Range s;
    ++depth_;
    if (symbolic->first.defined() && type_of(symbolic->first) != VType::Float)
      s.lo = range(symbolic->first).lo;
    if (symbolic->second.defined() && type_of(symbolic->second) != VType::Float)
      s.hi = range(symbolic->second).hi;
    --depth_;
    in_progress_.erase(v->name);
    symbolic_var_bounds_.emplace(v->name, s);
    return meet(r, s);
  }

  VType type_of(const Expr& e) {
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

  VType compute_type(const Expr& e) {
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

  const std::string& key_of(const Expr& e) {
    auto it = keys_.find(e.get());
    if (it == keys_.end()) it = keys_.emplace(e.get(), std::make_pair(e, to_python(e))).first;
    return it->second.second;
  }

  // Records `e` as already simplified.
  void fixed(const Expr& e) {
    if (!e->operands.empty()) memo_.emplace(e.get(), std::make_pair(e, e));
  }

  // -------------------------------------------------------------------------
  // Structural bounds.

  Range compute_bounds(const Expr& e) {
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

  // Lower and upper bounds of `s` after replacing symbols by their symbolic
  // bounds (the lower one where the coefficient is positive for the lower
  // bound, and so on): lo(s') <= s' <= s.
  Range symbolic_range(const Expr& s) {
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

  // -------------------------------------------------------------------------
  // Linear forms.

  Linear lin_atom(const Expr& atom) {
    Term t;
    t.coef = 1;
    t.factors = {atom};
    t.factor_keys = {key_of(atom)};
    set_term_key(t);
    Linear l;
    l.terms.push_back(std::move(t));
    return l;
  }

  // `e` is integer or boolean valued.
  Linear to_linear(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Int:
      case ExprKind::Bool:
        return lin_const(e->int_value);
      case ExprKind::Var: {
        Expr s = simplify(e);
        return s.is_int() ? lin_const(s->int_value) : lin_atom(e);
      }
      default:
        break;
    }
    if (e->kind == ExprKind::Unary && e->unary_op == UnaryOp::Neg) {
      return lin_scale(to_linear(e->operands[0]), -1);
    }
    if (is_binary(e, BinaryOp::Add)) return lin_add(to_linear(e->operands[0]), to_linear(e->operands[1]));
    if (is_binary(e, BinaryOp::Sub)) return lin_add(to_linear(e->operands[0]), to_linear(e->operands[1]), -1);
    if (is_binary(e, BinaryOp::Mul)) return lin_mul(to_linear(e->operands[0]), to_linear(e->operands[1]));
    Expr s = simplify(e);
    if (s->kind == ExprKind::Int || s->kind == ExprKind::Bool) return lin_const(s->int_value);
    if (is_linear_kind(s)) return to_linear(s);
    return lin_atom(s);
  }

  // A non-constant linear form as one monomial: itself if it is one term, else
  // content * (the primitive sum, as one factor, first coefficient positive).
  Monomial as_monomial(const Linear& l) {
    Monomial m;
    if (l.terms.size() == 1 && l.constant == 0) {
      m.coef = l.terms[0].coef;
      m.factors = l.terms[0].factors;
      m.keys = l.terms[0].factor_keys;
      return m;
    }
    int64_t g = lin_content(l);
    if (l.terms[0].coef < 0) g = checked_neg(g);
    Expr sum = build(lin_exact_div(l, g));
    fixed(sum);
    m.coef = g;
    m.factors = {sum};
    m.keys = {key_of(sum)};
    return m;
  }

  Linear lin_monomial(const Monomial& m) {
    if (m.factors.empty()) return lin_const(m.coef);
    // A sum left alone as a factor (a quotient of `(a + b) * d // d`) is a sum again.
    if (m.factors.size() == 1 && is_linear_kind(m.factors[0]) && type_of(m.factors[0]) != VType::Float) {
      return lin_scale(to_linear(m.factors[0]), m.coef);
    }
    Term t;
    t.coef = m.coef;
    t.factors = m.factors;
    t.factor_keys = m.keys;
    set_term_key(t);
    Linear l;
    l.terms.push_back(std::move(t));
    return l;
  }

  Linear lin_mul(const Linear& a, const Linear& b) {
    if (a.terms.empty()) return lin_scale(b, a.constant);
    if (b.terms.empty()) return lin_scale(a, b.constant);
    Monomial ma = as_monomial(a), mb = as_monomial(b);
    Monomial m;
    m.coef = checked_mul(ma.coef, mb.coef);
    // Merge the sorted factor lists.
    size_t i = 0, j = 0;
    while (i < ma.factors.size() || j < mb.factors.size()) {
      if (j == mb.factors.size() || (i < ma.factors.size() && ma.keys[i] <= mb.keys[j])) {
        m.factors.push_back(ma.factors[i]);
        m.keys.push_back(ma.keys[i++]);
      } else {
        m.factors.push_back(mb.factors[j]);
        m.keys.push_back(mb.keys[j++]);
      }
    }
    return lin_monomial(m);
  }

  Expr term_expr(int64_t coef, const std::vector<Expr>& factors) {
    Expr e;
    if (coef != 1) e = int_const(coef);
    for (const auto& f : factors) e = e.defined() ? mul(e, f) : f;
    return e;
  }

  // The canonical expression of a linear form: terms in key order, the first
  // positive term first, the constant last.
  Expr build(const Linear& l) {
    Expr acc;
    size_t first = l.terms.size();
    for (size_t i = 0; i < l.terms.size(); ++i) {
      if (l.terms[i].coef > 0) {
        first = i;
        break;
      }
    }
    if (first < l.terms.size()) acc = term_expr(l.terms[first].coef, l.terms[first].factors);
    for (size_t i = 0; i < l.terms.size(); ++i) {
      if (i == first) continue;
      const Term& t = l.terms[i];
      if (!acc.defined()) {
        acc = t.coef == -1 ? neg(term_expr(1, t.factors)) : term_expr(t.coef, t.factors);
      } else if (t.coef > 0) {
        acc = add(acc, term_expr(t.coef, t.factors));
      } else if (t.coef == std::numeric_limits<int64_t>::min()) {
        acc = add(acc, term_expr(t.coef, t.factors));
      } else {
        acc = sub(acc, term_expr(-t.coef, t.factors));
      }
    }
    int64_t c = l.constant;
    if (!acc.defined()) return int_const(c);
    if (c > 0 || c == std::numeric_limits<int64_t>::min()) return add(acc, int_const(c));
    if (c < 0) return sub(acc, int_const(-c));
    return acc;
  }

  // c * (x // c) + x % c -> x (also for a symbolic c proved nonzero).
  void combine_div_mod(Linear& l) {
    for (size_t round = 0; round < 16; ++round) {
      bool changed = false;
      for (size_t i = 0; i < l.terms.size() && !changed; ++i) {
        const Term t = l.terms[i];  // a copy: `l` is replaced below
        for (size_t f = 0; f < t.factors.size() && !changed; ++f) {
          const Expr& div = t.factors[f];
          if (!is_binary(div, BinaryOp::FloorDiv) || type_of(div) == VType::Float) continue;
          const Expr& x = div->operands[0];
          const Expr& d = div->operands[1];
          std::vector<std::string> rest;
          for (size_t k = 0; k < t.factors.size(); ++k) {
            if (k != f) rest.push_back(t.factor_keys[k]);
          }
          std::optional<int64_t> k2;
          Linear ld = to_linear(d);
          if (ld.terms.empty()) {
            if (rest.empty()) k2 = exact_quotient(t.coef, ld.constant);
          } else if (excludes_zero(range(d))) {
            Monomial md = as_monomial(ld);
            if (rest == md.keys) k2 = exact_quotient(t.coef, md.coef);
          }
          if (!k2) continue;
          const std::string& mod_key = key_of(mod(x, d));
          for (size_t j = 0; j < l.terms.size(); ++j) {
            const Term& u = l.terms[j];
            if (j == i || u.coef != *k2 || u.factors.size() != 1 || u.key != mod_key) continue;
            Linear rest_form = lin_const(l.constant);
            for (size_t k = 0; k < l.terms.size(); ++k) {
              if (k == i || k == j) continue;
              Linear single;
              single.terms.push_back(l.terms[k]);
              rest_form = lin_add(rest_form, single);
            }
            l = lin_add(rest_form, lin_scale(to_linear(x), *k2));
            changed = true;
            break;
          }
        }
      }
      if (!changed) return;
    }
  }

  // -------------------------------------------------------------------------
  // Node rules.

  Expr rebuild(const Expr& e, const std::vector<Expr>& operands) {
    bool changed = false;
    for (size_t i = 0; i < operands.size(); ++i) changed = changed || !operands[i].same_as(e->operands[i]);
    return changed ? with_operands(e, operands) : e;
  }

  std::vector<Expr> simplified_operands(const Expr& e) {
    std::vector<Expr> operands;
    for (const auto& operand : e->operands) operands.push_back(simplify(operand));
    return operands;
  }

  Expr simplify_node(const Expr& e) {
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

  Expr simplify_select(const Expr& e, const std::vector<Expr>& ops) {
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

  Expr simplify_not(const Expr& e, const Expr& a) {
    if (a.is_const()) return bool_const(!truthy(a));
    Range r = range(a);
    if (excludes_zero(r)) return bool_const(false);
    if (is_zero(r)) return bool_const(true);
    if (a->kind == ExprKind::Unary && a->unary_op == UnaryOp::Not && type_of(a->operands[0]) == VType::Bool) {
      return a->operands[0];
    }
    if (a->kind == ExprKind::Binary && is_comparison(a->binary_op) &&
        type_of(a->operands[0]) != VType::Float && type_of(a->operands[1]) != VType::Float) {
      return binary(inverse_comparison(a->binary_op), a->operands[0], a->operands[1]);
    }
    return rebuild(e, {a});
  }

  Expr simplify_logic(const Expr& e, BinaryOp op, const Expr& a, const Expr& b) {
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

  Expr simplify_bitwise(const Expr& e, BinaryOp op, const Expr& a, const Expr& b) {
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

  Expr simplify_min_max(BinaryOp op, const Expr& a, const Expr& b) {
    if (equal(a, b)) return a;
    Range d = range(sub(a, b));
    bool is_min = op == BinaryOp::Min;
    if (d.hi <= 0) return is_min ? a : b;
    if (d.lo >= 0) return is_min ? b : a;
    // Both are integers: the order of the operands does not matter.
    if (key_of(b) < key_of(a)) return binary(op, b, a);
    return binary(op, a, b);
  }

  Expr simplify_comparison(BinaryOp op, const Expr& a, const Expr& b) {
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

  // Is `range` within one period [k*c, (k+1)*c)? Then k.
  static std::optional<int64_t> single_period(const Range& r, int64_t c) {
    if (r.lo == -kInf || r.hi == kInf) return std::nullopt;
    Wide k = wide_floor_div(r.lo, c);
    if (k != wide_floor_div(r.hi, c)) return std::nullopt;
    return static_cast<int64_t>(k);
  }

  // The only factor of a one-term, coefficient-1, constant-free form.
  static const Expr* single_factor(const Linear& l) {
    if (l.constant != 0 || l.terms.size() != 1 || l.terms[0].coef != 1 || l.terms[0].factors.size() != 1) {
      return nullptr;
    }
    return &l.terms[0].factors[0];
  }

  bool positive(const Expr& d) { return d.is_int() ? d->int_value > 0 : prove_ge(d, 1); }

  Expr simplify_floordiv(const Expr& e, const Expr& a, const Expr& b) {
    Linear lb = to_linear(b);
    if (lb.terms.empty()) {
      int64_t c = lb.constant;
      if (c == 0) return rebuild(e, {a, b});
      if (c < 0) return div_const(lin_scale(to_linear(a), -1), checked_neg(c));  // a // c == -a // -c
      return div_const(to_linear(a), c);
    }
    if (!prove_ge(b, 1)) return rebuild(e, {a, b});
    return div_symbolic(to_linear(a), b);
  }

  Expr simplify_mod(const Expr& e, const Expr& a, const Expr& b) {
    Linear lb = to_linear(b);
    if (lb.terms.empty()) {
      int64_t c = lb.constant;
      if (c == 0) return rebuild(e, {a, b});
      if (c < 0) {  // a % c == -((-a) % -c)
        Expr r = mod_const(lin_scale(to_linear(a), -1), checked_neg(c));
        return build(lin_scale(to_linear(r), -1));
      }
      return mod_const(to_linear(a), c);
    }
    if (!prove_ge(b, 1)) return rebuild(e, {a, b});
    return mod_symbolic(to_linear(a), b);
  }

  // (q_part * c + r) // c == q_part + r // c, for a constant c > 0.
  Expr div_const(Linear a, int64_t c) {
    if (a.terms.empty()) return int_const(floor_div(a.constant, c));
    int64_t g = std::gcd(lin_content(a), c);
    if (g > 1) {  // (g*x) // (g*k) == x // k
      a = lin_exact_div(a, g);
      c /= g;
    }
    if (c == 1) return build(a);
    Linear q, r;
    for (const Term& t : a.terms) {
      Linear single;
      single.terms.push_back(t);
      if (t.coef % c == 0) {
        single.terms[0].coef = t.coef / c;
        q = lin_add(q, single);
      } else {
        r = lin_add(r, single);
      }
    }
    r.constant = a.constant;
    if (a.constant >= c) {
      q.constant = a.constant / c;
      r.constant = a.constant % c;
    }
    Expr rest = build(r);
    if (auto k = single_period(range(rest), c)) return build(lin_add(q, lin_const(*k)));
    if (const Expr* inner = single_factor(r)) {
      // (x // d) // c == x // (d * c) for positive d and c.
      if (is_binary(*inner, BinaryOp::FloorDiv) && positive((*inner)->operands[1])) {
        const Expr& x = (*inner)->operands[0];
        const Expr& d = (*inner)->operands[1];
        Expr merged = d.is_int() ? div_const(to_linear(x), checked_mul(d->int_value, c))
                                 : simplify(floordiv(x, mul(d, int_const(c))));
        return build(lin_add(q, to_linear(merged)));
      }
    }
    Expr quotient = floordiv(rest, int_const(c));
    fixed(quotient);
    return build(lin_add(q, lin_atom(quotient)));
  }

  Expr mod_const(Linear a, int64_t c) {
    if (a.terms.empty()) return int_const(floor_mod(a.constant, c));
    if (c == 1) return int_const(0);
    // Coefficients and the constant only matter modulo c.
    Linear reduced;
    for (const Term& t : a.terms) {
      Linear single;
      single.terms.push_back(t);
      int64_t k = t.coef;
      if (k >= c || -k >= c) k = floor_mod(k, c);
      if (k == 0) continue;
      single.terms[0].coef = k;
      reduced = lin_add(reduced, single);
    }
    if (reduced.terms.empty()) return int_const(floor_mod(a.constant, c));
    reduced.constant = a.constant;
    if (a.constant >= c || -a.constant >= c) reduced.constant = floor_mod(a.constant, c);
    int64_t g = std::gcd(lin_content(reduced), c);
    if (g > 1) {  // (g*x) % (g*k) == g * (x % k)
      Expr inner = mod_const(lin_exact_div(reduced, g), c / g);
      return build(lin_scale(to_linear(inner), g));
    }
    Expr rest = build(reduced);
    if (auto k = single_period(range(rest), c)) {
      return build(lin_add(reduced, lin_const(checked_mul(*k, c)), -1));
    }
    if (const Expr* inner = single_factor(reduced)) {
      // (x % d) % c == x % c when c divides d.
      if (is_binary(*inner, BinaryOp::Mod) && (*inner)->operands[1].is_int() &&
          (*inner)->operands[1]->int_value % c == 0 && type_of(*inner) != VType::Float) {
        return mod_const(to_linear((*inner)->operands[0]), c);
      }
    }
    Expr result = mod(rest, int_const(c));
    fixed(result);
    return result;
  }

  // Splits `a` into q * b + r by the terms whose monomial is a multiple of
  // b's (b is symbolic and proved positive).
  void split_multiples(const Linear& a, const Expr& b, Linear& q, Linear& r) {
    Monomial mb = as_monomial(to_linear(b));
    r.constant = a.constant;
    for (const Term& t : a.terms) {
      Linear single;
      single.terms.push_back(t);
      std::optional<int64_t> coef = exact_quotient(t.coef, mb.coef);
      std::optional<std::vector<size_t>> rest;
      if (coef) rest = remove_factors(t.factor_keys, mb.keys);
      if (!rest) {
        r = lin_add(r, single);
        continue;
      }
      Monomial m;
      m.coef = *coef;
      for (size_t k : *rest) {
        m.factors.push_back(t.factors[k]);
        m.keys.push_back(t.factor_keys[k]);
      }
      q = lin_add(q, lin_monomial(m));
    }
  }

  Expr div_symbolic(const Linear& a, const Expr& b) {
    Linear q, r;
    split_multiples(a, b, q, r);
    Expr rest = build(r);
    if (prove_ge(rest, 0) && prove_ge(sub(b, rest), 1)) return build(q);
    if (const Expr* inner = single_factor(r)) {
      // (x % b) // b == 0
      if (is_binary(*inner, BinaryOp::Mod) && key_of((*inner)->operands[1]) == key_of(b)) return build(q);
    }
    if (prove_ge(sub(int_const(-1), rest), 0) && prove_ge(add(rest, b), 0)) {
      return build(lin_add(q, lin_const(1), -1));
    }
    if (const Expr* inner = single_factor(r)) {
      // (x // d) // b == x // (d * b) for positive d and b.
      if (is_binary(*inner, BinaryOp::FloorDiv) && positive((*inner)->operands[1])) {
        Expr merged = simplify(floordiv((*inner)->operands[0], mul((*inner)->operands[1], b)));
        return build(lin_add(q, to_linear(merged)));
      }
    }
    Expr quotient = floordiv(rest, b);
    fixed(quotient);
    return build(lin_add(q, lin_atom(quotient)));
  }

  Expr mod_symbolic(const Linear& a, const Expr& b) {
    Linear q, r;
    split_multiples(a, b, q, r);
    Expr rest = build(r);
    if (prove_ge(rest, 0) && prove_ge(sub(b, rest), 1)) return rest;
    if (prove_ge(sub(int_const(-1), rest), 0) && prove_ge(add(rest, b), 0)) return simplify(add(rest, b));
    if (const Expr* inner = single_factor(r)) {
      // (x % b) % b == x % b
      if (is_binary(*inner, BinaryOp::Mod) && key_of((*inner)->operands[1]) == key_of(b)) return *inner;
    }
    Expr result = mod(rest, b);
    fixed(result);
    return result;
  }

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

}  // namespace

Interval bounds_of(const Expr& e, const BoundsEnv& env) {
  Simplifier simplifier(e, env);
  return to_interval(simplifier.bounds(e));
}

Expr simplify(const Expr& e, const BoundsEnv& env) {
  Simplifier simplifier(e, env);
  simplifier.gather_symbolic_bounds(e);
  return simplifier.simplify(e);
}

std::optional<bool> prove(const Expr& condition, const BoundsEnv& env) {
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
