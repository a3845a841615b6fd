// What `copy` and `pickle` need from Symbol and Tensor. The `__reduce__`
// methods are in python/ninetoothed/_copying.py, whose functions pickles name
// (pybind11's own pickling of its classes works from protocol 2 only).
//
// Symbols pickle as a table of expression nodes (shared sub-expressions once),
// rebuilt node by node, so a Symbol reads back exactly as it was written:
// same printing, same options on every name. A Tensor level pickles its own
// fields, with its next level, its source and its index-map node as objects
// of their own, so that what levels share stays shared; a level is made blank
// first and filled by `_setstate`, so levels may refer to each other in any
// order. Index variables read from another process's pickle become fresh
// variables of this one (tensor/copy.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unordered_map>

#include "bindings/conversions.h"
#include "support/errors.h"
#include "tensor/copy.h"

namespace nt::bindings {

namespace {

constexpr int64_t kStateVersion = 1;

// Node records: (tag, ...) with the tags below.
constexpr int64_t kInt = 0, kFloat = 1, kBool = 2, kVar = 3, kUnary = 4, kBinary = 5, kSelect = 6;

py::object optional_int_object(const std::optional<int64_t>& value) {
  return value ? py::object(py::int_(*value)) : py::object(py::none());
}

// Expressions -> a list of node records; each record names its operands by
// their position in the list, which is always earlier.
class ExprEncoder {
 public:
  int64_t add(const Expr& e) {
    auto it = ids_.find(e.get());
    if (it != ids_.end()) return it->second;
    std::vector<int64_t> operands;
    for (const Expr& operand : e->operands) operands.push_back(add(operand));
    py::tuple record;
    switch (e->kind) {
      case ExprKind::Int:
        record = py::make_tuple(kInt, e->int_value);
        break;
      case ExprKind::Float:
        record = py::make_tuple(kFloat, e->float_value);
        break;
      case ExprKind::Bool:
        record = py::make_tuple(kBool, e->int_value != 0);
        break;
      case ExprKind::Var:
        record = py::make_tuple(kVar, e->name, e->attrs.constexpr_, e->attrs.meta,
                                optional_int_object(e->attrs.lower_bound),
                                optional_int_object(e->attrs.upper_bound), e->attrs.power_of_two);
        break;
      case ExprKind::Unary:
        record = py::make_tuple(kUnary, static_cast<int64_t>(e->unary_op), operands[0]);
        break;
      case ExprKind::Binary:
        record = py::make_tuple(kBinary, static_cast<int64_t>(e->binary_op), operands[0], operands[1]);
        break;
      case ExprKind::Select:
        record = py::make_tuple(kSelect, operands[0], operands[1], operands[2]);
        break;
    }
    auto id = static_cast<int64_t>(nodes_.size());
    nodes_.append(record);
    ids_.emplace(e.get(), id);
    return id;
  }

  py::object add(const std::optional<Expr>& e) {
    return e ? py::object(py::int_(add(*e))) : py::object(py::none());
  }

  py::list add(const std::vector<Expr>& exprs) {
    py::list ids;
    for (const Expr& e : exprs) ids.append(add(e));
    return ids;
  }

  const py::list& nodes() const { return nodes_; }

 private:
  std::unordered_map<const ExprNode*, int64_t> ids_;
  py::list nodes_;
};

[[noreturn]] void corrupt(const std::string& what) {
  throw ValueError("cannot unpickle a " + what + ": its state is not one this version of NineToothed writes");
}

// The inverse of ExprEncoder. With an origin, index variables are those of
// this process that stand for the origin's (imported_index_var).
class ExprDecoder {
 public:
  ExprDecoder(const py::handle& nodes, std::optional<std::string> origin, const std::string& what)
      : what_(what) {
    if (!py::isinstance<py::list>(nodes)) corrupt(what_);
    for (auto record_object : py::reinterpret_borrow<py::list>(nodes)) {
      if (!py::isinstance<py::tuple>(record_object)) corrupt(what_);
      auto record = py::reinterpret_borrow<py::tuple>(record_object);
      if (record.size() < 2) corrupt(what_);
      auto node = std::make_shared<ExprNode>();
      switch (record[0].cast<int64_t>()) {
        case kInt:
          node->kind = ExprKind::Int;
          node->int_value = record[1].cast<int64_t>();
          break;
        case kFloat:
          node->kind = ExprKind::Float;
          node->float_value = record[1].cast<double>();
          break;
        case kBool:
          node->kind = ExprKind::Bool;
          node->int_value = record[1].cast<bool>() ? 1 : 0;
          break;
        case kVar: {
          if (record.size() != 7) corrupt(what_);
          auto name = record[1].cast<std::string>();
          if (origin && is_index_var(var(name))) {
            exprs_.push_back(imported_index_var(*origin, name));
            continue;
          }
          node->kind = ExprKind::Var;
          node->name = name;
          node->attrs.constexpr_ = record[2].cast<bool>();
          node->attrs.meta = record[3].cast<bool>();
          node->attrs.lower_bound = record[4].cast<std::optional<int64_t>>();
          node->attrs.upper_bound = record[5].cast<std::optional<int64_t>>();
          node->attrs.power_of_two = record[6].cast<bool>();
          break;
        }
        case kUnary:
          if (record.size() != 3 || record[1].cast<int64_t>() < 0 ||
              record[1].cast<int64_t>() > static_cast<int64_t>(UnaryOp::Not))
            corrupt(what_);
          node->kind = ExprKind::Unary;
          node->unary_op = static_cast<UnaryOp>(record[1].cast<int64_t>());
          node->operands = {at(record[2])};
          break;
        case kBinary:
          if (record.size() != 4 || record[1].cast<int64_t>() < 0 ||
              record[1].cast<int64_t>() > static_cast<int64_t>(BinaryOp::Max))
            corrupt(what_);
          node->kind = ExprKind::Binary;
          node->binary_op = static_cast<BinaryOp>(record[1].cast<int64_t>());
          node->operands = {at(record[2]), at(record[3])};
          break;
        case kSelect:
          if (record.size() != 4) corrupt(what_);
          node->kind = ExprKind::Select;
          node->operands = {at(record[1]), at(record[2]), at(record[3])};
          break;
        default:
          corrupt(what_);
      }
      exprs_.push_back(Expr(std::move(node)));
    }
  }

  Expr at(const py::handle& id) const {
    auto index = id.cast<int64_t>();
    if (index < 0 || static_cast<size_t>(index) >= exprs_.size()) corrupt(what_);
    return exprs_[static_cast<size_t>(index)];
  }

  std::optional<Expr> optional_at(const py::handle& id) const {
    if (id.is_none()) return std::nullopt;
    return at(id);
  }

  std::vector<Expr> all_at(const py::handle& ids) const {
    std::vector<Expr> result;
    for (auto id : py::reinterpret_borrow<py::sequence>(ids)) result.push_back(at(id));
    return result;
  }

 private:
  std::string what_;
  std::vector<Expr> exprs_;
};

py::tuple checked_state(const py::handle& state, size_t size, const std::string& what) {
  if (!py::isinstance<py::tuple>(state)) corrupt(what);
  auto tuple = py::reinterpret_borrow<py::tuple>(state);
  if (tuple.size() != size || tuple[0].cast<int64_t>() != kStateVersion) corrupt(what);
  return tuple;
}

using IndexMapObject = std::shared_ptr<IndexMapNode>;

py::object index_map_object(const IndexMapRef& node) {
  if (!node) return py::none();
  return py::cast(std::const_pointer_cast<IndexMapNode>(node));
}

py::tuple symbol_state(const Expr& e) {
  ExprEncoder encoder;
  int64_t root = encoder.add(e);
  return py::make_tuple(kStateVersion, encoder.nodes(), root);
}

Expr symbol_from_state(const py::tuple& state) {
  auto tuple = checked_state(state, 3, "Symbol");
  return ExprDecoder(tuple[1], std::nullopt, "Symbol").at(tuple[2]);
}

py::tuple index_map_state(const IndexMapNode& node) {
  ExprEncoder encoder;
  py::list bindings, inputs;
  for (const auto& b : node.bindings) {
    bindings.append(py::make_tuple(b.index, encoder.add(b.value), encoder.add(b.size), b.checked));
  }
  for (const auto& input : node.inputs) inputs.append(index_map_object(input));
  return py::make_tuple(kStateVersion, index_origin(), encoder.nodes(), bindings, inputs);
}

IndexMapObject index_map_from_state(const py::tuple& state) {
  const std::string what = "tensor's index map";
  auto tuple = checked_state(state, 5, what);
  auto origin = tuple[1].cast<std::string>();
  ExprDecoder decoder(tuple[2], origin, what);
  std::vector<IndexBinding> bindings;
  for (auto item : tuple[3].cast<py::list>()) {
    auto binding = item.cast<py::tuple>();
    if (binding.size() != 4) corrupt(what);
    bindings.push_back({imported_index_var(origin, binding[0].cast<std::string>())->name,
                        decoder.at(binding[1]), decoder.at(binding[2]), binding[3].cast<bool>()});
  }
  std::vector<IndexMapRef> inputs;
  for (auto input : tuple[4].cast<py::list>()) inputs.push_back(input.cast<IndexMapObject>());
  return std::const_pointer_cast<IndexMapNode>(make_index_map_node(std::move(bindings), std::move(inputs)));
}

py::tuple tensor_state(const Tensor& tensor) {
  TensorFields fields = tensor.fields();
  ExprEncoder encoder;
  py::list indices;
  for (const Expr& index : fields.indices) indices.append(index->name);
  py::object dtype = py::none();
  if (auto* level = std::get_if<TensorPtr>(&fields.dtype)) dtype = py::cast(*level);
  if (auto* scalar = std::get_if<DType>(&fields.dtype)) dtype = py::cast(*scalar);
  py::object source = fields.source ? py::cast(fields.source) : py::object(py::none());
  py::list shape = encoder.add(fields.shape);
  py::object other = encoder.add(fields.other);
  py::object value = encoder.add(fields.value);
  return py::make_tuple(
      kStateVersion, index_origin(), encoder.nodes(), fields.name, shape, indices, dtype, source, other,
      fields.constexpr_, value, index_map_object(fields.index_map), fields.covers_base,
      fields.jagged_dim ? py::object(py::int_(*fields.jagged_dim)) : py::object(py::none()));
}

void restore_tensor(Tensor& tensor, const py::tuple& state) {
  const std::string what = "Tensor";
  // 14 entries; 13 from before jagged tensors, 12 from before the coverage flag (read as unknown).
  const size_t entries = py::isinstance<py::tuple>(state) ? py::len(state) : 0;
  const bool has_coverage = entries >= 13;
  const bool has_jagged = entries == 14;
  auto tuple = checked_state(state, has_jagged ? 14 : has_coverage ? 13 : 12, what);
  auto origin = tuple[1].cast<std::string>();
  ExprDecoder decoder(tuple[2], origin, what);
  TensorFields fields;
  fields.name = tuple[3].cast<std::string>();
  fields.shape = decoder.all_at(tuple[4]);
  for (auto index : tuple[5].cast<py::list>()) {
    fields.indices.push_back(imported_index_var(origin, index.cast<std::string>()));
  }
  const py::handle dtype = tuple[6];
  if (py::isinstance<Tensor>(dtype)) {
    fields.dtype = dtype.cast<TensorPtr>();
  } else if (py::isinstance<DType>(dtype)) {
    fields.dtype = dtype.cast<DType>();
  } else if (!dtype.is_none()) {
    corrupt(what);
  }
  if (!tuple[7].is_none()) fields.source = tuple[7].cast<TensorPtr>();
  fields.other = decoder.optional_at(tuple[8]);
  fields.constexpr_ = tuple[9].cast<bool>();
  fields.value = decoder.optional_at(tuple[10]);
  if (!tuple[11].is_none()) fields.index_map = tuple[11].cast<IndexMapObject>();
  fields.covers_base = has_coverage && tuple[12].cast<bool>();
  if (has_jagged && !tuple[13].is_none()) {
    fields.jagged_dim = tuple[13].cast<int64_t>();
    if (*fields.jagged_dim < 1 || *fields.jagged_dim >= static_cast<int64_t>(fields.shape.size()))
      corrupt(what);
  }
  tensor.restore(std::move(fields));
}

}  // namespace

void bind_pickle(py::module_& m) {
  auto symbol = py::reinterpret_borrow<py::class_<Expr>>(m.attr("Symbol"));
  symbol.def("_state", &symbol_state, "The Symbol as a table of expression nodes, for pickling.");
  symbol.def_static("_from_state", &symbol_from_state, py::arg("state"));
  // Symbols are immutable: a copy is the Symbol itself.
  symbol.def("__copy__", [](const py::object& self) { return self; });
  symbol.def(
      "__deepcopy__", [](const py::object& self, const py::object&) { return self; }, py::arg("memo"));

  auto tensor = py::reinterpret_borrow<py::class_<Tensor, TensorPtr>>(m.attr("Tensor"));
  tensor.def_static("_blank", &Tensor::blank, "A blank level for unpickling to fill (`_setstate`).");
  tensor.def("_getstate", &tensor_state, "This level's fields, for pickling.");
  tensor.def("_setstate", &restore_tensor, py::arg("state"), "Fill a blank level from `_getstate`'s result.");

  py::class_<IndexMapNode, IndexMapObject>(m, "_IndexMap",
                                           "A node of a tensor's index-map graph (for pickling).")
      .def("_state", &index_map_state)
      .def_static("_from_state", &index_map_from_state, py::arg("state"));

  py::class_<HierarchyCopier, std::shared_ptr<HierarchyCopier>>(
      m, "_HierarchyCopier", "Copies tensors, each level once (copy.deepcopy of Tensors).")
      .def(py::init([] { return std::make_shared<HierarchyCopier>(); }))
      .def(
          "copy", [](HierarchyCopier& self, const TensorPtr& tensor) { return self.copy(*tensor); },
          py::arg("tensor"))
      .def("take_new_copies", &HierarchyCopier::take_new_copies,
           "The (original, copy) pairs made since the last call.");
}

}  // namespace nt::bindings
