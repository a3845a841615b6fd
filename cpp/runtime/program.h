// Building OpenCL programs, and the program cache.
//
// In: OpenCL C source, build options (`-DNAME=value` per configuration) and a
// device. Out: a built program, or a BuildError whose message holds the
// compiler's log and where the source was written for reading. ProgramCache
// keeps built programs per (device, options, source) for the process (a
// context may hold two devices: PoCL's pthread and basic, see device.h),
// and their device binaries on disk (DiskCache, keyed by device, options and
// source; on PoCL, its own kernel cache does this), so a kernel is built once
// per configuration, not once per process.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "runtime/device.h"
#include "runtime/opencl.h"

namespace nt {

// The OpenCL C compiler rejected a program (Python RuntimeError).
struct BuildError : RuntimeError {
  using RuntimeError::RuntimeError;
};

// Keeps a source that failed to build where the user can read it (the temporary directory's
// ninetoothed/failed_<hash><extension>); returns its path.
std::string save_failed_source(const std::string& source, const std::string& extension);

ClProgram build_program(const Device& device, const std::string& source, const std::string& options);

// NINETOOTHED_OPENCL_OPTIONS, read once: more options for every OpenCL build (such as
// -cl-opt-disable, which the test suite's work-group pass uses), part of the program cache's key
// and of the tuning cache's. Empty where unset.
const std::string& extra_opencl_options();

// POCL_KERNEL_CACHE set to other than 1: PoCL keeps no kernels between processes (ProgramCache keeps
// their binaries).
bool pocl_kernel_cache_disabled();

class ProgramCache {
 public:
  static ProgramCache& instance();

  // The built program for this key, building it on first use. `keep`: its binary goes to the disk
  // cache too, now or, for a program built without, at the first get() that asks. Tuning builds
  // its candidates without (a later process reads only the chosen one's). On PoCL no binary is
  // kept: PoCL's own kernel cache keeps its builds (program.cpp).
  ClProgram get(const Device& device, const std::string& source, const std::string& options,
                bool keep = true);
  size_t num_builds() const { return num_builds_; }              // from source
  size_t num_binary_loads() const { return num_binary_loads_; }  // from the disk cache

 private:
  std::mutex mutex_;
  struct Built {
    ClProgram program;  // retains its context
    bool kept = false;  // its binary is in the disk cache
  };
  std::map<std::tuple<cl_context, cl_device_id, std::string, std::string>, Built> programs_;
  size_t num_builds_ = 0;
  size_t num_binary_loads_ = 0;
};

}  // namespace nt
