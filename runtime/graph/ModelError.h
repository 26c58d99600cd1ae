//===- ModelError.h - errors in the user's model -------------------------===//
#pragma once

#include <stdexcept>
#include <string>

namespace onnx_rewrite {

/// A model that cannot be loaded, rewritten or saved as given: a malformed graph, an
/// unreadable file, a missing external data file. The message is one line naming the
/// cause; callers add the file name.
class ModelError : public std::runtime_error {
 public:
  explicit ModelError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace onnx_rewrite
