// Sums and products as canonical linear forms (constant + coefficient x monomial, sorted by
// key), and the expressions they are printed back as.
#include "symbolic/simplify_internal.h"

namespace nt::simplify_internal {

Linear Simplifier::lin_atom(const Expr& atom) {
  Term t;
  t.coef = 1;
  t.factors = {atom};
  t.factor_keys = {key_of(atom)};
  set_term_key(t);
  Linear l;
  l.terms.push_back(std::move(t));
  return l;
}

Linear Simplifier::to_linear(const Expr& e) {
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

Monomial Simplifier::as_monomial(const Linear& l) {
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

Linear Simplifier::lin_monomial(const Monomial& m) {
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

Linear Simplifier::lin_mul(const Linear& a, const Linear& b) {
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

Expr Simplifier::term_expr(int64_t coef, const std::vector<Expr>& factors) {
  Expr e;
  if (coef != 1) e = int_const(coef);
  for (const auto& f : factors) e = e.defined() ? mul(e, f) : f;
  return e;
}

Expr Simplifier::build(const Linear& l) {
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

void Simplifier::combine_div_mod(Linear& l) {
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

}  // namespace nt::simplify_internal
