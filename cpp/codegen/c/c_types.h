// OpenCL C types of NineToothed's dtypes, and the helpers every kernel uses.
//
// In: a dtype. Out: the C type it computes in (float16 and bfloat16 compute in
// float, booleans in int) and the one it is stored in (half, ushort for
// bfloat16 bits, uchar for booleans and float8). kPreamble is the text every generated
// source starts with: Python's floor division for index arithmetic, float16
// and bfloat16 rounding, compare-and-swap float atomics, Philox random numbers.
#pragma once

#include <string>

#include "codegen/dialect.h"
#include "tensor/dtype.h"

namespace nt::codegen {

extern const char* const kPreamble;
// The preprocessor line that opens the 64-byte-register variant of code cut for the device's
// vector registers (NT_VECTOR_BYTES, defined by kPreamble where no build option gives it); its
// `#else` holds the 32-byte one.
extern const char* const kIfWideVectors;

// What every source starts with, in `dialect`: its header, then kPreamble, kMathPreamble
// (math_calls.h) and kAtomicPreamble (block_ops.h) respelled for it, and the float8 conversions
// (nt_f8e5m2_to_float, nt_float_to_f8e5m2, nt_round_f8e5m2 and the e4m3fn ones) where the
// `kernels`' text calls them.
std::string preambles(const Dialect& dialect, const std::string& kernels);
// The C of a float8 byte as a float, and of a value as the byte nearest it.
std::string float8_decode(DType dtype, const std::string& byte);
std::string float8_encode(DType dtype, const std::string& value);

// The C type of index arithmetic (sizes, strides, offsets, coordinates, program and work-item
// ids, loop counters), which each dialect's header defines: long, or int where a launch's
// tensors all lie within 2^30 elements and it defines NT_INDEX32 (driver/index_width.h, as
// Triton's int32 offsets). Data of dtype int64 stays long, and so do int64 values computed from
// sizes and strides (their symbols widened where read, emitter_values.cpp).
inline const std::string kIndexType = "nt_index";

std::string compute_type(DType dtype);
std::string storage_type(DType dtype);
// The least (or greatest) value of an integer C type, as a C expression.
std::string limit_macro(const std::string& c_type, bool greatest);

}  // namespace nt::codegen
