// OpenCL C of a dot product of two blocks: a register-blocked micro-kernel.
//
// In: the names of three private arrays, row-major, in one compute type:
// `a` (M x K; or column-major, `a_k_major`), `b` (K x N) and `result` (M x N), the sizes M, K, N as C
// expressions known at build time (constexpr/meta macros), and whether the
// product is added to `result` (`acc += dot(a, b)`) or replaces it.
// Out: C statements computing it, written through the emitter's context.
//
// The result is cut into micro-tiles of kDotRows rows by two vectors of
// kDotLanes(type) columns (OpenCL vector types, e.g. float16). A micro-tile's
// accumulators live in vector variables (registers) for the whole k loop:
// each step loads the two vectors of b's row k (unit stride), broadcasts
// a[i][k] for each row and does 2 * kDotRows fused multiply-adds; the result's
// memory is read and written once per micro-tile, not once per k. Rows left
// over (M % kDotRows) run one at a time, columns left over take one vector,
// then scalars. Floating-point types use fma (one rounding per step);
// integer types multiply and add. The operands are the caller's packed
// copies (the blocks converted once to the compute type: float16 is
// converted to float once per block, not per multiply).
#pragma once

#include <string>

#include "codegen/opencl/emit_context.h"

namespace nt::codegen {

struct DotArrays {
  std::string a, b, result;  // private arrays: a[M][K], b[K][N], result[M][N]
  std::string M, K, N;       // C expressions of the sizes (compile-time constants)
  std::string type;          // the C compute type of all three (float, double, int, long, ...)
  bool accumulate = false;   // result += a @ b (else result = a @ b)
  bool a_k_major = false;    // `a` is stored a[K][M] (column-major) instead
};

// Rows of a micro-tile: 8 rows by 2 x 16 floats keep 16 accumulators + 2 b vectors +
// 1 broadcast in AVX-512's 32 vector registers (4 rows measured slower, 6 to 12 alike).
constexpr int kDotRows = 8;
// Lanes of the vectors for `type`: 64 bytes (one AVX-512 register, and the preferred
// vector width PoCL reports there: 16 floats, 8 doubles).
int dot_lanes(const std::string& type);

void emit_dot_kernel(EmitContext& ctx, const DotArrays& d);

}  // namespace nt::codegen
