// The Builder (a kernel's parameters, loads and stores, statements in program order) and the
// queries of a traced kernel's parameters and grid.
#include "ir/builder.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "ir/block_ops.h"
#include "ir/builder_internal.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/simplify.h"
#include "symbolic/substitute.h"
#include "tensor/index_map.h"

namespace nt::ir {

Builder::Builder(std::string kernel_name) {
  kernel_.name = std::move(kernel_name);
  assumed_equal_sink() = &kernel_.assumed_equal;
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
  if (assumed_equal_sink() == &kernel_.assumed_equal) assumed_equal_sink() = nullptr;
  return std::move(kernel_);
}

Builder::~Builder() {
  if (assumed_equal_sink() == &kernel_.assumed_equal) assumed_equal_sink() = nullptr;
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
