// Reductions as C: the start of a fold, one step of it, and the cross-lane halves of a
// work-group's reductions, written to a CodeWriter (the emitter decides which reductions and
// where their values lie: emitter_materialize.cpp, emitter_work_group.cpp).
#pragma once

#include <string>

#include "codegen/c/code_writer.h"
#include "ir/ir.h"
#include "tensor/dtype.h"

namespace nt::codegen {

using ir::ReduceFn;

// The start of a fold over elements of `in`.
std::string reduce_init(ReduceFn fn, DType in);
// One step of a sum, max or min fold (`f`: of floats), as C.
std::string combine_c(ReduceFn fn, bool f, const std::string& acc, const std::string& value);
// One step of a work-group reduction's tree: `mine` folds in its partner's `theirs`; for argmax
// and argmin (`best_mine` not empty) the indices follow the values, of equal values the first.
void write_combine_partner(CodeWriter& out, ReduceFn fn, bool f, const std::string& mine,
                           const std::string& theirs, const std::string& best_mine,
                           const std::string& best_theirs);

// The rows of a block in tile layout `layout` reduced across the work-items that hold them, once
// each work-item has folded its slots into `acc` (and, for argmax and argmin, their indices into
// `best`): shuffles among a warp's lanes where `span` names the span variable (warps exchange
// registers), then a tree in the local arrays `parts` (and `bests`), one row's result written by
// its first work-item into `result` (a scalar, or an array indexed by row) in `result_type`, and a
// barrier after (or, `held`, by every work-item into its own slots).
// `tx`, `ty`: the lane coordinates' names (declared before); `s`: the tree's step's.
// `mma_shape`: the block's shape is a dot's, so that its layout may be an mma one.
struct RowCombine {
  int layout = 0;
  ReduceFn fn = ReduceFn::Sum;
  bool is_float = false, arg = false;
  std::string acc, best, parts, bests;
  std::string tx, ty, s, span;
  bool mma_shape = false;
  std::string result;
  bool scalar = false;
  std::string result_type;
  // `result` is a private array in the slice layout of the block's rows (emitter_row_slices.cpp; not
  // for argmax and argmin): every work-item of a row writes the row's result into its slot nt_r,
  // with no barrier after unless the tree ran.
  bool held = false;
};
void write_row_combine(CodeWriter& out, const RowCombine& r);

}  // namespace nt::codegen
