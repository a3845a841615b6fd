// Tensor-core dots' operands as the emitter stages them in local memory (emitter_mma_staging.cpp,
// emitter_work_group_dot.cpp): the type of a dot, and the C of a staged element.
#pragma once

#include <string>

#include "ir/ir.h"

namespace nt::codegen {

// The type of a tensor-core dot ("f16", "bf16", "tf32", "tf32x3": its operands and precision), or "".
std::string mma_type(const ir::Value& dot);
// The C type of a staged float16, bfloat16 or float32 element (16-bit ones as their bits), and its
// size in bytes.
std::string staged_type(DType dtype);
int staged_size(DType dtype);
// A statement storing the compute-type `value` at `at` of `array` (16-bit types rounded to nearest
// even); a staged element as the compute type.
std::string staged_store(DType dtype, const std::string& array, const std::string& at,
                         const std::string& value);
std::string staged_load(DType dtype, const std::string& array, const std::string& at);

}  // namespace nt::codegen
