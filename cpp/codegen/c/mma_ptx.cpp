#include "codegen/c/mma_ptx.h"

namespace nt::codegen {

// cvt.rn.{f16,bf16}x2.f32 d, a, b puts a in the high half and b in the low one. The fragments'
// layouts are PTX's for mma.m16n8k16 with .row a and .col b (lower/program_layout.h has the
// accumulators'; emitter_work_group_dot.cpp the operands').
const char* const kMmaHelpers = R"CL(inline uint nt_pack_f16x2(float lo, float hi) {
  uint r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
inline uint nt_pack_bf16x2(float lo, float hi) {
  uint r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
inline uint nt_tf32(float x) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
#define NT_MMA_M16N8K8_tf32(d0, d1, d2, d3, a, b)                                                         \
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
      "{%0, %1, %2, %3};"                                                                                  \
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)                                                             \
      : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]), "r"((b)[1]))
#define NT_MMA_M16N8K16_f16(d0, d1, d2, d3, a, b)                                                       \
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
      "{%0, %1, %2, %3};"                                                                                \
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)                                                           \
      : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]), "r"((b)[1]))
#define NT_MMA_M16N8K16_bf16(d0, d1, d2, d3, a, b)                                                        \
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
      "{%0, %1, %2, %3};"                                                                                  \
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)                                                             \
      : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"((b)[0]), "r"((b)[1]))
)CL";

// ldmatrix's .trans turns rows of k into the column-major pairs mma's b operand wants: thread
// (g, t) gets rows 2 t and 2 t + 1 of column g of each 8 x 8 matrix, lower k in the low half.
// Without .trans, from b stored as rows of n (b = trans(x), x staged as it is): thread (g, t)
// gets columns 2 t and 2 t + 1 of row g, the same pairs.
const char* const kMmaStagingHelpers = R"CL(inline uint nt_shared_address(const void* p) {
  return (uint)__cvta_generic_to_shared(p);
}
inline void nt_cp_async16(void* shared, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : "r"(nt_shared_address(shared)), "l"(global));
}
// The same where `in`, else 16 bytes of zeros (the source, not read, may lie past the tensor).
inline void nt_cp_async16_zfill(void* shared, const void* global, int in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :
               : "r"(nt_shared_address(shared)), "l"(global), "r"(in ? 16 : 0));
}
#define NT_CP_ASYNC_COMMIT() asm volatile("cp.async.commit_group;" : : : "memory")
#define NT_CP_ASYNC_WAIT(n) asm volatile("cp.async.wait_group %0;" : : "n"(n) : "memory")
inline void nt_ldmatrix_x4(uint* a, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(nt_shared_address(p)));
}
// b's fragments, one tile (x2: registers 0 and 1) or two (x4: b0's and b1's), from rows of k
// (`.trans`) or of n.
#define NT_LDMATRIX_B1(name, trans)                                                  \
  inline void name(uint* b, const void* p) {                                         \
    asm volatile("ldmatrix.sync.aligned.m8n8.x2" trans ".shared.b16 {%0, %1}, [%2];" \
                 : "=r"(b[0]), "=r"(b[1])                                            \
                 : "r"(nt_shared_address(p)));                                       \
  }
#define NT_LDMATRIX_B2(name, trans)                                                                  \
  inline void name(uint* b0, uint* b1, const void* p) {                                              \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4" trans ".shared.b16 {%0, %1, %2, %3}, [%4];"         \
                 : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])                                \
                 : "r"(nt_shared_address(p)));                                                       \
  }
NT_LDMATRIX_B1(nt_ldmatrix_x2, "")
NT_LDMATRIX_B2(nt_ldmatrix_x4_pair, "")
NT_LDMATRIX_B1(nt_ldmatrix_x2_trans, ".trans")
NT_LDMATRIX_B2(nt_ldmatrix_x4_trans, ".trans")
)CL";

const char* const kMmaProbe = R"CL(__kernel void nt_mma_probe(__global float* x) {
  const int i = get_local_id(0);
  uint a[4], b[2];
  for (int k = 0; k < 4; ++k) a[k] = nt_pack_f16x2(x[i], x[i + 1]);
  b[0] = nt_pack_bf16x2(x[i], x[i + 2]);
  b[1] = b[0];
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  NT_MMA_M16N8K16_f16(d0, d1, d2, d3, a, b);
  NT_MMA_M16N8K16_bf16(d0, d1, d2, d3, a, b);
  a[0] = nt_tf32(x[i]);
  NT_MMA_M16N8K8_tf32(d0, d1, d2, d3, a, b);
  x[i] = d0 + d1 + d2 + d3;
}
)CL";

}  // namespace nt::codegen
