// Element types of tensors: what a level holds when it holds no further level.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nt {

enum class DType {
  bfloat16,
  float16,
  float32,
  float64,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  boolean,
  float8_e5m2,    // torch.float8_e5m2: 1 sign, 5 exponent, 2 mantissa bits
  float8_e4m3fn,  // torch.float8_e4m3fn: 1, 4, 3; no infinities, one NaN a sign
};

std::string_view dtype_name(DType dtype);  // "float32", ...
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_bytes(DType dtype);
bool dtype_is_float(DType dtype);
bool dtype_is_signed(DType dtype);
bool dtype_is_float8(DType dtype);
// A float8 dtype's byte as a float (exact).
float float8_to_float(unsigned char bits, DType dtype);

}  // namespace nt
