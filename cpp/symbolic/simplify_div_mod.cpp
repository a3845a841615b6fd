// Rules for floor division and modulo (Python semantics): multiples of the divisor dropped,
// a rest within one period folded, by constants and by symbols proved positive.
#include "symbolic/simplify_internal.h"

namespace nt::simplify_internal {

std::optional<int64_t> Simplifier::single_period(const Range& r, int64_t c) {
  if (r.lo == -kInf || r.hi == kInf) return std::nullopt;
  Wide k = wide_floor_div(r.lo, c);
  if (k != wide_floor_div(r.hi, c)) return std::nullopt;
  return static_cast<int64_t>(k);
}

const Expr* Simplifier::single_factor(const Linear& l) {
  if (l.constant != 0 || l.terms.size() != 1 || l.terms[0].coef != 1 || l.terms[0].factors.size() != 1) {
    return nullptr;
  }
  return &l.terms[0].factors[0];
}

Expr Simplifier::simplify_floordiv(const Expr& e, const Expr& a, const Expr& b) {
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

Expr Simplifier::simplify_mod(const Expr& e, const Expr& a, const Expr& b) {
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

Expr Simplifier::div_const(Linear a, int64_t c) {
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

Expr Simplifier::mod_const(Linear a, int64_t c) {
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

void Simplifier::split_multiples(const Linear& a, const Expr& b, Linear& q, Linear& r) {
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

Expr Simplifier::div_symbolic(const Linear& a, const Expr& b) {
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

Expr Simplifier::mod_symbolic(const Linear& a, const Expr& b) {
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

}  // namespace nt::simplify_internal
