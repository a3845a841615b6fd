// Bindings of a kernel's launch: Python arguments -> one C++ launch.
//
// In: the arguments of a kernel call (torch CPU tensors, numpy arrays,
// Python/torch/numpy scalars), its constexpr keywords and the pinned
// configuration. Out: the specialisation's signature (tensor dtypes, scalar
// kinds, constexpr scalars' values), its CompiledKernel (traced through the
// Python callback on the first call of a signature) launched with pointers,
// shapes and strides in elements, and the disk cache's warning if any.
// Conversion only: what a launch means is CompiledKernel's. One call per
// launch, so the per-argument work happens here rather than in Python
// (python/ninetoothed/kernel.py keeps the error messages' wording in step).
//
// Threads: the table of specialisations is touched only while the GIL is
// held, and no iterator of it outlives a call back into Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings/conversions.h"
#include "driver/compiled_kernel.h"
#include "runtime/disk_cache.h"
#include "runtime/workspace_pool.h"
#include "support/errors.h"
#include "tensor/dtype.h"

namespace nt::bindings {

namespace {

struct ParamSpec {
  std::string name;
  bool scalar = false;
  bool constexpr_ = false;
  std::optional<DType> dtype;  // declared
  size_t ndim = 0;             // of the source tensor
  int jagged_dim = -1;         // a jagged tensor's ragged dimension
};

std::string text_of(const py::handle& object) { return py::str(object).cast<std::string>(); }

// Types seen to be torch tensors (module "torch..."), held so their addresses stay theirs.
bool is_torch_type(PyTypeObject* type) {
  static auto& known = *new std::vector<py::object>;  // never destroyed: outlives the interpreter
  for (const py::object& k : known)
    if (reinterpret_cast<PyTypeObject*>(k.ptr()) == type) return true;
  py::handle t(reinterpret_cast<PyObject*>(type));
  if (!py::hasattr(t, "__module__") || !py::isinstance<py::str>(t.attr("__module__"))) return false;
  if (t.attr("__module__").cast<std::string>().rfind("torch", 0) != 0) return false;
  known.push_back(py::reinterpret_borrow<py::object>(t));
  return true;
}

bool is_numpy_array_type(PyTypeObject* type) { return std::strcmp(type->tp_name, "numpy.ndarray") == 0; }

bool is_numpy_type(PyTypeObject* type) {
  py::handle t(reinterpret_cast<PyObject*>(type));
  if (!py::hasattr(t, "__module__") || !py::isinstance<py::str>(t.attr("__module__"))) return false;
  return t.attr("__module__").cast<std::string>() == "numpy";
}

// torch dtype objects -> DType (filled on the first torch tensor).
const std::vector<std::pair<py::object, DType>>& torch_dtypes() {
  static auto& table = *new std::vector<std::pair<py::object, DType>>([] {
    std::vector<std::pair<py::object, DType>> t;
    py::module_ torch = py::module_::import("torch");
    for (const auto& [name, dtype] :
         std::vector<std::pair<const char*, DType>>{{"float16", DType::float16},
                                                    {"bfloat16", DType::bfloat16},
                                                    {"float32", DType::float32},
                                                    {"float64", DType::float64},
                                                    {"int8", DType::int8},
                                                    {"int16", DType::int16},
                                                    {"int32", DType::int32},
                                                    {"int64", DType::int64},
                                                    {"uint8", DType::uint8},
                                                    {"bool", DType::boolean},
                                                    {"float8_e5m2", DType::float8_e5m2},
                                                    {"float8_e4m3fn", DType::float8_e4m3fn}}) {
      if (py::hasattr(torch, name)) t.emplace_back(torch.attr(name), dtype);  // float8: torch 2.1 on
    }
    return t;
  }());  // never destroyed: outlives the interpreter
  return table;
}

// A numpy buffer format ("f", "<f", "=e", ...) as a DType; nullopt when unsupported.
std::optional<DType> numpy_dtype(const char* format) {
  if (!format) return std::nullopt;
  if (*format == '<' || *format == '=' || *format == '@') ++format;  // little-endian x86: native
  if (format[0] == '\0' || format[1] != '\0') return std::nullopt;
  switch (format[0]) {
    case '?':
      return DType::boolean;
    case 'e':
      return DType::float16;
    case 'f':
      return DType::float32;
    case 'd':
      return DType::float64;
    case 'b':
      return DType::int8;
    case 'h':
      return DType::int16;
    case 'i':
      return DType::int32;
    case 'l':
    case 'q':
      return sizeof(long) == 8 || format[0] == 'q' ? DType::int64 : DType::int32;
    case 'B':
      return DType::uint8;
    case 'H':
      return DType::uint16;
    case 'I':
      return DType::uint32;
    case 'L':
    case 'Q':
      return sizeof(long) == 8 || format[0] == 'Q' ? DType::uint64 : DType::uint32;
    default:
      return std::nullopt;
  }
}

py::object attr(const py::handle& object, const char* name) {
  PyObject* value = PyObject_GetAttrString(object.ptr(), name);
  if (!value) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

py::object call_method(const py::handle& object, const char* name) {
  PyObject* value = PyObject_CallMethod(object.ptr(), name, nullptr);
  if (!value) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

std::vector<int64_t> int_tuple(const py::handle& sequence) {
  py::tuple t = py::reinterpret_borrow<py::tuple>(sequence);
  std::vector<int64_t> out(t.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t.ptr(), i));
  if (PyErr_Occurred()) throw py::error_already_set();
  return out;
}

// torch's current stream of CUDA device `index` (a CUstream's value).
uintptr_t current_cuda_stream(int index) {
  // torch's raw getter where it has one (what Triton's launcher calls: no Stream object is made),
  // else torch.cuda.current_stream(index).cuda_stream.
  static auto& raw = *new py::object([] {
    py::object c = py::module_::import("torch._C");
    return py::hasattr(c, "_cuda_getCurrentRawStream") ? c.attr("_cuda_getCurrentRawStream") : py::object();
  }());
  if (raw) return raw(index).cast<uintptr_t>();
  static auto& current_stream = *new py::object(py::module_::import("torch.cuda").attr("current_stream"));
  return attr(current_stream(index), "cuda_stream").cast<uintptr_t>();
}

// A `__cuda_array_interface__` typestr ("<f4", "|b1", ...) as a DType; nullopt when unsupported.
std::optional<DType> cuda_array_dtype(const std::string& typestr) {
  static const std::map<std::string, DType> types = {
      {"f2", DType::float16}, {"f4", DType::float32}, {"f8", DType::float64}, {"i1", DType::int8},
      {"i2", DType::int16},   {"i4", DType::int32},   {"i8", DType::int64},   {"u1", DType::uint8},
      {"u2", DType::uint16},  {"u4", DType::uint32},  {"u8", DType::uint64},  {"b1", DType::boolean}};
  if (typestr.size() != 3 || (typestr[0] != '<' && typestr[0] != '|')) return std::nullopt;
  auto it = types.find(typestr.substr(1));
  if (it == types.end()) return std::nullopt;
  return it->second;
}

// A tensor argument: its dtype and the TensorArg. Its dtype is the specialisation's even where the
// parameter declares another (upstream specialises on the argument; the declared one is what an
// ahead-of-time build uses). An object with `__cuda_array_interface__`
// (CuPy's arrays) gives the stream its data is ordered on in `stream`, when it names one.
DType tensor_argument(const ParamSpec& p, const py::handle& arg, TensorArg& out,
                      std::optional<uintptr_t>& stream) {
  PyTypeObject* type = Py_TYPE(arg.ptr());
  DType dtype;
  if (!is_numpy_array_type(type) && !is_torch_type(type) && py::hasattr(arg, "__cuda_array_interface__")) {
    py::dict cai = attr(arg, "__cuda_array_interface__");
    std::string typestr = py::str(cai["typestr"]);
    std::optional<DType> d = cuda_array_dtype(typestr);
    if (!d) throw TypeError("'" + p.name + "' has the unsupported typestr " + typestr);
    dtype = *d;
    out.data = reinterpret_cast<void*>(py::tuple(cai["data"])[0].cast<uintptr_t>());
    out.shape = int_tuple(py::tuple(cai["shape"]));
    const int64_t item = dtype_bytes(dtype);
    if (cai.contains("strides") && !cai["strides"].is_none()) {
      out.strides = int_tuple(py::tuple(cai["strides"]));
      for (int64_t& s : out.strides) {
        if (s % item) throw ValueError("'" + p.name + "' has strides that are not whole elements");
        s /= item;
      }
    } else {  // C-contiguous
      out.strides.assign(out.shape.size(), 1);
      for (size_t d = out.shape.size(); d-- > 1;) out.strides[d - 1] = out.strides[d] * out.shape[d];
    }
    if (cai.contains("stream") && !cai["stream"].is_none()) stream = cai["stream"].cast<uintptr_t>();
    bool empty = false;
    for (int64_t n : out.shape) empty = empty || n == 0;
    // An empty array may have no memory to ask about; it is never touched.
    out.cuda_device = out.data && !empty ? cuda::device_of_pointer(out.data) : 0;
  } else if (is_numpy_array_type(type)) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();
      throw TypeError("'" + p.name + "' has the unsupported dtype " + text_of(attr(arg, "dtype")));
    }
    std::optional<DType> d = numpy_dtype(view.format);
    Py_ssize_t itemsize = view.itemsize;
    out.data = view.buf;
    out.shape.assign(view.shape, view.shape + view.ndim);
    out.strides.assign(view.strides, view.strides + view.ndim);
    PyBuffer_Release(&view);  // the array (held by the call's arguments) keeps its memory
    if (!d) throw TypeError("'" + p.name + "' has the unsupported dtype " + text_of(attr(arg, "dtype")));
    for (int64_t& s : out.strides) {
      if (s % itemsize) {
        throw ValueError("'" + p.name +
                         "' has strides that are not whole elements: " + text_of(attr(arg, "strides")));
      }
      s /= itemsize;
    }
    dtype = *d;
  } else if (is_torch_type(type)) {
    const bool meta = !attr(arg, "is_cpu").cast<bool>() && attr(arg, "is_meta").cast<bool>();
    if (!attr(arg, "is_cpu").cast<bool>() && !meta) {
      if (!attr(arg, "is_cuda").cast<bool>()) {
        throw ValueError("'" + p.name + "' is on the " + text_of(attr(attr(arg, "device"), "type")) +
                         " device; NineToothed takes CPU tensors (OpenCL) and CUDA tensors");
      }
      out.cuda_device = std::max(call_method(arg, "get_device").cast<int>(), 0);  // no torch.device made
    }
    py::object torch_dtype = attr(arg, "dtype");
    std::optional<DType> d;
    for (const auto& [object, value] : torch_dtypes())
      if (object.ptr() == torch_dtype.ptr()) d = value;
    if (!d) throw TypeError("'" + p.name + "' has the unsupported dtype " + text_of(torch_dtype));
    dtype = *d;
    out.meta = meta;  // no memory: data stays null
    if (!meta) out.data = reinterpret_cast<void*>(call_method(arg, "data_ptr").cast<uintptr_t>());
    out.shape = int_tuple(attr(arg, "shape"));
    out.strides = int_tuple(call_method(arg, "stride"));
  } else {
    throw TypeError("'" + p.name + "' must be a torch.Tensor or a numpy.ndarray, got " + type_name(arg));
  }
  if (out.shape.size() != p.ndim) {
    throw ValueError("'" + p.name + "' must have " + std::to_string(p.ndim) + " dimensions, got " +
                     std::to_string(out.shape.size()));
  }
  return dtype;
}

// A jagged tensor argument (torch's nested tensors of layout torch.jagged, or any object with
// `values()`, `offsets()` and a `_ragged_idx`, 1 where it has none): its values bound as the
// TensorArg with the sequences in dimension 0 (stride 0) and the longest one's length in the
// jagged dimension, its offsets checked on the host (a CUDA tensor's copied there: reading them is
// what upstream's launch does to find the longest) so that no sequence lies outside the values.
DType jagged_argument(const ParamSpec& p, const py::handle& arg, TensorArg& out,
                      std::optional<uintptr_t>& stream, std::vector<py::object>& keep_alive) {
  if (!py::hasattr(arg, "values") || !py::hasattr(arg, "offsets")) {
    throw TypeError("'" + p.name +
                    "' is a jagged tensor: pass a nested tensor of layout torch.jagged (or an object with "
                    "values() and offsets()), not " +
                    type_name(arg));
  }
  const int ragged = py::hasattr(arg, "_ragged_idx") ? attr(arg, "_ragged_idx").cast<int>() : 1;
  if (ragged != p.jagged_dim) {
    throw ValueError("'" + p.name + "' is declared with jagged_dim=" + std::to_string(p.jagged_dim) +
                     ", but its argument is ragged in dimension " + std::to_string(ragged));
  }
  if (py::hasattr(arg, "_lengths") && !attr(arg, "_lengths").is_none()) {
    throw ValueError("'" + p.name +
                     "' has lengths as well as offsets (sequences with gaps between them); pass "
                     "its .contiguous()");
  }
  ParamSpec values_spec{p.name + "'s values", false, false, std::nullopt, p.ndim - 1};
  ParamSpec offsets_spec{p.name + "'s offsets", false, false, std::nullopt, 1};
  TensorArg values, offsets;
  // What values() and offsets() give is held until the launch returns: the pointers are theirs.
  py::object values_object = call_method(arg, "values"), offsets_object = call_method(arg, "offsets");
  keep_alive.push_back(values_object);
  keep_alive.push_back(offsets_object);
  const DType dtype = tensor_argument(values_spec, values_object, values, stream);
  if (tensor_argument(offsets_spec, offsets_object, offsets, stream) != DType::int64)
    throw TypeError("'" + p.name + "''s offsets must be int64");
  if (values.meta || offsets.meta)
    throw ValueError("'" + p.name + "' is a jagged tensor on the meta device, which holds no data");
  if (offsets.cuda_device != values.cuda_device)
    throw ValueError("'" + p.name + "''s offsets and values must be on one device");
  if (offsets.shape[0] < 1 || (offsets.shape[0] > 1 && offsets.strides[0] != 1))
    throw ValueError("'" + p.name + "''s offsets must be contiguous, with one entry at least");
  py::object host;  // keeps a CUDA tensor's copy alive while it is read
  const int64_t* o = static_cast<const int64_t*>(offsets.data);
  if (offsets.cuda_device >= 0) {
    if (!py::hasattr(offsets_object, "cpu"))
      throw TypeError("'" + p.name + "''s offsets on a CUDA device must be a torch tensor");
    host = call_method(offsets_object, "cpu");
    o = reinterpret_cast<const int64_t*>(call_method(host, "data_ptr").cast<uintptr_t>());
  }
  const size_t ragged_values_dim = static_cast<size_t>(ragged - 1);
  const int64_t count = offsets.shape[0] - 1, total = values.shape[ragged_values_dim];
  int64_t longest = 0;
  for (int64_t b = 0; b < count; ++b) {
    if (o[b] < 0 || o[b + 1] < o[b] || o[b + 1] > total) {
      throw ValueError("'" + p.name + "''s offsets must rise from 0 or more to at most " +
                       std::to_string(total) + " (the values' size in dimension " +
                       std::to_string(ragged_values_dim) + "); offsets[" + std::to_string(b) + ":" +
                       std::to_string(b + 2) + "] are " + std::to_string(o[b]) + ", " +
                       std::to_string(o[b + 1]));
    }
    longest = std::max(longest, o[b + 1] - o[b]);
  }
  out.data = values.data;
  out.cuda_device = values.cuda_device;
  out.shape = {count};
  out.strides = {0};
  out.shape.insert(out.shape.end(), values.shape.begin(), values.shape.end());
  out.strides.insert(out.strides.end(), values.strides.begin(), values.strides.end());
  out.shape[static_cast<size_t>(ragged)] = longest;
  out.sequences = SequencesArg{offsets.data, count, std::move(values.shape), std::move(values.strides)};
  return dtype;
}

// A scalar argument: its signature entries (appended to `key`: the kind's
// DType, or -1/-2 and the bits of a constexpr int/float) and the ScalarArg.
ScalarArg scalar_argument(const ParamSpec& p, py::handle arg, std::vector<int64_t>& key) {
  py::object item;
  if (!PyFloat_CheckExact(arg.ptr()) && !PyLong_CheckExact(arg.ptr()) && !PyBool_Check(arg.ptr())) {
    PyTypeObject* type = Py_TYPE(arg.ptr());
    if (is_torch_type(type) || is_numpy_array_type(type) || is_numpy_type(type)) {
      int64_t ndim = py::hasattr(arg, "ndim") ? attr(arg, "ndim").cast<int64_t>() : 0;
      if (ndim != 0) {
        throw TypeError("'" + p.name + "' is a scalar parameter; got an array of shape " +
                        text_of(py::tuple(attr(arg, "shape"))));
      }
      item = call_method(arg, "item");
      arg = item;
    }
  }
  ScalarArg s;
  DType kind;
  if (PyBool_Check(arg.ptr())) {
    s.int_value = arg.ptr() == Py_True;
    kind = DType::int64;
  } else if (PyLong_Check(arg.ptr())) {
    s.int_value = PyLong_AsLongLong(arg.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    kind = DType::int64;
  } else if (PyFloat_Check(arg.ptr())) {
    s.is_float = true;
    s.float_value = PyFloat_AS_DOUBLE(arg.ptr());
    kind = DType::float32;
  } else {
    throw TypeError("'" + p.name + "' is a scalar parameter; got " + type_name(arg));
  }
  if (p.constexpr_) {
    int64_t bits = s.int_value;
    if (s.is_float) std::memcpy(&bits, &s.float_value, sizeof bits);
    key.push_back(-1 - s.is_float);
    key.push_back(bits);
    return s;
  }
  if (p.dtype) {
    kind = *p.dtype;
    if (!dtype_is_float(kind) && s.is_float) {  // Python's int(value)
      if (!std::isfinite(s.float_value) || std::fabs(s.float_value) >= 9.2e18) {
        throw ValueError("'" + p.name + "' is an integer parameter; cannot convert " +
                         text_of(py::float_(s.float_value)) + " to an integer");
      }
      s.int_value = static_cast<int64_t>(s.float_value);
      s.is_float = false;
    }
  }
  key.push_back(static_cast<int64_t>(kind));
  return s;
}

// The Python specialisation key for a signature: per parameter a DType, or
// ("constexpr", value).
py::tuple python_key(const std::vector<ParamSpec>& params, const std::vector<int64_t>& key) {
  py::tuple out(params.size());
  size_t k = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].constexpr_) {
      bool is_float = key[k] == -2;
      int64_t bits = key[k + 1];
      double value;
      std::memcpy(&value, &bits, sizeof value);
      out[i] =
          py::make_tuple("constexpr", is_float ? py::object(py::float_(value)) : py::object(py::int_(bits)));
      k += 2;
    } else {
      out[i] = py::cast(static_cast<DType>(key[k]));
      k += 1;
    }
  }
  return out;
}

class LaunchBinder {
 public:
  LaunchBinder(std::string kernel_name, std::vector<ParamSpec> params, py::object specialize)
      : kernel_name_(std::move(kernel_name)),
        params_(std::move(params)),
        specialize_(std::move(specialize)) {}

  // Launches; returns the disk cache's warning, if any.
  std::optional<std::string> launch(const py::tuple& args, const py::dict& constexpr_keywords,
                                    const py::object& pinned) {
    if (args.size() != params_.size()) {
      throw TypeError(kernel_name_ + "() takes " + std::to_string(params_.size()) + " arguments, got " +
                      std::to_string(args.size()));
    }
    std::vector<LaunchArg> launch_args;
    launch_args.reserve(params_.size());
    std::vector<int64_t> key;
    key.reserve(params_.size() + 2);
    std::optional<uintptr_t> cai_stream;  // a CUDA array interface's
    std::vector<py::object> keep_alive;   // jagged tensors' values and offsets, until the launch returns
    int cuda_device = -1;
    for (size_t i = 0; i < params_.size(); ++i) {
      const ParamSpec& p = params_[i];
      if (p.scalar) {
        launch_args.emplace_back(scalar_argument(p, args[i], key));
      } else {
        TensorArg t;
        key.push_back(static_cast<int64_t>(p.jagged_dim >= 0
                                               ? jagged_argument(p, args[i], t, cai_stream, keep_alive)
                                               : tensor_argument(p, args[i], t, cai_stream)));
        cuda_device = std::max(cuda_device, t.cuda_device);
        launch_args.emplace_back(std::move(t));
      }
    }
    // CUDA tensors: the launch goes on torch's current stream of their device (CuPy's arrays:
    // the stream their interface names), ordered with the work around it.
    void* stream = nullptr;
    if (cai_stream) {
      stream = reinterpret_cast<void*>(*cai_stream);
    } else if (cuda_device >= 0) {
      stream = reinterpret_cast<void*>(current_cuda_stream(cuda_device));
    }
    std::shared_ptr<CompiledKernel> compiled;
    if (auto it = compiled_.find(key); it != compiled_.end()) {
      compiled = it->second;
    } else {
      py::object specialize = specialize_();  // a weakref.WeakMethod: the kernel must be alive
      if (specialize.is_none()) throw ValueError("the kernel of this launch no longer exists");
      compiled = specialize(python_key(params_, key)).cast<std::shared_ptr<CompiledKernel>>();
      compiled_[key] = compiled;
    }
    last_ = compiled;

    SymbolValues constexpr_values;
    for (const auto& [name_object, value] : constexpr_keywords) {
      std::string name = name_object.cast<std::string>();
      const auto& names = compiled->constexpr_symbols();
      if (std::find(names.begin(), names.end(), name) == names.end())
        throw TypeError(kernel_name_ + "() got an unexpected keyword argument '" + name + "'");
      PyObject* index = PyNumber_Index(value.ptr());
      if (!index) {
        PyErr_Clear();
        throw TypeError("the constexpr value " + name + "=" + py::repr(value).cast<std::string>() +
                        " must be an int");
      }
      constexpr_values[name] = py::reinterpret_steal<py::int_>(index).cast<int64_t>();
    }
    std::optional<SymbolValues> config;
    if (!pinned.is_none()) {
      config = pinned.cast<SymbolValues>();
      const auto& meta = compiled->meta_symbols();
      std::string unknown;
      for (const auto& [name, value] : *config) {
        const bool compiler_option = name == kNumWarpsConfigKey || name == kNumStagesConfigKey;
        if (compiler_option && value < 1)
          throw ValueError("pin(): " + name + " must be at least 1, got " + std::to_string(value));
        if (std::find(meta.begin(), meta.end(), name) == meta.end() && !compiler_option)
          unknown += (unknown.empty() ? "" : ", ") + py::repr(py::str(name)).cast<std::string>();
      }
      if (!unknown.empty()) {
        std::string names;
        for (const std::string& m : meta) names += (names.empty() ? "" : ", ") + m;
        throw ValueError("pin(): " + unknown + " is not a meta symbol of " + kernel_name_ +
                         "; its meta symbols: " + (names.empty() ? "none" : names));
      }
    }
    {
      py::gil_scoped_release release;
      last_seconds_ = compiled->launch(launch_args, constexpr_values, config, stream);
    }
    std::string warning = DiskCache::instance().take_warning();
    if (warning.empty()) return std::nullopt;
    return warning;
  }

  std::shared_ptr<CompiledKernel> last() const { return last_; }
  // The device time of the last launch from any thread (OpenCL profiling), or None.
  std::optional<double> last_seconds() const {
    double seconds = last_seconds_;
    if (!(seconds >= 0)) return std::nullopt;  // none yet, or not known (a CUDA launch: NaN)
    return seconds;
  }

 private:
  std::string kernel_name_;
  std::vector<ParamSpec> params_;
  // A weakref.WeakMethod of Kernel._specialize (key tuple -> CompiledKernel, tracing the
  // application): a strong reference would be a cycle the garbage collector cannot see.
  py::object specialize_;
  std::map<std::vector<int64_t>, std::shared_ptr<CompiledKernel>> compiled_;
  std::shared_ptr<CompiledKernel> last_;
  std::atomic<double> last_seconds_{-1.0};
};

}  // namespace

void bind_launch(py::module_& m) {
  py::class_<LaunchBinder>(m, "LaunchBinder", "Binds a kernel call's arguments and launches it (one call).")
      .def(py::init([](const std::string& kernel_name, const py::list& specs, py::object specialize) {
             std::vector<ParamSpec> params;
             for (const py::handle& spec : specs) {
               auto t = spec.cast<py::tuple>();
               ParamSpec p;
               p.name = t[0].cast<std::string>();
               p.scalar = t[1].cast<bool>();
               p.constexpr_ = t[2].cast<bool>();
               if (!t[3].is_none()) p.dtype = t[3].cast<DType>();
               p.ndim = t[4].cast<size_t>();
               if (t.size() > 5 && !t[5].is_none()) p.jagged_dim = t[5].cast<int>();
               params.push_back(std::move(p));
             }
             return std::make_unique<LaunchBinder>(kernel_name, std::move(params), std::move(specialize));
           }),
           py::arg("kernel_name"), py::arg("params"), py::arg("specialize"))
      .def("launch", &LaunchBinder::launch, py::arg("args"), py::arg("constexpr_values"), py::arg("pinned"))
      .def_property_readonly("last", &LaunchBinder::last)
      .def_property_readonly("last_launch_seconds", &LaunchBinder::last_seconds);
  m.def("small_launch_limit", &small_launch_limit,
        "Launches of programs accessing at most this many block elements run on the single-threaded "
        "companion device (negative: never). Internal: for tests and measurements.");
  m.def("set_small_launch_limit", &set_small_launch_limit, py::arg("elements"));
  m.def("num_small_launches", &num_small_launches);
  m.def("set_default_max_num_configs_for_testing", &set_default_max_num_configs_for_testing, py::arg("n"),
        "Tuning times at most n candidates for kernels made without max_num_configs (0: the default). "
        "Internal: for tests.");
  m.def(
      "set_workspace_limit_for_testing", [](size_t bytes) { WorkspacePool::instance().set_max_bytes(bytes); },
      py::arg("bytes"),
      "Launches whose programs share packed dot operands get a workspace of at most this many bytes "
      "(0: none, every program packs its own). Internal: for tests.");
  m.def(
      "workspace_leases", [] { return WorkspacePool::instance().leases(); },
      "Workspaces leased to launches so far (codegen/c/shared_packs.h). Internal: for tests.");
  m.def("set_vector_bytes_for_testing", &set_vector_bytes_for_testing, py::arg("bytes"),
        "Sources are built for vector registers of this many bytes (NT_VECTOR_BYTES: 64 for AVX-512's "
        "micro-kernels, 32 for AVX2's) on every device; 0: each device's own. Set before the first "
        "launch of a kernel. Internal: for tests.");
  m.def("set_mma_layout_for_testing", &set_mma_layout_for_testing, py::arg("enabled"),
        "Sources are built with the mma tile layout of tensor-core dots on every device where programs "
        "have whole warps (their dots still multiply-add in float without tensor cores). Set before the "
        "kernels' first launch. Internal: for tests.");
  m.def("set_local_memory_for_testing", &set_local_memory_for_testing, py::arg("bytes"),
        "Devices have at most this many bytes of local memory for the work-groups programs run on "
        "(NVIDIA's OpenCL gives 48 KiB); 0: their own. Set before the kernels' first launch. Internal: "
        "for tests.");
  m.def(
      "tensor_cores", [] { return tensor_cores(*current_device()); },
      "Do dots of float16 and bfloat16 use tensor cores on the current device (NVIDIA, compute "
      "capability 8.0 or later)? Internal: for tests and benchmarks.");
  m.def("set_discrete_memory_for_testing", &set_discrete_memory_for_testing, py::arg("enabled"),
        py::arg("slot_bytes") = 0, py::arg("direct_limit") = 0,
        "Launches on every device copy tensors through device memory as on a discrete GPU (pooled "
        "buffers, staging slots of `slot_bytes`, regions above `direct_limit` bytes staged). Set while "
        "no launch runs. Internal: for tests.");
  m.def(
      "transfer_counts",
      [] {
        TransferCounts c = transfer_counts();
        return py::dict(py::arg("bytes_in") = c.bytes_in, py::arg("bytes_out") = c.bytes_out,
                        py::arg("staged_in") = c.staged_in, py::arg("staged_out") = c.staged_out);
      },
      "Bytes launches copied to and from device memory in this process (on discrete devices). "
      "Internal: for tests and measurements.");
  m.def(
      "program_work_items",
      [](size_t num_warps) { return program_work_items(current_device()->info(), num_warps); },
      py::arg("num_warps") = 0,
      "Work-items per program on the current device for kernels that can run a program on a "
      "work-group (NINETOOTHED_PROGRAM_LAYOUT), for `num_warps` warps (0: the default). Internal: for "
      "tests and measurements.");
}

}  // namespace nt::bindings
