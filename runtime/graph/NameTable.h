//===- NameTable.h - model-wide unique names -----------------------------===//
//
// ONNX value names must be unique across a model's graph and its nested bodies,
// so every graph of a model shares one table. Fresh names are derived from a hint
// and a per-hint counter, which keeps them deterministic for a given input.
//
// The table only has to answer "may this name be in use?", and every value and node
// name of a model goes through it on import, so it keeps a 64-bit hash per name in a
// flat open-addressing set instead of a copy of every string. Two names sharing a
// hash can only make fresh() skip a candidate it could have used (odds about n/2^64
// per candidate); a name it returns is always unused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace onnx_rewrite {

/// Set of names in use plus a generator of fresh ones.
class NameTable {
 public:
  /// Records a name found in the model. Returns false if it was (probably) present.
  bool insert(std::string_view name);
  /// True if `name` is in use (or, with odds about n/2^64, shares a hash with one that is).
  bool contains(std::string_view name) const;
  /// Returns `hint` if unused, else the first unused "hint_N"; records the result.
  std::string fresh(std::string_view hint);
  size_t size() const { return size_; }
  void reserve(size_t n);

 private:
  bool insertHash(uint64_t h);
  void grow(size_t min_slots);

  std::vector<uint64_t> slots_;  // 0 marks an empty slot; a real hash of 0 is stored as 1
  size_t size_ = 0;
  std::unordered_map<std::string, uint64_t> next_suffix_;
};

}  // namespace onnx_rewrite
