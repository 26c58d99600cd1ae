//===- RegularFileText.h - read a rule file, refusing devices and FIFOs --===//
//
// Rule files are code the user chose, but a path may still name /dev/zero (a
// read that never ends) or a FIFO (an open that waits for a writer). Both
// front ends and the TableGen include check read files only through here.
// Header-only: the YAML and TableGen front ends are separate libraries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace onnx_rewrite {

/// Reads the regular file `path` into `text`. Returns false with `error` set ("is not a
/// regular file", "No such file or directory", ...) otherwise.
inline bool readRegularFile(const std::string& path, std::string& text, std::string& error) {
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file";
    ::close(fd);
    return false;
  }
  text.clear();
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

/// The message for a rule file readRegularFile refused: "cannot read rule file", and why
/// when the path exists but is a folder, a device or a FIFO.
inline std::string cannotReadRuleFile(const std::string& error) {
  if (error == "is a folder" || error == "is not a regular file")
    return "cannot read rule file: it " + error;
  return "cannot read rule file";
}

}  // namespace onnx_rewrite
