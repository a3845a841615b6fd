#include "ir/block_ops.h"

#include <algorithm>
#include <set>

#include "ir/builder.h"
#include "support/errors.h"
#include "symbolic/simplify.h"

namespace nt::ir {

namespace {

Value make(ValueNode node) { return std::make_shared<const ValueNode>(std::move(node)); }

int dim_of(int dim, size_t ndim, const char* what) {
  int n = static_cast<int>(ndim);
  if (dim < -n || dim >= n) {
    throw IndexError(std::string(what) + ": dim " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(n) + "-d block");
  }
  return dim < 0 ? dim + n : dim;
}

Expr numel(const std::vector<Expr>& shape) {
  Expr n = Expr(1);
  for (const Expr& s : shape) n = mul(n, s);
  return n;
}

Value concrete(const Value& x) {
  // A Python number inside a block operation takes its default dtype.
  return x->type.weak ? cast(x, x->type.dtype) : x;
}

Value rearrange(RearrangeFn fn, std::vector<Value> operands, std::vector<int> ints, Type type) {
  ValueNode node{ValueKind::Rearrange, std::move(type)};
  node.op = static_cast<int>(fn);
  node.operands = std::move(operands);
  node.ints = std::move(ints);
  return make(std::move(node));
}

}  // namespace

Value reshape(const Value& x, const std::vector<Expr>& shape) {
  if (!same_size(numel(x->type.shape), numel(shape))) {
    throw ValueError("cannot reshape a block of shape " + shape_string(x->type.shape) + " to " +
                     shape_string(shape) + ": the numbers of elements differ");
  }
  Type type = concrete(x)->type;
  type.shape = shape;
  return rearrange(RearrangeFn::Reshape, {concrete(x)}, {}, type);
}

Value permute(const Value& x, const std::vector<int>& dims) {
  size_t n = x->type.ndim();
  if (dims.size() != n) {
    throw ValueError("permute of a " + std::to_string(n) + "-d block needs " + std::to_string(n) +
                     " dims, got " + std::to_string(dims.size()));
  }
  std::vector<int> normalized;
  std::set<int> seen;
  for (int d : dims) {
    int nd = dim_of(d, n, "permute");
    if (!seen.insert(nd).second) throw ValueError("permute: the dims must be a permutation");
    normalized.push_back(nd);
  }
  Type type = concrete(x)->type;
  for (size_t i = 0; i < n; ++i) type.shape[i] = x->type.shape[normalized[i]];
  return rearrange(RearrangeFn::Permute, {concrete(x)}, normalized, type);
}

Value flip(const Value& x, int dim) {
  int d = dim_of(dim, x->type.ndim(), "flip");
  return rearrange(RearrangeFn::Flip, {concrete(x)}, {d}, concrete(x)->type);
}

Value cat(const Value& a, const Value& b) {
  if (a->type.ndim() != b->type.ndim() || a->type.is_scalar()) {
    throw ValueError("cat needs two blocks of the same number of dims, got shapes " +
                     shape_string(a->type.shape) + " and " + shape_string(b->type.shape));
  }
  for (size_t d = 1; d < a->type.ndim(); ++d) {
    if (!same_size(a->type.shape[d], b->type.shape[d])) {
      throw ValueError("cat: the shapes " + shape_string(a->type.shape) + " and " +
                       shape_string(b->type.shape) + " differ outside dim 0");
    }
  }
  Type type{promote(a->type, b->type), a->type.shape};
  type.shape[0] = simplify(add(a->type.shape[0], b->type.shape[0]));
  return rearrange(RearrangeFn::Cat, {cast(a, type.dtype), cast(b, type.dtype)}, {}, type);
}

Value join(const Value& a, const Value& b) {
  std::vector<Expr> shape = broadcast_shapes(a->type.shape, b->type.shape);
  DType dtype = promote(a->type, b->type);
  Type type{dtype, shape};
  type.shape.push_back(Expr(2));
  return rearrange(RearrangeFn::Join,
                   {broadcast_to(cast(a, dtype), shape), broadcast_to(cast(b, dtype), shape)}, {}, type);
}

Value take(const Value& x, int k) {
  if (x->type.is_scalar() || !x->type.shape.back().is_int(2)) {
    throw ValueError("split needs a block whose last dim has size 2, got shape " +
                     shape_string(x->type.shape));
  }
  Type type = concrete(x)->type;
  type.shape.pop_back();
  return rearrange(RearrangeFn::Take, {concrete(x)}, {k}, type);
}

Value combine_arg(int index, DType dtype) {
  ValueNode node{ValueKind::CombineArg, Type{dtype, {}}};
  node.axis = index;
  return make(std::move(node));
}

std::vector<Value> combine(const std::vector<Value>& inputs, const std::vector<Value>& results,
                           std::optional<int> axis, bool scan, bool keep_dims, bool reverse) {
  const char* what = scan ? "associative_scan" : "reduce";
  if (inputs.empty()) throw ValueError(std::string(what) + " needs at least one block");
  if (results.size() != inputs.size()) {
    throw ValueError(std::string(what) + ": the combine function returned " + std::to_string(results.size()) +
                     " values for " + std::to_string(inputs.size()) + " inputs");
  }
  std::vector<Expr> shape;
  for (const Value& x : inputs) shape = broadcast_shapes(shape, x->type.shape);
  if (shape.empty()) throw ValueError(std::string(what) + " needs blocks, not scalars");
  if (scan && !axis) throw ValueError("associative_scan needs an axis");
  int a = axis ? dim_of(*axis, shape.size(), what) : -1;
  ValueNode group{ValueKind::Combine, Type{inputs[0]->type.dtype, shape}};
  group.op = scan ? 1 : 0;
  group.axis = a;
  group.keep_dims = keep_dims;
  group.ints = {reverse ? 1 : 0};
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value x = broadcast_to(concrete(inputs[i]), shape);
    group.operands.push_back(x);
    const Value& r = results[i];
    if (!r->type.is_scalar()) {
      throw ValueError(std::string(what) +
                       ": the combine function must return scalars, got a block of shape " +
                       shape_string(r->type.shape));
    }
    group.combine.push_back(cast(r, x->type.dtype));
  }
  Value g = make(std::move(group));
  std::vector<Value> outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Type type{g->operands[i]->type.dtype, shape};
    if (!scan) {
      if (a < 0)
        type.shape = keep_dims ? std::vector<Expr>(shape.size(), Expr(1)) : std::vector<Expr>{};
      else if (keep_dims)
        type.shape[a] = Expr(1);
      else
        type.shape.erase(type.shape.begin() + a);
    }
    ValueNode out{ValueKind::Extract, type};
    out.op = static_cast<int>(i);
    out.operands = {g};
    outputs.push_back(make(std::move(out)));
  }
  return outputs;
}

Value sort(const Value& x, int dim, bool descending, const std::optional<Expr>& k) {
  if (x->type.is_scalar()) throw ValueError("sort needs a block, not a scalar");
  if (x->type.dtype == DType::boolean) throw TypeError("sort needs numbers, not booleans");
  int d = dim_of(dim, x->type.ndim(), k ? "topk" : "sort");
  Type type = concrete(x)->type;
  if (k) {
    // k is a number or a constexpr size (an output block's, as upstream's
    // kernels pass it); a number is checked here, a size when it is built.
    auto value = simplify(*k).as_int();
    if (value && *value <= 0) throw ValueError("topk: k must be positive, got " + std::to_string(*value));
    auto n = simplify(x->type.shape[d]).as_int();
    if (value && n && *value > *n) {
      throw ValueError("topk: k = " + std::to_string(*value) + " is larger than the dim's size " +
                       std::to_string(*n));
    }
    type.shape[d] = *k;
  }
  ValueNode node{ValueKind::Sort, type};
  node.op = descending ? 1 : 0;
  node.axis = d;
  node.ints = {k ? 1 : -1};  // 1: top-k (the result's size along the axis is k)
  node.operands = {concrete(x)};
  return make(std::move(node));
}

Value gather(const Value& src, const Value& index, int axis) {
  if (src->type.is_scalar() || src->type.ndim() != index->type.ndim()) {
    throw ValueError("gather needs src and index blocks of the same number of dims, got shapes " +
                     shape_string(src->type.shape) + " and " + shape_string(index->type.shape));
  }
  if (dtype_is_float(index->type.dtype) || index->type.dtype == DType::boolean) {
    throw TypeError("gather: the index must be an integer block");
  }
  int a = dim_of(axis, src->type.ndim(), "gather");
  for (size_t d = 0; d < src->type.ndim(); ++d) {
    if (static_cast<int>(d) != a && !same_size(src->type.shape[d], index->type.shape[d])) {
      throw ValueError("gather: the shapes " + shape_string(src->type.shape) + " (src) and " +
                       shape_string(index->type.shape) + " (index) differ outside the axis");
    }
  }
  ValueNode node{ValueKind::Gather, Type{concrete(src)->type.dtype, index->type.shape}};
  node.axis = a;
  node.operands = {concrete(src), cast(index, DType::int64)};
  return make(std::move(node));
}

Value histogram(const Value& x, int bins, const Value& mask) {
  if (x->type.ndim() != 1)
    throw ValueError("histogram needs a 1-d block, got shape " + shape_string(x->type.shape));
  if (dtype_is_float(x->type.dtype)) throw TypeError("histogram needs integers");
  if (bins <= 0) throw ValueError("histogram: the number of bins must be positive");
  ValueNode node{ValueKind::Histogram, Type{DType::int32, {Expr(bins)}}};
  node.ints = {bins};
  Value m = mask ? mask : constant(bool_const(true));
  if (m->type.dtype != DType::boolean) m = binary(BinaryFn::Ne, m, constant(int_const(0)));
  node.operands = {cast(x, DType::int64), broadcast_to(m, x->type.shape)};
  return make(std::move(node));
}

}  // namespace nt::ir
