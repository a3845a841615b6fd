#include "ir/math_fns.h"

#include <map>

#include "ir/builder.h"
#include "support/errors.h"

namespace nt::ir {

namespace {

enum class Kind {
  Float,         // promoted arguments (integers: float32), result of that dtype
  Predicate,     // float arguments, boolean result
  FloatToInt32,  // a float argument, int32 result
  FloatInt,      // (float, int32) -> float
  Int,           // integer arguments promoted together, result of that dtype
  IntToInt32,    // an integer argument, int32 result
  FloatToInt64,  // a float argument, int64 result
  Fixed,         // arguments cast to `arg`, result `result`
};

struct Fn {
  int arity;
  Kind kind;
  DType arg = DType::float32;
  DType result = DType::float32;
};

void add_conversions(std::map<std::string, Fn>& fns) {
  // libdevice's conversions with a rounding mode: <from>2<to>_<mode>.
  const std::pair<const char*, DType> types[] = {{"float", DType::float32}, {"double", DType::float64},
                                                 {"int", DType::int32},     {"uint", DType::uint32},
                                                 {"ll", DType::int64},      {"ull", DType::uint64}};
  for (const auto& [from, from_dtype] : types) {
    for (const auto& [to, to_dtype] : types) {
      if (from_dtype == to_dtype) continue;
      bool from_float = dtype_is_float(from_dtype), to_float = dtype_is_float(to_dtype);
      if (!from_float && !to_float) continue;
      for (const char* mode : {"rn", "rz", "rd", "ru"}) {
        fns[std::string(from) + "2" + to + "_" + mode] = {1, Kind::Fixed, from_dtype, to_dtype};
      }
    }
  }
  // Bit reinterpretations.
  fns["int_as_float"] = {1, Kind::Fixed, DType::int32, DType::float32};
  fns["uint_as_float"] = {1, Kind::Fixed, DType::uint32, DType::float32};
  fns["float_as_int"] = {1, Kind::Fixed, DType::float32, DType::int32};
  fns["float_as_uint"] = {1, Kind::Fixed, DType::float32, DType::int32};
  fns["longlong_as_double"] = {1, Kind::Fixed, DType::int64, DType::float64};
  fns["double_as_longlong"] = {1, Kind::Fixed, DType::float64, DType::int64};
  fns["double2loint"] = {1, Kind::Fixed, DType::float64, DType::int32};
  fns["double2hiint"] = {1, Kind::Fixed, DType::float64, DType::int32};
  fns["hiloint2double"] = {2, Kind::Fixed, DType::int32, DType::float64};
  fns["byte_perm"] = {3, Kind::Fixed, DType::int32, DType::int32};
  // Philox4x32: word k of (c0, c1, c2, c3, k0, k1, rounds).
  for (int k = 0; k < 4; ++k)
    fns["philox" + std::to_string(k)] = {7, Kind::Fixed, DType::uint32, DType::uint32};
}

const std::map<std::string, Fn>& fns() {
  static const std::map<std::string, Fn> table = [] {
    std::map<std::string, Fn> t;
    for (const char* name :
         {"erfc",      "lgamma",    "tgamma",    "rint",        "nearbyint",   "acosh",         "asinh",
          "atanh",     "sinpi",     "cospi",     "tanpi",       "logb",        "rcbrt",         "sqrt_rn",
          "rsqrt_rn",  "rcp_rn",    "saturatef", "normcdf",     "fast_sinf",   "fast_cosf",     "fast_log2f",
          "fast_logf", "fast_expf", "fast_tanf", "fast_exp10f", "fast_log10f", "frexp_mantissa"}) {
      t[name] = {1, Kind::Float};
    }
    for (const char* name :
         {"fmod", "remainder", "hypot", "atan2", "copysign", "nextafter", "fdim", "div_rn", "fdiv", "rhypot",
          "add_rn", "sub_rn", "mul_rn", "fast_dividef", "fast_powf", "maximum_nan", "minimum_nan"}) {
      t[name] = {2, Kind::Float};
    }
    for (const char* name : {"clamp", "clamp_nan", "fma_rn", "norm3d", "rnorm3d"}) t[name] = {3, Kind::Float};
    for (const char* name : {"norm4d", "rnorm4d"}) t[name] = {4, Kind::Float};
    for (const char* name : {"isnan", "isinf", "isfinite"}) t[name] = {1, Kind::Predicate};
    for (const char* name : {"ilogb", "signbit", "finitef", "isfinited", "frexp_exponent"}) {
      t[name] = {1, Kind::FloatToInt32};
    }
    for (const char* name : {"ldexp", "scalbn", "pown"}) t[name] = {2, Kind::FloatInt};
    for (const char* name : {"umulhi", "mulhi", "hadd", "rhadd", "mul24"}) t[name] = {2, Kind::Int};
    t["brev"] = {1, Kind::Int};
    t["sad"] = {3, Kind::Int};
    for (const char* name : {"clz", "popc", "ffs"}) t[name] = {1, Kind::IntToInt32};
    for (const char* name : {"llrint", "llround"}) t[name] = {1, Kind::FloatToInt64};
    add_conversions(t);
    return t;
  }();
  return table;
}

Value make_call(const std::string& fn, std::vector<Value> args, DType result) {
  std::vector<Expr> shape;
  for (const Value& a : args) shape = broadcast_shapes(shape, a->type.shape);
  ValueNode node{ValueKind::Call, Type{result, shape}};
  node.name = fn;
  for (Value& a : args) node.operands.push_back(broadcast_to(a, shape));
  return std::make_shared<const ValueNode>(std::move(node));
}

}  // namespace

bool is_call_fn(const std::string& fn) { return fns().count(fn) > 0; }

Value call(const std::string& name, const std::vector<Value>& args) {
  auto it = fns().find(name);
  if (it == fns().end()) throw ValueError("unknown function '" + name + "'");
  const Fn& fn = it->second;
  if (static_cast<int>(args.size()) != fn.arity) {
    throw TypeError(name + "() takes " + std::to_string(fn.arity) + " arguments, got " +
                    std::to_string(args.size()));
  }
  for (const Value& a : args) {
    if (a->type.pointer >= 0) throw TypeError(name + "() does not take pointers");
  }
  // The dtype the arguments promote to (a Python number takes its partners').
  Type common = args[0]->type;
  for (size_t i = 1; i < args.size(); ++i) {
    common = Type{promote(common, args[i]->type), {}, common.weak && args[i]->type.weak};
  }
  DType promoted = common.dtype == DType::boolean ? DType::int32 : common.dtype;
  auto floats = [&](DType d) { return dtype_is_float(d) ? d : DType::float32; };
  auto cast_all = [&](DType d) {
    std::vector<Value> out;
    for (const Value& a : args) out.push_back(cast(a, d));
    return out;
  };
  auto need_integers = [&] {
    for (const Value& a : args) {
      if (dtype_is_float(a->type.dtype) && !a->type.weak)
        throw TypeError(name + "() needs integer arguments, got " + std::string(dtype_name(a->type.dtype)));
    }
  };
  switch (fn.kind) {
    case Kind::Float: {
      DType d = floats(promoted);
      return make_call(name, cast_all(d), d);
    }
    case Kind::Predicate:
      return make_call(name, {cast(args[0], floats(args[0]->type.dtype))}, DType::boolean);
    case Kind::FloatToInt32:
      return make_call(name, {cast(args[0], floats(args[0]->type.dtype))}, DType::int32);
    case Kind::FloatToInt64:
      return make_call(name, {cast(args[0], floats(args[0]->type.dtype))}, DType::int64);
    case Kind::FloatInt: {
      if (dtype_is_float(args[1]->type.dtype) && !args[1]->type.weak)
        throw TypeError(name + "() needs an integer exponent");
      DType d = floats(args[0]->type.dtype);
      return make_call(name, {cast(args[0], d), cast(args[1], DType::int32)}, d);
    }
    case Kind::Int: {
      need_integers();
      DType d = dtype_is_float(promoted) ? DType::int32 : promoted;
      return make_call(name, cast_all(d), d);
    }
    case Kind::IntToInt32: {
      need_integers();
      DType d = dtype_is_float(args[0]->type.dtype) ? DType::int32 : args[0]->type.dtype;
      if (d == DType::boolean) d = DType::int32;
      return make_call(name, {cast(args[0], d)}, DType::int32);
    }
    case Kind::Fixed:
      return make_call(name, cast_all(fn.arg), fn.result);
  }
  throw std::logic_error("call: unhandled kind");
}

Value bitcast(const Value& x, DType dtype) {
  DType from = x->type.weak && dtype_is_float(x->type.dtype) ? DType::float32 : x->type.dtype;
  if (x->type.weak && !dtype_is_float(from)) from = dtype_bytes(dtype) == 8 ? DType::int64 : DType::int32;
  if (from == DType::boolean || dtype == DType::boolean || dtype_bytes(from) != dtype_bytes(dtype)) {
    throw ValueError("cannot bitcast " + std::string(dtype_name(from)) + " to " +
                     std::string(dtype_name(dtype)) +
                     ": bitcast needs two types of the same width (bool has none)");
  }
  if (from == dtype) return cast(x, dtype);
  ValueNode node{ValueKind::Call, Type{dtype, x->type.shape}};
  node.name = "bitcast";
  node.operands = {cast(x, from)};
  return std::make_shared<const ValueNode>(std::move(node));
}

}  // namespace nt::ir
