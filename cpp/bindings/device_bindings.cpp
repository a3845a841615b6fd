// Bindings of OpenCL device choice: conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/conversions.h"
#include "runtime/device.h"
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
  out["has_fp64"] = d.has_fp64;
  out["compute_units"] = d.compute_units;
  return out;
}

}  // namespace

void bind_device(py::module_& m) {
  m.def("list_devices", [] {
    py::list out;
    for (const DeviceInfo& d : list_devices()) out.append(info_dict(d));
    return out;
  });
  m.def("current_device", [] { return info_dict(current_device()->info()); });
  m.def("select_device",
        [](const std::string& selector) { return info_dict(select_device(selector)->info()); });
  m.def(
      "build_opencl",
      [](const std::string& source, const std::string& options) {
        ProgramCache::instance().get(*current_device(), source, options);
      },
      py::arg("source"), py::arg("options") = "",
      "Builds OpenCL C for the current device (RuntimeError with the build log on failure).");
}

}  // namespace nt::bindings
