// Symbolic hierarchical tensors and their meta-operations.
//
// A Tensor object is one level: a shape (Exprs), one index variable per
// dimension, and an element type that is either the next level or a scalar
// dtype. `dtype` can be replaced, so a meta-operation may act on any level
// (`x.dtype = x.dtype.squeeze(0)`). A tensor made by the user is a *source*:
// its sizes are the symbols `<name>_size_<d>` (or given values) and its strides
// `<name>_stride_<d>`. Meta-operations never change their receiver; each
// returns new levels whose index variables reach the receiver's through the
// index-map graph (index_map.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "symbolic/expr.h"
#include "symbolic/substitute.h"
#include "tensor/dtype.h"
#include "tensor/index_map.h"

namespace nt {

class Tensor;
using TensorPtr = std::shared_ptr<Tensor>;

// What a level holds: nothing said yet, a scalar dtype, or the next level.
using ElementType = std::variant<std::monostate, DType, TensorPtr>;

// How a user describes a source tensor.
struct TensorSpec {
  std::optional<int64_t> ndim;
  std::optional<std::vector<std::optional<Expr>>> shape;  // nullopt entries: symbolic
  ElementType dtype;
  std::optional<Expr> other;                              // value read where masked
  std::optional<int64_t> jagged_dim;                      // the ragged dimension (jagged tensors)
  std::vector<std::optional<SymbolAttrs>> shape_options;  // empty, or one per dim
  bool constexpr_ = false;                                // 0-dim only
  std::optional<Expr> value;                              // a constexpr tensor's value
  std::optional<std::string> name;
};

// Everything one level holds, as it is stored: for pickling (Tensor::fields,
// Tensor::restore) and nothing else.
struct TensorFields {
  std::string name;
  std::vector<Expr> shape;
  std::vector<Expr> indices;
  ElementType dtype;
  TensorPtr source;  // null for a source tensor
  std::optional<Expr> other;
  std::optional<int64_t> jagged_dim;
  bool constexpr_ = false;
  std::optional<Expr> value;
  IndexMapRef index_map;
  bool covers_base = false;
};

// One entry of `t[...]`.
struct IndexItem {
  enum class Kind { Index, Slice, NewAxis, Ellipsis };
  Kind kind = Kind::Index;
  Expr index;                             // Index
  std::optional<Expr> start, stop, step;  // Slice
};

class Tensor : public std::enable_shared_from_this<Tensor> {
 public:
  static TensorPtr create(const TensorSpec& spec);

  const std::string& name() const { return name_; }
  const std::vector<Expr>& shape() const { return shape_; }
  size_t ndim() const { return shape_.size(); }
  const std::vector<Expr>& indices() const { return indices_; }
  const ElementType& dtype() const { return dtype_; }
  void set_dtype(ElementType dtype);
  // Source tensors only (as upstream's premakes use it, before arranging):
  // the sizes replaced, as many as there are dimensions.
  void set_shape(std::vector<Expr> shape);
  TensorPtr source();
  const Tensor& source_ref() const { return source_ ? *source_ : *this; }
  bool is_source() const { return source_ == nullptr; }
  const std::optional<Expr>& other() const { return source_ref().other_; }
  // A jagged source's ragged dimension (upstream's `jagged_dim`): its
  // dimension 0 indexes sequences, each of its own length along this one, whose
  // elements lie at `offsets[b]` on in a values tensor of one dimension fewer
  // (torch's `layout=torch.jagged`). Its size symbol is bound to the longest
  // sequence's length, which the grid counts; lower::lower_access reads it as
  // each sequence's own everywhere else.
  const std::optional<int64_t>& jagged_dim() const { return source_ref().jagged_dim_; }
  bool is_constexpr() const { return constexpr_; }
  const std::optional<Expr>& value() const { return value_; }
  const IndexMapRef& index_map() const { return index_map_; }
  // Does every element of the source lie under some position of this level
  // and the levels below it? Known from how the levels were derived: tile
  // with its default strides and no dilation or floor mode, expand and
  // squeeze of dimensions of size 1, unsqueeze, permute, flatten, ravel, pad
  // by amounts known not negative and full slices keep every element; an
  // integer index, a partial slice, another tiling, a crop or a dimension
  // not known to be of size 1 squeezed or expanded may drop some. False when
  // unknown. A kernel that stores whole blocks of such a
  // tensor writes all of it (a discrete device need not copy it in first).
  bool covers_source() const;

  // Source tensors only: `<name>_size_<d>` / `<name>_stride_<d>` as symbols.
  Expr size_symbol(size_t dim) const;
  Expr stride_symbol(size_t dim) const;

  // This level, its dtype level, and so on down to the innermost.
  std::vector<TensorPtr> levels();
  std::vector<const Tensor*> levels() const;
  TensorPtr innermost();
  // The scalar element type under all levels (monostate if unset).
  ElementType scalar_dtype() const;

  // Meta-operations. `-1` entries have the meanings SPEC.md gives them.
  TensorPtr tile(const std::vector<Expr>& tile_shape,
                 const std::optional<std::vector<Expr>>& strides = std::nullopt,
                 const std::optional<std::vector<Expr>>& dilation = std::nullopt,
                 bool floor_mode = false) const;
  TensorPtr expand(const std::vector<Expr>& shape) const;
  TensorPtr squeeze(const std::vector<int64_t>& dims) const;
  TensorPtr unsqueeze(int64_t dim) const;
  TensorPtr permute(const std::vector<int64_t>& dims) const;
  TensorPtr flatten(std::optional<int64_t> start_dim = std::nullopt,
                    std::optional<int64_t> end_dim = std::nullopt) const;
  TensorPtr ravel() const;
  TensorPtr pad(const std::vector<std::pair<Expr, Expr>>& pads) const;
  TensorPtr index(const std::vector<IndexItem>& items) const;

  // The whole hierarchy (and its source) with symbols replaced (copy.h).
  TensorPtr substituted(const SymbolMap& replacements) const;

  // Pickling: a level's fields as stored, and a blank level that `restore`
  // fills (blank first, so that levels referring to each other can be
  // unpickled in any order).
  TensorFields fields() const;
  static TensorPtr blank();
  void restore(TensorFields fields);

 private:
  friend class HierarchyCopier;
  Tensor() = default;
  // A new level derived from this one (same source, next instance name).
  TensorPtr derive(std::vector<Expr> shape, std::vector<Expr> indices, ElementType dtype,
                   IndexMapRef index_map) const;
  static std::string next_tensor_name();
  int64_t normalize_dim(int64_t dim, int64_t ndim) const;

  std::string name_;
  std::vector<Expr> shape_;
  std::vector<Expr> indices_;
  ElementType dtype_;
  TensorPtr source_;  // null for a source tensor
  std::optional<Expr> other_;
  std::optional<int64_t> jagged_dim_;
  bool constexpr_ = false;
  std::optional<Expr> value_;
  IndexMapRef index_map_;
  // Do this level's positions, with those of the level it was derived from,
  // reach every element of that level's base (a source covers itself)?
  bool covers_base_ = true;
};

// A fresh index variable (`ninetoothed_index_<n>`), unique in the process.
Expr fresh_index_var();
// Is `e` an index variable (`ninetoothed_index_<n>`)?
bool is_index_var(const Expr& e);

}  // namespace nt
