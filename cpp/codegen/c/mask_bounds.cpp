#include "codegen/c/mask_bounds.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

namespace {

// Does `e` hold only integer arithmetic without division (a bound computed once, anywhere)?
bool plain_integer(const Expr& e, bool divisions_allowed) {
  switch (e->kind) {
    case ExprKind::Float:
      return false;
    case ExprKind::Binary:
      if (e->binary_op == BinaryOp::TrueDiv) return false;
      if (!divisions_allowed && (e->binary_op == BinaryOp::FloorDiv || e->binary_op == BinaryOp::Mod))
        return false;
      break;
    default:
      break;
  }
  return std::all_of(e->operands.begin(), e->operands.end(),
                     [&](const Expr& o) { return plain_integer(o, divisions_allowed); });
}

// `cond` as subject >= bound (lower) or subject < bound (upper).
struct Bound {
  Expr subject, bound;
  bool lower = false;
};

std::optional<Bound> bound_of(const Expr& cond, const std::set<std::string>& variables) {
  if (cond->kind != ExprKind::Binary || !is_comparison(cond->binary_op)) return std::nullopt;
  BinaryOp op = cond->binary_op;
  if (op == BinaryOp::Eq || op == BinaryOp::Ne) return std::nullopt;
  Expr a = cond->operands[0], b = cond->operands[1];
  // The subject on the left: `b > a` is `a < b`.
  if (!mentions(a, variables)) {
    std::swap(a, b);
    op = op == BinaryOp::Lt   ? BinaryOp::Gt
         : op == BinaryOp::Le ? BinaryOp::Ge
         : op == BinaryOp::Gt ? BinaryOp::Lt
                              : BinaryOp::Le;
  }
  if (!mentions(a, variables) || mentions(b, variables) || !plain_integer(a, true) ||
      !plain_integer(b, false))
    return std::nullopt;
  switch (op) {
    case BinaryOp::Ge:
      return Bound{a, b, true};
    case BinaryOp::Gt:
      return Bound{a, add(b, 1), true};
    case BinaryOp::Lt:
      return Bound{a, b, false};
    default:  // Le
      return Bound{a, add(b, 1), false};
  }
}

}  // namespace

std::vector<Expr> merge_mask_bounds(const std::vector<Expr>& conditions,
                                    const std::vector<std::string>& variables) {
  const std::set<std::string> names(variables.begin(), variables.end());
  std::vector<std::optional<Bound>> bounds;
  // Per subject (its printed form) and side: the conditions that bound it there.
  std::map<std::pair<std::string, bool>, std::vector<size_t>> sides;
  for (size_t n = 0; n < conditions.size(); ++n) {
    bounds.push_back(bound_of(conditions[n], names));
    if (bounds.back()) sides[{to_python(bounds.back()->subject), bounds.back()->lower}].push_back(n);
  }
  std::vector<Expr> merged = conditions;
  std::vector<bool> dropped(conditions.size(), false);
  for (const auto& [side, members] : sides) {
    if (members.size() < 2) continue;
    const bool lower = side.second;
    Expr bound = bounds[members[0]]->bound;
    for (size_t m = 1; m < members.size(); ++m) {
      // max and min as conditional expressions: C keeps their operands' type (int under NT_INDEX32),
      // where nt_max() and nt_min() would widen the comparison to long.
      const Expr& other = bounds[members[m]]->bound;
      bound = select(lower ? ge(bound, other) : le(bound, other), bound, other);
      dropped[members[m]] = true;
    }
    const Expr& subject = bounds[members[0]]->subject;
    merged[members[0]] = lower ? le(bound, subject) : lt(subject, bound);
  }
  std::vector<Expr> out;
  for (size_t n = 0; n < merged.size(); ++n)
    if (!dropped[n]) out.push_back(merged[n]);
  return out;
}

}  // namespace nt::codegen
