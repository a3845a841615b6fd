#include "aot/aot_runtime.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "driver/compiled_kernel.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/opencl.h"
#include "runtime/program.h"
#include "support/errors.h"

namespace nt::aot {

namespace {

thread_local std::string t_last_error;

struct Failure {
  int code;
  std::string message;
};

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while (!(mantissa & 0x400u)) mantissa <<= 1, ++shift;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
T read(const void* data) {
  T value;
  std::memcpy(&value, data, sizeof value);
  return value;
}

// A 0-dim tensor's value, read as the parameter's dtype.
ScalarArg scalar_of(const PlanParam& p, const void* data) {
  ScalarArg s;
  s.is_float = dtype_is_float(p.dtype);
  switch (p.dtype) {
    case DType::float64:
      s.float_value = read<double>(data);
      break;
    case DType::float32:
      s.float_value = read<float>(data);
      break;
    case DType::float16:
      s.float_value = half_to_float(read<uint16_t>(data));
      break;
    case DType::bfloat16: {
      uint32_t bits = static_cast<uint32_t>(read<uint16_t>(data)) << 16;
      s.float_value = read<float>(&bits);
      break;
    }
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      s.float_value = float8_to_float(read<uint8_t>(data), p.dtype);
      break;
    case DType::int8:
      s.int_value = read<int8_t>(data);
      break;
    case DType::int16:
      s.int_value = read<int16_t>(data);
      break;
    case DType::int32:
      s.int_value = read<int32_t>(data);
      break;
    case DType::int64:
      s.int_value = read<int64_t>(data);
      break;
    case DType::uint8:
      s.int_value = read<uint8_t>(data);
      break;
    case DType::boolean:
      s.int_value = read<uint8_t>(data) != 0;
      break;
    case DType::uint16:
      s.int_value = read<uint16_t>(data);
      break;
    case DType::uint32:
      s.int_value = read<uint32_t>(data);
      break;
    case DType::uint64:
      s.int_value = static_cast<int64_t>(read<uint64_t>(data));
      break;
  }
  return s;
}

std::vector<LaunchArg> launch_args(const LaunchPlan& plan, const NtAotTensor* args, size_t num_args) {
  if (num_args != plan.params.size()) {
    throw Failure{NT_AOT_INVALID_ARGUMENT, "the kernel takes " + std::to_string(plan.params.size()) +
                                               " tensors, got " + std::to_string(num_args)};
  }
  if (num_args && !args) throw Failure{NT_AOT_INVALID_ARGUMENT, "the arguments are NULL"};
  std::vector<LaunchArg> out;
  out.reserve(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const PlanParam& p = plan.params[i];
    const NtAotTensor& a = args[i];
    std::string which = "argument " + std::to_string(i) + " ('" + p.name + "')";
    if (p.scalar) {
      if (p.constexpr_ && plan.fixed_scalars.count(static_cast<int>(i))) {
        out.emplace_back(ScalarArg{});  // its value was fixed when the library was built
        continue;
      }
      if (!a.data) throw Failure{NT_AOT_INVALID_ARGUMENT, which + " has NULL data"};
      out.emplace_back(scalar_of(p, a.data));
      continue;
    }
    size_t ndim = p.source_shape.size();
    if (!a.shape || !a.strides)
      throw Failure{NT_AOT_INVALID_ARGUMENT, which + " has a NULL shape or strides"};
    TensorArg t;
    t.data = a.data;
    bool empty = false;
    for (size_t d = 0; d < ndim; ++d) {
      if (a.shape[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 2)) {
        throw Failure{NT_AOT_INVALID_ARGUMENT, which + " has size " + std::to_string(a.shape[d]) +
                                                   " in dimension " + std::to_string(d)};
      }
      t.shape.push_back(static_cast<int64_t>(a.shape[d]));
      t.strides.push_back(a.strides[d]);
      empty = empty || a.shape[d] == 0;
    }
    if (!a.data && !empty) throw Failure{NT_AOT_INVALID_ARGUMENT, which + " has NULL data"};
    out.emplace_back(std::move(t));
  }
  return out;
}

std::mutex g_init_mutex;

CompiledKernel& kernel_of(const char* plan, size_t plan_size, void** state,
                          const NtAotCudaImage* images = nullptr, size_t num_images = 0) {
  if (void* k = __atomic_load_n(state, __ATOMIC_ACQUIRE)) return *static_cast<CompiledKernel*>(k);
  std::lock_guard lock(g_init_mutex);
  if (void* k = __atomic_load_n(state, __ATOMIC_ACQUIRE)) return *static_cast<CompiledKernel*>(k);
  // Kept for the life of the process, as the library's kernels are.
  auto kernel = std::make_unique<CompiledKernel>(parse_launch_plan(std::string(plan, plan_size)));
  for (size_t i = 0; i < num_images; ++i) {
    const NtAotCudaImage& image = images[i];
    kernel->add_cuda_image(image.architecture, image.options,
                           std::string(static_cast<const char*>(image.data), image.size));
  }
  __atomic_store_n(state, static_cast<void*>(kernel.get()), __ATOMIC_RELEASE);
  return *kernel.release();
}

CompiledKernel& checked_kernel_of(const char* plan, size_t plan_size, void** state,
                                  const NtAotCudaImage* images = nullptr, size_t num_images = 0) {
  if (!plan || !state || (num_images && !images))
    throw Failure{NT_AOT_INTERNAL, "the library passed no plan"};
  try {
    return kernel_of(plan, plan_size, state, images, num_images);
  } catch (const ValueError& e) {
    throw Failure{NT_AOT_INTERNAL, e.what()};
  }
}

int launch(const char* plan, size_t plan_size, void** state, void* stream, const NtAotTensor* args,
           size_t num_args) {
  CompiledKernel* kernel = &checked_kernel_of(plan, plan_size, state);
  std::vector<LaunchArg> launch = launch_args(kernel->plan(), args, num_args);
  if (!stream) {
    kernel->launch(launch, {});
    return NT_AOT_SUCCESS;
  }
  // The caller's queue: its device, in its context.
  auto queue = static_cast<cl_command_queue>(stream);
  std::shared_ptr<Device> device;
  try {
    device = device_of_queue(queue);
  } catch (const RuntimeError& e) {
    throw Failure{NT_AOT_STREAM, std::string("the stream is not a usable cl_command_queue: ") + e.what()};
  }
  cl_command_queue_properties properties = 0;
  check(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr),
        "clGetCommandQueueInfo");
  if (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    throw Failure{NT_AOT_STREAM, "the stream is an out-of-order command queue; pass an in-order one"};
  }
  ScopedDevice scope(device, queue);
  kernel->launch(launch, {});
  return NT_AOT_SUCCESS;
}

// A CUDA library's launch: the device is the one the tensors' memory is on.
int launch_cuda(const char* plan, size_t plan_size, const NtAotCudaImage* images, size_t num_images,
                void** state, void* stream, const NtAotTensor* args, size_t num_args) {
  CompiledKernel& kernel = checked_kernel_of(plan, plan_size, state, images, num_images);
  std::vector<LaunchArg> launch = launch_args(kernel.plan(), args, num_args);
  int device = -1;
  for (size_t i = 0; i < launch.size(); ++i) {
    auto* t = std::get_if<TensorArg>(&launch[i]);
    if (!t || !t->data || std::find(t->shape.begin(), t->shape.end(), 0) != t->shape.end()) continue;
    int ordinal = 0;
    try {
      ordinal = cuda::device_of_pointer(t->data);
    } catch (const ValueError& e) {  // no driver
      throw Failure{NT_AOT_DEVICE, e.what()};
    } catch (const RuntimeError& e) {
      throw Failure{NT_AOT_INVALID_VALUE, "argument " + std::to_string(i) + " ('" +
                                              kernel.plan().params[i].name +
                                              "') is not CUDA device memory: " + e.what()};
    }
    if (device >= 0 && ordinal != device) {
      throw Failure{NT_AOT_INVALID_VALUE, "the tensors are on different CUDA devices (" +
                                              std::to_string(device) + " and " + std::to_string(ordinal) +
                                              ")"};
    }
    device = ordinal;
  }
  for (LaunchArg& a : launch) {
    if (auto* t = std::get_if<TensorArg>(&a)) t->cuda_device = std::max(device, 0);
  }
  kernel.launch(launch, {}, std::nullopt, stream);
  return NT_AOT_SUCCESS;
}

}  // namespace

}  // namespace nt::aot

namespace nt::aot {
namespace {

// Runs `body`, turning every exception into a result code and this thread's last error.
template <typename Body>
int guarded(Body&& body) {
  int code = NT_AOT_INTERNAL;
  try {
    code = body();
    t_last_error.clear();
    return code;
  } catch (const Failure& f) {
    code = f.code;
    t_last_error = f.message;
  } catch (const BuildError& e) {
    code = NT_AOT_BUILD;
    t_last_error = e.what();
  } catch (const RuntimeError& e) {
    code = is_forked_opencl_child() ? NT_AOT_FORKED : NT_AOT_DEVICE;
    t_last_error = e.what();
  } catch (const ValueError& e) {
    code = NT_AOT_INVALID_VALUE;
    t_last_error = e.what();
  } catch (const IndexError& e) {
    code = NT_AOT_INVALID_VALUE;
    t_last_error = e.what();
  } catch (const TypeError& e) {
    code = NT_AOT_INVALID_ARGUMENT;
    t_last_error = e.what();
  } catch (const std::bad_alloc&) {
    code = NT_AOT_OUT_OF_MEMORY;
    t_last_error = "out of memory";
  } catch (const std::exception& e) {
    code = NT_AOT_INTERNAL;
    t_last_error = e.what();
  } catch (...) {
    code = NT_AOT_INTERNAL;
    t_last_error = "an unknown failure";
  }
  return code;
}

}  // namespace
}  // namespace nt::aot

extern "C" int ninetoothed_aot_launch(const char* plan, size_t plan_size, void** state, void* stream,
                                      const NtAotTensor* args, size_t num_args) {
  return nt::aot::guarded([&] { return nt::aot::launch(plan, plan_size, state, stream, args, num_args); });
}

extern "C" int ninetoothed_aot_launch_cuda(const char* plan, size_t plan_size, const NtAotCudaImage* images,
                                           size_t num_images, void** state, void* stream,
                                           const NtAotTensor* args, size_t num_args) {
  return nt::aot::guarded([&] {
    return nt::aot::launch_cuda(plan, plan_size, images, num_images, state, stream, args, num_args);
  });
}

extern "C" const char* ninetoothed_aot_error_string(int code) {
  switch (code) {
    case NT_AOT_SUCCESS:
      return "success";
    case NT_AOT_NO_VARIANT:
      return "no built variant of the kernel matches the configuration arguments";
    case NT_AOT_INVALID_ARGUMENT:
      return "an invalid argument: NULL data, shape or strides, or a size beyond int64";
    case NT_AOT_INVALID_VALUE:
      return "the arguments' sizes or strides disagree with the kernel, or a value is out of bounds";
    case NT_AOT_DEVICE:
      return "no OpenCL device (or, for a CUDA library, no CUDA device) is available, or a call to it failed";
    case NT_AOT_BUILD:
      return "the kernel failed to build (or a CUDA library holds no binary for the device)";
    case NT_AOT_FORKED:
      return "OpenCL cannot be used in a forked child of a process that used it; use spawn";
    case NT_AOT_OUT_OF_MEMORY:
      return "out of memory";
    case NT_AOT_STREAM:
      return "the stream is not a usable cl_command_queue (a CUstream for a CUDA library), or NULL";
    case NT_AOT_INTERNAL:
      return "an internal error (the library's embedded plan is unreadable, or another failure)";
    default:
      return "an unknown result code";
  }
}

extern "C" const char* ninetoothed_aot_last_error(void) { return nt::aot::t_last_error.c_str(); }
