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
};

std::string_view dtype_name(DType dtype);  // "float32", ...
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_bytes(DType dtype);
bool dtype_is_float(DType dtype);
bool dtype_is_signed(DType dtype);

}  // namespace nt
