// Elementwise functions called by name: Triton's math and libdevice names
// beyond the core UnaryFn/BinaryFn.
//
// In: a function name and its arguments (blocks broadcast together by numpy
// rules). Out: a Call value whose type follows the function's kind:
// - float math (erfc, atan2, div_rn, clamp, ...): the arguments promote to
//   one dtype, integers to float32; the result has it;
// - predicates (isnan, isinf, isfinite): boolean;
// - float -> int32 (ilogb, signbit, finitef), (float, int) -> float (ldexp,
//   pown), integer functions (umulhi, mulhi, clz, popc, ...);
// - conversions with a rounding mode (float2int_rn, double2float_rz, ...)
//   and bit reinterpretations (float_as_int, bitcast): fixed result dtypes.
// A wrong kind of argument (umulhi of floats, a bitcast between dtypes of
// different widths) is a TypeError. The C of each name is in
// codegen/c/math_calls.h.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace nt::ir {

bool is_call_fn(const std::string& fn);
Value call(const std::string& fn, const std::vector<Value>& args);
// `x` with its bits read as `dtype` (of the same width).
Value bitcast(const Value& x, DType dtype);

}  // namespace nt::ir
