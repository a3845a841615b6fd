#include "tensor/dtype.h"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace nt {

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int bytes;
};

constexpr std::array<DTypeInfo, 15> kDTypes = {{
    {DType::bfloat16, "bfloat16", 2},
    {DType::float16, "float16", 2},
    {DType::float32, "float32", 4},
    {DType::float64, "float64", 8},
    {DType::int8, "int8", 1},
    {DType::int16, "int16", 2},
    {DType::int32, "int32", 4},
    {DType::int64, "int64", 8},
    {DType::uint8, "uint8", 1},
    {DType::uint16, "uint16", 2},
    {DType::uint32, "uint32", 4},
    {DType::uint64, "uint64", 8},
    {DType::boolean, "bool", 1},
    {DType::float8_e5m2, "float8_e5m2", 1},
    {DType::float8_e4m3fn, "float8_e4m3fn", 1},
}};

}  // namespace

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].name; }

int dtype_bytes(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].bytes; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

bool dtype_is_float8(DType dtype) { return dtype == DType::float8_e5m2 || dtype == DType::float8_e4m3fn; }

bool dtype_is_float(DType dtype) {
  return dtype == DType::bfloat16 || dtype == DType::float16 || dtype == DType::float32 ||
         dtype == DType::float64 || dtype_is_float8(dtype);
}

float float8_to_float(unsigned char bits, DType dtype) {
  const bool e5m2 = dtype == DType::float8_e5m2;
  const int mantissa_bits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  const int exponent = (bits & 0x7f) >> mantissa_bits, mantissa = bits & ((1 << mantissa_bits) - 1);
  const float sign = bits & 0x80 ? -1.0f : 1.0f;
  if (e5m2 && exponent == 31) return mantissa ? std::nanf("") : sign * std::numeric_limits<float>::infinity();
  if (!e5m2 && exponent == 15 && mantissa == 7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits);
  return sign *
         std::ldexp(static_cast<float>(mantissa + (1 << mantissa_bits)), exponent - bias - mantissa_bits);
}

bool dtype_is_signed(DType dtype) {
  return dtype_is_float(dtype) || dtype == DType::int8 || dtype == DType::int16 || dtype == DType::int32 ||
         dtype == DType::int64;
}

}  // namespace nt
