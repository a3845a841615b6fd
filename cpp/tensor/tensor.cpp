#include "tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/simplify.h"

namespace nt {

namespace {

std::atomic<int64_t> g_tensor_count{0};
std::atomic<int64_t> g_index_count{0};

constexpr const char* kIndexPrefix = "ninetoothed_index_";

// Is `size` provably not 1? (Then it cannot be squeezed or expanded.) Sizes
// that might be 1 are taken on the user's word.
bool known_not_one(const Expr& size) { return prove(ne(size, 1)).value_or(false); }

std::string describe(const std::vector<Expr>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + to_python(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::vector<Expr> fresh_index_vars(size_t count) {
  std::vector<Expr> vars;
  for (size_t i = 0; i < count; ++i) vars.push_back(fresh_index_var());
  return vars;
}

// Bindings `old_i := new_j` for dimensions a meta-operation keeps as they are.
IndexBinding keep(const Expr& old_index, const Expr& new_index, const Expr& size) {
  return {old_index->name, new_index, size, false};
}

void require_positive(const Expr& value, const char* what, size_t dim) {
  if (value.is_int() && value->int_value <= 0) {
    throw ValueError(std::string(what) + " of dimension " + std::to_string(dim) +
                     " must be positive (or -1), got " + to_python(value));
  }
}

}  // namespace

Expr fresh_index_var() { return var(kIndexPrefix + std::to_string(g_index_count++)); }

bool is_index_var(const Expr& e) { return e.is_var() && e->name.rfind(kIndexPrefix, 0) == 0; }

IndexMapRef make_index_map_node(std::vector<IndexBinding> bindings, std::vector<IndexMapRef> inputs) {
  auto node = std::make_shared<IndexMapNode>();
  node->bindings = std::move(bindings);
  for (auto& input : inputs) {
    if (input && std::find(node->inputs.begin(), node->inputs.end(), input) == node->inputs.end())
      node->inputs.push_back(std::move(input));
  }
  return node;
}

std::string Tensor::next_tensor_name() { return "ninetoothed_tensor_" + std::to_string(g_tensor_count++); }

TensorPtr Tensor::create(const TensorSpec& spec) {
  if (!spec.ndim && !spec.shape) throw ValueError("Tensor needs `ndim` or `shape`");
  size_t ndim = spec.shape ? spec.shape->size() : 0;
  if (spec.ndim) {
    if (*spec.ndim < 0) throw ValueError("Tensor `ndim` must be >= 0, got " + std::to_string(*spec.ndim));
    if (spec.shape && static_cast<size_t>(*spec.ndim) != ndim) {
      throw ValueError("Tensor `ndim` is " + std::to_string(*spec.ndim) + " but `shape` has " +
                       std::to_string(ndim) + " entries");
    }
    ndim = static_cast<size_t>(*spec.ndim);
  }
  if (spec.constexpr_ && ndim != 0) {
    throw ValueError("only 0-dim tensors can be constexpr; this one has " + std::to_string(ndim) + " dims");
  }
  if (!spec.shape_options.empty() && spec.shape_options.size() != ndim) {
    throw ValueError("`shape_options` has " + std::to_string(spec.shape_options.size()) +
                     " entries for a tensor with " + std::to_string(ndim) + " dims");
  }
  auto tensor = std::shared_ptr<Tensor>(new Tensor());
  tensor->name_ = spec.name ? *spec.name : next_tensor_name();
  if (spec.name) ++g_tensor_count;  // every tensor counts, as upstream
  for (size_t d = 0; d < ndim; ++d) {
    if (spec.shape && (*spec.shape)[d]) {
      const Expr& size = *(*spec.shape)[d];
      if (size.is_int() && size->int_value < 0)
        throw ValueError("size of dimension " + std::to_string(d) + " must be >= 0, got " + to_python(size));
      tensor->shape_.push_back(size);
      continue;
    }
    SymbolAttrs attrs;
    if (!spec.shape_options.empty() && spec.shape_options[d]) attrs = *spec.shape_options[d];
    if (!attrs.lower_bound) attrs.lower_bound = 1;  // a launched tensor has no empty dims
    tensor->shape_.push_back(var(tensor->name_ + "_size_" + std::to_string(d), attrs));
  }
  tensor->indices_ = fresh_index_vars(ndim);
  tensor->dtype_ = spec.dtype;
  tensor->other_ = spec.other;
  if (spec.jagged_dim && ndim < 2)
    throw ValueError("a jagged tensor has at least 2 dimensions (sequences, then theirs); this one has " +
                     std::to_string(ndim));
  if (spec.jagged_dim && (*spec.jagged_dim < 1 || *spec.jagged_dim >= static_cast<int64_t>(ndim))) {
    throw ValueError("`jagged_dim` must be a dimension after the first (1 to " + std::to_string(ndim - 1) +
                     "; dimension 0 indexes the sequences), got " + std::to_string(*spec.jagged_dim));
  }
  if (spec.jagged_dim && spec.shape && (*spec.shape)[static_cast<size_t>(*spec.jagged_dim)]) {
    throw ValueError(
        "a jagged tensor's size in its jagged dimension is each sequence's length: leave it None "
        "in `shape`");
  }
  tensor->jagged_dim_ = spec.jagged_dim;
  tensor->constexpr_ = spec.constexpr_;
  tensor->value_ = spec.value;
  return tensor;
}

Expr Tensor::size_symbol(size_t dim) const {
  return var(source_ref().name_ + "_size_" + std::to_string(dim));
}

Expr Tensor::stride_symbol(size_t dim) const {
  return var(source_ref().name_ + "_stride_" + std::to_string(dim));
}

void Tensor::set_dtype(ElementType dtype) {
  if (auto* level = std::get_if<TensorPtr>(&dtype)) {
    if (!*level) throw ValueError("dtype must be a Tensor or a dtype, got null");
    for (const Tensor* inner : std::as_const(**level).levels()) {
      if (inner == this) throw ValueError("a tensor cannot be its own dtype");
    }
  }
  dtype_ = std::move(dtype);
}

void Tensor::set_shape(std::vector<Expr> shape) {
  if (!is_source()) {
    throw ValueError("only a source tensor's shape can be set (before it is arranged); '" + name_ +
                     "' is a level of an arranged tensor");
  }
  if (shape.size() != shape_.size()) {
    throw ValueError("'" + name_ + "' has " + std::to_string(shape_.size()) +
                     " dimensions; its shape can be set to " + std::to_string(shape_.size()) +
                     " sizes, not " + std::to_string(shape.size()));
  }
  if (jagged_dim_ && !shape[static_cast<size_t>(*jagged_dim_)].is_var()) {
    throw ValueError("'" + name_ + "' is jagged: its size in dimension " + std::to_string(*jagged_dim_) +
                     " is each sequence's length, a symbol, not " +
                     to_python(shape[static_cast<size_t>(*jagged_dim_)]));
  }
  for (const Expr& size : shape) {
    if (auto n = size.as_int(); n && *n < 0)
      throw ValueError("a size must not be negative, got " + std::to_string(*n));
  }
  shape_ = std::move(shape);
}

TensorPtr Tensor::source() { return source_ ? source_ : shared_from_this(); }

std::vector<TensorPtr> Tensor::levels() {
  std::vector<TensorPtr> result{shared_from_this()};
  while (auto* next = std::get_if<TensorPtr>(&result.back()->dtype_)) result.push_back(*next);
  return result;
}

std::vector<const Tensor*> Tensor::levels() const {
  std::vector<const Tensor*> result{this};
  while (auto* next = std::get_if<TensorPtr>(&result.back()->dtype_)) result.push_back(next->get());
  return result;
}

TensorPtr Tensor::innermost() { return levels().back(); }

ElementType Tensor::scalar_dtype() const { return levels().back()->dtype_; }

TensorPtr Tensor::derive(std::vector<Expr> shape, std::vector<Expr> indices, ElementType dtype,
                         IndexMapRef index_map) const {
  auto tensor = std::shared_ptr<Tensor>(new Tensor());
  tensor->name_ = next_tensor_name();
  tensor->indices_ = std::move(indices);
  tensor->shape_ = std::move(shape);
  tensor->dtype_ = std::move(dtype);
  tensor->source_ = source_ ? source_ : std::const_pointer_cast<Tensor>(shared_from_this());
  tensor->index_map_ = std::move(index_map);
  tensor->covers_base_ = covers_base_;
  return tensor;
}

bool Tensor::covers_source() const {
  for (const Tensor* level : levels())
    if (!level->covers_base_) return false;
  return true;
}

int64_t Tensor::normalize_dim(int64_t dim, int64_t ndim) const {
  if (dim < -ndim || dim >= ndim) {
    throw IndexError("dimension out of range (expected to be in range of [" + std::to_string(-ndim) + ", " +
                     std::to_string(ndim - 1) + "], but got " + std::to_string(dim) + ")");
  }
  return dim < 0 ? dim + ndim : dim;
}

TensorPtr Tensor::tile(const std::vector<Expr>& tile_shape, const std::optional<std::vector<Expr>>& strides,
                       const std::optional<std::vector<Expr>>& dilation, bool floor_mode) const {
  auto check_length = [&](size_t length, const char* what) {
    if (length != ndim()) {
      throw ValueError(std::string("tile: ") + what + " has " + std::to_string(length) +
                       " entries, but the tensor has " + std::to_string(ndim()) + " dims " +
                       describe(shape_));
    }
  };
  check_length(tile_shape.size(), "tile_shape");
  if (strides) check_length(strides->size(), "strides");
  if (dilation) check_length(dilation->size(), "dilation");

  std::vector<Expr> outer_shape, inner_shape;
  bool covering = !floor_mode;  // strides of one tile and no dilation reach every element
  std::vector<Expr> outer_indices = fresh_index_vars(ndim());
  std::vector<Expr> inner_indices = fresh_index_vars(ndim());
  std::vector<IndexBinding> bindings;
  for (size_t d = 0; d < ndim(); ++d) {
    Expr tile_size = tile_shape[d].is_int(-1) ? shape_[d] : tile_shape[d];
    require_positive(tile_size, "tile size", d);
    Expr stride = (!strides || (*strides)[d].is_int(-1)) ? tile_size : (*strides)[d];
    require_positive(stride, "tile stride", d);
    Expr spacing = dilation ? (*dilation)[d] : Expr(1);
    require_positive(spacing, "tile dilation", d);
    covering = covering && spacing.is_int(1) && equal(stride, tile_size);

    Expr span = sub(sub(shape_[d], mul(spacing, sub(tile_size, 1))), 1);
    Expr outer_size =
        floor_mode ? add(floordiv(span, stride), 1) : add(floordiv(sub(add(span, stride), 1), stride), 1);
    if (outer_size.is_int() && outer_size->int_value < 0) outer_size = 0;  // no whole tile fits
    outer_shape.push_back(outer_size);
    inner_shape.push_back(tile_size);
    Expr value = add(mul(outer_indices[d], stride), mul(inner_indices[d], spacing));
    bindings.push_back({indices_[d]->name, value, shape_[d], true});
  }
  IndexMapRef node = make_index_map_node(std::move(bindings), {index_map_});
  TensorPtr inner = derive(inner_shape, inner_indices, dtype_, node);
  TensorPtr outer = derive(outer_shape, outer_indices, inner, node);
  inner->covers_base_ = outer->covers_base_ = covers_base_ && covering;
  return outer;
}

TensorPtr Tensor::expand(const std::vector<Expr>& shape) const {
  if (shape.size() != ndim()) {
    throw ValueError("expand: the new shape " + describe(shape) + " has " + std::to_string(shape.size()) +
                     " entries, but the tensor has " + std::to_string(ndim()) + " dims " + describe(shape_));
  }
  std::vector<Expr> new_shape;
  std::vector<Expr> new_indices = fresh_index_vars(ndim());
  std::vector<IndexBinding> bindings;
  bool covering = true;  // a dimension not known to be of size 1 may lose all but its first element
  for (size_t d = 0; d < ndim(); ++d) {
    const Expr& size = shape[d];
    if (size.is_int(-1) || equal(size, shape_[d])) {
      new_shape.push_back(shape_[d]);
      bindings.push_back(keep(indices_[d], new_indices[d], shape_[d]));
      continue;
    }
    if (size.is_int() && size->int_value < 0) {
      throw ValueError("expand: size of dimension " + std::to_string(d) + " must be >= 0 or -1, got " +
                       to_python(size));
    }
    if (known_not_one(shape_[d])) {
      throw ValueError("expand: dimension " + std::to_string(d) + " has size " + to_python(shape_[d]) +
                       "; only dimensions of size 1 can be expanded (to " + to_python(size) + ")");
    }
    new_shape.push_back(size);
    bindings.push_back({indices_[d]->name, Expr(0), shape_[d], false});
    covering = covering && shape_[d].is_int(1);
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  result->covers_base_ = covers_base_ && covering;
  return result;
}

TensorPtr Tensor::squeeze(const std::vector<int64_t>& dims) const {
  std::vector<bool> removed(ndim(), false);
  bool covering = true;  // a dimension not known to be of size 1 may lose all but its first element
  for (int64_t dim : dims) {
    size_t d = static_cast<size_t>(normalize_dim(dim, static_cast<int64_t>(ndim())));
    if (known_not_one(shape_[d])) {
      throw ValueError("squeeze: dimension " + std::to_string(dim) + " has size " + to_python(shape_[d]) +
                       ", not 1");
    }
    removed[d] = true;
    covering = covering && shape_[d].is_int(1);
  }
  std::vector<Expr> new_shape, new_indices;
  std::vector<IndexBinding> bindings;
  for (size_t d = 0; d < ndim(); ++d) {
    if (removed[d]) {
      bindings.push_back({indices_[d]->name, Expr(0), shape_[d], false});
      continue;
    }
    new_shape.push_back(shape_[d]);
    new_indices.push_back(fresh_index_var());
    bindings.push_back(keep(indices_[d], new_indices.back(), shape_[d]));
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  result->covers_base_ = covers_base_ && covering;
  return result;
}

TensorPtr Tensor::unsqueeze(int64_t dim) const {
  auto position = static_cast<size_t>(normalize_dim(dim, static_cast<int64_t>(ndim()) + 1));
  std::vector<Expr> new_shape = shape_;
  new_shape.insert(new_shape.begin() + static_cast<std::ptrdiff_t>(position), Expr(1));
  std::vector<Expr> new_indices = fresh_index_vars(ndim() + 1);
  std::vector<IndexBinding> bindings;
  for (size_t d = 0; d < ndim(); ++d) {
    bindings.push_back(keep(indices_[d], new_indices[d < position ? d : d + 1], shape_[d]));
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  return result;
}

TensorPtr Tensor::permute(const std::vector<int64_t>& dims) const {
  auto n = static_cast<int64_t>(ndim());
  std::vector<size_t> order;  // `dims` with negative dims counted from the end, as in torch
  std::vector<bool> seen(ndim(), false);
  bool valid = dims.size() == ndim();
  for (int64_t dim : dims) {
    if (!valid) break;
    int64_t d = dim < 0 ? dim + n : dim;
    valid = d >= 0 && d < n && !seen[static_cast<size_t>(d)];
    if (valid) {
      seen[static_cast<size_t>(d)] = true;
      order.push_back(static_cast<size_t>(d));
    }
  }
  if (!valid) {
    std::string text;
    for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
    throw ValueError("permute: (" + text + ") is not a permutation of the " + std::to_string(ndim()) +
                     " dims of a tensor of shape " + describe(shape_));
  }
  std::vector<Expr> new_shape;
  std::vector<Expr> new_indices = fresh_index_vars(ndim());
  std::vector<IndexBinding> bindings;
  for (size_t j = 0; j < ndim(); ++j) {
    size_t d = order[j];
    new_shape.push_back(shape_[d]);
    bindings.push_back(keep(indices_[d], new_indices[j], shape_[d]));
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  return result;
}

TensorPtr Tensor::flatten(std::optional<int64_t> start_dim, std::optional<int64_t> end_dim) const {
  auto n = static_cast<int64_t>(ndim());
  if (n == 0) throw ValueError("flatten: a 0-dim tensor has no dims to flatten");
  int64_t start = start_dim ? normalize_dim(*start_dim, n) : 0;
  int64_t end = n;
  if (end_dim) {
    // end_dim is exclusive, so `n` itself is allowed.
    if (*end_dim < -n || *end_dim > n) {
      throw IndexError("flatten: end_dim out of range (expected to be in range of [" + std::to_string(-n) +
                       ", " + std::to_string(n) + "], but got " + std::to_string(*end_dim) + ")");
    }
    end = *end_dim < 0 ? *end_dim + n : *end_dim;
  }
  if (start >= end) {
    throw ValueError("flatten: start_dim (" + std::to_string(start) + ") must come before end_dim (" +
                     std::to_string(end) + ", exclusive)");
  }
  auto s = static_cast<size_t>(start);
  auto e = static_cast<size_t>(end);
  Expr flat_size = shape_[s];
  for (size_t d = s + 1; d < e; ++d) flat_size = mul(flat_size, shape_[d]);

  std::vector<Expr> new_shape(shape_.begin(), shape_.begin() + start);
  new_shape.push_back(flat_size);
  new_shape.insert(new_shape.end(), shape_.begin() + end, shape_.end());
  std::vector<Expr> new_indices = fresh_index_vars(new_shape.size());
  const Expr& flat = new_indices[s];

  std::vector<IndexBinding> bindings;
  for (size_t d = 0; d < s; ++d) bindings.push_back(keep(indices_[d], new_indices[d], shape_[d]));
  for (size_t d = s; d < e; ++d) {
    Expr divisor = 1;
    for (size_t k = d + 1; k < e; ++k) divisor = mul(divisor, shape_[k]);
    Expr value = floordiv(flat, divisor);
    if (d > s) value = mod(value, shape_[d]);
    bindings.push_back({indices_[d]->name, value, shape_[d], false});
  }
  for (size_t d = e; d < ndim(); ++d) {
    bindings.push_back(keep(indices_[d], new_indices[d - e + s + 1], shape_[d]));
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  return result;
}

TensorPtr Tensor::ravel() const {
  std::vector<Expr> new_shape, new_indices;
  std::vector<IndexBinding> bindings;
  std::vector<IndexMapRef> inputs;
  for (const Tensor* level : levels()) {
    for (size_t d = 0; d < level->ndim(); ++d) {
      new_shape.push_back(level->shape_[d]);
      new_indices.push_back(fresh_index_var());
      bindings.push_back(keep(level->indices_[d], new_indices.back(), level->shape_[d]));
    }
    inputs.push_back(level->index_map_);
  }
  TensorPtr result = derive(new_shape, new_indices, scalar_dtype(),
                            make_index_map_node(std::move(bindings), std::move(inputs)));
  result->name_ = source_ref().name_;  // as upstream: a raveled tensor takes its source's name
  result->covers_base_ = covers_source();
  return result;
}

TensorPtr Tensor::pad(const std::vector<std::pair<Expr, Expr>>& pads) const {
  if (pads.size() != ndim()) {
    throw ValueError("pad: got " + std::to_string(pads.size()) + " (before, after) pairs for a tensor with " +
                     std::to_string(ndim()) + " dims " + describe(shape_));
  }
  std::vector<Expr> new_shape;
  std::vector<Expr> new_indices = fresh_index_vars(ndim());
  std::vector<IndexBinding> bindings;
  bool covering = true;  // a negative (or unknown) pad crops
  for (size_t d = 0; d < ndim(); ++d) {
    const auto& [before, after] = pads[d];
    covering =
        covering && before.is_int() && before->int_value >= 0 && after.is_int() && after->int_value >= 0;
    Expr size = add(add(shape_[d], before), after);
    if (size.is_int() && size->int_value < 0) {
      throw ValueError("pad: dimension " + std::to_string(d) + " would have negative size " +
                       to_python(size));
    }
    new_shape.push_back(size);
    bindings.push_back({indices_[d]->name, sub(new_indices[d], before), shape_[d], true});
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  result->covers_base_ = covers_base_ && covering;
  return result;
}

namespace {

struct SliceBounds {
  Expr start;
  Expr length;
  int64_t step;
};

// Python's `slice.indices` for a known size; the same without clamping for a
// symbolic one (indices past the end are then masked by the range checks).
SliceBounds slice_bounds(const IndexItem& item, const Expr& size, size_t dim) {
  int64_t step = 1;
  if (item.step) {
    if (!item.step->is_int()) {
      throw ValueError("slice step of dimension " + std::to_string(dim) + " must be an integer");
    }
    step = (*item.step)->int_value;
  }
  if (step == 0) throw ValueError("slice step cannot be zero");
  auto is_int_or_none = [](const std::optional<Expr>& bound) { return !bound || bound->is_int(); };
  if (size.is_int() && is_int_or_none(item.start) && is_int_or_none(item.stop)) {
    int64_t n = size->int_value;
    int64_t lower = step < 0 ? -1 : 0;
    int64_t upper = step < 0 ? n - 1 : n;
    auto clamp = [&](const std::optional<Expr>& bound, int64_t fallback) {
      if (!bound) return fallback;
      int64_t value = (*bound)->int_value;
      if (value < 0) return std::max(value + n, lower);
      return std::min(value, upper);
    };
    int64_t start = clamp(item.start, step < 0 ? upper : lower);
    int64_t stop = clamp(item.stop, step < 0 ? lower : upper);
    int64_t length = 0;
    if (step < 0 && stop < start) length = (start - stop - 1) / (-step) + 1;
    if (step > 0 && start < stop) length = (stop - start - 1) / step + 1;
    return {Expr(start), Expr(length), step};
  }
  auto absolute = [&](const std::optional<Expr>& bound, Expr fallback) {
    if (!bound) return fallback;
    if (bound->is_int() && (*bound)->int_value < 0) return sub(size, -(*bound)->int_value);
    return *bound;
  };
  Expr start = absolute(item.start, step < 0 ? sub(size, 1) : Expr(0));
  Expr stop = absolute(item.stop, step < 0 ? Expr(-1) : size);
  Expr length = step == 1  ? sub(stop, start)
                : step > 0 ? floordiv(add(sub(stop, start), step - 1), step)
                           : floordiv(add(sub(start, stop), -step - 1), -step);
  return {start, length, step};
}

}  // namespace

TensorPtr Tensor::index(const std::vector<IndexItem>& items) const {
  size_t consumed = 0;
  size_t ellipses = 0;
  for (const auto& item : items) {
    if (item.kind == IndexItem::Kind::Index || item.kind == IndexItem::Kind::Slice) ++consumed;
    if (item.kind == IndexItem::Kind::Ellipsis) ++ellipses;
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > ndim()) {
    throw IndexError("too many indices for tensor: tensor is " + std::to_string(ndim()) +
                     "-dimensional, but " + std::to_string(consumed) + " were indexed");
  }
  IndexItem full_slice;
  full_slice.kind = IndexItem::Kind::Slice;
  std::vector<IndexItem> expanded;
  for (const auto& item : items) {
    if (item.kind != IndexItem::Kind::Ellipsis) {
      expanded.push_back(item);
      continue;
    }
    for (size_t k = consumed; k < ndim(); ++k) expanded.push_back(full_slice);
    consumed = ndim();
  }
  for (size_t k = consumed; k < ndim(); ++k) expanded.push_back(full_slice);

  std::vector<Expr> new_shape, new_indices;
  std::vector<IndexBinding> bindings;
  bool covering = true;  // only full slices and new axes keep every element
  size_t d = 0;
  for (const auto& item : expanded) {
    if (item.kind == IndexItem::Kind::NewAxis) {
      new_shape.push_back(Expr(1));
      new_indices.push_back(fresh_index_var());
      continue;
    }
    const Expr& size = shape_[d];
    if (item.kind == IndexItem::Kind::Index) {
      Expr position = item.index;
      if (position.is_int()) {
        int64_t value = position->int_value;
        if (size.is_int() && (value < -size->int_value || value >= size->int_value)) {
          throw IndexError("index " + std::to_string(value) + " is out of bounds for dimension " +
                           std::to_string(d) + " with size " + to_python(size));
        }
        if (value < 0) position = sub(size, -value);
      }
      bindings.push_back({indices_[d]->name, position, size, true});
      covering = false;
    } else {
      SliceBounds bounds = slice_bounds(item, size, d);
      covering = covering && !item.start && !item.stop && (!item.step || item.step->is_int(1));
      new_shape.push_back(bounds.length);
      new_indices.push_back(fresh_index_var());
      Expr value = add(bounds.start, mul(new_indices.back(), bounds.step));
      bindings.push_back({indices_[d]->name, value, size, true});
    }
    ++d;
  }
  TensorPtr result =
      derive(new_shape, new_indices, dtype_, make_index_map_node(std::move(bindings), {index_map_}));
  result->covers_base_ = covers_base_ && covering;
  return result;
}

}  // namespace nt
