// Bindings of OpenCL device choice: conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/conversions.h"
#include "driver/compiled_kernel.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/nvrtc_compile.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/program.h"

namespace nt::bindings {

namespace {

py::dict info_dict(const DeviceInfo& d) {
  py::dict out;
  out["index"] = d.index;
  out["platform"] = d.platform;
  out["name"] = d.name;
  out["version"] = d.version;
  out["is_cpu"] = d.is_cpu;
  out["is_pocl"] = d.is_pocl;
  out["has_fp64"] = d.has_fp64;
  out["compute_units"] = d.compute_units;
  out["max_work_group_size"] = d.max_work_group_size;
  out["max_allocation"] = d.max_allocation;
  out["preferred_float_vector"] = d.preferred_float_vector;
  out["correctly_rounded_divide_sqrt"] = d.correctly_rounded_divide_sqrt;
  return out;
}

}  // namespace

void bind_device(py::module_& m) {
  m.def("list_devices", [] {
    py::list out;
    for (const DeviceInfo& d : list_devices()) out.append(info_dict(d));
    return out;
  });
  // The current device also says where its small launches run (device.h).
  auto current_dict = [](const Device& device) {
    py::dict out = info_dict(device.info());
    out["small_launches_on"] = device.small() ? py::object(py::str(device.small()->info().name)) : py::none();
    return out;
  };
  m.def("current_device", [current_dict] { return current_dict(*current_device()); });
  m.def("select_device",
        [current_dict](const std::string& selector) { return current_dict(*select_device(selector)); });
  m.def(
      "cache_stats",
      [] {
        py::dict out;
        out["program_builds"] = ProgramCache::instance().num_builds();
        out["program_binary_loads"] = ProgramCache::instance().num_binary_loads();
        out["timing_runs"] = num_timing_runs();
        out["disk_hits"] = DiskCache::instance().hits();
        out["disk_misses"] = DiskCache::instance().misses();
        out["cache_dir"] = DiskCache::instance().directory();
        return out;
      },
      "Counters of builds, binary loads, tuning runs and disk-cache lookups in this process.");
  m.def("cuda_available", &cuda::driver_available,
        "Can the CUDA driver (libcuda.so.1) be loaded and initialised? Loads it on the first call.");
  m.def("nvrtc_available", &cuda::nvrtc_available, "Can NVRTC (libnvrtc.so) be loaded?");
  m.def("cuda_driver_opened", &cuda::driver_opened,
        "Has this process opened the CUDA driver (a CUDA launch, or cuda_available())? Opens nothing.");
  m.def(
      "compile_cuda",
      [](const std::string& source, const std::string& options, const std::string& architecture) {
        std::string image;
        {
          py::gil_scoped_release release;
          image = cuda::compile_cuda_image(source, options, architecture);
        }
        return py::bytes(image);
      },
      py::arg("source"), py::arg("options"), py::arg("architecture"),
      "Compiles CUDA C with NVRTC (no GPU needed): a cubin for sm_XY(a), PTX for compute_XY. Raises "
      "RuntimeError with NVRTC's log on failure. What ahead-of-time CUDA builds embed.");
  m.def("num_nvrtc_compiles", &cuda::num_nvrtc_compiles);
  m.def("nvrtc_version", &cuda::nvrtc_version,
        "NVRTC's \"major.minor\" (ValueError where it cannot be loaded).");
  m.def(
      "cuda_device_count",
      [] {
        int count = 0;
        cuda::check(cuda::driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
        return count;
      },
      "The CUDA devices the driver sees (ValueError where it cannot be loaded).");
  m.def(
      "cuda_device",
      [](int ordinal) {
        auto d = cuda::CudaDevice::get(ordinal);
        return py::dict(py::arg("name") = d->name(), py::arg("architecture") = d->architecture(),
                        py::arg("multiprocessors") = d->multiprocessors(),
                        py::arg("shared_memory_per_block") = d->shared_memory_per_block());
      },
      py::arg("ordinal") = 0, "The CUDA device `ordinal` as launches see it (loads the driver).");
  m.def("take_cache_warning", [] { return DiskCache::instance().take_warning(); });
  m.def(
      "build_opencl",
      [](const std::string& source, const std::string& options) {
        ProgramCache::instance().get(*current_device(), source, options);
      },
      py::arg("source"), py::arg("options") = "",
      "Builds OpenCL C for the current device (RuntimeError with the build log on failure).");
}

}  // namespace nt::bindings
