#include "runtime/program.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

namespace nt {

namespace {

std::string build_log(const Device& device, cl_program program) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device.id(), CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device.id(), CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Keep a failing source where the user can read it; return its path.
std::string save_failed_source(const std::string& source) {
  auto directory = std::filesystem::temp_directory_path() / "ninetoothed";
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  auto path = directory / ("failed_" + std::to_string(std::hash<std::string>()(source)) + ".cl");
  std::ofstream(path) << source;
  return path.string();
}

}  // namespace

ClProgram build_program(const Device& device, const std::string& source, const std::string& options) {
  const char* text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ClProgram program(clCreateProgramWithSource(device.context(), 1, &text, &length, &status));
  check(status, "clCreateProgramWithSource");
  cl_device_id id = device.id();
  status = clBuildProgram(program.get(), 1, &id, options.c_str(), nullptr, nullptr);
  if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS) {
    throw BuildError("OpenCL build failed (" + cl_error_name(status) + ") with options '" + options +
                     "'; source saved to " + save_failed_source(source) + "\nbuild log:\n" +
                     build_log(device, program.get()));
  }
  check(status, "clBuildProgram");
  return program;
}

ProgramCache& ProgramCache::instance() {
  static ProgramCache cache;
  return cache;
}

ClProgram ProgramCache::get(const Device& device, const std::string& source, const std::string& options) {
  auto key = std::make_tuple(device.context(), options, source);
  {
    std::lock_guard lock(mutex_);
    if (auto it = programs_.find(key); it != programs_.end()) return it->second;
  }
  ClProgram program = build_program(device, source, options);
  std::lock_guard lock(mutex_);
  ++num_builds_;
  return programs_.emplace(key, program).first->second;
}

}  // namespace nt
