#include "bindings/conversions.h"

#include <string>

#include "support/errors.h"

namespace nt::bindings {

std::optional<Expr> try_to_expr(const py::handle& object) {
  if (py::isinstance<Expr>(object)) return object.cast<Expr>();
  if (py::isinstance<py::bool_>(object)) return bool_const(object.cast<bool>());
  if (py::isinstance<py::int_>(object)) return int_const(to_int(object, "integer"));
  if (py::isinstance<py::float_>(object)) return float_const(object.cast<double>());
  // numpy scalars and other objects that know how to be an index.
  if (PyIndex_Check(object.ptr())) return int_const(to_int(object, "integer"));
  return std::nullopt;
}

Expr to_expr(const py::handle& object, const char* what) {
  if (auto e = try_to_expr(object)) return *e;
  throw TypeError(std::string(what) + " must be an int, a float or a Symbol, not " + type_name(object));
}

std::string type_name(const py::handle& object) { return py::str(py::type::of(object).attr("__name__")); }

std::optional<int64_t> optional_int(const py::handle& object, const char* what) {
  if (object.is_none()) return std::nullopt;
  return to_int(object, what);
}

int64_t to_int(const py::handle& object, const char* what) {
  if (!PyIndex_Check(object.ptr()) || py::isinstance<py::bool_>(object)) {
    throw TypeError(std::string(what) + " must be an integer, not " + type_name(object));
  }
  int overflow = 0;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(object.ptr()));
  long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) throw std::overflow_error(std::string(what) + " does not fit in 64 bits");
  return value;
}

py::object from_expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int:
      return py::int_(e->int_value);
    case ExprKind::Bool:
      return py::bool_(e->int_value != 0);
    case ExprKind::Float:
      return py::float_(e->float_value);
    default:
      return py::cast(e);
  }
}

std::optional<py::tuple> iterable_items(const py::handle& object) {
  if (py::isinstance<py::tuple>(object)) return py::reinterpret_borrow<py::tuple>(object);
  if (py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object) ||
      py::isinstance<py::dict>(object) || py::isinstance<Tensor>(object) || !py::hasattr(object, "__iter__"))
    return std::nullopt;
  return py::tuple(py::reinterpret_borrow<py::object>(object));
}

SymbolMap to_symbol_map(const py::handle& subs) {
  SymbolMap map;
  if (subs.is_none()) return map;
  if (!py::isinstance<py::dict>(subs)) throw TypeError("`subs` must be a dict");
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(subs)) {
    if (py::isinstance<Tensor>(key)) {
      const Tensor& source = key.cast<TensorPtr>()->source_ref();
      auto require_sequence = [](const py::handle& item, const char* what) {
        auto items = iterable_items(item);
        if (!items)
          throw TypeError(std::string("`subs` ") + what + " must be a tuple, list or other iterable");
        return *items;
      };
      // A Tensor stands for its shape (its strides are then contiguous ones,
      // as upstream takes them); a dict gives "shape" and, optionally, "strides".
      std::vector<Expr> sizes;
      std::optional<py::tuple> strides;
      if (py::isinstance<Tensor>(value)) {
        sizes = value.cast<TensorPtr>()->shape();
      } else if (py::isinstance<py::dict>(value) && value.contains("shape")) {
        for (auto size : require_sequence(value["shape"], "\"shape\""))
          sizes.push_back(to_expr(size, "a size"));
        if (value.contains("strides")) strides = require_sequence(value["strides"], "\"strides\"");
      } else {
        throw TypeError("the value for a Tensor in `subs` must be a Tensor or a dict with a \"shape\", not " +
                        type_name(value));
      }
      if (sizes.size() != source.ndim()) {
        throw ValueError("`subs` gives " + std::to_string(sizes.size()) + " sizes for " + source.name() +
                         ", which has " + std::to_string(source.ndim()) + " dims");
      }
      for (size_t d = 0; d < source.ndim(); ++d) map[source.size_symbol(d)->name] = sizes[d];
      if (strides) {
        if (strides->size() != source.ndim()) {
          throw ValueError("`subs` gives " + std::to_string(strides->size()) + " strides for " +
                           source.name() + ", which has " + std::to_string(source.ndim()) + " dims");
        }
        for (size_t d = 0; d < source.ndim(); ++d) {
          map[source.stride_symbol(d)->name] = to_expr((*strides)[d], "a stride");
        }
      }
    } else if (py::isinstance<Expr>(key)) {
      Expr symbol = key.cast<Expr>();
      if (!symbol.is_var()) throw TypeError("`subs` keys must be names, not " + std::string(py::repr(key)));
      map[symbol->name] = to_expr(value, "a substituted value");
    } else if (py::isinstance<py::str>(key)) {
      map[key.cast<std::string>()] = to_expr(value, "a substituted value");
    } else {
      throw TypeError("`subs` keys must be Tensors, Symbols or names, not " + type_name(key));
    }
  }
  return map;
}

}  // namespace nt::bindings
