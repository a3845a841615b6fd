// Python's `ninetoothed.Symbol` and `ninetoothed.block_size`, over nt::Expr.
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "bindings/conversions.h"
#include "support/errors.h"
#include "symbolic/parser.h"
#include "symbolic/printer.h"

namespace nt::bindings {

namespace {

constexpr int64_t kMetaLowerBound = 32;
constexpr int64_t kMetaUpperBound = 1024;

}  // namespace

SymbolAttrs symbol_attrs(const py::object& constexpr_, const py::object& meta, const py::object& lower_bound,
                         const py::object& upper_bound, const py::object& power_of_two,
                         const std::string& name) {
  bool is_constexpr = !constexpr_.is_none() && constexpr_.cast<bool>();
  bool is_meta = !meta.is_none() && meta.cast<bool>();
  if (is_meta && !constexpr_.is_none() && !is_constexpr) {
    throw ValueError(
        "a meta symbol is always constexpr; `constexpr=False` cannot be combined with `meta=True`");
  }
  SymbolAttrs attrs;
  attrs.meta = is_meta;
  attrs.constexpr_ = is_constexpr || is_meta;
  if (is_meta) {
    attrs.lower_bound = kMetaLowerBound;
    attrs.upper_bound = kMetaUpperBound;
    attrs.power_of_two = true;
  }  // a constexpr symbol takes any integer (0 and negative included) unless bounds are given
  if (auto value = optional_int(lower_bound, "lower_bound")) attrs.lower_bound = value;
  if (auto value = optional_int(upper_bound, "upper_bound")) attrs.upper_bound = value;
  if (!power_of_two.is_none()) attrs.power_of_two = power_of_two.cast<bool>();
  if (attrs.lower_bound && attrs.upper_bound && *attrs.lower_bound > *attrs.upper_bound) {
    throw ValueError("symbol '" + name + "' has lower_bound " + std::to_string(*attrs.lower_bound) +
                     " above its upper_bound " + std::to_string(*attrs.upper_bound));
  }
  return attrs;
}

namespace {

Expr make_symbol(const py::object& expr, const py::object& constexpr_, const py::object& meta,
                 const py::object& lower_bound, const py::object& upper_bound,
                 const py::object& power_of_two) {
  bool has_options =
      (!constexpr_.is_none() && constexpr_.cast<bool>()) || (!meta.is_none() && meta.cast<bool>());
  if (!py::isinstance<py::str>(expr)) {
    if (has_options) throw ValueError("the `constexpr` and `meta` options are properties of name symbols");
    return to_expr(expr, "Symbol's expr");
  }
  auto text = expr.cast<std::string>();
  if (!is_identifier(text)) {
    if (has_options) {
      throw ValueError("the `constexpr` and `meta` options are properties of name symbols, and '" + text +
                       "' is not a name");
    }
    return parse_python_expr(text);
  }
  return var(text, symbol_attrs(constexpr_, meta, lower_bound, upper_bound, power_of_two, text));
}

// Binary operator on (Symbol, other) returning int/bool/Symbol, or NotImplemented.
template <typename F>
auto binary_operator(F build, bool reflected = false) {
  return [build, reflected](const Expr& self, const py::object& other) -> py::object {
    auto operand = try_to_expr(other);
    if (!operand) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return from_expr(reflected ? build(*operand, self) : build(self, *operand));
  };
}

const SymbolAttrs& attrs_of(const Expr& self) {
  static const SymbolAttrs kNone;
  return self.is_var() ? self->attrs : kNone;
}

}  // namespace

void bind_symbol(py::module_& m) {
  py::class_<Expr> symbol(m, "Symbol", R"doc(A symbolic name or expression.

Symbol(expr, constexpr=None, meta=None, lower_bound=None, upper_bound=None,
power_of_two=None). `expr` is a name, a number or a Python expression string.
`meta=True` lets the compiler choose the value (auto-tuning) and implies
constexpr; `constexpr=True` means the caller passes the value at launch by
the symbol's name. Arithmetic builds expressions; results that are integer
constants are plain ints.)doc");
  symbol.def(py::init(&make_symbol), py::arg("expr"), py::arg("constexpr") = py::none(),
             py::arg("meta") = py::none(), py::arg("lower_bound") = py::none(),
             py::arg("upper_bound") = py::none(), py::arg("power_of_two") = py::none());
  symbol.def("__repr__", [](const Expr& self) { return to_python(self); });
  symbol.def("__str__", [](const Expr& self) { return to_python(self); });
  symbol.def("__hash__", [](const Expr& self) { return py::hash(py::str(to_python(self))); });
  symbol.def("__eq__", [](const Expr& self, const py::object& other) {
    auto operand = try_to_expr(other);
    return operand && equal(self, *operand);
  });
  symbol.def("__ne__", [](const Expr& self, const py::object& other) {
    auto operand = try_to_expr(other);
    return !(operand && equal(self, *operand));
  });
  symbol.def("__add__", binary_operator(add));
  symbol.def("__radd__", binary_operator(add, true));
  symbol.def("__sub__", binary_operator(sub));
  symbol.def("__rsub__", binary_operator(sub, true));
  symbol.def("__mul__", binary_operator(mul));
  symbol.def("__rmul__", binary_operator(mul, true));
  symbol.def("__floordiv__", binary_operator(floordiv));
  symbol.def("__rfloordiv__", binary_operator(floordiv, true));
  symbol.def("__mod__", binary_operator(mod));
  symbol.def("__rmod__", binary_operator(mod, true));
  symbol.def("__truediv__", binary_operator(truediv));
  symbol.def("__rtruediv__", binary_operator(truediv, true));
  symbol.def("__lt__", binary_operator(lt));
  symbol.def("__le__", binary_operator(le));
  symbol.def("__gt__", binary_operator(gt));
  symbol.def("__ge__", binary_operator(ge));
  auto bit_and = [](const Expr& a, const Expr& b) { return binary(BinaryOp::BitAnd, a, b); };
  auto bit_or = [](const Expr& a, const Expr& b) { return binary(BinaryOp::BitOr, a, b); };
  symbol.def("__and__", binary_operator(bit_and));
  symbol.def("__rand__", binary_operator(bit_and, true));
  symbol.def("__or__", binary_operator(bit_or));
  symbol.def("__ror__", binary_operator(bit_or, true));
  symbol.def("__neg__", [](const Expr& self) { return from_expr(neg(self)); });
  symbol.def("__pos__", [](const Expr& self) { return self; });
  symbol.def("__bool__", [](const Expr& self) -> bool {
    if (self->kind == ExprKind::Bool || self.is_int()) return self->int_value != 0;
    throw TypeError("the truth value of symbolic expression '" + to_python(self) + "' is unknown");
  });
  symbol.def_property_readonly("name", [](const Expr& self) -> py::object {
    if (!self.is_var()) return py::none();
    return py::str(self->name);
  });
  symbol.def_property_readonly("constexpr", [](const Expr& self) { return attrs_of(self).constexpr_; });
  symbol.def_property_readonly("meta", [](const Expr& self) { return attrs_of(self).meta; });
  symbol.def_property_readonly("lower_bound", [](const Expr& self) { return attrs_of(self).lower_bound; });
  symbol.def_property_readonly("upper_bound", [](const Expr& self) { return attrs_of(self).upper_bound; });
  symbol.def_property_readonly("power_of_two", [](const Expr& self) { return attrs_of(self).power_of_two; });
  symbol.def(
      "subs",
      [](const Expr& self, const py::dict& subs) { return from_expr(substitute(self, to_symbol_map(subs))); },
      py::arg("subs"), "The expression with symbols replaced ({Symbol or name: value}).");

  m.def(
      "block_size",
      [](const py::object& lower_bound, const py::object& upper_bound) {
        static std::atomic<int64_t> count{0};
        std::string name = "ninetoothed_BLOCK_SIZE_" + std::to_string(count++);
        return make_symbol(py::str(name), py::none(), py::bool_(true), lower_bound, upper_bound, py::none());
      },
      py::arg("lower_bound") = py::none(), py::arg("upper_bound") = py::none(),
      "A fresh meta symbol for a block size (a power of two chosen by the compiler).");
}

}  // namespace nt::bindings
