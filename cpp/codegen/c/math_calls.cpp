#include "codegen/c/math_calls.h"

#include <map>
#include <stdexcept>

#include "codegen/c/c_types.h"

namespace nt::codegen {

using namespace nt::ir;

const char* const kMathPreamble = R"(// Math helpers: correctly rounded float division and square root through
// double (exact: double has more than 2 * 24 + 2 bits), frexp's results,
// bit reversal, byte permutation, float16 bits.
inline float nt_div_rn_f(float a, float b) {
#ifdef cl_khr_fp64
  return (float)((double)a / (double)b);
#else
  return a / b;
#endif
}
inline float nt_sqrt_rn_f(float a) {
#ifdef cl_khr_fp64
  return (float)sqrt((double)a);
#else
  return sqrt(a);
#endif
}
inline float nt_frexp_m_f(float x) { int e; return frexp(x, &e); }
inline int nt_frexp_e_f(float x) { int e; frexp(x, &e); return e; }
#ifdef cl_khr_fp64
inline double nt_frexp_m_d(double x) { int e; return frexp(x, &e); }
inline int nt_frexp_e_d(double x) { int e; frexp(x, &e); return e; }
#endif
inline uint nt_brev32(uint x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
inline ulong nt_brev64(ulong x) { return ((ulong)nt_brev32((uint)x) << 32) | nt_brev32((uint)(x >> 32)); }
inline int nt_ffs32(uint x) { return x == 0u ? 0 : (int)popcount((x & (~x + 1u)) - 1u) + 1; }
inline int nt_ffs64(ulong x) { return x == 0ul ? 0 : (int)popcount((x & (~x + 1ul)) - 1ul) + 1; }
inline int nt_byte_perm(int x, int y, int s) {
  ulong v = ((ulong)(uint)y << 32) | (ulong)(uint)x;
  uint r = 0u;
  for (int i = 0; i < 4; ++i) r |= (uint)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xfful) << (8 * i);
  return (int)r;
}
inline float nt_half_from_bits(ushort h) { return vload_half(0, (__private const half*)&h); }
// exp, exp2 and log of float. CUDA C (whose dialect defines NT_EXP2_APPROX): exp2 is Triton's,
// the special function unit's ex2.approx.f32, and exp and log CUDA's (2 and 1 ulp), a few
// instructions where the polynomials below take twenty. Every OpenCL device (on NVIDIA's, exp2
// measured 2.06 ulp):
#ifndef NT_EXP2_APPROX
// Range reduction and a polynomial, branch-free
// (selects only), so that PoCL's loop vectoriser turns a loop calling them into
// vector code; the OpenCL builtins are calls it cannot vectorise (so would these
// be, were they not inlined: always_inline). Measured
// against float64 over every float32 input (benchmarks/exp_accuracy.py):
// see docs/performance.md for the largest errors in ulp (the bound is 2).
// The clamps are selects whose false side is x, so a NaN passes through them
// (and through the rest) unchanged; fmin/fmax would drop it.
// 2^(k-1) scales the doubled polynomial 2p (p in [0.7, 1.42]): a normal float for
// k in [-125, 128], so 2p * 2^(k-1) is exact, or overflows where the result does.
// Below that (tiny) the exponent is raised by 32 and the product, still exact, is
// multiplied by 2^-32: the only rounding, also into the denormals.
inline __attribute__((always_inline)) float nt_scale_f(float p2, float t, int tiny) {
  return p2 * as_float(((as_uint(t) + (tiny ? 32u : 0u)) << 23) + (126u << 23)) * (tiny ? 0x1p-32f : 1.0f);
}
// rint(x) for |x| < 2^22, as a float and as an int: adding 1.5 * 2^23 rounds x to an
// integer (to nearest, ties to even) in the low bits, so that as_uint(t) << 23 is
// k << 23 (modulo 2^32). OpenCL's rint is a long sequence of compares on PoCL.
#define NT_ROUND_MAGIC_F 0x1.8p23f
// exp(x) = 2^k exp(r), k = rint(x / ln 2) (x clamped first), r = x - k ln 2 (ln 2 in two parts,
// fused), |r| <= ln 2 / 2; exp(r) by a degree-6 polynomial fitted for relative error on
// that interval (0.3 ulp with float coefficients), doubled for nt_scale_f, by Horner.
inline __attribute__((always_inline)) float nt_exp_f(float x) {
  float c = x < -104.0f ? -104.0f : x;  // beyond: 0 and inf after scaling
  c = c > 89.0f ? 89.0f : c;
  const float t = fma(c, 1.44269504088896341f, NT_ROUND_MAGIC_F);
  const float k = t - NT_ROUND_MAGIC_F;
  float r = fma(k, -0.693359375f, c);
  r = fma(k, 2.12194440e-4f, r);
  float q = fma(2 * 1.3843607157e-3f, r, 2 * 8.3741955459e-3f);
  q = fma(q, r, 2 * 4.1668005288e-2f);
  q = fma(q, r, 2 * 1.6666430235e-1f);
  q = fma(q, r, 2 * 4.9999994040e-1f);
  q = fma(q, r, 2.0f);
  return nt_scale_f(fma(q, r, 2.0f), t, c < -86.0f);
}
// exp2(x) = 2^k 2^f, k = rint(x), f = x - k exact, |f| <= 1/2; 2^f by Cephes'
// degree-6 polynomial, doubled.
inline __attribute__((always_inline)) float nt_exp2_f(float x) {
  float c = x < -151.0f ? -151.0f : x;
  c = c > 128.0f ? 128.0f : c;
  const float t = c + NT_ROUND_MAGIC_F;
  const float f = c - (t - NT_ROUND_MAGIC_F);
  float q = fma(2 * 1.535336188319500e-4f, f, 2 * 1.339887440266574e-3f);
  q = fma(q, f, 2 * 9.618437357674640e-3f);
  q = fma(q, f, 2 * 5.550332471162809e-2f);
  q = fma(q, f, 2 * 2.402264791363012e-1f);
  q = fma(q, f, 2 * 6.931472028550421e-1f);
  return nt_scale_f(fma(q, f, 2.0f), t, c < -124.0f);
}
// log(x) = k ln 2 + log(1 + f), x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2));
// log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), R fdlibm's (FreeBSD
// e_logf.c) degree-4 polynomial. Denormals are scaled by 2^23 first.
inline __attribute__((always_inline)) float nt_log_f(float x) {
  const int tiny = x < 0x1p-126f;
  const float m0 = tiny ? x * 0x1p23f : x;
  const uint bits = as_uint(m0) + (0x3f800000u - 0x3f3504f3u);
  const float k = (float)((int)(bits >> 23) - 0x7f - (tiny ? 23 : 0));
  const float f = as_float((bits & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s, w = z * z;
  const float t1 = w * fma(w, 0.24279078841f, 0.40000972152f);
  const float t2 = z * fma(w, 0.28498786688f, 0.66666662693f);
  const float hfsq = 0.5f * f * f;
  const float y = s * (hfsq + t1 + t2) + k * 9.0580006145e-06f - hfsq + f + k * 6.9313812256e-01f;
  return x > 0.0f ? (x == INFINITY ? x : y) : (x == 0.0f ? -INFINITY : NAN);
}
#else
inline float nt_exp_f(float x) { return exp(x); }
inline float nt_exp2_f(float x) { return NT_EXP2_APPROX(x); }
inline float nt_log_f(float x) { return log(x); }
#endif
)";

namespace {

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s;
}

std::string unsigned_of(const std::string& ct) {
  static const std::map<std::string, std::string> u = {
      {"char", "uchar"},    {"short", "ushort"}, {"int", "uint"},    {"long", "ulong"}, {"uchar", "uchar"},
      {"ushort", "ushort"}, {"uint", "uint"},    {"ulong", "ulong"}, {"float", "uint"}, {"double", "ulong"}};
  return u.at(ct);
}

// The bits of `x` (a value of dtype `d`, in its compute type) as an unsigned integer.
std::string to_bits(const std::string& x, DType d) {
  switch (d) {
    case DType::float16:
      return "nt_half_bits_rte(" + x + ")";
    case DType::bfloat16:
      return "nt_float_to_bf16(" + x + ")";
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return float8_encode(d, x);
    case DType::float32:
      return "as_uint(" + x + ")";
    case DType::float64:
      return "as_ulong(" + x + ")";
    default:
      return "((" + unsigned_of(compute_type(d)) + ")(" + x + "))";
  }
}

std::string from_bits(const std::string& bits, DType d) {
  switch (d) {
    case DType::float16:
      return "nt_half_from_bits((ushort)(" + bits + "))";
    case DType::bfloat16:
      return "nt_bf16_to_float((ushort)(" + bits + "))";
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return float8_decode(d, "(uchar)(" + bits + ")");
    case DType::float32:
      return "as_float((uint)(" + bits + "))";
    case DType::float64:
      return "as_double((ulong)(" + bits + "))";
    default:
      return "((" + compute_type(d) + ")(" + bits + "))";
  }
}

// libdevice's conversion names: <from>2<to>_<mode>.
bool conversion_c(const std::string& fn, const std::string& x, DType result, std::string& out) {
  size_t under = fn.rfind('_');
  if (fn.find('2') == std::string::npos || under == std::string::npos || under + 3 != fn.size()) return false;
  static const std::map<std::string, std::string> modes = {
      {"rn", "rte"}, {"rz", "rtz"}, {"rd", "rtn"}, {"ru", "rtp"}};
  auto mode = modes.find(fn.substr(under + 1));
  if (mode == modes.end()) return false;
  out = "convert_" + compute_type(result) + "_" + mode->second + "(" + x + ")";
  return true;
}

}  // namespace

std::string float_unary_c(UnaryFn fn, const std::string& x) {
  switch (fn) {
    case UnaryFn::Exp:
      return "nt_exp_f(" + x + ")";
    case UnaryFn::Exp2:
      return "nt_exp2_f(" + x + ")";
    case UnaryFn::Log:
      return "nt_log_f(" + x + ")";
    default:
      return "";
  }
}

std::string call_c(const ValueNode& v, const std::vector<std::string>& a) {
  const std::string& fn = v.name;
  DType result = v.type.dtype;
  DType arg = v.operands.empty() ? result : v.operands[0]->type.dtype;
  std::string ct = compute_type(result), at = compute_type(arg);
  bool dbl = ct == "double", arg_dbl = at == "double";
  std::string one = dbl ? "1.0" : "1.0f";
  std::string args = join_args(a);
  auto fcall = [&](const std::string& name) { return name + "(" + args + ")"; };
  auto recip = [&](const std::string& x) { return "(" + one + " / " + x + ")"; };

  if (fn == "bitcast") return from_bits(to_bits(a[0], arg), result);
  // Same as the OpenCL builtin of that name.
  static const std::map<std::string, std::string> builtins = {
      {"erfc", "erfc"},         {"lgamma", "lgamma"},       {"tgamma", "tgamma"}, {"rint", "rint"},
      {"nearbyint", "rint"},    {"acosh", "acosh"},         {"asinh", "asinh"},   {"atanh", "atanh"},
      {"sinpi", "sinpi"},       {"cospi", "cospi"},         {"tanpi", "tanpi"},   {"logb", "logb"},
      {"fmod", "fmod"},         {"remainder", "remainder"}, {"hypot", "hypot"},   {"atan2", "atan2"},
      {"copysign", "copysign"}, {"nextafter", "nextafter"}, {"fdim", "fdim"},     {"fma_rn", "fma"},
      {"ilogb", "ilogb"},       {"ldexp", "ldexp"},         {"scalbn", "ldexp"},  {"pown", "pown"},
      {"fast_powf", "pow"},     {"hadd", "hadd"},           {"rhadd", "rhadd"},   {"mulhi", "mul_hi"}};
  if (auto it = builtins.find(fn); it != builtins.end()) return fcall(it->second);
  static const std::map<std::string, std::string> native = {
      {"fast_sinf", "sin"}, {"fast_cosf", "cos"}, {"fast_log2f", "log2"},   {"fast_logf", "log"},
      {"fast_expf", "exp"}, {"fast_tanf", "tan"}, {"fast_exp10f", "exp10"}, {"fast_log10f", "log10"}};
  if (auto it = native.find(fn); it != native.end()) return fcall((dbl ? "" : "native_") + it->second);

  if (fn == "fdiv") return "(" + a[0] + " / " + a[1] + ")";
  if (fn == "fast_dividef") return dbl ? "(" + a[0] + " / " + a[1] + ")" : fcall("native_divide");
  if (fn == "div_rn") return dbl ? "(" + a[0] + " / " + a[1] + ")" : fcall("nt_div_rn_f");
  if (fn == "rcp_rn") return dbl ? recip(a[0]) : "nt_div_rn_f(1.0f, " + a[0] + ")";
  if (fn == "sqrt_rn") return dbl ? fcall("sqrt") : fcall("nt_sqrt_rn_f");
  if (fn == "rsqrt_rn")
    return dbl ? recip("sqrt(" + a[0] + ")") : "nt_div_rn_f(1.0f, nt_sqrt_rn_f(" + a[0] + "))";
  if (fn == "add_rn") return "(" + a[0] + " + " + a[1] + ")";
  if (fn == "sub_rn") return "(" + a[0] + " - " + a[1] + ")";
  if (fn == "mul_rn") return "(" + a[0] + " * " + a[1] + ")";
  if (fn == "rcbrt") return recip("cbrt(" + a[0] + ")");
  if (fn == "rhypot") return recip(fcall("hypot"));
  if (fn == "norm3d") return "hypot(hypot(" + a[0] + ", " + a[1] + "), " + a[2] + ")";
  if (fn == "rnorm3d") return recip("hypot(hypot(" + a[0] + ", " + a[1] + "), " + a[2] + ")");
  if (fn == "norm4d") return "hypot(hypot(" + a[0] + ", " + a[1] + "), hypot(" + a[2] + ", " + a[3] + "))";
  if (fn == "rnorm4d")
    return recip("hypot(hypot(" + a[0] + ", " + a[1] + "), hypot(" + a[2] + ", " + a[3] + "))");
  if (fn == "saturatef") return "fmin(fmax(" + a[0] + ", (" + ct + ")0), (" + ct + ")1)";
  if (fn == "normcdf") return "((" + ct + ")0.5 * erfc(-" + a[0] + " * (" + ct + ")0.70710678118654752440))";
  if (fn == "clamp") return "fmin(fmax(" + a[0] + ", " + a[1] + "), " + a[2] + ")";
  if (fn == "clamp_nan") {
    return "((isnan(" + a[0] + ") || isnan(" + a[1] + ") || isnan(" + a[2] + ")) ? (" + a[0] + " + " + a[1] +
           " + " + a[2] + ") : fmin(fmax(" + a[0] + ", " + a[1] + "), " + a[2] + "))";
  }
  if (fn == "maximum_nan" || fn == "minimum_nan") {
    return "((isnan(" + a[0] + ") || isnan(" + a[1] + ")) ? (" + a[0] + " + " + a[1] +
           ") : " + (fn == "maximum_nan" ? "fmax(" : "fmin(") + args + "))";
  }
  if (fn == "isnan" || fn == "isinf" || fn == "isfinite") return "(" + fcall(fn) + " != 0)";
  if (fn == "finitef" || fn == "isfinited") return "(isfinite(" + a[0] + ") ? 1 : 0)";
  if (fn == "signbit") return "(signbit(" + a[0] + ") ? 1 : 0)";
  if (fn == "frexp_mantissa") return (arg_dbl ? "nt_frexp_m_d(" : "nt_frexp_m_f(") + a[0] + ")";
  if (fn == "frexp_exponent") return (arg_dbl ? "nt_frexp_e_d(" : "nt_frexp_e_f(") + a[0] + ")";
  if (fn == "llrint") return "((long)rint(" + a[0] + "))";
  if (fn == "llround") return "((long)round(" + a[0] + "))";
  if (fn == "umulhi") {
    std::string u = unsigned_of(ct);
    return "((" + ct + ")mul_hi((" + u + ")(" + a[0] + "), (" + u + ")(" + a[1] + ")))";
  }
  if (fn == "mul24") {
    if (ct == "int" || ct == "uint") return fcall("mul24");
    return "(" + a[0] + " * " + a[1] + ")";
  }
  if (fn == "sad") return "((" + ct + ")abs_diff(" + a[0] + ", " + a[1] + ") + " + a[2] + ")";
  if (fn == "brev") {
    int bits = dtype_bytes(arg) * 8;
    if (bits == 64) return "((" + ct + ")nt_brev64((ulong)(" + a[0] + ")))";
    return "((" + ct + ")(nt_brev32((uint)(" + unsigned_of(at) + ")(" + a[0] + ")) >> " +
           std::to_string(32 - bits) + "))";
  }
  if (fn == "clz") return "((int)clz(" + a[0] + "))";
  if (fn == "popc") return "((int)popcount(" + a[0] + "))";
  if (fn == "ffs") {
    if (dtype_bytes(arg) == 8) return "nt_ffs64((ulong)(" + a[0] + "))";
    return "nt_ffs32((uint)(" + unsigned_of(at) + ")(" + a[0] + "))";
  }
  if (fn == "int_as_float" || fn == "uint_as_float" || fn == "float_as_int" || fn == "float_as_uint" ||
      fn == "longlong_as_double" || fn == "double_as_longlong") {
    return from_bits(to_bits(a[0], arg), result);
  }
  if (fn == "double2loint") return "((int)as_ulong(" + a[0] + "))";
  if (fn == "double2hiint") return "((int)(as_ulong(" + a[0] + ") >> 32))";
  if (fn == "hiloint2double") {
    return "as_double(((ulong)(uint)(" + a[0] + ") << 32) | (ulong)(uint)(" + a[1] + "))";
  }
  if (fn == "byte_perm") return fcall("nt_byte_perm");
  if (fn.rfind("philox", 0) == 0 && fn.size() == 7)
    return "nt_philox_rounds(" + args + ")." + "xyzw"[fn[6] - '0'];
  std::string converted;
  if (conversion_c(fn, a[0], result, converted)) return converted;
  throw std::logic_error("codegen: no C for the function '" + fn + "'");
}

}  // namespace nt::codegen
