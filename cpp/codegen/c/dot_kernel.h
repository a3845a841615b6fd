// OpenCL C of a dot product of two blocks: a register-blocked micro-kernel.
//
// In: the names of three private arrays, row-major, in one compute type:
// `a` (M x K; or column-major, `a_k_major`), `b` (K x N) and `result` (M x N), the sizes M, K, N as C
// expressions known at build time (constexpr/meta macros), and whether the
// product is added to `result` (`acc += dot(a, b)`) or replaces it.
// Out: C statements computing it, written through the emitter's context.
//
// The result is cut into micro-tiles of dot_rows() rows by two vectors of
// dot_lanes() columns (OpenCL vector types, e.g. float16 or float8). A micro-tile's
// accumulators live in vector variables (registers) for the whole k loop:
// each step loads the two vectors of b's row k (unit stride), broadcasts
// a[i][k] for each row and does 2 * rows fused multiply-adds; the result's
// memory is read and written once per micro-tile, not once per k. Rows left
// over (M % rows) take a 4-row tile where 4 are left, then run one at a time, columns left over take one
// vector, then half a vector (4 lanes or more), then scalars. Floating-point types use fma (one rounding per step); integer types multiply and add.
// The operands are the caller's packed copies (the blocks converted once to the compute type: float16 is
// converted to float once per block, not per multiply).
#pragma once

#include <string>

#include "codegen/c/emit_context.h"

namespace nt::codegen {

struct DotArrays {
  std::string a, b, result;  // arrays (private but for a_space's): a[M][K], b[K][N], result[M][N]
  std::string M, K, N;       // C expressions of the sizes (compile-time constants)
  std::string type;          // the C compute type of all three (float, double, int, long, ...)
  bool accumulate = false;   // result += a @ b (else result = a @ b)
  bool a_k_major = false;    // `a` is stored a[K][M] (column-major) instead
  std::string a_space;       // `a`'s address space where it is no private array (shared_packs.h)
};

// The micro-tile for vectors of `vector_bytes` bytes (the register width): 64 (AVX-512:
// 8 rows by 2 x 16 floats keep 16 accumulators + 2 b vectors + 1 broadcast in its 32
// vector registers; 4 rows measured slower, 6 to 12 alike) or 32 (AVX2, NEON pairs: 6 rows
// by 2 x 8 floats, 12 accumulators + 3 in 16 registers, the shape of BLIS's Haswell kernel).
// Lanes: vector_bytes / sizeof(type) (8-byte types half as many).
int dot_lanes(const std::string& type, int vector_bytes);
int dot_rows(int vector_bytes);

// Both variants, under kIfWideVectors (c_types.h: NT_VECTOR_BYTES, a build option from the device's preferred
// float vector width; 64 where it is not given).
void emit_dot_kernel(EmitContext& ctx, const DotArrays& d);

}  // namespace nt::codegen
