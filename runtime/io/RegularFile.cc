//===- RegularFile.cc - open only regular files --------------------------===//
#include "runtime/io/RegularFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace onnx_rewrite {
namespace {

/// realpath(3) as a string; empty when `path` does not resolve.
std::string resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

}  // namespace

RegularFile::RegularFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of hanging; it
  // does not change how a regular file reads.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error_ = std::strerror(errno);
    ::close(fd);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    error_ =
        S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file (a device, FIFO or socket)";
    ::close(fd);
    return;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  fd_ = fd;
  size_ = static_cast<long long>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool resolvesInside(const std::string& path, const std::vector<std::string>& folders) {
  const std::string real = resolved(path);
  if (real.empty()) return false;
  for (const std::string& folder : folders) {
    std::string root = resolved(folder);
    if (root.empty()) continue;
    if (root.back() != '/') root += '/';
    if (real.compare(0, root.size(), root) == 0) return true;
  }
  return false;
}

}  // namespace onnx_rewrite
