#include "runtime/program.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "runtime/disk_cache.h"

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

}  // namespace

std::string save_failed_source(const std::string& source, const std::string& extension) {
  auto directory = std::filesystem::temp_directory_path() / "ninetoothed";
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  auto path = directory / ("failed_" + std::to_string(std::hash<std::string>()(source)) + extension);
  std::ofstream(path) << source;
  return path.string();
}

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
                     "'; source saved to " + save_failed_source(source, ".cl") + "\nbuild log:\n" +
                     build_log(device, program.get()));
  }
  check(status, "clBuildProgram");
  // The log of a build that succeeded (its warnings) only where NINETOOTHED_DEBUG asks for it.
  if (const char* debug = std::getenv("NINETOOTHED_DEBUG"); debug && *debug && std::string(debug) != "0") {
    if (std::string log = build_log(device, program.get()); !log.empty())
      std::fprintf(stderr, "[ninetoothed] OpenCL build log (options '%s'):\n%s\n", options.c_str(),
                   log.c_str());
  }
  return program;
}

namespace {

// The device binary of a built program (empty if the driver gives none).
std::string program_binary(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS)
    return "";
  return binary;
}

// A program from a binary an earlier process saved; nothing if the driver refuses it.
std::optional<ClProgram> program_from_binary(const Device& device, const std::string& binary,
                                             const std::string& options) {
  cl_device_id id = device.id();
  size_t size = binary.size();
  const unsigned char* pointer = reinterpret_cast<const unsigned char*>(binary.data());
  cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
  ClProgram program(
      clCreateProgramWithBinary(device.context(), 1, &id, &size, &pointer, &binary_status, &status));
  if (status != CL_SUCCESS || binary_status != CL_SUCCESS) return std::nullopt;
  if (clBuildProgram(program.get(), 1, &id, options.c_str(), nullptr, nullptr) != CL_SUCCESS)
    return std::nullopt;
  return program;
}

}  // namespace

bool pocl_kernel_cache_disabled() {
  const char* cache = std::getenv("POCL_KERNEL_CACHE");
  return cache && *cache != '1';  // PoCL reads any other value as off
}

const std::string& extra_opencl_options() {
  static const std::string options = [] {
    const char* extra = std::getenv("NINETOOTHED_OPENCL_OPTIONS");
    return std::string(extra ? extra : "");
  }();
  return options;
}

ProgramCache& ProgramCache::instance() {
  static ProgramCache cache;
  return cache;
}

ClProgram ProgramCache::get(const Device& device, const std::string& source, const std::string& given_options,
                            bool keep) {
  // float32 `/` and `sqrt` correctly rounded where the device can (as torch
  // computes them), so results agree bit for bit on every such device.
  std::string options = device.info().correctly_rounded_divide_sqrt
                            ? given_options + " -cl-fp32-correctly-rounded-divide-sqrt"
                            : given_options;
  if (!extra_opencl_options().empty()) options += " " + extra_opencl_options();
  auto key = std::make_tuple(device.context(), device.id(), options, source);
  std::optional<ClProgram> found;  // built without its binary kept, which is asked for now
  {
    std::lock_guard lock(mutex_);
    if (auto it = programs_.find(key); it != programs_.end()) {
      if (!keep || it->second.kept) return it->second.program;
      it->second.kept = true;  // written below, once
      found = it->second.program;
    }
  }
  // A binary is on disk under the device, the options and the source; on PoCL, its own kernel
  // cache keeps what it built for the next process (reading a binary would compile the kernels once
  // more, for any work-group size: a third of a build), unless POCL_KERNEL_CACHE=0 turns it off.
  const std::string disk_key = device.cache_key() + '\0' + options + '\0' + source;
  const bool binaries = !device.info().is_pocl || pocl_kernel_cache_disabled();
  auto write_binary = [&](const ClProgram& program) {
    if (!binaries) return;
    if (std::string binary = program_binary(program.get()); !binary.empty())
      DiskCache::instance().write("programs", disk_key, binary);
  };
  if (found) {
    write_binary(*found);
    return *found;
  }
  // Built by an earlier process?
  if (auto binary = binaries ? DiskCache::instance().read("programs", disk_key) : std::nullopt) {
    if (auto program = program_from_binary(device, *binary, options)) {
      std::lock_guard lock(mutex_);
      ++num_binary_loads_;
      return programs_.emplace(key, Built{*program, true}).first->second.program;
    }
  }
  ClProgram program = build_program(device, source, options);
  if (keep) write_binary(program);
  std::lock_guard lock(mutex_);
  ++num_builds_;
  return programs_.emplace(key, Built{program, keep}).first->second.program;
}

}  // namespace nt
