#include "runtime/cuda/nvrtc_compile.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "runtime/cuda/cuda_api.h"
#include "runtime/disk_cache.h"
#include "runtime/program.h"

namespace nt::cuda {

namespace {

std::atomic<size_t> g_compiles{0};

// The options' words (`-DNAME=value` and the like, separated by spaces).
std::vector<std::string> words_of(const std::string& options) {
  std::vector<std::string> words;
  std::istringstream in(options);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Destroys an NVRTC program when it goes.
struct ProgramHandle {
  nvrtcProgram program = nullptr;
  ~ProgramHandle() {
    if (program) nvrtc().nvrtcDestroyProgram(&program);
  }
};

}  // namespace

size_t num_nvrtc_compiles() { return g_compiles; }

std::string extra_nvrtc_options() {
  const char* extra = std::getenv("NINETOOTHED_NVRTC_OPTIONS");
  return extra ? extra : "";
}

std::string compile_cuda_image(const std::string& source, const std::string& given_options,
                               const std::string& architecture) {
  const NvrtcApi& api = nvrtc();
  // NINETOOTHED_NVRTC_OPTIONS: more options for every build, such as -lineinfo for a profiler's
  // view of the source (Nsight Compute's, docs/performance.md).
  std::string options = given_options;
  if (const std::string extra = extra_nvrtc_options(); !extra.empty()) options += " " + extra;
  const std::string key = architecture + "|nvrtc " + nvrtc_version() + "|" + options + "|" + source;
  if (auto cubin = DiskCache::instance().read("cuda-programs", key)) return *cubin;

  ProgramHandle handle;
  if (nvrtcResult r =
          api.nvrtcCreateProgram(&handle.program, source.c_str(), "ninetoothed.cu", 0, nullptr, nullptr);
      r != 0) {
    throw RuntimeError(std::string("nvrtcCreateProgram failed: ") + api.nvrtcGetErrorString(r));
  }
  std::vector<std::string> words = words_of(options);
  words.push_back("--gpu-architecture=" + architecture);
  words.push_back("--std=c++17");
  // The shared preambles enable OpenCL's 64-bit atomics with `#pragma OPENCL EXTENSION`, which
  // CUDA C does not know (and does not need): not a warning worth showing.
  words.push_back("--diag-suppress=161");
  // Nor are the index variables a nest declares and its body does not read (#177): unused, they
  // cost nothing.
  words.push_back("--diag-suppress=177");
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  nvrtcResult status = api.nvrtcCompileProgram(handle.program, static_cast<int>(argv.size()), argv.data());
  ++g_compiles;
  auto build_log = [&] {
    size_t size = 0;
    api.nvrtcGetProgramLogSize(handle.program, &size);
    std::string log(size, '\0');
    if (size) api.nvrtcGetProgramLog(handle.program, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  };
  if (status != 0) {
    const std::string log = build_log();
    throw BuildError("CUDA build failed (" + std::string(api.nvrtcGetErrorString(status)) + ") for " +
                     architecture + " with options '" + options + "'; source saved to " +
                     save_failed_source(source, ".cu") + "\nbuild log:\n" + log);
  }
  // The log of a build that succeeded (its warnings) only where NINETOOTHED_DEBUG asks for it.
  if (const char* debug = std::getenv("NINETOOTHED_DEBUG"); debug && *debug && std::string(debug) != "0") {
    if (const std::string log = build_log(); !log.empty())
      std::fprintf(stderr, "[ninetoothed] NVRTC build log (%s, options '%s'):\n%s\n", architecture.c_str(),
                   options.c_str(), log.c_str());
  }
  const bool ptx = architecture.starts_with("compute_");
  size_t size = 0;
  (ptx ? api.nvrtcGetPTXSize : api.nvrtcGetCUBINSize)(handle.program, &size);
  std::string image(size, '\0');
  (ptx ? api.nvrtcGetPTX : api.nvrtcGetCUBIN)(handle.program, image.data());
  DiskCache::instance().write("cuda-programs", key, image);
  return image;
}

}  // namespace nt::cuda
