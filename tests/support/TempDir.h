//===- TempDir.h - a scratch folder removed after the test ---------------===//
#pragma once

#include <string>
#include <vector>

namespace onnx_rewrite::testing {

/// Creates a fresh folder under $TMPDIR (or /tmp); removes it and its contents on
/// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// path() + "/" + name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Result of running a command: exit status and what it printed.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `command` with /bin/sh, capturing stdout and stderr.
CommandResult runCommand(const std::string& command);

/// Single-quotes `s` for /bin/sh.
std::string shellQuote(const std::string& s);

/// Names of the entries of folder `dir`, sorted.
std::vector<std::string> listFolder(const std::string& dir);

}  // namespace onnx_rewrite::testing
