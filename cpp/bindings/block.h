// The Python face of an IR value while an application is traced, shared by
// the kernel bindings and the language bindings.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "ir/ir.h"

namespace nt::bindings {

namespace py = pybind11;

// A block value inside an application being traced (`_core.Block`).
struct Block {
  ir::Value value;
};

// A Python operand of a block operation: a Block, a number or a Symbol.
ir::Value to_value(const py::handle& object);
// A shape: an int, a Symbol or a sequence of them.
std::vector<Expr> to_shape(const py::handle& object);
py::tuple shape_tuple(const std::vector<Expr>& shape);

void bind_language(py::module_& m);

}  // namespace nt::bindings
