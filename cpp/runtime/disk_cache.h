// DiskCache: entries that outlive the process (built programs, tuning choices).
//
// In: a kind ("programs", "tuning"), a key (any bytes) and a payload. Out: the
// payload stored under that key by this or an earlier process, or nothing.
// Entries live in NINETOOTHED_CACHE_DIR (default: $XDG_CACHE_HOME/ninetoothed,
// else ~/.cache/ninetoothed), one file per key named by the key's hash. Each
// file holds the full key and a checksum: a file that is truncated, corrupt or
// belongs to another key reads as missing (and is overwritten by the next
// write). Writes go to a temporary file renamed into place, so concurrent
// processes writing one entry never leave a mix. If the directory cannot be
// written, the cache keeps working in memory only and says so once
// (take_warning()).
//
// lock(kind, key) holds an exclusive fcntl lock on the entry's lock file, so
// that processes sharing the directory do one piece of work (tuning a key)
// once: the first holds the lock while it works, the others wait and then
// read its entry. The kernel drops an fcntl lock when its process ends, so a
// killed process leaves no stale lock.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace nt {

// An exclusive lock on a cache entry while it lives (nothing when disabled).
class EntryLock {
 public:
  EntryLock() = default;
  explicit EntryLock(int fd) : fd_(fd) {}
  EntryLock(EntryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  EntryLock& operator=(EntryLock&&) = delete;
  ~EntryLock();

 private:
  int fd_ = -1;
};

class DiskCache {
 public:
  static DiskCache& instance();

  std::optional<std::string> read(const std::string& kind, const std::string& key);
  void write(const std::string& kind, const std::string& key, const std::string& payload);
  // Waits for the entry's lock and holds it until the EntryLock goes.
  EntryLock lock(const std::string& kind, const std::string& key);

  // The directory in use ("" when disabled).
  std::string directory();
  // A warning to show the user once (empty if none is pending).
  std::string take_warning();

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  DiskCache() = default;
  void disable(const std::string& why);

  std::mutex mutex_;
  std::optional<std::string> root_;  // resolved on first use
  bool disabled_ = false;
  std::string warning_;
  size_t hits_ = 0, misses_ = 0;
};

uint64_t fnv1a(const std::string& bytes, uint64_t seed = 1469598103934665603ull);

}  // namespace nt
