// Conversions between Python objects and core values, shared by the bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "symbolic/expr.h"
#include "symbolic/substitute.h"
#include "tensor/tensor.h"

namespace nt::bindings {

namespace py = pybind11;

// An int, bool, float, numpy scalar or Symbol as an Expr; nullopt otherwise.
std::optional<Expr> try_to_expr(const py::handle& object);
// The same, raising TypeError naming `what` when `object` is not a number or Symbol.
Expr to_expr(const py::handle& object, const char* what);
// An Expr as Python sees it: int or bool for constants, float for float
// constants, Symbol otherwise.
py::object from_expr(const Expr& e);
// A Python int (or integer numpy scalar) as int64.
int64_t to_int(const py::handle& object, const char* what);
// None as nullopt, else to_int.
std::optional<int64_t> optional_int(const py::handle& object, const char* what);
// The items of a tuple, list or any other iterable, as a tuple (a generator is read here, once);
// nullopt for str, bytes, dict, Tensor and objects that are not iterable. Upstream iterates the
// arguments that take several values (shape, shape_options, tile shapes, ...): any iterable works.
std::optional<py::tuple> iterable_items(const py::handle& object);
// The name of `object`'s type, for error messages.
std::string type_name(const py::handle& object);

// `subs` of Tensor.eval / Tensor.subs: {Tensor: {"shape": ..., "strides": ...},
// Symbol: value, "name": value} as a map from symbol names to values.
SymbolMap to_symbol_map(const py::handle& subs);

// Symbol options (`constexpr`, `meta`, bounds, `power_of_two`) with
// NineToothed's defaults: meta symbols range over powers of two in [32, 1024],
// other constexpr symbols over [1, 2**20].
SymbolAttrs symbol_attrs(const py::object& constexpr_, const py::object& meta, const py::object& lower_bound,
                         const py::object& upper_bound, const py::object& power_of_two,
                         const std::string& name);

void bind_symbol(py::module_& m);
void bind_tensor(py::module_& m);
// After bind_symbol and bind_tensor: copy and pickle support for both.
void bind_pickle(py::module_& m);
void bind_kernel(py::module_& m);
void bind_device(py::module_& m);
void bind_launch(py::module_& m);

}  // namespace nt::bindings
