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

// `own_programs`: the parameter's outermost shape is not the grid's (upstream allows that): its
// program indices are ProgramLayout::own_program_indices(), and its accesses are masked on
// programs past its own count (nt_pid_flat < the count of its outermost shape).
TensorAccess lower_access(const ir::Param& param, const ProgramLayout& layout,
                          const std::vector<Expr>& middle_indices, const BoundsEnv& env,
                          bool own_programs = false);

// Jagged sources (Tensor::jagged_dim): element (b, ..., j, ...) lies at
// `values + (seq_start + j) * stride_j + ...`, and exists where j < seq_len, two
// values of sequence b a kernel reads from its offsets (offsets[b], offsets[b + 1]
// - offsets[b]) once per program. lower_access's offset, coordinates and conditions
// use them by these names; its size symbol in the jagged dimension, the longest
// sequence's length, stays in the outermost shape (the grid) only.
Expr jagged_seq_start(const Tensor& source);
Expr jagged_seq_len(const Tensor& source);
// The sequence b a program of `param` (over a jagged source) reads: its
// coordinate in dimension 0, which must be one for the whole program (every
// element, every middle index); a ValueError where it is not.
Expr jagged_sequence(const ir::Param& param, const ProgramLayout& layout, const BoundsEnv& env,
                     bool own_programs = false);

}  // namespace nt::lower
