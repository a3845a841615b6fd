// Bindings of the kernel IR builder and of compiled kernels: conversion only.
//
// `Block` is an IR value as the frontend (python/ninetoothed/_frontend.py)
// handles it while tracing an application: Python operators build IR nodes.
// `Builder` records statements; `CompiledKernel` generates and launches.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/block.h"
#include "bindings/conversions.h"
#include "driver/compiled_kernel.h"
#include "ir/builder.h"
#include "ir/math_fns.h"
#include "ir/printer.h"
#include "support/errors.h"

namespace nt::bindings {

namespace {

using ir::BinaryFn;
using ir::UnaryFn;
using ir::Value;

const std::map<std::string, UnaryFn>& unary_fns() {
  static const std::map<std::string, UnaryFn> fns = {
      {"neg", UnaryFn::Neg},     {"not", UnaryFn::Not},         {"invert", UnaryFn::BitNot},
      {"exp", UnaryFn::Exp},     {"exp2", UnaryFn::Exp2},       {"log", UnaryFn::Log},
      {"log2", UnaryFn::Log2},   {"sqrt", UnaryFn::Sqrt},       {"rsqrt", UnaryFn::Rsqrt},
      {"abs", UnaryFn::Abs},     {"sigmoid", UnaryFn::Sigmoid}, {"sin", UnaryFn::Sin},
      {"cos", UnaryFn::Cos},     {"tanh", UnaryFn::Tanh},       {"erf", UnaryFn::Erf},
      {"floor", UnaryFn::Floor}, {"ceil", UnaryFn::Ceil},       {"tan", UnaryFn::Tan},
      {"asin", UnaryFn::Asin},   {"acos", UnaryFn::Acos},       {"atan", UnaryFn::Atan},
      {"sinh", UnaryFn::Sinh},   {"cosh", UnaryFn::Cosh},       {"log1p", UnaryFn::Log1p},
      {"expm1", UnaryFn::Expm1}, {"cbrt", UnaryFn::Cbrt},       {"log10", UnaryFn::Log10},
      {"exp10", UnaryFn::Exp10}, {"trunc", UnaryFn::Trunc},     {"round", UnaryFn::Round}};
  return fns;
}

const std::map<std::string, BinaryFn>& binary_fns() {
  static const std::map<std::string, BinaryFn> fns = {{"add", BinaryFn::Add},
                                                      {"sub", BinaryFn::Sub},
                                                      {"mul", BinaryFn::Mul},
                                                      {"truediv", BinaryFn::Div},
                                                      {"floordiv", BinaryFn::FloorDiv},
                                                      {"mod", BinaryFn::Mod},
                                                      {"lt", BinaryFn::Lt},
                                                      {"le", BinaryFn::Le},
                                                      {"gt", BinaryFn::Gt},
                                                      {"ge", BinaryFn::Ge},
                                                      {"eq", BinaryFn::Eq},
                                                      {"ne", BinaryFn::Ne},
                                                      {"and", BinaryFn::LogicalAnd},
                                                      {"or", BinaryFn::LogicalOr},
                                                      {"bitand", BinaryFn::BitAnd},
                                                      {"bitor", BinaryFn::BitOr},
                                                      {"bitxor", BinaryFn::BitXor},
                                                      {"maximum", BinaryFn::Maximum},
                                                      {"minimum", BinaryFn::Minimum},
                                                      {"pow", BinaryFn::Pow},
                                                      {"lshift", BinaryFn::LShift},
                                                      {"rshift", BinaryFn::RShift}};
  return fns;
}

const std::map<std::string, ir::ReduceFn>& reduce_fns() {
  static const std::map<std::string, ir::ReduceFn> fns = {{"sum", ir::ReduceFn::Sum},
                                                          {"max", ir::ReduceFn::Max},
                                                          {"min", ir::ReduceFn::Min},
                                                          {"argmax", ir::ReduceFn::ArgMax},
                                                          {"argmin", ir::ReduceFn::ArgMin}};
  return fns;
}

template <typename Map>
auto lookup(const Map& map, const std::string& name, const char* what) {
  auto it = map.find(name);
  if (it == map.end()) throw ValueError(std::string("unknown ") + what + " '" + name + "'");
  return it->second;
}

Block binary(const std::string& name, const py::handle& a, const py::handle& b) {
  return Block{ir::binary(lookup(binary_fns(), name, "operation"), to_value(a), to_value(b))};
}

// `x[:, None]`, `x[None, :]`, `x[...]`: axes inserted where None stands.
Block index_block(const Block& block, const py::handle& key) {
  const Value& x = block.value;
  py::tuple items = py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  Value v = x;
  size_t dim = 0;
  size_t explicit_dims = 0;
  for (const py::handle& item : items) {
    if (py::isinstance<py::slice>(item)) ++explicit_dims;
  }
  for (const py::handle& item : items) {
    if (item.is_none()) {
      v = ir::expand_dims(v, static_cast<int>(dim));
      ++dim;
    } else if (py::isinstance<py::slice>(item)) {
      py::slice s = item.cast<py::slice>();
      if (!s.attr("start").is_none() || !s.attr("stop").is_none() || !s.attr("step").is_none()) {
        throw TypeError("blocks can be indexed only with ':' and None (e.g. x[:, None])");
      }
      ++dim;
    } else if (item.ptr() == Py_Ellipsis) {
      dim += x->type.ndim() - explicit_dims;
    } else {
      throw TypeError("blocks can be indexed only with ':' and None (e.g. x[:, None]), got " +
                      type_name(item));
    }
  }
  return Block{v};
}

std::vector<Value> to_values(const py::list& items) {
  std::vector<Value> values;
  for (const py::handle& i : items) values.push_back(to_value(i));
  return values;
}

LaunchArg to_launch_arg(const py::handle& item) {
  if (py::isinstance<py::tuple>(item)) {
    auto t = item.cast<py::tuple>();
    TensorArg arg;
    arg.data = reinterpret_cast<void*>(t[0].cast<uintptr_t>());
    arg.shape = t[1].cast<std::vector<int64_t>>();
    arg.strides = t[2].cast<std::vector<int64_t>>();
    return arg;
  }
  ScalarArg s;
  if (py::isinstance<py::float_>(item)) {
    s.is_float = true;
    s.float_value = item.cast<double>();
  } else {
    s.int_value = item.cast<int64_t>();
  }
  return s;
}

}  // namespace

void bind_kernel(py::module_& m) {
  py::class_<Block> block(m, "Block", "A block value inside an application being traced.");
  block.def_property_readonly("shape", [](const Block& b) { return shape_tuple(b.value->type.shape); })
      .def_property_readonly("ndim", [](const Block& b) { return b.value->type.ndim(); })
      .def_property_readonly("dtype", [](const Block& b) { return b.value->type.dtype; })
      .def("to", [](const Block& b, DType dtype) { return Block{ir::cast(b.value, dtype)}; })
      .def("__getitem__", &index_block)
      .def("__neg__", [](const Block& b) { return Block{ir::unary(UnaryFn::Neg, b.value)}; })
      .def("__pos__", [](const Block& b) { return b; })
      .def("__invert__", [](const Block& b) { return Block{ir::unary(UnaryFn::BitNot, b.value)}; })
      .def(
          "__bool__",
          [](const Block&) -> bool {
            throw TypeError("a block has no truth value while tracing; use ntl.where, or a scalar condition");
          })
      .def("__repr__", [](const Block& b) { return "Block(" + ir::type_string(b.value->type) + ")"; });
  for (const auto& [py_name, fn] : std::vector<std::pair<std::string, std::string>>{{"add", "add"},
                                                                                    {"sub", "sub"},
                                                                                    {"mul", "mul"},
                                                                                    {"truediv", "truediv"},
                                                                                    {"floordiv", "floordiv"},
                                                                                    {"mod", "mod"},
                                                                                    {"and", "bitand"},
                                                                                    {"or", "bitor"},
                                                                                    {"xor", "bitxor"},
                                                                                    {"pow", "pow"},
                                                                                    {"lshift", "lshift"},
                                                                                    {"rshift", "rshift"}}) {
    std::string op = fn;
    block.def(("__" + py_name + "__").c_str(),
              [op](const py::object& a, const py::object& b) { return binary(op, a, b); });
    block.def(("__r" + py_name + "__").c_str(),
              [op](const py::object& a, const py::object& b) { return binary(op, b, a); });
  }
  for (const auto& [py_name, fn] : std::vector<std::pair<std::string, std::string>>{
           {"lt", "lt"}, {"le", "le"}, {"gt", "gt"}, {"ge", "ge"}, {"eq", "eq"}, {"ne", "ne"}}) {
    std::string op = fn;
    block.def(("__" + py_name + "__").c_str(),
              [op](const py::object& a, const py::object& b) { return binary(op, a, b); });
  }
  block.attr("__hash__") = py::none();

  m.def("block_constant", [](const py::object& value) { return Block{to_value(value)}; });
  m.def("block_typed_constant", [](const py::object& value, DType dtype) {
    return Block{ir::typed_constant(to_expr(value, "a constant"), dtype)};
  });
  m.def("block_unary", [](const std::string& name, const py::object& x) {
    return Block{ir::unary(lookup(unary_fns(), name, "function"), to_value(x))};
  });
  m.def("block_binary", &binary);
  m.def("block_where", [](const py::object& c, const py::object& a, const py::object& b) {
    return Block{ir::where(to_value(c), to_value(a), to_value(b))};
  });
  m.def(
      "block_cast",
      [](const py::object& x, DType dtype, bool bitcast) {
        return Block{bitcast ? ir::bitcast(to_value(x), dtype) : ir::cast(to_value(x), dtype)};
      },
      py::arg("x"), py::arg("dtype"), py::arg("bitcast") = false);
  m.def("block_trans", [](const py::object& x) { return Block{ir::trans(to_value(x))}; });
  m.def("block_reduce",
        [](const std::string& name, const py::object& x, std::optional<int> axis, bool keep_dims) {
          return Block{ir::reduce(lookup(reduce_fns(), name, "reduction"), to_value(x), axis, keep_dims)};
        });
  m.def(
      "block_dot",
      [](const py::object& a, const py::object& b, const std::string& precision) {
        static const std::map<std::string, ir::DotPrecision> precisions = {
            {"ieee", ir::DotPrecision::Ieee},
            {"tf32", ir::DotPrecision::Tf32},
            {"tf32x3", ir::DotPrecision::Tf32x3}};
        return Block{ir::dot(to_value(a), to_value(b), lookup(precisions, precision, "input_precision"))};
      },
      py::arg("a"), py::arg("b"), py::arg("input_precision") = "ieee");
  m.def("block_arange", [](const py::object& start, const py::object& end) {
    return Block{ir::arange(to_expr(start, "arange's start"), to_expr(end, "arange's end"))};
  });
  m.def("block_full", [](const py::object& shape, const py::object& value, DType dtype) {
    return Block{ir::full(to_shape(shape), to_value(value), dtype)};
  });
  m.def("block_fma", [](const py::object& a, const py::object& b, const py::object& c) {
    return Block{ir::fma(to_value(a), to_value(b), to_value(c))};
  });
  m.def("block_random", [](const py::object& seed, const py::object& offsets, bool normal) {
    return Block{ir::random(to_value(seed), to_value(offsets), normal)};
  });
  m.def("block_loop_var", [](const std::string& name) { return Block{ir::loop_var(name)}; });
  m.def("is_block", [](const py::handle& o) { return py::isinstance<Block>(o); });

  py::class_<ir::Builder>(m, "Builder", "Records the IR of one application being traced.")
      .def(py::init<std::string>())
      .def(
          "add_param",
          [](ir::Builder& b, const std::string& name, const TensorPtr& arranged, DType dtype, bool scalar,
             bool constexpr_) {
            return b.add_param(ir::Param{name, arranged, dtype, scalar, constexpr_});
          },
          py::arg("name"), py::arg("arranged"), py::arg("dtype"), py::arg("scalar"), py::arg("constexpr"))
      .def("load",
           [](ir::Builder& b, int param, const py::list& indices) {
             std::vector<Value> values;
             for (const py::handle& i : indices) values.push_back(to_value(i));
             return Block{b.load(param, values)};
           })
      .def("offsets", [](ir::Builder& b, const Block& block,
                         std::optional<int> dim) { return Block{b.offsets(block.value, dim)}; })
      .def("pointer_base", [](ir::Builder& b, int param) { return Block{b.pointer_base(param)}; })
      .def("load_pointer",
           [](ir::Builder& b, const py::object& pointers, const py::object& mask, const py::object& other) {
             return Block{b.load_pointer(to_value(pointers), mask.is_none() ? Value() : to_value(mask),
                                         other.is_none() ? Value() : to_value(other))};
           })
      .def("store_pointer",
           [](ir::Builder& b, const py::object& pointers, const py::object& value, const py::object& mask,
              bool atomic_add) {
             b.store_pointer(to_value(pointers), to_value(value), mask.is_none() ? Value() : to_value(mask),
                             atomic_add);
           })
      .def("program_id", [](ir::Builder& b, int axis) { return Block{b.program_id(axis)}; })
      .def("num_programs", [](ir::Builder& b, int axis) { return Block{b.num_programs(axis)}; })
      .def("level_shapes",
           [](ir::Builder& b, int param) {
             py::list shapes;
             for (const Tensor* level : b.param(param).inner_levels())
               shapes.append(shape_tuple(level->shape()));
             return shapes;
           })
      .def("middle_shape",
           [](ir::Builder& b, int param) { return shape_tuple(b.param(param).middle_shape()); })
      .def("block_shape", [](ir::Builder& b, int param) { return shape_tuple(b.param(param).block_shape()); })
      .def("load_at",
           [](ir::Builder& b, int param, const py::list& middle, const py::list& positions) {
             return Block{b.load_at(param, to_values(middle), to_values(positions))};
           })
      .def("store_at",
           [](ir::Builder& b, int param, const py::list& middle, const py::list& positions,
              const py::object& v) {
             b.store_at(param, to_values(middle), to_values(positions), to_value(v));
           })
      .def("let", [](ir::Builder& b, const py::object& v) { return Block{b.let(to_value(v))}; })
      .def("declare_local", [](ir::Builder& b, const py::object& v) { return b.declare_local(to_value(v)); })
      .def("local_ref", [](ir::Builder& b, int id) { return Block{b.local_ref(id)}; })
      .def("assign", [](ir::Builder& b, int id, const py::object& v) { b.assign(id, to_value(v)); })
      .def("store",
           [](ir::Builder& b, int param, const py::list& indices, const py::object& v) {
             std::vector<Value> values;
             for (const py::handle& i : indices) values.push_back(to_value(i));
             b.store(param, values, to_value(v));
           })
      .def("begin_for",
           [](ir::Builder& b, const std::string& var, const py::object& start, const py::object& stop,
              const py::object& step) { b.begin_for(var, to_value(start), to_value(stop), to_value(step)); })
      .def("end_for", &ir::Builder::end_for)
      .def("begin_if", [](ir::Builder& b, const py::object& c) { b.begin_if(to_value(c)); })
      .def("begin_else", &ir::Builder::begin_else)
      .def("end_if", &ir::Builder::end_if)
      .def("finish", [](ir::Builder& b) { return std::make_shared<CompiledKernel>(b.finish()); });

  py::class_<CompiledKernel, std::shared_ptr<CompiledKernel>>(
      m, "CompiledKernel", "One specialisation of a kernel, ready to launch.")
      .def(py::init([](const py::bytes& plan) {
             return std::make_shared<CompiledKernel>(parse_launch_plan(plan));
           }),
           py::arg("launch_plan"),
           "A kernel from a launch plan's text (what an ahead-of-time library embeds).")
      .def_property_readonly("source", &CompiledKernel::source)
      .def_property_readonly("last_options", &CompiledKernel::last_options,
                             "The build options of the last launch (its configuration's macros).")
      .def_property_readonly(
          "cuda_source", [](const CompiledKernel& k) { return k.cuda_source().source; },
          "The kernel in CUDA C, as NVRTC compiles it for CUDA tensors (made on first use).")
      .def(
          "cuda_shared_bytes",
          [](const CompiledKernel& k,
             const std::map<std::string, int64_t>& values) -> std::optional<int64_t> {
            SymbolMap symbols;
            for (const auto& [name, value] : values) symbols.emplace(name, Expr(value));
            return evaluate_int(k.cuda_source().local_bytes, symbols);
          },
          py::arg("values"),
          "The shared memory a program of the CUDA C source takes (the bound a launch asks for), given "
          "its symbols' values: block sizes by name, nt_work_items, nt_mma_layout, nt_stages and "
          "nt_wgmma_defer (codegen/c/kernel_source.h); None where one is missing.")
      .def(
          "launch_plan",
          [](const CompiledKernel& k, const std::optional<std::map<int, double>>& fixed_scalars, bool cuda) {
            LaunchPlan plan = k.plan();
            if (fixed_scalars) plan.fixed_scalars = *fixed_scalars;
            if (cuda) {
              plan.cuda_source = k.cuda_source();
              // The plan keeps one list of arguments: both sources take the same.
              const auto& a = plan.source.args;
              const auto& b = plan.cuda_source->args;
              bool same = a.size() == b.size();
              for (size_t i = 0; same && i < a.size(); ++i)
                same = a[i].kind == b[i].kind && a[i].param == b[i].param && a[i].dim == b[i].dim &&
                       a[i].symbol == b[i].symbol;
              if (!same) throw ValueError("the kernel's CUDA C takes other arguments than its OpenCL C");
            }
            return py::bytes(format_launch_plan(plan));
          },
          py::arg("fixed_scalars") = py::none(), py::arg("cuda") = false,
          "The launch plan as text; `fixed_scalars` ({param index: value}) replaces its fixed constexpr "
          "scalars; `cuda`: with the kernel's CUDA C (for caller='cuda').")
      .def("cuda_build_variants", &CompiledKernel::cuda_build_variants, py::arg("architecture"),
           "The build options of every configuration a launch on `architecture` may need (what an "
           "ahead-of-time CUDA library compiles).")
      .def(
          "add_cuda_image",
          [](CompiledKernel& k, std::string architecture, std::string options, const py::bytes& image) {
            k.add_cuda_image(std::move(architecture), std::move(options), std::string(image));
          },
          py::arg("architecture"), py::arg("options"), py::arg("image"),
          "Launches with that configuration load `image` (a cubin or PTX) instead of compiling.")
      .def_property_readonly("ir", [](const CompiledKernel& k) { return ir::to_string(k.lowered()); })
      .def_property_readonly("constexpr_symbols", &CompiledKernel::constexpr_symbols)
      .def_property_readonly("meta_symbols", &CompiledKernel::meta_symbols)
      .def_property_readonly("default_config", &CompiledKernel::default_config)
      .def("set_max_num_configs", &CompiledKernel::set_max_num_configs)
      .def("set_num_warps", &CompiledKernel::set_num_warps, py::arg("num_warps"))
      .def("set_tuning_candidates", &CompiledKernel::set_tuning_candidates, py::arg("num_warps"),
           py::arg("num_stages"))
      .def_property_readonly("last_work_items", &CompiledKernel::last_work_items,
                             "The work-items each program of the last launch ran on.")
      .def("tuning_report",
           [](const CompiledKernel& k) {
             py::list records;
             for (const TuningRecord& r : k.tuning_report()) {
               py::dict record;
               record["key"] = r.key;
               py::list candidates;
               for (const auto& [config, seconds] : r.candidates)
                 candidates.append(py::make_tuple(config, seconds));
               record["candidates"] = candidates;
               record["chosen"] = r.chosen;
               record["from_disk"] = r.from_disk;
               record["one_build"] = r.one_build;
               record["compiled_by_helpers"] = r.compiled_by_helpers;
               record["helpers_started"] = r.helpers_started;
               record["helpers_failed"] = r.helpers_failed;
               records.append(record);
             }
             return records;
           })
      .def(
          "launch",
          [](CompiledKernel& k, const py::list& args, const SymbolValues& constexpr_values,
             const std::optional<SymbolValues>& config) {
            std::vector<LaunchArg> launch_args;
            launch_args.reserve(args.size());
            for (const py::handle& a : args) launch_args.push_back(to_launch_arg(a));
            py::gil_scoped_release release;
            return k.launch(launch_args, constexpr_values, config);
          },
          py::arg("args"), py::arg("constexpr_values"), py::arg("config") = py::none());
}

}  // namespace nt::bindings
