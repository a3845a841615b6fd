// Launches replayed in helper processes, so that PoCL compiles several programs at once.
//
// PoCL compiles a program, and at the program's first launch its work-group function, under one lock
// per process: tuning's candidates on a CPU compile one after another, whatever the threads. Helper
// processes (the program tools/tuning_helper.cpp, spawned, never forked) compile some of them at the
// same time into PoCL's kernel cache on disk, where the tuning process then finds them
// (driver/compile_ahead.cpp).
//
// A helper replays exactly a launch the tuning process makes: the same source, build options, device,
// global and local sizes and scalars, and buffers of the same sizes holding copies of the same bytes
// (the caller's inputs, tuning's scratch outputs), its own copies: what a helper's kernel writes stays
// in the helper. So a kernel runs there only on buffers that match its arguments, as it does here.
//
// In: ReplayJobs (recorded by a LaunchRecorder). Out: the jobs claimed one at a time from one queue
// by the helpers and by the caller (ReplayHelpers::claim()); the number the helpers replayed.
// Everything goes through one file (a memfd): a shared page with the queue's counters, the jobs'
// description, then the buffers' bytes (mapped privately by each helper).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/launch.h"
#include "runtime/opencl.h"
#include "support/posix_handles.h"

namespace nt {

// One argument of a recorded launch.
struct ReplayArg {
  enum class Kind : uint8_t { Buffer, Scalar, NoMemory } kind = Kind::Scalar;
  cl_uint index = 0;
  size_t buffer = 0;  // Buffer: into ReplayJobs::buffers
  bool needed = false, written = false;
  std::string bytes;  // Scalar: its value's bytes
};

// One launch: where it runs (the device of that index in list_devices(), or its small()
// companion, named for a check), what it builds and its arguments.
struct ReplayLaunch {
  int device_index = 0;
  bool small = false;
  std::string device_name;
  size_t source = 0;  // into ReplayJobs::sources
  std::string options;
  size_t global_size = 0, local_size = 1;
  std::vector<ReplayArg> args;
};

struct ReplayJobs {
  struct Source {
    std::string kernel_name, text;
  };
  struct Buffer {
    const void* data = nullptr;  // the caller's, read when the helpers start
    size_t bytes = 0;
  };
  std::vector<Source> sources;
  std::vector<Buffer> buffers;
  std::vector<ReplayLaunch> launches;

  // The index of this source, added where it is new.
  size_t source(const std::string& kernel_name, const std::string& text);
  // The index of the buffer over [data, data + bytes), added where it is new.
  size_t buffer(const void* data, size_t bytes);
  size_t buffer_bytes() const;

  // The description (all but the buffers' bytes) as bytes, and back (nullopt where it is not one).
  std::string serialize() const;
  static std::optional<ReplayJobs> parse(const std::string& text);
};

// What a KernelLauncher is given (CompiledKernel::set_arguments()), recorded into `launch`, its
// buffers into `jobs`.
class LaunchRecorder {
 public:
  LaunchRecorder(ReplayJobs& jobs, ReplayLaunch& launch) : jobs_(jobs), launch_(launch) {}
  void set_buffer(cl_uint index, void* data, size_t bytes, bool needed, bool written, const std::string& name,
                  const ElementLayout* scattered = nullptr);
  void set_scalar(cl_uint index, const void* value, size_t size);
  template <typename T>
  void set_scalar(cl_uint index, T value) {
    set_scalar(index, &value, sizeof(T));
  }

 private:
  ReplayJobs& jobs_;
  ReplayLaunch& launch_;
};

struct ReplayShared;  // the file's first page (launch_replay.cpp)

// Helper processes over jobs; the caller takes jobs from the same queue (claim()).
class ReplayHelpers {
 public:
  // Starts up to `helpers` processes of `program` over `jobs` (whose buffers are read now). Where
  // it cannot (no memfd, no process), none: claim() then hands every job to the caller.
  ReplayHelpers(const ReplayJobs& jobs, const std::string& program, size_t helpers);
  // Stops the queue, ends the helpers still running (SIGTERM) and reaps them.
  ~ReplayHelpers();
  ReplayHelpers(const ReplayHelpers&) = delete;
  ReplayHelpers& operator=(const ReplayHelpers&) = delete;

  size_t started() const { return started_; }
  // Helpers asked for that could not start, or that ended other than with status 0 (wait()).
  size_t failed() const { return failed_; }
  // The next job for the caller, or nullopt when none is left.
  std::optional<size_t> claim();
  // Waits for the helpers to end, calling `between` every few milliseconds (it may throw: the
  // destructor then ends them). Returns the number of jobs the helpers replayed.
  size_t wait(const std::function<void()>& between);

 private:
  // Destroyed in reverse: the children ended and reaped before the file is unmapped and closed.
  UniqueFd fd_;
  Mapping page_;                       // the file's first page, mapped shared
  std::unique_ptr<ReplayShared> own_;  // the queue where there is no file
  ReplayShared* shared_ = nullptr;     // one of those
  uint32_t num_jobs_ = 0;
  size_t started_ = 0, failed_ = 0;
  Children children_;
};

// The helper's side: replays jobs from the file open as `fd` until none is left, or until
// `parent` is no longer its parent. Returns the process's exit status.
int replay_launches(int fd, pid_t parent);

// The helper program: NINETOOTHED_TUNING_HELPER where set, else `_tuning_helper` beside the
// shared object holding this code (the Python module's directory); empty where there is none.
std::string tuning_helper_program();

}  // namespace nt
