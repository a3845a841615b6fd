// Bindings of the Triton language's block operations (ir/block_ops.h,
// ir/math_fns.h) and of the Builder's statements beyond stores
// (atomics, device_print, device_assert, combine-function capture):
// conversion only.
#include <pybind11/stl.h>

#include <map>

#include "bindings/block.h"
#include "bindings/conversions.h"
#include "ir/block_ops.h"
#include "ir/builder.h"
#include "ir/math_fns.h"
#include "support/errors.h"

namespace nt::bindings {

namespace {

using ir::Value;

std::vector<Value> values(const py::handle& sequence) {
  std::vector<Value> out;
  for (const py::handle& item : sequence) out.push_back(to_value(item));
  return out;
}

py::list blocks(const std::vector<Value>& vs) {
  py::list out;
  for (const Value& v : vs) out.append(Block{v});
  return out;
}

Value optional_value(const py::object& object) { return object.is_none() ? Value() : to_value(object); }

ir::AtomicFn atomic_fn(const std::string& name) {
  static const std::map<std::string, ir::AtomicFn> fns = {
      {"add", ir::AtomicFn::Add},   {"max", ir::AtomicFn::Max}, {"min", ir::AtomicFn::Min},
      {"and", ir::AtomicFn::And},   {"or", ir::AtomicFn::Or},   {"xor", ir::AtomicFn::Xor},
      {"xchg", ir::AtomicFn::Xchg}, {"cas", ir::AtomicFn::Cas}};
  auto it = fns.find(name);
  if (it == fns.end()) throw ValueError("unknown atomic '" + name + "'");
  return it->second;
}

}  // namespace

void bind_language(py::module_& m) {
  m.def("block_call",
        [](const std::string& name, const py::list& args) { return Block{ir::call(name, values(args))}; });
  m.def("is_call_fn", &ir::is_call_fn);
  m.def("block_broadcast_to", [](const py::object& x, const py::object& shape) {
    return Block{ir::broadcast_to(to_value(x), to_shape(shape))};
  });
  m.def("block_expand_dims",
        [](const py::object& x, int axis) { return Block{ir::expand_dims(to_value(x), axis)}; });
  m.def("block_reshape", [](const py::object& x, const py::object& shape) {
    return Block{ir::reshape(to_value(x), to_shape(shape))};
  });
  m.def("block_permute", [](const py::object& x, const std::vector<int>& dims) {
    return Block{ir::permute(to_value(x), dims)};
  });
  m.def("block_flip", [](const py::object& x, int dim) { return Block{ir::flip(to_value(x), dim)}; });
  m.def("block_cat",
        [](const py::object& a, const py::object& b) { return Block{ir::cat(to_value(a), to_value(b))}; });
  m.def("block_join",
        [](const py::object& a, const py::object& b) { return Block{ir::join(to_value(a), to_value(b))}; });
  m.def("block_take", [](const py::object& x, int k) { return Block{ir::take(to_value(x), k)}; });
  m.def("block_combine_arg", [](int index, DType dtype) { return Block{ir::combine_arg(index, dtype)}; });
  m.def("block_combine", [](const py::list& inputs, const py::list& results, std::optional<int> axis,
                            bool scan, bool keep_dims, bool reverse) {
    return blocks(ir::combine(values(inputs), values(results), axis, scan, keep_dims, reverse));
  });
  m.def("block_sort", [](const py::object& x, int dim, bool descending, const py::object& k) {
    std::optional<Expr> count;
    if (!k.is_none()) count = to_expr(k, "topk's k");
    return Block{ir::sort(to_value(x), dim, descending, count)};
  });
  m.def("block_gather", [](const py::object& src, const py::object& index, int axis) {
    return Block{ir::gather(to_value(src), to_value(index), axis)};
  });
  m.def("block_histogram", [](const py::object& x, int bins, const py::object& mask) {
    return Block{ir::histogram(to_value(x), bins, optional_value(mask))};
  });

  auto builder = py::reinterpret_borrow<py::class_<ir::Builder>>(m.attr("Builder"));
  builder
      .def("atomic",
           [](ir::Builder& b, const std::string& fn, const py::object& pointers, const py::object& value,
              const py::object& mask, const py::object& compare) {
             return Block{b.atomic(atomic_fn(fn), to_value(pointers), to_value(value), optional_value(mask),
                                   optional_value(compare))};
           })
      .def("device_print", [](ir::Builder& b, const std::string& prefix, const py::list& args,
                              bool hex) { b.device_print(prefix, values(args), hex); })
      .def(
          "device_assert",
          [](ir::Builder& b, const py::object& condition, const std::string& message,
             const py::object& mask) { b.device_assert(to_value(condition), message, optional_value(mask)); })
      .def("begin_capture", &ir::Builder::begin_capture)
      .def("end_capture",
           [](ir::Builder& b, const py::list& results) { return blocks(b.end_capture(values(results))); });
}

}  // namespace nt::bindings
