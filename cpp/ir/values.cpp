// Block-valued expressions: constants, element-wise operations with type promotion and numpy
// broadcasting, casts, reductions, dots; the shape and dtype rules builder.h states.
#include <algorithm>
#include <sstream>
#include <utility>

#include "ir/block_ops.h"
#include "ir/builder.h"
#include "ir/builder_internal.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"
#include "tensor/index_map.h"

namespace nt::ir {

int normalize_axis(int axis, size_t ndim, const char* what) {
  int n = static_cast<int>(ndim);
  if (axis < -n || axis >= n) {
    throw IndexError(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for a " +
                     std::to_string(n) + "-d block");
  }
  return axis < 0 ? axis + n : axis;
}

namespace {

int rank_of(DType d) {
  switch (d) {
    case DType::boolean:
      return 0;
    case DType::int8:
    case DType::uint8:
      return 1;
    case DType::int16:
    case DType::uint16:
      return 2;
    case DType::int32:
    case DType::uint32:
      return 3;
    case DType::int64:
    case DType::uint64:
      return 4;
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return 5;
    case DType::float16:
    case DType::bfloat16:
      return 6;
    case DType::float32:
      return 7;
    case DType::float64:
      return 8;
  }
  return 0;
}

DType promote_strong(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::float16 && b == DType::bfloat16) || (a == DType::bfloat16 && b == DType::float16)) {
    return DType::float32;
  }
  if (dtype_is_float8(a) && dtype_is_float8(b)) return DType::float16;  // e5m2 with e4m3fn, as Triton
  int ra = rank_of(a), rb = rank_of(b);
  if (ra != rb) return ra > rb ? a : b;
  // Same width, different signedness: unsigned wins (as C and Triton).
  return dtype_is_signed(a) ? b : a;
}

}  // namespace

std::vector<std::pair<Expr, Expr>>*& assumed_equal_sink() {
  thread_local std::vector<std::pair<Expr, Expr>>* sink = nullptr;
  return sink;
}

namespace {

// Two sizes given by different symbols (e.g. the head dims of q and k), or by
// a symbol and a number other than 1 (an untiled tensor stored into a fixed
// slice), can only be compared when a configuration is built: assume them
// equal then.
bool assume_equal(const Expr& a, const Expr& b) {
  auto* sink = assumed_equal_sink();
  if ((a.is_int() && b.is_int()) || a.is_int(1) || b.is_int(1) || !sink) return false;
  sink->emplace_back(a, b);
  return true;
}

}  // namespace

bool same_size(const Expr& a, const Expr& b) { return equal(a, b) || equal(simplify(a), simplify(b)); }

std::string shape_string(const std::vector<Expr>& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << to_python(shape[i]);
  os << (shape.size() == 1 ? ",)" : ")");
  return os.str();
}

DType promote(const Type& a, const Type& b) {
  if (a.weak && !b.weak) {
    if (dtype_is_float(a.dtype) && !dtype_is_float(b.dtype)) return DType::float32;
    if (b.dtype == DType::boolean && a.dtype != DType::boolean) return a.dtype;
    return b.dtype;
  }
  if (b.weak && !a.weak) return promote(b, a);
  return promote_strong(a.dtype, b.dtype);
}

std::vector<Expr> broadcast_shapes(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<Expr> out(n);
  for (size_t i = 0; i < n; ++i) {
    const Expr* x = i + a.size() >= n ? &a[i + a.size() - n] : nullptr;
    const Expr* y = i + b.size() >= n ? &b[i + b.size() - n] : nullptr;
    if (!x)
      out[i] = *y;
    else if (!y)
      out[i] = *x;
    else if (x->is_int(1))
      out[i] = *y;
    else if (y->is_int(1) || same_size(*x, *y) || assume_equal(*x, *y))
      out[i] = *x;
    else
      throw ValueError("blocks of shapes " + shape_string(a) + " and " + shape_string(b) +
                       " do not broadcast");
  }
  return out;
}

Value constant(const Expr& value) {
  DType dtype = DType::int64;
  if (value->kind == ExprKind::Float) dtype = DType::float32;
  if (value->kind == ExprKind::Bool) dtype = DType::boolean;
  ValueNode node{ValueKind::Constant, scalar_type(dtype, true)};
  node.expr = value;
  return make(std::move(node));
}

Value typed_constant(const Expr& value, DType dtype) {
  ValueNode node{ValueKind::Constant, scalar_type(dtype)};
  node.expr = value;
  return make(std::move(node));
}

Value loop_var(const std::string& name) {
  ValueNode node{ValueKind::LoopVar, scalar_type(DType::int64)};
  node.name = name;
  return make(std::move(node));
}

Value arange(const Expr& start, const Expr& end) {
  Expr length = simplify(sub(end, start));
  if (auto n = length.as_int(); n && *n <= 0) {
    throw ValueError("arange(" + to_python(start) + ", " + to_python(end) + ") is empty");
  }
  ValueNode node{ValueKind::Arange, Type{DType::int32, {length}}};
  node.expr = start;
  node.expr2 = end;
  return make(std::move(node));
}

Value full(const std::vector<Expr>& shape, const Value& scalar, DType dtype) {
  if (!scalar->type.is_scalar()) throw ValueError("full: the fill value must be a scalar");
  ValueNode node{ValueKind::Full, Type{dtype, shape}};
  node.operands = {scalar->type.dtype == dtype ? scalar : cast(scalar, dtype)};
  return make(std::move(node));
}

Value unary(UnaryFn fn, const Value& x) {
  Type type = x->type;
  switch (fn) {
    case UnaryFn::Neg:
    case UnaryFn::Abs:
      break;
    case UnaryFn::Not:
      type.dtype = DType::boolean;
      type.weak = false;
      break;
    case UnaryFn::BitNot:
      if (dtype_is_float(type.dtype)) throw TypeError("~ needs an integer or boolean block");
      if (type.dtype == DType::boolean) return unary(UnaryFn::Not, x);  // ~ of a bool is logical not
      break;
    default:  // math: floats keep their dtype, integers compute in float32
      if (!dtype_is_float(type.dtype)) {
        type.dtype = DType::float32;
        type.weak = false;
      }
  }
  ValueNode node{ValueKind::Unary, type};
  node.op = static_cast<int>(fn);
  node.operands = {x};
  return make(std::move(node));
}

Value broadcast_to(const Value& x, const std::vector<Expr>& shape) {
  Value v = x;
  if (v->type.ndim() > shape.size()) {
    throw ValueError("cannot broadcast a block of shape " + shape_string(v->type.shape) + " to " +
                     shape_string(shape));
  }
  while (v->type.ndim() < shape.size()) v = expand_dims(v, 0);
  bool same = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (same_size(v->type.shape[i], shape[i])) continue;
    if (!v->type.shape[i].is_int(1)) {
      if (assume_equal(v->type.shape[i], shape[i])) continue;
      throw ValueError("cannot broadcast a block of shape " + shape_string(x->type.shape) + " to " +
                       shape_string(shape));
    }
    same = false;
  }
  if (same) return v;
  ValueNode node{ValueKind::Broadcast, Type{v->type.dtype, shape, v->type.weak}};
  node.operands = {v};
  return make(std::move(node));
}

Value cast(const Value& x, DType dtype) {
  if (x->type.dtype == dtype && !x->type.weak) return x;
  ValueNode node{ValueKind::Cast, Type{dtype, x->type.shape}};
  node.operands = {x};
  return make(std::move(node));
}

Value binary(BinaryFn fn, const Value& a, const Value& b) {
  if (a->type.pointer >= 0 || b->type.pointer >= 0) {
    // Pointer arithmetic: pointer +/- integers is a pointer into the same tensor.
    const Value& p = a->type.pointer >= 0 ? a : b;
    const Value& n = a->type.pointer >= 0 ? b : a;
    bool ok = n->type.pointer < 0 && !dtype_is_float(n->type.dtype) &&
              (fn == BinaryFn::Add || (fn == BinaryFn::Sub && p == a));
    if (!ok) throw TypeError("pointers can only be offset by integers (pointer + n, pointer - n)");
    Type offsets_type = p->type;
    offsets_type.pointer = -1;
    ValueNode offsets = *p;
    offsets.type = offsets_type;
    Value sum = binary(fn, make(std::move(offsets)), cast(n, DType::int64));
    ValueNode node = *sum;
    node.type.pointer = p->type.pointer;
    return make(std::move(node));
  }
  std::vector<Expr> shape = broadcast_shapes(a->type.shape, b->type.shape);
  DType dtype = promote(a->type, b->type);
  bool weak = a->type.weak && b->type.weak;
  if (fn == BinaryFn::Div || fn == BinaryFn::Pow) {
    if (!dtype_is_float(dtype)) dtype = DType::float32, weak = false;
  }
  if ((fn == BinaryFn::BitAnd || fn == BinaryFn::BitOr || fn == BinaryFn::BitXor || fn == BinaryFn::LShift ||
       fn == BinaryFn::RShift) &&
      dtype_is_float(dtype)) {
    throw TypeError(std::string("operator ") + binary_fn_name(fn) + " needs integer or boolean blocks");
  }
  Value x = broadcast_to(a, shape), y = broadcast_to(b, shape);
  if (!weak) {  // operands compute in the promoted dtype
    x = cast(x, dtype);
    y = cast(y, dtype);
  }
  Type result{dtype, shape, weak};
  if (is_comparison(fn) || fn == BinaryFn::LogicalAnd || fn == BinaryFn::LogicalOr) {
    result.dtype = DType::boolean;
    result.weak = false;
  }
  ValueNode node{ValueKind::Binary, result};
  node.op = static_cast<int>(fn);
  node.operands = {x, y};
  return make(std::move(node));
}

Value where(const Value& condition, const Value& a, const Value& b) {
  std::vector<Expr> shape =
      broadcast_shapes(condition->type.shape, broadcast_shapes(a->type.shape, b->type.shape));
  DType dtype = promote(a->type, b->type);
  ValueNode node{ValueKind::Where, Type{dtype, shape, a->type.weak && b->type.weak}};
  Value c =
      condition->type.dtype == DType::boolean ? condition : binary(BinaryFn::Ne, condition, constant(0));
  bool weak = node.type.weak;
  node.operands = {broadcast_to(c, shape), broadcast_to(weak ? a : cast(a, dtype), shape),
                   broadcast_to(weak ? b : cast(b, dtype), shape)};
  return make(std::move(node));
}

Value expand_dims(const Value& x, int axis) {
  int n = static_cast<int>(x->type.ndim());
  if (axis < -(n + 1) || axis > n)
    throw IndexError("cannot insert an axis at position " + std::to_string(axis));
  if (axis < 0) axis += n + 1;
  Type type = x->type;
  type.shape.insert(type.shape.begin() + axis, Expr(1));
  ValueNode node{ValueKind::ExpandDims, type};
  node.axis = axis;
  node.operands = {x};
  return make(std::move(node));
}

Value trans(const Value& x) {
  if (x->type.ndim() != 2)
    throw ValueError("trans needs a 2-d block, got shape " + shape_string(x->type.shape));
  Type type = x->type;
  std::swap(type.shape[0], type.shape[1]);
  ValueNode node{ValueKind::Trans, type};
  node.operands = {x};
  return make(std::move(node));
}

Value reduce(ReduceFn fn, const Value& x, std::optional<int> axis, bool keep_dims) {
  Type type = x->type;
  type.weak = false;
  int a = -1;
  if (axis) {
    if (type.is_scalar()) throw IndexError(std::string(reduce_fn_name(fn)) + ": a scalar has no axis");
    a = normalize_axis(*axis, type.ndim(), reduce_fn_name(fn));
    if (keep_dims)
      type.shape[a] = Expr(1);
    else
      type.shape.erase(type.shape.begin() + a);
  } else {
    type.shape = keep_dims ? std::vector<Expr>(x->type.ndim(), Expr(1)) : std::vector<Expr>{};
  }
  if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
    type.dtype = DType::int32;
  } else if (fn == ReduceFn::Sum && !dtype_is_float(type.dtype) && rank_of(type.dtype) < 3) {
    type.dtype = DType::int32;
  }
  ValueNode node{ValueKind::Reduce, type};
  node.op = static_cast<int>(fn);
  node.axis = a;
  node.keep_dims = keep_dims;
  node.operands = {x};
  return make(std::move(node));
}

Value dot(const Value& a, const Value& b, DotPrecision precision) {
  if (a->type.ndim() != 2 || b->type.ndim() != 2) {
    throw ValueError("dot needs two 2-d blocks, got shapes " + shape_string(a->type.shape) + " and " +
                     shape_string(b->type.shape));
  }
  if (!same_size(a->type.shape[1], b->type.shape[0]) && !assume_equal(a->type.shape[1], b->type.shape[0])) {
    throw ValueError("dot: the blocks' inner sizes differ: " + shape_string(a->type.shape) + " and " +
                     shape_string(b->type.shape));
  }
  DType in = promote(a->type, b->type);
  DType out = in == DType::float64 ? DType::float64
              : dtype_is_float(in) ? DType::float32
              : rank_of(in) <= 3   ? DType::int32
                                   : DType::int64;
  ValueNode node{ValueKind::Dot, Type{out, {a->type.shape[0], b->type.shape[1]}}};
  node.operands = {a, b};
  if (in == DType::float32) node.op = static_cast<int>(precision);
  return make(std::move(node));
}

Value fma(const Value& a, const Value& b, const Value& c) {
  std::vector<Expr> shape = broadcast_shapes(a->type.shape, broadcast_shapes(b->type.shape, c->type.shape));
  DType dtype = promote(a->type, Type{promote(b->type, c->type), {}, b->type.weak && c->type.weak});
  if (!dtype_is_float(dtype)) dtype = DType::float32;
  ValueNode node{ValueKind::Fma, Type{dtype, shape}};
  for (const Value* v : {&a, &b, &c}) node.operands.push_back(broadcast_to(cast(*v, dtype), shape));
  return make(std::move(node));
}

Value random(const Value& seed, const Value& offsets, bool normal) {
  if (!seed->type.is_scalar() || dtype_is_float(seed->type.dtype)) {
    throw TypeError("the seed of rand/randn must be an integer scalar");
  }
  if (dtype_is_float(offsets->type.dtype) || offsets->type.pointer >= 0) {
    throw TypeError("the offsets of rand/randn must be integers");
  }
  ValueNode node{ValueKind::Random, Type{DType::float32, offsets->type.shape}};
  node.op = normal ? 1 : 0;
  node.operands = {cast(seed, DType::int64), cast(offsets, DType::int64)};
  return make(std::move(node));
}

}  // namespace nt::ir
