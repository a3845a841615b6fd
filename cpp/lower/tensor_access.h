// TensorAccess: an arranged tensor's block access as index arithmetic.
//
// In: a kernel parameter (an arranged tensor), the program layout, and the
// indices of its middle level (for `p[k]`; none for two levels). Out: the
// flat element offset into the source (sum of coordinate * stride, over the
// source's stride symbols) and the mask conditions, as Exprs over the
// program-id digits, the middle indices, the block's element indices
// `nt_e_<d>` (0 <= nt_e_d < block size d), sizes and constexpr symbols --
// simplified under those bounds, with conditions proved true dropped.
//
// For the mask-free fast path, conditions are split: a *hoistable* condition
// is monotone in every element index, so it holds for the whole block exactly
// when it holds at one corner; block_test() gives that corner condition.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/program_layout.h"
#include "symbolic/simplify.h"

namespace nt::lower {

// The element index `d` of a block as a symbol.
Expr element_index(size_t d);

struct TensorAccess {
  Expr offset;                    // in elements, from the source's first element
  std::vector<Expr> coordinates;  // per source dimension
  std::vector<Expr> hoistable;    // monotone in the element indices
  std::vector<Expr> per_element;  // the other conditions
  std::vector<Expr> block_test;   // per hoistable condition: it holds over the whole block
  std::vector<Expr> block_shape;
  bool never = false;  // a condition is false everywhere

  // All conditions (for the masked path).
  std::vector<Expr> conditions() const;
  // The access at element indices `index` (Exprs replacing nt_e_d).
  Expr offset_at(const std::vector<Expr>& index) const;
  Expr coordinate_at(size_t dim, const std::vector<Expr>& index) const;
  std::vector<Expr> conditions_at(const std::vector<Expr>& index, bool fast) const;
};

// Bounds of element indices of a block with this shape.
void add_element_bounds(BoundsEnv& env, const std::vector<Expr>& block_shape);

TensorAccess lower_access(const ir::Param& param, const ProgramLayout& layout,
                          const std::vector<Expr>& middle_indices, const BoundsEnv& env);

}  // namespace nt::lower
