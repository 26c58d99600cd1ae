//===- NameTable.h - model-wide unique names -----------------------------===//
//
// ONNX value names must be unique across a model's graph and its nested bodies,
// so every graph of a model shares one table. Fresh names are derived from a hint
// and a per-hint counter, which keeps them deterministic for a given input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace onnx_rewrite {

/// Set of names in use plus a generator of fresh ones.
class NameTable {
 public:
  /// Records a name found in the model. Returns false if it was already present.
  bool insert(const std::string& name) { return names_.insert(name).second; }
  bool contains(const std::string& name) const { return names_.count(name) != 0; }
  /// Returns `hint` if unused, else the first unused "hint_N"; records the result.
  std::string fresh(std::string_view hint);
  size_t size() const { return names_.size(); }
  void reserve(size_t n) { names_.reserve(n); }

 private:
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, uint64_t> next_suffix_;
};

}  // namespace onnx_rewrite
