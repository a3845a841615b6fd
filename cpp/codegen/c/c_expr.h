// Symbolic expressions as OpenCL C.
//
// In: an Expr over index variables, sizes, strides and constexpr/meta symbols
// (`nt_index` in the generated code, int or long; constexpr/meta symbols are macros) and
// what is known about them. Out: a C expression with Python's meaning:
// `//` and `%` become plain `/` and `%` where the operands are proved
// non-negative and positive, and the helpers nt_floordiv/nt_floormod
// otherwise; `min`/`max` the helpers nt_min/nt_max; floats C literals.
#pragma once

#include <string>
#include <vector>

#include "symbolic/expr.h"
#include "symbolic/simplify.h"
#include "tensor/dtype.h"

namespace nt::codegen {

// `widen`: a C type each symbol is cast to where read (`long`: 64-bit arithmetic whatever the
// index type, nt_index being int under NT_INDEX32); empty, symbols as they are.
std::string c_expr(const Expr& e, const BoundsEnv& env, const std::string& widen = "");

// The divisors of `e`'s floor divisions and remainders that `env` does not prove nonzero
// (evaluated where they are 0, the C traps).
std::vector<Expr> unproved_divisors(const Expr& e, const BoundsEnv& env);

// A constant as a C literal of `dtype`'s compute type (inf and nan included).
std::string c_literal(const Expr& value, DType dtype);

}  // namespace nt::codegen
