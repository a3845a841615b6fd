// Simplification of expressions for code generation.
//
// In: an Expr and what is known about its symbols (a BoundsEnv: inclusive
// integer bounds per symbol name, optionally symbolic bounds such as
// `0 <= i <= BLOCK - 1`; a symbol's own SymbolAttrs lower_bound/upper_bound
// count as well). Out: an Expr with the same value at every point where the
// bounds hold (Python semantics: `//` and `%` round toward negative infinity),
// usually smaller:
// - sums are canonical: a linear combination of terms with integer
//   coefficients plus a constant, terms sorted by their printed form
//   (`N - (B - 1) - 1 + B - 1 -> N - 1`); constant factors are distributed
//   over sums, products of non-constant factors are sorted monomials;
// - `//` and `%` by a positive constant drop the multiples of the divisor and
//   fold when the rest lies in one period (`(8*i + j) // 8 -> i`,
//   `(8*i + j) % 8 -> j` for 0 <= j < 8); the same for a symbolic divisor d
//   proved positive (`(Q - 1) // Q -> 0` for Q >= 1); nested `(x // a) // b`
//   merge; `c * (x // c) + x % c -> x`; `(x % d) // d -> 0`;
// - comparisons, `min` and `max` are decided by the bounds of the difference
//   of their operands; an undecided comparison is written `P op Q` with the
//   positive terms of the difference on the left (`x + 1 < y + 1 -> x < y`);
//   `and`, `or`, `not`, `&`, `|` and `if`-`else` with constant operands fold;
// - a symbol whose bounds allow one value is that constant (the index of a
//   dimension of size 1 is 0).
// Soundness comes first: a rule applies only where it is proved to keep the
// value, otherwise the node is left as it is (with simplified operands).
// Float-valued sub-expressions keep their form. An expression that would raise
// ZeroDivisionError may simplify to one that does not (e.g. `x // 0 - x // 0`
// -> 0). The result is deterministic (it depends only on the input's
// structure). This is for code generation only: printing and `repr` never
// simplify; simplify a copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "symbolic/expr.h"

namespace nt {

// Inclusive integer bounds; nullopt is unbounded on that side.
struct Interval {
  std::optional<int64_t> lo, hi;

  bool contains(int64_t value) const { return (!lo || *lo <= value) && (!hi || value <= *hi); }
  bool is_constant() const { return lo && hi && *lo == *hi; }
};

bool operator==(const Interval& a, const Interval& b);

// What is known about symbols, by name.
class BoundsEnv {
 public:
  BoundsEnv() = default;

  // lo <= name <= hi (intersected with the symbol's SymbolAttrs bounds).
  BoundsEnv& set(const std::string& name, std::optional<int64_t> lo, std::optional<int64_t> hi);
  BoundsEnv& set(const std::string& name, const Interval& bounds) { return set(name, bounds.lo, bounds.hi); }

  // lo <= name <= hi for expressions over other symbols (e.g. an element index
  // of a block: 0 <= i <= BLOCK - 1). Undefined Exprs mean no bound.
  BoundsEnv& set_symbolic(const std::string& name, const Expr& lo, const Expr& hi);

  // The numeric bounds given for `name` (unbounded if none).
  Interval numeric(const std::string& name) const;
  // The symbolic bounds given for `name`, or nullptr.
  const std::pair<Expr, Expr>* symbolic(const std::string& name) const;
  bool has_symbolic() const { return !symbolic_.empty(); }

 private:
  std::unordered_map<std::string, Interval> numeric_;
  std::unordered_map<std::string, std::pair<Expr, Expr>> symbolic_;
};

// Sound integer bounds of `e` by interval arithmetic over its structure (no
// simplification of `e` first; a symbol's symbolic bounds count through their
// own ranges). Float-valued expressions are unbounded.
Interval bounds_of(const Expr& e, const BoundsEnv& env = {});

// The simplified copy of `e` described above.
Expr simplify(const Expr& e, const BoundsEnv& env = {});

// Decides a condition: true or false when simplification proves it, nullopt
// when it cannot tell.
std::optional<bool> prove(const Expr& condition, const BoundsEnv& env = {});

}  // namespace nt
