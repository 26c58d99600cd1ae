//===- RegularFile.h - open only regular files ---------------------------===//
//
// A path from the user or from a model may name a device (/dev/zero never
// ends), a FIFO (open blocks until a writer comes) or a folder. Every file the
// runtime reads (models, external data) is opened here: without blocking, and
// refused unless it is a regular file once open, so the check and the read
// see the same file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace onnx_rewrite {

/// A read-only file descriptor, closed on destruction.
class RegularFile {
 public:
  /// Opens `path` for reading. On failure fd() is -1 and error() says why ("No such file
  /// or directory", "is a folder", "is not a regular file (a device, FIFO or socket)").
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }
  /// The file's size in bytes (valid when fd() >= 0).
  long long size() const { return size_; }

 private:
  int fd_ = -1;
  long long size_ = 0;
  std::string error_;
};

/// True when `path`, with every symlink resolved, lies inside one of `folders` (themselves
/// resolved). False also when `path` does not resolve (missing, a dangling link).
bool resolvesInside(const std::string& path, const std::vector<std::string>& folders);

}  // namespace onnx_rewrite
