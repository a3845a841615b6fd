// Owners of POSIX resources: a file descriptor, a mapping, spawned child processes.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <utility>
#include <vector>

namespace nt {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// mmap()'s result, unmapped on destruction (nothing where it failed).
class Mapping {
 public:
  Mapping() = default;
  Mapping(size_t bytes, int protection, int flags, int fd, off_t offset)
      : address_(::mmap(nullptr, bytes, protection, flags, fd, offset)), bytes_(bytes) {
    if (address_ == MAP_FAILED) address_ = nullptr;
  }
  Mapping(Mapping&& other) noexcept
      : address_(std::exchange(other.address_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept {
    if (this != &other) {
      unmap();
      address_ = std::exchange(other.address_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~Mapping() { unmap(); }
  char* get() const { return static_cast<char*>(address_); }
  explicit operator bool() const { return address_ != nullptr; }

 private:
  void unmap() {
    if (address_) ::munmap(address_, bytes_);
    address_ = nullptr;
  }
  void* address_ = nullptr;
  size_t bytes_ = 0;
};

// Spawned processes: those still held on destruction are sent SIGTERM and reaped.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() { end(); }
  std::vector<pid_t>& pids() { return pids_; }
  void end() {
    for (pid_t pid : pids_) ::kill(pid, SIGTERM);
    for (pid_t pid : pids_) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pids_.clear();
  }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace nt
