// Block operations of the Triton language beyond elementwise math: shapes
// rearranged (reshape, permute, flip, cat, join, split), reductions and scans
// with a combine function, sort and top-k, gather, histogram.
//
// In: blocks (and, for combine, the combine function's results traced over
// CombineArg placeholders). Out: typed Values; wrong shapes or dims raise
// ValueError/IndexError/TypeError with a message for the user. Rearranged
// blocks are read element by element where they are used (no copy);
// combines, sorts, gathers and histograms are computed into private arrays
// by the code generator (codegen/c/block_ops.h).
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"

namespace nt::ir {

Value reshape(const Value& x, const std::vector<Expr>& shape);
Value permute(const Value& x, const std::vector<int>& dims);
Value flip(const Value& x, int dim);
Value cat(const Value& a, const Value& b);   // along dim 0
Value join(const Value& a, const Value& b);  // a new last dim of size 2
Value take(const Value& x, int k);           // element k of the last dim (of size 2)

// A scalar placeholder: argument `index` of a combine function.
Value combine_arg(int index, DType dtype);
// Reductions (scan = false) or inclusive scans of the `inputs` (one shape)
// along `axis` (nullopt: everything, reductions only) with the combine
// function whose `results` are expressions over combine_arg(0 .. 2n - 1):
// the first n the accumulated values, the next n the new elements.
std::vector<Value> combine(const std::vector<Value>& inputs, const std::vector<Value>& results,
                           std::optional<int> axis, bool scan, bool keep_dims, bool reverse);
// `x` sorted along `dim`; with k >= 0 its k largest (descending) or smallest.
Value sort(const Value& x, int dim, bool descending, const std::optional<Expr>& k = std::nullopt);
Value gather(const Value& src, const Value& index, int axis);
Value histogram(const Value& x, int bins, const Value& mask);

}  // namespace nt::ir
