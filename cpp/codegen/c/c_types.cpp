#include "codegen/c/c_types.h"

#include <map>
#include <utility>

#include "codegen/c/block_ops.h"
#include "codegen/c/math_calls.h"
#include "codegen/c/shared_packs.h"

namespace nt::codegen {

const char* const kPreamble =
    R"(// The device's vector registers in bytes (its preferred float vector), a build option.
#ifndef NT_VECTOR_BYTES
#define NT_VECTOR_BYTES 64
#endif
// A prefetch hint where the device's compiler takes one on global memory (CPUs: -DNT_CPU);
// nothing elsewhere (NVIDIA's OpenCL refuses __builtin_prefetch on a __global pointer).
#ifdef NT_CPU
#define NT_PREFETCH(address) __builtin_prefetch(address, 0, 2)
#else
#define NT_PREFETCH(address) ((void)0)
#endif

inline long nt_floordiv(long a, long b) {
  long q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline long nt_floormod(long a, long b) {
  long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline long nt_min(long a, long b) { return a < b ? a : b; }
inline long nt_max(long a, long b) { return a > b ? a : b; }
// float16 stores round to nearest, ties to even (vstore_half_rte). On CPUs by the bits, without
// a branch: PoCL's vstore_half_rte is ten branches inlined at every store, and was half the build
// of a float16 kernel (docs/performance.md). Other devices convert in hardware.
#ifdef NT_CPU
inline ushort nt_half_bits_rte(float x) {
  uint u = as_uint(x), a = u & 0x7fffffffu;
  // A normal half: the exponent rebiased (-112 << 23, modulo 2^32), the 13 bits dropped rounded.
  uint normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  // A subnormal one (below 2^-14): adding 0.5f rounds to a multiple of 2^-24, its last bit there.
  uint subnormal = as_uint(as_float(a) + 0.5f) - 0x3f000000u;
  uint special = a > 0x7f800000u ? 0x7e00u : 0x7c00u;  // NaN; infinity, or past the largest half
  uint h = a >= 0x47800000u ? special : a < 0x38800000u ? subnormal : normal;
  return (ushort)(h | ((u >> 16) & 0x8000u));
}
#define NT_STORE_HALF_GLOBAL(value, offset, pointer) \
  (((__global ushort*)(pointer))[offset] = nt_half_bits_rte(value))
#define NT_STORE_HALF_LOCAL(value, offset, pointer) \
  (((__local ushort*)(pointer))[offset] = nt_half_bits_rte(value))
#else
inline ushort nt_half_bits_rte(float x) {
  ushort h;
  vstore_half_rte(x, 0, (__private half*)&h);
  return h;
}
#define NT_STORE_HALF_GLOBAL(value, offset, pointer) vstore_half_rte(value, offset, pointer)
#define NT_STORE_HALF_LOCAL(value, offset, pointer) vstore_half_rte(value, offset, pointer)
#endif
inline float nt_round_half(float x) {
  ushort h = nt_half_bits_rte(x);
  return vload_half(0, (__private half*)&h);
}
inline float nt_bf16_to_float(ushort x) { return as_float((uint)x << 16); }
inline ushort nt_float_to_bf16(float x) {
  uint u = as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
inline float nt_round_bf16(float x) { return nt_bf16_to_float(nt_float_to_bf16(x)); }
// Philox4x32 with `rounds` rounds of counter (c0, c1, c2, c3) under key (k0, k1). Scalars, no
// vector literals: the same text is OpenCL C and CUDA C.
inline uint4 nt_philox_rounds(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1, uint rounds) {
  for (uint round = 0; round < rounds; ++round) {
    uint hi0 = mul_hi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    uint hi1 = mul_hi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  uint4 c;
  c.x = c0;
  c.y = c1;
  c.z = c2;
  c.w = c3;
  return c;
}
// Philox4x32-10 of counter (offset, 0) under key seed: uniform [0, 1) from its
// first word, a standard normal from its first two (Box-Muller).
inline uint4 nt_philox(long seed, long offset) {
  return nt_philox_rounds((uint)offset, (uint)((ulong)offset >> 32), 0u, 0u, (uint)seed,
                          (uint)((ulong)seed >> 32), 10u);
}
inline float nt_uniform(uint bits) { return (float)(bits >> 8) * 0x1.0p-24f; }
inline float nt_rand(long seed, long offset) { return nt_uniform(nt_philox(seed, offset).x); }
inline float nt_randn(long seed, long offset) {
  uint4 r = nt_philox(seed, offset);
  float u1 = fmax(nt_uniform(r.x), 0x1.0p-25f), u2 = nt_uniform(r.y);
  return sqrt(-2.0f * log(u1)) * cos(6.28318530717958647692f * u2);
}
// OpenCL 1.2 has no atomic float add: compare-and-swap on the bits.
inline void nt_atomic_add_float(volatile __global float* p, float v) {
  union { uint u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atomic_cmpxchg((volatile __global uint*)p, old.u, sum.u) != old.u);
}
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
inline void nt_atomic_add_double(volatile __global double* p, double v) {
  union { ulong u; double f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + v;
  } while (atom_cmpxchg((volatile __global ulong*)p, old.u, sum.u) != old.u);
}
#endif
)";

// float8 (torch's float8_e5m2 and float8_e4m3fn), held as bytes: decoded exactly; encoded from a
// float rounded to nearest even, as torch converts: past the largest finite value, e5m2 goes to
// infinity and e4m3fn (no infinities) to NaN. Subnormal results are rounded by a float addition
// that puts their last place at a float's.
constexpr const char* kFloat8Helpers = R"(inline float nt_f8e5m2_to_float(uchar x) {
  const uint sign = (uint)(x & 0x80) << 24, e = (x >> 2) & 31u, m = x & 3u;
  if (e == 0) return as_float(sign | as_uint((float)m * 0x1p-16f));
  if (e == 31) return as_float(sign | (m ? 0x7fc00000u : 0x7f800000u));
  return as_float(sign | (e + 112u) << 23 | m << 21);
}
inline float nt_f8e4m3_to_float(uchar x) {
  const uint sign = (uint)(x & 0x80) << 24, e = (x >> 3) & 15u, m = x & 7u;
  if (e == 15 && m == 7) return as_float(sign | 0x7fc00000u);
  if (e == 0) return as_float(sign | as_uint((float)m * 0x1p-9f));
  return as_float(sign | (e + 120u) << 23 | m << 20);
}
inline uchar nt_float_to_f8e5m2(float f) {
  uint bits = as_uint(f);
  const uint sign = bits & 0x80000000u;
  bits ^= sign;
  uchar r;
  if (bits >= 143u << 23) {  /* 2^16 and up (past 57344 rounded), infinities, NaN */
    r = bits > 0x7f800000u ? 0x7f : 0x7c;
  } else if (bits < 113u << 23) {  /* below 2^-14: steps of 2^-16 */
    r = (uchar)(as_uint(as_float(bits) + as_float(134u << 23)) - (134u << 23));
  } else {
    bits += ((15u - 127u) << 23) + 0xfffffu + ((bits >> 21) & 1u);
    r = (uchar)(bits >> 21);
  }
  return r | (uchar)(sign >> 24);
}
inline uchar nt_float_to_f8e4m3(float f) {
  uint bits = as_uint(f);
  const uint sign = bits & 0x80000000u;
  bits ^= sign;
  uchar r;
  if (bits >= 1087u << 20) {  /* 480 and up (past 448 rounded), infinities, NaN */
    r = 0x7f;
  } else if (bits < 121u << 23) {  /* below 2^-6: steps of 2^-9 */
    r = (uchar)(as_uint(as_float(bits) + as_float(141u << 23)) - (141u << 23));
  } else {
    bits += ((7u - 127u) << 23) + 0x7ffffu + ((bits >> 20) & 1u);
    r = (uchar)(bits >> 20);
  }
  return r | (uchar)(sign >> 24);
}
inline float nt_round_f8e5m2(float x) { return nt_f8e5m2_to_float(nt_float_to_f8e5m2(x)); }
inline float nt_round_f8e4m3(float x) { return nt_f8e4m3_to_float(nt_float_to_f8e4m3(x)); }
)";

std::string float8_decode(DType d, const std::string& byte) {
  return std::string(d == DType::float8_e5m2 ? "nt_f8e5m2_to_float(" : "nt_f8e4m3_to_float(") + byte + ")";
}

std::string float8_encode(DType d, const std::string& value) {
  return std::string(d == DType::float8_e5m2 ? "nt_float_to_f8e5m2((float)("
                                             : "nt_float_to_f8e4m3((float)(") +
         value + "))";
}

std::string preambles(const Dialect& dialect, const std::string& kernels) {
  std::string text = std::string(kPreamble) + kMathPreamble + kAtomicPreamble;
  if (kernels.find("_f8e") != std::string::npos) text += kFloat8Helpers;  // nt_..._f8e5m2, nt_..._f8e4m3
  if (kernels.find("nt_claim_slot") != std::string::npos) text += kSharedPackHelpers;  // shared_packs.h
  return std::string(dialect.header) + respell(text, dialect);
}

const char* const kIfWideVectors = "#if NT_VECTOR_BYTES >= 64";

std::string compute_type(DType d) {
  switch (d) {
    case DType::boolean:
      return "int";
    case DType::int8:
      return "char";
    case DType::int16:
      return "short";
    case DType::int32:
      return "int";
    case DType::int64:
      return "long";
    case DType::uint8:
      return "uchar";
    case DType::uint16:
      return "ushort";
    case DType::uint32:
      return "uint";
    case DType::uint64:
      return "ulong";
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return "float";
    case DType::float64:
      return "double";
  }
  return "float";
}

std::string storage_type(DType d) {
  switch (d) {
    case DType::boolean:
      return "uchar";
    case DType::float16:
      return "half";
    case DType::bfloat16:
      return "ushort";
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return "uchar";
    default:
      return compute_type(d);
  }
}

std::string limit_macro(const std::string& ct, bool greatest) {
  static const std::map<std::string, std::pair<const char*, const char*>> limits = {
      {"char", {"CHAR_MIN", "CHAR_MAX"}}, {"short", {"SHRT_MIN", "SHRT_MAX"}},
      {"int", {"INT_MIN", "INT_MAX"}},    {"long", {"LONG_MIN", "LONG_MAX"}},
      {"uchar", {"0", "UCHAR_MAX"}},      {"ushort", {"0", "USHRT_MAX"}},
      {"uint", {"0", "UINT_MAX"}},        {"ulong", {"0", "ULONG_MAX"}}};
  const auto& l = limits.at(ct);
  return "(" + ct + ")(" + (greatest ? l.second : l.first) + ")";
}

}  // namespace nt::codegen
