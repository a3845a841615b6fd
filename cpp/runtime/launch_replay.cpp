#include "runtime/launch_replay.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "runtime/device.h"
#include "runtime/program.h"

extern char** environ;

namespace nt {

namespace {

constexpr uint64_t kMagic = 0x6e747265706c6179;  // "ntreplay"
constexpr uint32_t kVersion = 1;
constexpr size_t kPage = 4096;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void put(std::string& out, uint64_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void put(std::string& out, const std::string& text) {
  put(out, static_cast<uint64_t>(text.size()));
  out += text;
}

// Reads what put() wrote; `ok` turns false at the first read past the end.
struct Reader {
  const std::string& in;
  size_t at = 0;
  bool ok = true;
  uint64_t number() {
    uint64_t value = 0;
    if (!ok || in.size() - at < sizeof value) {
      ok = false;
      return 0;
    }
    std::memcpy(&value, in.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
  std::string text() {
    uint64_t size = number();
    if (!ok || in.size() - at < size) {
      ok = false;
      return "";
    }
    std::string value = in.substr(at, size);
    at += size;
    return value;
  }
};

}  // namespace

// The file's first page, shared by every process.
struct ReplayShared {
  uint64_t magic;
  uint32_t version;
  uint32_t num_jobs;
  std::atomic<uint32_t> next;      // the next job to claim (past num_jobs: none left)
  std::atomic<uint32_t> replayed;  // jobs the helpers replayed
  uint64_t description_offset, description_bytes, data_offset, data_bytes;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the queue is shared between processes");

size_t ReplayJobs::source(const std::string& kernel_name, const std::string& text) {
  for (size_t i = 0; i < sources.size(); ++i)
    if (sources[i].kernel_name == kernel_name && sources[i].text == text) return i;
  sources.push_back({kernel_name, text});
  return sources.size() - 1;
}

size_t ReplayJobs::buffer(const void* data, size_t bytes) {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].data == data && buffers[i].bytes == bytes) return i;
  buffers.push_back({data, bytes});
  return buffers.size() - 1;
}

size_t ReplayJobs::buffer_bytes() const {
  size_t bytes = 0;
  for (const Buffer& b : buffers) bytes += round_up(b.bytes, kPage);
  return bytes;
}

std::string ReplayJobs::serialize() const {
  std::string out;
  put(out, buffers.size());
  for (const Buffer& b : buffers) put(out, b.bytes);
  put(out, sources.size());
  for (const Source& s : sources) {
    put(out, s.kernel_name);
    put(out, s.text);
  }
  put(out, launches.size());
  for (const ReplayLaunch& l : launches) {
    put(out, static_cast<uint64_t>(l.device_index));
    put(out, l.small);
    put(out, l.device_name);
    put(out, l.source);
    put(out, l.options);
    put(out, l.global_size);
    put(out, l.local_size);
    put(out, l.args.size());
    for (const ReplayArg& a : l.args) {
      put(out, static_cast<uint64_t>(a.kind));
      put(out, a.index);
      put(out, a.buffer);
      put(out, a.needed);
      put(out, a.written);
      put(out, a.bytes);
    }
  }
  return out;
}

std::optional<ReplayJobs> ReplayJobs::parse(const std::string& text) {
  Reader in{text};
  ReplayJobs jobs;
  jobs.buffers.resize(std::min<uint64_t>(in.number(), text.size()));
  for (Buffer& b : jobs.buffers) b.bytes = in.number();
  jobs.sources.resize(std::min<uint64_t>(in.number(), text.size()));
  for (Source& s : jobs.sources) {
    s.kernel_name = in.text();
    s.text = in.text();
  }
  jobs.launches.resize(std::min<uint64_t>(in.number(), text.size()));
  for (ReplayLaunch& l : jobs.launches) {
    l.device_index = static_cast<int>(in.number());
    l.small = in.number() != 0;
    l.device_name = in.text();
    l.source = in.number();
    l.options = in.text();
    l.global_size = in.number();
    l.local_size = in.number();
    l.args.resize(std::min<uint64_t>(in.number(), text.size()));
    for (ReplayArg& a : l.args) {
      uint64_t kind = in.number();
      a.kind = static_cast<ReplayArg::Kind>(kind);
      a.index = static_cast<cl_uint>(in.number());
      a.buffer = in.number();
      a.needed = in.number() != 0;
      a.written = in.number() != 0;
      a.bytes = in.text();
      if (kind > static_cast<uint64_t>(ReplayArg::Kind::NoMemory) ||
          (a.kind == ReplayArg::Kind::Buffer && a.buffer >= jobs.buffers.size()))
        in.ok = false;
    }
    if (l.source >= jobs.sources.size()) in.ok = false;
  }
  if (!in.ok || in.at != text.size()) return std::nullopt;
  return jobs;
}

void LaunchRecorder::set_buffer(cl_uint index, void* data, size_t bytes, bool needed, bool written,
                                const std::string&, const ElementLayout*) {
  ReplayArg arg;
  arg.index = index;
  arg.kind = bytes == 0 ? ReplayArg::Kind::NoMemory : ReplayArg::Kind::Buffer;
  if (bytes) arg.buffer = jobs_.buffer(data, bytes);
  arg.needed = needed;
  arg.written = written;
  launch_.args.push_back(std::move(arg));
}

void LaunchRecorder::set_scalar(cl_uint index, const void* value, size_t size) {
  ReplayArg arg;
  arg.index = index;
  arg.bytes.assign(static_cast<const char*>(value), size);
  launch_.args.push_back(std::move(arg));
}

namespace {

// The shared file, at a descriptor of 3 or more: a process started with stdio closed gets low
// descriptors back, and the helper's 0 to 2 are opened over them.
UniqueFd shared_file() {
  UniqueFd created(memfd_create("ninetoothed-replay", MFD_CLOEXEC));
  if (!created || created.get() >= 3) return created;
  return UniqueFd(fcntl(created.get(), F_DUPFD_CLOEXEC, 3));
}

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
};

struct SpawnAttributes {
  posix_spawnattr_t attributes;
  SpawnAttributes() { posix_spawnattr_init(&attributes); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};

}  // namespace

ReplayHelpers::ReplayHelpers(const ReplayJobs& jobs, const std::string& program, size_t helpers)
    : num_jobs_(static_cast<uint32_t>(jobs.launches.size())) {
  own_.reset(new ReplayShared{kMagic, kVersion, num_jobs_, {0}, {0}, 0, 0, 0, 0});
  shared_ = own_.get();  // until the file is ready: no helpers, the caller claims every job
  if (!helpers || program.empty()) return;
  failed_ = helpers;  // until started
  const std::string description = jobs.serialize();
  const size_t data_offset = round_up(kPage + description.size(), kPage);
  const size_t total = data_offset + jobs.buffer_bytes();
  UniqueFd fd = shared_file();
  if (!fd || ftruncate(fd.get(), static_cast<off_t>(total)) != 0) return;
  {
    Mapping whole(total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (!whole) return;
    std::memcpy(whole.get() + kPage, description.data(), description.size());
    size_t at = data_offset;
    for (const ReplayJobs::Buffer& b : jobs.buffers) {
      std::memcpy(whole.get() + at, b.data, b.bytes);
      at += round_up(b.bytes, kPage);
    }
  }
  Mapping page(kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (!page) return;
  ReplayShared* shared = new (page.get()) ReplayShared{
      kMagic, kVersion, num_jobs_, {0}, {0}, kPage, description.size(), data_offset, total - data_offset};
  fd_ = std::move(fd);
  page_ = std::move(page);
  shared_ = shared;
  own_.reset();
  // The helper: fd 3 is the file; nothing else of this process (stdio to /dev/null: a helper's
  // kernels may print). posix_spawn runs no fork handlers and shares no OpenCL state.
  SpawnActions actions;
  for (int stdio : {0, 1, 2})
    posix_spawn_file_actions_addopen(&actions.actions, stdio, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_adddup2(&actions.actions, fd_.get(), 3);  // clears FD_CLOEXEC, also where it is 3
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  posix_spawn_file_actions_addclosefrom_np(&actions.actions, 4);
#endif
  SpawnAttributes attributes;
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigmask(&attributes.attributes, &none);
  posix_spawnattr_setsigdefault(&attributes.attributes, &defaults);
  posix_spawnattr_setflags(&attributes.attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const std::string parent = std::to_string(getpid());
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>("3"),
                  const_cast<char*>(parent.c_str()), nullptr};
  children_.pids().reserve(helpers);  // push_back cannot throw between a spawn and its record
  for (size_t i = 0; i < helpers; ++i) {
    pid_t pid = 0;
    if (posix_spawn(&pid, program.c_str(), &actions.actions, &attributes.attributes, argv, environ) != 0)
      break;
    children_.pids().push_back(pid);
    ++started_;
    --failed_;
  }
}

std::optional<size_t> ReplayHelpers::claim() {
  uint32_t job = shared_->next.fetch_add(1);
  if (job >= num_jobs_) return std::nullopt;
  return job;
}

size_t ReplayHelpers::wait(const std::function<void()>& between) {
  std::vector<pid_t>& pids = children_.pids();
  while (!pids.empty()) {
    int status = 0;
    pid_t done = waitpid(pids.back(), &status, WNOHANG);
    if (done == pids.back() || (done < 0 && errno != EINTR)) {  // ECHILD: reaped elsewhere
      if (done == pids.back() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) ++failed_;
      pids.pop_back();
      continue;
    }
    between();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return shared_->replayed.load();
}

ReplayHelpers::~ReplayHelpers() {
  shared_->next.store(num_jobs_);  // no more jobs for helpers still running; children_ ends them
}

namespace {

void replay(const ReplayLaunch& launch, const ReplayJobs& jobs, char* data) {
  std::shared_ptr<Device> device = select_device(std::to_string(launch.device_index));
  if (launch.small) device = device->small();
  if (!device || device->info().name != launch.device_name)
    throw RuntimeError("the helper's device is not the tuning process's");
  const ReplayJobs::Source& source = jobs.sources[launch.source];
  ClProgram program = ProgramCache::instance().get(*device, source.text, launch.options, /*keep=*/false);
  KernelLauncher launcher(device, program, source.kernel_name);
  std::vector<size_t> offsets;
  size_t at = 0;
  for (const ReplayJobs::Buffer& b : jobs.buffers) {
    offsets.push_back(at);
    at += round_up(b.bytes, kPage);
  }
  for (const ReplayArg& a : launch.args) {
    if (a.kind == ReplayArg::Kind::Scalar) {
      launcher.set_scalar(a.index, a.bytes.data(), a.bytes.size());
    } else if (a.kind == ReplayArg::Kind::NoMemory) {
      launcher.set_buffer(a.index, nullptr, 0, false, false, "none");
    } else {
      launcher.set_buffer(a.index, data + offsets[a.buffer], jobs.buffers[a.buffer].bytes, a.needed,
                          a.written, "argument " + std::to_string(a.index));
    }
  }
  launcher.launch(launch.global_size, launch.local_size);
}

}  // namespace

int replay_launches(int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // the queue's owner gone: nobody reads what this compiles
  if (getppid() != parent) return 1;
  Mapping page(kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (!page) return 1;
  auto* shared = reinterpret_cast<ReplayShared*>(page.get());
  if (shared->magic != kMagic || shared->version != kVersion) return 1;
  std::string description(shared->description_bytes, '\0');
  if (pread(fd, description.data(), description.size(), static_cast<off_t>(shared->description_offset)) !=
      static_cast<ssize_t>(description.size()))
    return 1;
  std::optional<ReplayJobs> jobs = ReplayJobs::parse(description);
  if (!jobs || jobs->launches.size() != shared->num_jobs || jobs->buffer_bytes() != shared->data_bytes)
    return 1;
  Mapping data_mapping;
  if (shared->data_bytes) {  // private: this helper's writes stay its own
    data_mapping = Mapping(shared->data_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                           static_cast<off_t>(shared->data_offset));
    if (!data_mapping) return 1;
  }
  char* data = data_mapping.get();
  for (uint32_t job = shared->next.fetch_add(1); job < shared->num_jobs; job = shared->next.fetch_add(1)) {
    try {
      replay(jobs->launches[job], *jobs, data);
      shared->replayed.fetch_add(1);
    } catch (const std::exception&) {
      // the tuning process builds and runs it too, and says why it fails
    }
  }
  return 0;
}

std::string tuning_helper_program() {
  if (const char* given = std::getenv("NINETOOTHED_TUNING_HELPER")) return given;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&tuning_helper_program), &info) || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  path = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/_tuning_helper";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

}  // namespace nt
