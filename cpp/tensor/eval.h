// Numeric evaluation of an arranged tensor's index map.
//
// In: an arranged tensor and values for its symbols (sizes, strides, block
// sizes). Out: for every element of the hierarchy (shape: all levels' shapes
// joined, outermost first) the flat offset of the source element it reads,
// or -1 where it is masked. Offsets use the source strides given in the
// substitutions, C-contiguous strides of the source shape otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "symbolic/substitute.h"
#include "tensor/tensor.h"

namespace nt {

struct OffsetArray {
  std::vector<int64_t> shape;
  std::vector<int64_t> offsets;  // row-major over `shape`
};

OffsetArray evaluate_offsets(const Tensor& arranged, const SymbolMap& substitutions);

}  // namespace nt
