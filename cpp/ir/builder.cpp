#include "ir/builder.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "ir/block_ops.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"
#include "tensor/index_map.h"

namespace nt::ir {

namespace {

Value make(ValueNode node) { return std::make_shared<const ValueNode>(std::move(node)); }

int normalize_axis(int axis, size_t ndim, const char* what) {
  int n = static_cast<int>(ndim);
  if (axis < -n || axis >= n) {
    throw IndexError(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for a " +
                     std::to_string(n) + "-d block");
  }
  return axis < 0 ? axis + n : axis;
}

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
    case DType::float16:
    case DType::bfloat16:
      return 5;
    case DType::float32:
      return 6;
    case DType::float64:
      return 7;
  }
  return 0;
}

DType promote_strong(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::float16 && b == DType::bfloat16) || (a == DType::bfloat16 && b == DType::float16)) {
    return DType::float32;
  }
  int ra = rank_of(a), rb = rank_of(b);
  if (ra != rb) return ra > rb ? a : b;
  // Same width, different signedness: unsigned wins (as C and Triton).
  return dtype_is_signed(a) ? b : a;
}

Type scalar_type(DType dtype, bool weak = false) { return Type{dtype, {}, weak}; }

}  // namespace

namespace {

// Where the Builder being used collects the sizes it assumes equal.
thread_local std::vector<std::pair<Expr, Expr>>* g_assumed_equal = nullptr;

// Two sizes given by different symbols (e.g. the head dims of q and k), or by
// a symbol and a number other than 1 (an untiled tensor stored into a fixed
// slice), can only be compared when a configuration is built: assume them
// equal then.
bool assume_equal(const Expr& a, const Expr& b) {
  if ((a.is_int() && b.is_int()) || a.is_int(1) || b.is_int(1) || !g_assumed_equal) return false;
  g_assumed_equal->emplace_back(a, b);
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

// ---------------------------------------------------------------------------

Builder::Builder(std::string kernel_name) {
  kernel_.name = std::move(kernel_name);
  g_assumed_equal = &kernel_.assumed_equal;
}

int Builder::add_param(Param param) {
  kernel_.params.push_back(std::move(param));
  return static_cast<int>(kernel_.params.size()) - 1;
}

namespace {

// Middle-level indices as loads and stores take them: an index that is a one-element block (a
// block of `indices.tile((1,))`, as in upstream's `output[row] = input`) is its one value.
std::vector<Value> scalar_indices(const std::vector<Value>& indices) {
  std::vector<Value> out;
  out.reserve(indices.size());
  for (const Value& i : indices) {
    const auto& shape = i->type.shape;
    const bool one_element =
        !i->type.is_scalar() && i->type.pointer < 0 &&
        std::all_of(shape.begin(), shape.end(), [](const Expr& n) { return n.is_int(1); });
    out.push_back(one_element ? reshape(i, {}) : i);
  }
  return out;
}

}  // namespace

Value Builder::load(int param, const std::vector<Value>& given) {
  const Param& p = kernel_.params.at(param);
  if (p.scalar) return scalar_param(param);
  const std::vector<Value> indices = scalar_indices(given);
  std::vector<Expr> middle = p.middle_shape();
  if (indices.size() != middle.size()) {
    if (middle.empty()) {
      throw IndexError("'" + p.name + "' is a block of shape " + shape_string(p.block_shape()) +
                       "; index its values with block operations, not []");
    }
    throw IndexError("'" + p.name + "' has a level of shape " + shape_string(middle) + ": index it with " +
                     std::to_string(middle.size()) + " indices, got " + std::to_string(indices.size()));
  }
  for (const Value& i : indices) {
    if (!i->type.is_scalar() || dtype_is_float(i->type.dtype)) {
      throw TypeError("indices of '" + p.name + "' must be integer scalars (or one-element blocks)");
    }
  }
  ValueNode node{ValueKind::Load, Type{p.dtype, p.block_shape()}};
  node.param = param;
  node.operands = indices;
  return make(std::move(node));
}

Value Builder::program_id(int axis) const {
  std::vector<Expr> shape = grid_shape(kernel_);
  ValueNode node{ValueKind::ProgramId, scalar_type(DType::int64)};
  node.axis = normalize_axis(axis, shape.size(), "program_id");
  return make(std::move(node));
}

Value Builder::offsets(const Value& load, std::optional<int> dim) const {
  if (load->kind != ValueKind::Load) {
    throw TypeError("offsets() is defined on a parameter's block (p or p[k]), not on computed values");
  }
  const Param& p = kernel_.params.at(load->param);
  ValueNode node{ValueKind::Offsets, Type{DType::int64, load->type.shape}};
  node.param = load->param;
  node.operands = load->operands;
  node.op = -1;
  if (!dim) {
    node.axis = -1;  // flat offsets: one per block element
    return make(std::move(node));
  }
  node.axis = normalize_axis(*dim, p.arranged->source_ref().ndim(), "offsets");
  // The coordinates along one source dim vary along (at most) one block dim:
  // a 1-D block along it (the other block indices 0), as upstream returns.
  Expr coordinate = resolve_source_access(*p.arranged).coordinates.at(node.axis);
  const auto& block_indices = static_cast<const Tensor&>(*p.arranged).levels().back()->indices();
  std::vector<int> varying;
  for (const Expr& v : collect_vars(coordinate)) {
    for (size_t b = 0; b < block_indices.size(); ++b) {
      if (block_indices[b]->name == v->name) varying.push_back(static_cast<int>(b));
    }
  }
  if (varying.size() <= 1) {
    node.op = varying.empty() ? -2 : varying[0];  // -2: constant over the block
    node.type.shape = {varying.empty() ? Expr(1) : load->type.shape.at(varying[0])};
  }
  return make(std::move(node));
}

Value Builder::pointer_base(int param) const {
  const Param& p = kernel_.params.at(param);
  if (p.scalar) throw TypeError("'" + p.name + "' is a scalar and has no data pointer");
  ValueNode node{ValueKind::PointerBase, scalar_type(DType::int64)};
  node.type.pointer = param;
  node.param = param;
  return make(std::move(node));
}

namespace {

Value boolean_mask(const Value& mask, const std::vector<Expr>& shape) {
  Value m = mask ? mask : constant(bool_const(true));
  if (m->type.dtype != DType::boolean) m = binary(BinaryFn::Ne, m, constant(int_const(0)));
  return broadcast_to(m, shape);
}

}  // namespace

Value Builder::load_pointer(const Value& pointers, const Value& mask, const Value& other) const {
  if (pointers->type.pointer < 0) throw TypeError("load() needs pointers (p.source.data_ptr() + offsets)");
  const Param& p = kernel_.params.at(pointers->type.pointer);
  std::vector<Expr> shape = pointers->type.shape;
  if (mask) shape = broadcast_shapes(shape, mask->type.shape);
  Value fill = other ? other : constant(int_const(0));
  shape = broadcast_shapes(shape, fill->type.shape);
  ValueNode node{ValueKind::LoadPointer, Type{p.dtype, shape}};
  node.param = pointers->type.pointer;
  Value offsets = broadcast_to(pointers, shape);
  node.operands = {offsets, boolean_mask(mask, shape), broadcast_to(cast(fill, p.dtype), shape)};
  return make(std::move(node));
}

void Builder::store_pointer(const Value& pointers, const Value& value, const Value& mask, bool atomic_add) {
  const char* what = atomic_add ? "atomic_add()" : "store()";
  if (pointers->type.pointer < 0) {
    throw TypeError(std::string(what) + " needs pointers (p.source.data_ptr() + offsets)");
  }
  const Param& p = kernel_.params.at(pointers->type.pointer);
  std::vector<Expr> shape = broadcast_shapes(pointers->type.shape, value->type.shape);
  if (mask) shape = broadcast_shapes(shape, mask->type.shape);
  if (atomic_add && !(p.dtype == DType::float32 || p.dtype == DType::float64 || p.dtype == DType::int32 ||
                      p.dtype == DType::uint32 || p.dtype == DType::int64 || p.dtype == DType::uint64)) {
    throw TypeError(std::string("atomic_add() supports float32, float64 and 32/64-bit integers, not ") +
                    std::string(dtype_name(p.dtype)));
  }
  StmtNode s{atomic_add ? StmtKind::AtomicAdd : StmtKind::StorePointer};
  s.param = pointers->type.pointer;
  s.indices = {broadcast_to(pointers, shape), broadcast_to(cast(value, p.dtype), shape),
               boolean_mask(mask, shape)};
  append(std::make_shared<const StmtNode>(std::move(s)));
}

Value Builder::num_programs(int axis) const {
  std::vector<Expr> shape = grid_shape(kernel_);
  return typed_constant(shape[normalize_axis(axis, shape.size(), "num_programs")], DType::int64);
}

Value Builder::scalar_param(int param) {
  const Param& p = kernel_.params.at(param);
  ValueNode node{ValueKind::ScalarParam, scalar_type(p.dtype)};
  node.param = param;
  return make(std::move(node));
}

StmtList& Builder::current() {
  if (open_.empty()) return kernel_.body;
  Open& o = open_.back();
  return o.in_else ? o.stmt.orelse : o.stmt.body;
}

void Builder::append(Stmt stmt) { current().push_back(std::move(stmt)); }

Value Builder::let(const Value& value) {
  int id = static_cast<int>(kernel_.let_types.size());
  Type type = value->type;
  kernel_.let_types.push_back(type);
  StmtNode s{StmtKind::Let};
  s.id = id;
  s.value = value;
  append(std::make_shared<const StmtNode>(std::move(s)));
  ValueNode node{ValueKind::LetRef, type};
  node.id = id;
  return make(std::move(node));
}

int Builder::declare_local(const Value& initial) {
  int id = static_cast<int>(kernel_.local_types.size());
  Type type = initial->type;
  if (type.weak) {
    // A Python number kept across iterations gets a concrete type.
    type.weak = false;
  }
  kernel_.local_types.push_back(type);
  StmtNode s{StmtKind::DeclareLocal};
  s.id = id;
  s.value = cast(initial, type.dtype);
  append(std::make_shared<const StmtNode>(std::move(s)));
  return id;
}

Value Builder::local_ref(int id) const {
  ValueNode node{ValueKind::LocalRef, kernel_.local_types.at(id)};
  node.id = id;
  return make(std::move(node));
}

void Builder::assign(int id, const Value& value) {
  const Type& type = kernel_.local_types.at(id);
  StmtNode s{StmtKind::Assign};
  s.id = id;
  s.value = broadcast_to(cast(value, type.dtype), type.shape);
  append(std::make_shared<const StmtNode>(std::move(s)));
}

void Builder::store(int param, const std::vector<Value>& given, const Value& value) {
  const Param& p = kernel_.params.at(param);
  if (p.scalar) throw TypeError("'" + p.name + "' is a scalar parameter and cannot be assigned");
  const std::vector<Value> indices = scalar_indices(given);
  Value target = load(param, indices);  // checks the indices
  StmtNode s{StmtKind::Store};
  s.param = param;
  s.indices = indices;
  try {
    s.value = broadcast_to(cast(value, p.dtype), target->type.shape);
  } catch (const ValueError& e) {
    throw ValueError("cannot store a block of shape " + shape_string(value->type.shape) + " into '" + p.name +
                     "', whose block has shape " + shape_string(target->type.shape));
  }
  append(std::make_shared<const StmtNode>(std::move(s)));
}

namespace {

// The positions of a gather/scatter, broadcast to one shape (with `extra`).
std::vector<Value> broadcast_positions(const Param& p, const std::vector<Value>& positions,
                                       std::vector<Expr>& shape) {
  size_t ndim = p.block_shape().size();
  if (positions.size() != ndim) {
    throw IndexError("'" + p.name + "' has blocks of shape " + shape_string(p.block_shape()) +
                     ": index them with " + std::to_string(ndim) + " positions, got " +
                     std::to_string(positions.size()));
  }
  for (const Value& i : positions) {
    if (dtype_is_float(i->type.dtype) || i->type.pointer >= 0) {
      throw TypeError("positions in the block of '" + p.name + "' must be integers");
    }
    shape = broadcast_shapes(shape, i->type.shape);
  }
  std::vector<Value> out;
  for (const Value& i : positions) out.push_back(broadcast_to(cast(i, DType::int64), shape));
  return out;
}

}  // namespace

Value Builder::load_at(int param, const std::vector<Value>& given, const std::vector<Value>& positions) {
  const std::vector<Value> middle = scalar_indices(given);
  load(param, middle);  // checks the middle-level indices
  const Param& p = kernel_.params.at(param);
  std::vector<Expr> shape;
  std::vector<Value> at = broadcast_positions(p, positions, shape);
  ValueNode node{ValueKind::LoadAt, Type{p.dtype, shape}};
  node.param = param;
  node.axis = static_cast<int>(middle.size());
  node.operands = middle;
  node.operands.insert(node.operands.end(), at.begin(), at.end());
  return make(std::move(node));
}

void Builder::store_at(int param, const std::vector<Value>& given, const std::vector<Value>& positions,
                       const Value& value) {
  const Param& p = kernel_.params.at(param);
  if (p.scalar) throw TypeError("'" + p.name + "' is a scalar parameter and cannot be assigned");
  const std::vector<Value> middle = scalar_indices(given);
  load(param, middle);
  std::vector<Expr> shape = value->type.shape;
  std::vector<Value> at = broadcast_positions(p, positions, shape);
  StmtNode s{StmtKind::StoreAt};
  s.param = param;
  s.id = static_cast<int>(middle.size());
  s.indices = middle;
  s.indices.insert(s.indices.end(), at.begin(), at.end());
  s.value = broadcast_to(cast(value, p.dtype), shape);
  append(std::make_shared<const StmtNode>(std::move(s)));
}

void Builder::begin_for(const std::string& var, const Value& start, const Value& stop, const Value& step) {
  for (const Value* v : {&start, &stop, &step}) {
    if (!(*v)->type.is_scalar() || dtype_is_float((*v)->type.dtype)) {
      throw TypeError("range() arguments must be integer scalars");
    }
  }
  Open o{StmtNode{StmtKind::For}};
  o.stmt.var = var;
  o.stmt.start = start;
  o.stmt.stop = stop;
  o.stmt.step = step;
  open_.push_back(std::move(o));
}

void Builder::end_for() {
  if (open_.empty() || open_.back().stmt.kind != StmtKind::For)
    throw std::logic_error("end_for without a for");
  StmtNode s = std::move(open_.back().stmt);
  open_.pop_back();
  append(std::make_shared<const StmtNode>(std::move(s)));
}

void Builder::begin_if(const Value& condition) {
  if (!condition->type.is_scalar()) {
    throw ValueError("the condition of an if must be a scalar, got a block of shape " +
                     shape_string(condition->type.shape));
  }
  Open o{StmtNode{StmtKind::If}};
  o.stmt.value = condition;
  open_.push_back(std::move(o));
}

void Builder::begin_else() {
  if (open_.empty() || open_.back().stmt.kind != StmtKind::If) throw std::logic_error("else without an if");
  open_.back().in_else = true;
}

void Builder::end_if() {
  if (open_.empty() || open_.back().stmt.kind != StmtKind::If) throw std::logic_error("end_if without an if");
  StmtNode s = std::move(open_.back().stmt);
  open_.pop_back();
  append(std::make_shared<const StmtNode>(std::move(s)));
}

Kernel Builder::finish() {
  if (!open_.empty()) throw std::logic_error("finish() with open blocks");
  if (g_assumed_equal == &kernel_.assumed_equal) g_assumed_equal = nullptr;
  return std::move(kernel_);
}

Builder::~Builder() {
  if (g_assumed_equal == &kernel_.assumed_equal) g_assumed_equal = nullptr;
}

// ---------------------------------------------------------------------------

bool Param::has_outer_level() const {
  return !scalar && static_cast<const Tensor&>(*arranged).levels().size() >= 2;
}

std::vector<Expr> Param::outer_shape() const {
  return has_outer_level() ? arranged->shape() : std::vector<Expr>{};
}

std::vector<const Tensor*> Param::inner_levels() const {
  std::vector<const Tensor*> levels = static_cast<const Tensor&>(*arranged).levels();
  if (levels.size() >= 2) levels.erase(levels.begin());  // one level: the whole tensor is the block
  return levels;
}

const Param* grid_param(const Kernel& kernel) {
  for (const Param& p : kernel.params) {
    if (p.has_outer_level()) return &p;
  }
  return nullptr;
}

std::vector<Expr> grid_shape(const Kernel& kernel) {
  const Param* p = grid_param(kernel);
  return p ? p->outer_shape() : std::vector<Expr>{};
}

std::vector<std::string> block_size_symbols(const Kernel& kernel) {
  std::vector<std::string> names;
  for (const Param& p : kernel.params) {
    if (p.scalar) continue;
    for (const Tensor* level : p.inner_levels()) {
      for (const Expr& size : level->shape()) {
        if (!size.is_var() || !(size->attrs.constexpr_ || size->attrs.meta)) continue;
        if (std::find(names.begin(), names.end(), size->name) == names.end()) names.push_back(size->name);
      }
    }
  }
  return names;
}

std::vector<Expr> Param::block_shape() const {
  auto levels = inner_levels();
  return levels.empty() ? std::vector<Expr>{} : levels.back()->shape();
}

std::vector<Expr> Param::middle_shape() const {
  auto levels = inner_levels();
  std::vector<Expr> shape;
  for (size_t k = 0; k + 1 < levels.size(); ++k) {
    shape.insert(shape.end(), levels[k]->shape().begin(), levels[k]->shape().end());
  }
  return shape;
}

const char* unary_fn_name(UnaryFn fn) {
  static const char* names[] = {"neg",   "not",  "bitnot",  "exp",   "exp2",  "log",  "log2", "sqrt",
                                "rsqrt", "abs",  "sigmoid", "sin",   "cos",   "tanh", "erf",  "floor",
                                "ceil",  "tan",  "asin",    "acos",  "atan",  "sinh", "cosh", "log1p",
                                "expm1", "cbrt", "log10",   "exp10", "trunc", "round"};
  return names[static_cast<int>(fn)];
}

const char* binary_fn_name(BinaryFn fn) {
  static const char* names[] = {"+",  "-",   "*",  "/", "//", "%", "<",       "<=",      ">",   ">=", "==",
                                "!=", "and", "or", "&", "|",  "^", "maximum", "minimum", "pow", "<<", ">>"};
  return names[static_cast<int>(fn)];
}

const char* reduce_fn_name(ReduceFn fn) {
  static const char* names[] = {"sum", "max", "min", "argmax", "argmin"};
  return names[static_cast<int>(fn)];
}

bool is_comparison(BinaryFn fn) { return fn >= BinaryFn::Lt && fn <= BinaryFn::Ne; }

}  // namespace nt::ir
