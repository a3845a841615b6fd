// Tensor cores from OpenCL C: inline PTX for NVIDIA GPUs of compute capability 8.0 and later.
//
// NVIDIA's OpenCL compiler accepts inline PTX (`asm`), and PTX's mma.sync.m16n8k16 multiplies
// a 16 x 16 tile of float16 (or bfloat16) by a 16 x 8 one into float accumulators, a warp at a
// time. kMmaHelpers defines what generated dots use (codegen/c/emitter_work_group_dot.cpp):
//   nt_pack_f16x2(lo, hi), nt_pack_bf16x2(lo, hi)  two floats rounded to a pair of 16-bit
//                                                   floats, lo in the low half;
//   NT_MMA_M16N8K16_f16(d0, d1, d2, d3, a, b)       d += a b for one warp: a the uint[4] and b the
//   NT_MMA_M16N8K16_bf16(...)                        uint[2] fragments, d0..d3 float lvalues;
//   nt_tf32(x)                                      a float rounded to TF32 (nearest, ties away);
//   NT_MMA_M16N8K8_tf32(d0, d1, d2, d3, a, b)       the same for TF32 operands, 8 steps of k.
// kMmaStagingHelpers (dialects with mma_async_staging: CUDA C, where shared-memory addresses
// have a name) moves 16-bit operands without converting them:
//   nt_cp_async16(shared, global)                 16 bytes copied asynchronously (cp.async.cg);
//   NT_CP_ASYNC_COMMIT()                           this thread's copies since the last commit
//                                                  are a group;
//   NT_CP_ASYNC_WAIT(n)                            all but this thread's n most recent groups
//                                                  are done (a constant n; both do nothing
//                                                  where NT_MMA_SYNC is not defined);
//   nt_ldmatrix_x4(a, p)                           a's uint[4] fragment of a 16 x 16 tile of a
//                                                  row-major array, each lane giving one row's
//                                                  address (rows l % 16, columns 8 (l / 16) on);
//   nt_ldmatrix_x2_trans(b, p)                     b's uint[2] fragment of a 16 x 8 tile of a
//   nt_ldmatrix_x4_trans(b0, b1, p)                k-major (row-major k x n) array, or of two;
//   nt_ldmatrix_x2(b, p), nt_ldmatrix_x4_pair(b0, b1, p)  the same from an n-major array (b =
//                                                  trans(x), x staged as it lies).
// kMmaProbe is a kernel using all of them: the runtime builds it once per device before it
// builds sources with NT_MMA_SYNC (driver/compiled_kernel.cpp).
#pragma once

namespace nt::codegen {

extern const char* const kMmaHelpers;
extern const char* const kMmaStagingHelpers;
extern const char* const kMmaProbe;

}  // namespace nt::codegen
