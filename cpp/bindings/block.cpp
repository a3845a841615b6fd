#include "bindings/block.h"

#include "bindings/conversions.h"
#include "ir/builder.h"
#include "support/errors.h"

namespace nt::bindings {

using ir::Value;

Value to_value(const py::handle& object) {
  if (py::isinstance<Block>(object)) return object.cast<const Block&>().value;
  if (auto e = try_to_expr(object)) {
    if ((*e)->kind == ExprKind::Float || (*e)->kind == ExprKind::Int || (*e)->kind == ExprKind::Bool) {
      return ir::constant(*e);
    }
    for (const Expr& v : collect_vars(*e)) {
      if (!v->attrs.constexpr_ && !v->attrs.meta && v->name.find("_size_") == std::string::npos) {
        throw TypeError("the symbol '" + v->name + "' has no value inside a kernel");
      }
    }
    return ir::constant(*e);
  }
  throw TypeError("expected a block, a number or a Symbol, got " + type_name(object));
}

std::vector<Expr> to_shape(const py::handle& object) {
  std::vector<Expr> shape;
  if (py::isinstance<py::int_>(object) || py::isinstance<Expr>(object)) {
    shape.push_back(to_expr(object, "a shape"));
    return shape;
  }
  for (const py::handle& item : object) shape.push_back(to_expr(item, "a shape"));
  return shape;
}

py::tuple shape_tuple(const std::vector<Expr>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = from_expr(shape[i]);
  return t;
}

}  // namespace nt::bindings
