// Python's `ninetoothed.Tensor`, `ninetoothed.eval`, `ninetoothed.subs` and
// the dtypes, over nt::Tensor.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_map>

#include "bindings/conversions.h"
#include "support/errors.h"
#include "symbolic/printer.h"
#include "tensor/eval.h"

namespace nt::bindings {

namespace {

std::vector<Expr> to_exprs(const py::handle& object, const char* what) {
  auto items = iterable_items(object);
  if (!items) throw TypeError(std::string(what) + " must be a tuple, list or other iterable");
  std::vector<Expr> result;
  for (auto item : *items) {
    if (py::isinstance<py::float_>(item)) {
      throw TypeError(std::string(what) + " must hold integers or Symbols, not " +
                      std::string(py::repr(item)));
    }
    result.push_back(to_expr(item, what));
  }
  return result;
}

std::vector<int64_t> to_ints(const py::handle& object, const char* what) {
  std::vector<int64_t> result;
  if (PyIndex_Check(object.ptr())) {
    result.push_back(to_int(object, what));
    return result;
  }
  auto items = iterable_items(object);
  if (!items) throw TypeError(std::string(what) + " must be an int or a tuple of ints");
  for (auto item : *items) result.push_back(to_int(item, what));
  return result;
}

// `object` as an element type; nullopt when it is not one (see set_declared_dtype).
std::optional<ElementType> to_element_type(const py::handle& object) {
  if (object.is_none()) return std::monostate{};
  if (py::isinstance<Tensor>(object)) return object.cast<TensorPtr>();
  if (py::isinstance<DType>(object)) return object.cast<DType>();
  // Python's own types, as upstream takes them.
  if (object.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::boolean;
  if (object.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::int64;
  if (object.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::float32;
  // Strings, foreign dtypes (torch.float16, numpy.dtype("float32")) and
  // numpy's scalar types (numpy.float32, numpy.bool_) by name.
  std::string text = py::isinstance<py::type>(object) ? std::string(py::str(object.attr("__name__")))
                                                      : std::string(py::str(object));
  if (auto dot = text.rfind('.'); dot != std::string::npos) text = text.substr(dot + 1);
  if (text == "bool_") text = "bool";
  // Triton's names (str(triton.language.float16) is "fp16"): upstream's language is Triton's.
  static const std::map<std::string, std::string> triton_names = {
      {"fp16", "float16"}, {"bf16", "bfloat16"},     {"fp32", "float32"},         {"fp64", "float64"},
      {"int1", "bool"},    {"fp8e5", "float8_e5m2"}, {"fp8e4nv", "float8_e4m3fn"}};
  if (auto it = triton_names.find(text); it != triton_names.end()) text = it->second;
  if (auto dtype = dtype_from_name(text)) return *dtype;
  return std::nullopt;
}

// Declared dtypes that are not element types, by the tensor level they were given to. Upstream
// stores whatever `dtype` it is given and reads it only where it generates code for a declared
// dtype (AOT); ntops passes a block size there by position (`Tensor(ndim, dtype, ...)` called
// with `(ndim, 256)`). So such a value is kept for `dtype` to give back, and the level has no
// element type: a JIT launch specialises on its argument's dtype, and an ahead-of-time build
// refuses it (ninetoothed.make, ninetoothed.build). Read and written under the GIL.
struct UndeclaredDType {
  std::weak_ptr<const Tensor> level;  // the address is only this level's while it lives
  py::object value;
};
std::unordered_map<const Tensor*, UndeclaredDType>& undeclared_dtypes() {
  static auto* map = new std::unordered_map<const Tensor*, UndeclaredDType>;  // outlives the interpreter
  return *map;
}

// Sets `tensor`'s element type from a Python value, keeping one that is not a dtype as above.
void set_declared_dtype(const TensorPtr& tensor, const py::handle& object) {
  auto& map = undeclared_dtypes();
  std::optional<ElementType> element = to_element_type(object);
  tensor->set_dtype(element ? *element : ElementType{std::monostate{}});
  map.erase(tensor.get());
  if (element) return;
  for (auto it = map.begin(); it != map.end();)
    it = it->second.level.expired() ? map.erase(it) : std::next(it);
  map[tensor.get()] = {tensor, py::reinterpret_borrow<py::object>(object)};
}

py::object dtype_of(const TensorPtr& tensor) {
  const ElementType& element = tensor->dtype();
  if (auto* level = std::get_if<TensorPtr>(&element)) return py::cast(*level);
  if (auto* dtype = std::get_if<DType>(&element)) return py::cast(*dtype);
  auto& map = undeclared_dtypes();
  if (auto it = map.find(tensor.get()); it != map.end() && it->second.level.lock() == tensor)
    return it->second.value;
  return py::none();
}

std::optional<SymbolAttrs> to_symbol_attrs(const py::handle& options, bool constexpr_shape) {
  if (options.is_none()) {
    if (!constexpr_shape) return std::nullopt;
    return symbol_attrs(py::bool_(true), py::none(), py::none(), py::none(), py::none(), "shape option");
  }
  if (!py::isinstance<py::dict>(options)) {
    throw TypeError("each entry of `shape_options` must be a dict or None, not " + type_name(options));
  }
  auto dict = py::reinterpret_borrow<py::dict>(options);
  static const char* kKeys[] = {"constexpr", "meta", "lower_bound", "upper_bound", "power_of_two"};
  for (auto [key, value] : dict) {
    bool known = false;
    for (const char* name : kKeys)
      known = known || (py::isinstance<py::str>(key) && key.cast<std::string>() == name);
    if (!known) {
      throw ValueError(
          "unknown shape option " + std::string(py::repr(key)) +
          " in `shape_options` (known: constexpr, meta, lower_bound, upper_bound, power_of_two)");
    }
  }
  auto get = [&](const char* key) {
    return dict.contains(key) ? py::object(dict[key]) : py::object(py::none());
  };
  py::object constexpr_ = get("constexpr");
  if (constexpr_shape && constexpr_.is_none()) constexpr_ = py::bool_(true);
  return symbol_attrs(constexpr_, get("meta"), get("lower_bound"), get("upper_bound"), get("power_of_two"),
                      "shape option");
}

// Keywords of upstream's Tensor.__init__ that its meta-operations pass to the
// tensors they make (and, for `strides`, older versions took from users):
// accepted when None, as upstream's defaults are what a tensor made here is.
constexpr const char* kInternalKeywords[] = {"source",      "source_dims",      "target",   "target_dims",
                                             "unflattened", "unflattened_dims", "_offsets", "_outputs"};

bool as_flag(const py::handle& object, const char* what) {
  if (object.is_none()) return false;
  if (py::isinstance<py::bool_>(object)) return object.cast<bool>();
  if (PyIndex_Check(object.ptr())) return to_int(object, what) != 0;
  throw TypeError(std::string(what) + " must be True, False or None, not " + type_name(object));
}

TensorPtr make_tensor(const py::object& ndim, const py::object& shape, const py::object& dtype,
                      const py::object& jagged_dim, const py::object& other, const py::object& shape_options,
                      const py::object& constexpr_, const py::object& value, const py::object& name,
                      const py::kwargs& kwargs) {
  bool constexpr_shape = false;
  for (auto [key, argument] : kwargs) {
    std::string keyword = py::str(key);
    if (keyword == "constexpr_shape") {
      constexpr_shape = as_flag(argument, "`constexpr_shape`");
      continue;
    }
    if (keyword == "strides") {
      if (argument.is_none()) continue;
      throw ValueError(
          "Tensor(): `strides` cannot be given; a tensor's strides are those of the array passed at launch "
          "(for eval, give them in `subs`: {tensor: {\"shape\": ..., \"strides\": ...}})");
    }
    bool internal = false;
    for (const char* name : kInternalKeywords) internal = internal || keyword == name;
    if (!internal) throw TypeError("Tensor() got an unexpected keyword argument '" + keyword + "'");
    if (!argument.is_none()) {
      throw ValueError("Tensor(): `" + keyword +
                       "` is set by upstream NineToothed's meta-operations for their own use; a Tensor made "
                       "here is always a source tensor (arrange it with meta-operations instead)");
    }
  }
  TensorSpec spec;
  spec.ndim = optional_int(ndim, "`ndim`");
  spec.jagged_dim = optional_int(jagged_dim, "`jagged_dim`");
  if (!shape.is_none()) {
    auto items = iterable_items(shape);
    if (!items) throw TypeError("`shape` must be a tuple, list or other iterable, not " + type_name(shape));
    std::vector<std::optional<Expr>> sizes;
    for (auto size : *items) {
      if (py::isinstance<py::float_>(size)) {
        throw TypeError("`shape` must hold integers, Symbols or None, not " + std::string(py::repr(size)));
      }
      sizes.push_back(size.is_none() ? std::nullopt
                                     : std::optional<Expr>(to_expr(size, "a size in `shape`")));
    }
    spec.shape = std::move(sizes);
  }
  if (!other.is_none()) spec.other = to_expr(other, "`other`");
  size_t dims =
      spec.shape ? spec.shape->size() : static_cast<size_t>(std::max<int64_t>(0, spec.ndim.value_or(0)));
  if (!shape_options.is_none()) {
    if (py::isinstance<py::dict>(shape_options)) {
      spec.shape_options.assign(dims, to_symbol_attrs(shape_options, constexpr_shape));
    } else if (auto items = iterable_items(shape_options)) {  // a generator too (ntops's quantile)
      for (auto options : *items) spec.shape_options.push_back(to_symbol_attrs(options, constexpr_shape));
    } else {
      throw TypeError(
          "`shape_options` must be a dict, or an iterable (tuple, list, generator) of dicts (or None) per "
          "dimension, not " +
          type_name(shape_options));
    }
  } else if (constexpr_shape) {
    spec.shape_options.assign(dims, to_symbol_attrs(py::none(), true));
  }
  spec.constexpr_ = as_flag(constexpr_, "`constexpr`");
  if (!value.is_none()) {
    if (!spec.constexpr_) throw ValueError("Tensor(): `value` can only be given to a constexpr tensor");
    spec.value = to_expr(value, "`value`");
  }
  if (!name.is_none()) {
    if (!py::isinstance<py::str>(name)) throw TypeError("`name` must be a str, not " + type_name(name));
    spec.name = name.cast<std::string>();
    if (!py::str(name).attr("isidentifier")().cast<bool>()) {
      throw ValueError("`name` must be a Python identifier, not " + std::string(py::repr(name)));
    }
  }
  TensorPtr tensor = Tensor::create(spec);
  set_declared_dtype(tensor, dtype);
  return tensor;
}

IndexItem to_index_item(const py::handle& key) {
  IndexItem item;
  if (key.is_none()) {
    item.kind = IndexItem::Kind::NewAxis;
  } else if (key.ptr() == Py_Ellipsis) {
    item.kind = IndexItem::Kind::Ellipsis;
  } else if (py::isinstance<py::slice>(key)) {
    item.kind = IndexItem::Kind::Slice;
    auto bound = [&](const char* attr) -> std::optional<Expr> {
      py::object value = key.attr(attr);
      if (value.is_none()) return std::nullopt;
      return to_expr(value, "a slice bound");
    };
    item.start = bound("start");
    item.stop = bound("stop");
    item.step = bound("step");
  } else if (auto index = try_to_expr(key); index && !py::isinstance<py::float_>(key)) {
    item.index = *index;
  } else {
    throw TypeError("tensor indices must be integers, Symbols, slices, None or ..., not " + type_name(key));
  }
  return item;
}

py::tuple shape_tuple(const std::vector<Expr>& shape) {
  py::tuple result(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) result[i] = from_expr(shape[i]);
  return result;
}

py::array evaluate(const TensorPtr& tensor, const py::object& subs) {
  SymbolMap map = to_symbol_map(subs);
  OffsetArray result;
  {
    py::gil_scoped_release release;
    result = evaluate_offsets(*tensor, map);
  }
  py::array_t<int64_t> array(std::vector<py::ssize_t>(result.shape.begin(), result.shape.end()));
  if (!result.offsets.empty()) {
    std::memcpy(array.mutable_data(), result.offsets.data(), result.offsets.size() * sizeof(int64_t));
  }
  return std::move(array);
}

std::string describe(const Tensor& tensor) {
  std::string text = "Tensor(shape=(";
  for (size_t d = 0; d < tensor.ndim(); ++d) {
    if (d) text += ", ";
    text += to_python(tensor.shape()[d]);
  }
  text += tensor.ndim() == 1 ? ",)" : ")";
  if (auto* level = std::get_if<TensorPtr>(&tensor.dtype())) {
    text += ", dtype=" + describe(**level);
  } else if (auto* dtype = std::get_if<DType>(&tensor.dtype())) {
    text += ", dtype=ninetoothed." + std::string(dtype_name(*dtype));
  }
  if (tensor.is_source()) text = "Tensor(name='" + tensor.name() + "', " + text.substr(7);
  return text + ")";
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::enum_<DType> dtype(m, "DType", "Element types of tensors.");
  for (DType value : {DType::bfloat16, DType::float16, DType::float32, DType::float64, DType::int8,
                      DType::int16, DType::int32, DType::int64, DType::uint8, DType::uint16, DType::uint32,
                      DType::uint64, DType::boolean, DType::float8_e5m2, DType::float8_e4m3fn}) {
    dtype.value(std::string(dtype_name(value)).c_str(), value);
  }
  dtype.def("__repr__", [](DType value) { return "ninetoothed." + std::string(dtype_name(value)); });
  dtype.def("__str__", [](DType value) { return std::string(dtype_name(value)); });

  py::class_<Tensor, TensorPtr> tensor(m, "Tensor", py::dynamic_attr(), R"doc(A symbolic tensor.

Tensor(ndim=None, shape=None, dtype=None, jagged_dim=None, other=None,
shape_options=None, constexpr=None, value=None, name=None). Holds no data: its shape is made of
symbols (`<name>_size_<d>`) or given values. Meta-operations (tile, expand,
squeeze, unsqueeze, permute, flatten, ravel, pad, indexing) return new,
possibly hierarchical, tensors whose `dtype` is the next level.)doc");
  tensor.def(py::init(&make_tensor), py::arg("ndim") = py::none(), py::arg("shape") = py::none(),
             py::arg("dtype") = py::none(), py::arg("jagged_dim") = py::none(), py::arg("other") = py::none(),
             py::arg("shape_options") = py::none(), py::arg("constexpr") = py::none(),
             py::arg("value") = py::none(), py::arg("name") = py::none());
  tensor.def_property(
      "shape", [](const Tensor& self) { return shape_tuple(self.shape()); },
      [](Tensor& self, const py::object& shape) { self.set_shape(to_exprs(shape, "shape")); });
  tensor.def_property_readonly("ndim", &Tensor::ndim);
  tensor.def_property_readonly("name", &Tensor::name);
  tensor.def_property("dtype", &dtype_of, [](const TensorPtr& self, const py::object& dtype) {
    set_declared_dtype(self, dtype);
  });
  tensor.def_property_readonly("source", &Tensor::source);
  m.def(
      "as_dtype",
      [](const py::handle& object) {
        std::optional<ElementType> type =
            py::isinstance<Tensor>(object) ? std::nullopt : to_element_type(object);
        if (!type || !std::holds_alternative<DType>(*type))
          throw TypeError("not an element dtype: " + std::string(py::repr(object)));
        return std::get<DType>(*type);
      },
      py::arg("dtype"),
      "`dtype` as a ninetoothed dtype: one already, a name (\"float16\"), Python's bool/int/float, or a "
      "foreign dtype (torch's, numpy's, Triton's).");
  tensor.def_property_readonly("jagged_dim", [](const Tensor& self) -> py::object {
    return self.jagged_dim() ? py::object(py::int_(*self.jagged_dim())) : py::object(py::none());
  });
  tensor.def_property_readonly("other", [](const Tensor& self) -> py::object {
    return self.other() ? from_expr(*self.other()) : py::none();
  });
  tensor.def_property_readonly("constexpr", &Tensor::is_constexpr);
  tensor.def_property_readonly("value", [](const Tensor& self) -> py::object {
    return self.value() ? from_expr(*self.value()) : py::none();
  });
  tensor.def_property_readonly(
      "strides",
      [](const Tensor& self) {
        std::vector<Expr> strides;
        for (size_t d = 0; d < self.source_ref().ndim(); ++d) strides.push_back(self.stride_symbol(d));
        return shape_tuple(strides);
      },
      "The source tensor's stride symbols `<name>_stride_<d>`.");
  tensor.def(
      "size",
      [](const Tensor& self, const py::object& dim) -> py::object {
        if (dim.is_none()) return shape_tuple(self.shape());
        int64_t d = to_int(dim, "dim");
        auto n = static_cast<int64_t>(self.ndim());
        if (d < -n || d >= n) throw IndexError("dimension " + std::to_string(d) + " out of range");
        return from_expr(self.shape()[static_cast<size_t>(d < 0 ? d + n : d)]);
      },
      py::arg("dim") = py::none());
  tensor.def("innermost", &Tensor::innermost, "The innermost level.");
  tensor.def(
      "tile",
      [](const Tensor& self, const py::object& tile_shape, const py::object& strides,
         const py::object& dilation, bool floor_mode) {
        auto optional_exprs = [](const py::object& object,
                                 const char* what) -> std::optional<std::vector<Expr>> {
          if (object.is_none()) return std::nullopt;
          return to_exprs(object, what);
        };
        return self.tile(to_exprs(tile_shape, "tile_shape"), optional_exprs(strides, "strides"),
                         optional_exprs(dilation, "dilation"), floor_mode);
      },
      py::arg("tile_shape"), py::arg("strides") = py::none(), py::arg("dilation") = py::none(),
      py::arg("floor_mode") = false);
  tensor.def(
      "expand",
      [](const Tensor& self, const py::object& shape) { return self.expand(to_exprs(shape, "shape")); },
      py::arg("shape"));
  tensor.def(
      "squeeze", [](const Tensor& self, const py::object& dim) { return self.squeeze(to_ints(dim, "dim")); },
      py::arg("dim"));
  tensor.def(
      "unsqueeze",
      [](const Tensor& self, const py::object& dim) { return self.unsqueeze(to_int(dim, "dim")); },
      py::arg("dim"));
  tensor.def(
      "permute",
      [](const Tensor& self, const py::object& dims) { return self.permute(to_ints(dims, "dims")); },
      py::arg("dims"));
  tensor.def(
      "flatten",
      [](const Tensor& self, const py::object& start_dim, const py::object& end_dim) {
        return self.flatten(optional_int(start_dim, "start_dim"), optional_int(end_dim, "end_dim"));
      },
      py::arg("start_dim") = py::none(), py::arg("end_dim") = py::none(),
      "Flatten dims [start_dim, end_dim) of this level into one (end_dim is exclusive).");
  tensor.def("ravel", &Tensor::ravel, "Join all levels into one.");
  tensor.def(
      "pad",
      [](const Tensor& self, const py::object& pad) {
        auto items = iterable_items(pad);
        if (!items) throw TypeError("`pad` must be a tuple of (before, after) pairs");
        std::vector<std::pair<Expr, Expr>> pads;
        for (auto pair : *items) {
          std::vector<Expr> values = to_exprs(pair, "a (before, after) pair");
          if (values.size() != 2) throw ValueError("each entry of `pad` must be a (before, after) pair");
          pads.emplace_back(values[0], values[1]);
        }
        return self.pad(pads);
      },
      py::arg("pad"));
  tensor.def("__getitem__", [](const Tensor& self, const py::object& key) {
    std::vector<IndexItem> items;
    if (py::isinstance<py::tuple>(key)) {
      for (auto item : py::reinterpret_borrow<py::tuple>(key)) items.push_back(to_index_item(item));
    } else {
      items.push_back(to_index_item(key));
    }
    return self.index(items);
  });
  tensor.def("eval", &evaluate, py::arg("subs") = py::none(),
             "Flat source offsets of every element (all levels' shapes joined), -1 where masked.");
  tensor.def(
      "subs",
      [](const Tensor& self, const py::object& subs) { return self.substituted(to_symbol_map(subs)); },
      py::arg("subs"), "The tensor (all levels and its source) with symbols substituted.");
  tensor.def("__repr__", [](const Tensor& self) { return describe(self); });

  m.def("eval", &evaluate, py::arg("tensor"), py::arg("subs") = py::none(),
        "Evaluate a symbolic tensor into a numpy array of source offsets (-1 where masked).");
  m.def(
      "subs",
      [](const TensorPtr& tensor, const py::object& subs) {
        return tensor->substituted(to_symbol_map(subs));
      },
      py::arg("tensor"), py::arg("subs"), "Substitute symbols in a symbolic tensor.");
}

}  // namespace nt::bindings
