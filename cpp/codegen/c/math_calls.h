// OpenCL C of the elementwise functions called by name (ir/math_fns.h).
//
// In: a Call node and the C expressions of its arguments' elements (in their
// compute types). Out: the C expression of the result's element, in the
// result's compute type. Most names are OpenCL builtins; the rest are the
// helpers of kMathPreamble (correctly rounded division and square root
// through double, frexp's two results, bit reversal, byte permutation).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace nt::codegen {

extern const char* const kMathPreamble;

std::string call_c(const ir::ValueNode& call, const std::vector<std::string>& args);

// exp, exp2 or log of a float (computed in float: float32, float16, bfloat16) as a
// call of the vectorisable helpers of kMathPreamble; "" for other functions.
std::string float_unary_c(ir::UnaryFn fn, const std::string& x);

}  // namespace nt::codegen
