#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace nt {

namespace {

constexpr char kMagic[] = "NTCACHE1";

std::string hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool get_u64(const std::string& in, size_t& pos, uint64_t& v) {
  if (pos + 8 > in.size()) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 8;
  return true;
}

std::string default_root() {
  if (const char* dir = std::getenv("NINETOOTHED_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/ninetoothed";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ninetoothed";
  return "";
}

}  // namespace

uint64_t fnv1a(const std::string& bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

EntryLock::~EntryLock() {
  if (fd_ >= 0) close(fd_);  // closing drops the fcntl lock
}

EntryLock DiskCache::lock(const std::string& kind, const std::string& key) {
  std::string root = directory();
  if (root.empty()) return {};
  std::filesystem::path directory = std::filesystem::path(root) / kind;
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::string path = (directory / (hex(fnv1a(key)) + ".lock")).string();
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return {};  // an unwritable directory: nothing to share
  struct flock region {};
  region.l_type = F_WRLCK;
  region.l_whence = SEEK_SET;
  // Open-file-description locks where the system has them: they exclude
  // each other within one process too (an ahead-of-time library's runtime
  // copy and the Python module's share a cache directory), and closing
  // another descriptor of the file never drops them.
#ifdef F_OFD_SETLKW
  const int command = F_OFD_SETLKW;
#else
  const int command = F_SETLKW;
#endif
  while (fcntl(fd, command, &region) != 0) {
    if (errno != EINTR) {
      close(fd);
      return {};
    }
  }
  return EntryLock(fd);
}

DiskCache& DiskCache::instance() {
  static DiskCache cache;
  return cache;
}

std::string DiskCache::directory() {
  std::lock_guard lock(mutex_);
  if (!root_) {
    root_ = default_root();
    if (root_->empty()) disable("no cache directory (set NINETOOTHED_CACHE_DIR)");
  }
  return disabled_ ? "" : *root_;
}

void DiskCache::disable(const std::string& why) {
  if (disabled_) return;
  disabled_ = true;
  warning_ = "ninetoothed: " + why + "; programs and tuning choices are cached in memory only";
}

std::string DiskCache::take_warning() {
  std::lock_guard lock(mutex_);
  return std::exchange(warning_, "");
}

std::optional<std::string> DiskCache::read(const std::string& kind, const std::string& key) {
  std::string root = directory();
  std::lock_guard lock(mutex_);
  if (root.empty()) return std::nullopt;
  std::filesystem::path path = std::filesystem::path(root) / kind / hex(fnv1a(key));
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    ++misses_;
    return std::nullopt;
  }
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string data = buffer.str();
  // magic, key length, key, payload length, payload, checksum
  size_t pos = sizeof kMagic - 1;
  uint64_t key_size = 0, payload_size = 0, checksum = 0;
  bool ok = data.compare(0, pos, kMagic) == 0 && get_u64(data, pos, key_size) &&
            key_size <= data.size() - pos && data.compare(pos, key_size, key) == 0 && key_size == key.size();
  if (ok) {
    pos += key_size;
    ok = get_u64(data, pos, payload_size) && payload_size <= data.size() - pos;
  }
  std::string payload;
  if (ok) {
    payload = data.substr(pos, payload_size);
    pos += payload_size;
    ok = get_u64(data, pos, checksum) && pos == data.size() && checksum == fnv1a(key + payload);
  }
  if (!ok) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return payload;
}

void DiskCache::write(const std::string& kind, const std::string& key, const std::string& payload) {
  std::string root = directory();
  std::lock_guard lock(mutex_);
  if (root.empty()) return;
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path directory = std::filesystem::path(root) / kind;
  std::filesystem::path path = directory / hex(fnv1a(key));
  std::filesystem::path temporary =
      directory / (hex(fnv1a(key)) + ".tmp." + std::to_string(getpid()) + "." +
                   hex(reinterpret_cast<uintptr_t>(&counter)) + "." + std::to_string(counter++));
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::string data(kMagic);
  put_u64(data, key.size());
  data += key;
  put_u64(data, payload.size());
  data += payload;
  put_u64(data, fnv1a(key + payload));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!file) {
      std::filesystem::remove(temporary, error);
      disable("cannot write the cache directory " + directory.string());
      return;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    disable("cannot write the cache directory " + directory.string());
  }
}

}  // namespace nt
