// Printing expressions as Python source.
//
// In: an Expr. Out: the Python source text that `ast.unparse` would print for
// the same tree: operators with Python's precedence and associativity, and
// the fewest parentheses that keep the meaning (`a - (b - 1) - 1`,
// `(a + b) // c + 1`). This is what `repr(Symbol)` shows.
#pragma once

#include <iosfwd>
#include <string>

#include "symbolic/expr.h"

namespace nt {

std::string to_python(const Expr& e);
std::string format_float(double value);  // Python's repr of a float
std::ostream& operator<<(std::ostream& os, const Expr& e);

}  // namespace nt
