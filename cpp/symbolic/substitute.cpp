#include "symbolic/substitute.h"

#include <unordered_set>

#include "support/errors.h"

namespace nt {

Expr with_operands(const Expr& e, const std::vector<Expr>& operands) {
  switch (e->kind) {
    case ExprKind::Unary:
      return unary(e->unary_op, operands[0]);
    case ExprKind::Binary:
      return binary(e->binary_op, operands[0], operands[1]);
    case ExprKind::Select:
      return select(operands[0], operands[1], operands[2]);
    default:
      return e;
  }
}

namespace {

class Substituter {
 public:
  explicit Substituter(const SymbolMap& replacements) : replacements_(replacements) {}

  Expr visit(const Expr& e) {
    if (e->kind == ExprKind::Var) {
      auto it = replacements_.find(e->name);
      return it == replacements_.end() ? e : it->second;
    }
    if (e->operands.empty()) return e;
    auto memo = done_.find(e.get());
    if (memo != done_.end()) return memo->second;
    std::vector<Expr> operands;
    bool changed = false;
    for (const auto& operand : e->operands) {
      operands.push_back(visit(operand));
      changed = changed || !operands.back().same_as(operand);
    }
    Expr result = changed ? with_operands(e, operands) : e;
    done_.emplace(e.get(), result);
    return result;
  }

 private:
  const SymbolMap& replacements_;
  std::unordered_map<const ExprNode*, Expr> done_;
};

void collect(const Expr& e, std::unordered_set<std::string>& seen,
             std::unordered_set<const ExprNode*>& visited, std::vector<Expr>& out) {
  if (!visited.insert(e.get()).second) return;
  if (e->kind == ExprKind::Var) {
    if (seen.insert(e->name).second) out.push_back(e);
    return;
  }
  for (const auto& operand : e->operands) collect(operand, seen, visited, out);
}

}  // namespace

Expr substitute(const Expr& e, const SymbolMap& replacements) {
  if (replacements.empty()) return e;
  return Substituter(replacements).visit(e);
}

std::vector<Expr> collect_vars(const Expr& e) {
  std::unordered_set<std::string> seen;
  std::unordered_set<const ExprNode*> visited;
  std::vector<Expr> out;
  collect(e, seen, visited, out);
  return out;
}

bool mentions(const Expr& e, const std::string& name) {
  for (const Expr& v : collect_vars(e))
    if (v->name == name) return true;
  return false;
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  for (const Expr& v : collect_vars(e))
    if (names.count(v->name)) return true;
  return false;
}

std::optional<int64_t> evaluate_int(const Expr& e, const SymbolMap& values) {
  try {
    return substitute(e, values).as_int();
  } catch (const ZeroDivisionError&) {
    return std::nullopt;
  }
}

}  // namespace nt
