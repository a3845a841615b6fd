// Parsing Python expression source into an Expr.
//
// In: the text of a Python expression over names and numbers (what
// `Symbol("BLOCK_SIZE_M * 2")` receives). Out: the Expr built with the usual
// construction rules. Supports `if`-`else`, `or`, `and`, `not`, comparisons,
// `|`, `&`, `+ - * / // %`, unary `-`/`+`, parentheses, `min(a, b)`,
// `max(a, b)`, `True`, `False` and `float('inf')`. Throws
// ValueError naming the offending position otherwise.
#pragma once

#include <string_view>

#include "symbolic/expr.h"

namespace nt {

Expr parse_python_expr(std::string_view text);

// Is `text` a Python identifier?
bool is_identifier(std::string_view text);

}  // namespace nt
