//===- OpId.h - interned (domain, op_type) keys --------------------------===//
//
// Matchers compare op types millions of times; interning each (domain, op_type)
// pair once turns those comparisons into integer compares. The empty domain and
// "ai.onnx" are the same domain, so both intern to one key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace onnx_rewrite {

/// A process-wide interned (domain, op_type) pair. Default-constructed ids are invalid.
class OpId {
 public:
  constexpr OpId() = default;

  /// Interns the pair; "ai.onnx" is normalised to "". Thread-safe.
  static OpId get(std::string_view domain, std::string_view op_type);

  /// The domain as written in models ("" for the default ONNX domain).
  const std::string& domain() const;
  const std::string& opType() const;
  /// "op_type" for the ONNX domain, else "domain::op_type"; for messages.
  std::string str() const;

  bool valid() const { return index_ != kInvalid; }
  uint32_t index() const { return index_; }
  /// Number of ids interned so far (ids are dense: 0 .. count()-1).
  static uint32_t count();

  friend bool operator==(OpId a, OpId b) { return a.index_ == b.index_; }
  friend bool operator!=(OpId a, OpId b) { return a.index_ != b.index_; }
  friend bool operator<(OpId a, OpId b) { return a.index_ < b.index_; }

 private:
  static constexpr uint32_t kInvalid = UINT32_MAX;
  explicit constexpr OpId(uint32_t index) : index_(index) {}
  uint32_t index_ = kInvalid;
};

/// "ai.onnx" and "" name the same domain; returns the canonical spelling "".
std::string_view canonicalDomain(std::string_view domain);

}  // namespace onnx_rewrite
