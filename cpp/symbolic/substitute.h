// Substitution of symbols and collection of the symbols an expression uses.
//
// In: an Expr and a map from symbol names to replacement Exprs. Out: the
// Expr rebuilt bottom-up with the replacements, through the normal
// construction functions, so integer constants fold as they meet. Shared
// sub-trees are rebuilt once.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolic/expr.h"

namespace nt {

using SymbolMap = std::unordered_map<std::string, Expr>;

Expr substitute(const Expr& e, const SymbolMap& replacements);

// `e` with `values` substituted, as an integer: nullopt when it is not an
// integer constant then, or divides by zero.
std::optional<int64_t> evaluate_int(const Expr& e, const SymbolMap& values);

// Rebuild `e` with each node's operands replaced by `rebuild(operand)`.
Expr with_operands(const Expr& e, const std::vector<Expr>& operands);

// The symbols in `e`, each once, in first-seen order.
std::vector<Expr> collect_vars(const Expr& e);

// Does `e` use the symbol `name`, or any of `names`?
bool mentions(const Expr& e, const std::string& name);
bool mentions(const Expr& e, const std::set<std::string>& names);

}  // namespace nt
