//===- NameIndex.h - flat hash index from value names to ids -------------===//
//
// A graph looks up every input name of every node while it imports, so the
// name -> ValueId index is on the hot path of loading a model. A node-based
// std::unordered_map<std::string, ValueId> costs a heap copy of every name and
// three dependent cache misses per lookup (bucket, node, string); on 10^6-node
// models those misses dominated import. This table keeps 8-byte slots (32 bits of
// the name's hash and the id) in one array with linear probing, and reads the
// name itself from its owner (the graph's Value) only when the hash bits agree.
// Entries are never erased: a graph never forgets a value name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace onnx_rewrite {

/// Maps names to 32-bit ids; the names live elsewhere and `NameOf(id)` reads them.
class NameIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  static uint64_t hash(std::string_view name) { return std::hash<std::string_view>{}(name); }

  size_t size() const { return size_; }

  /// Makes room for `n` names without growing again.
  template <class NameOf>
  void reserve(size_t n, const NameOf& name_of) {
    if (n * 2 > slots_.size()) rehash(n * 2, name_of);
  }

  /// The id stored for `name`, or kAbsent.
  template <class NameOf>
  uint32_t find(std::string_view name, const NameOf& name_of) const {
    if (slots_.empty()) return kAbsent;
    const size_t slot = locate(name, hash(name), name_of);
    return slots_[slot].id;
  }

  /// The id stored for `name`; if absent, stores and returns `make_id()` (called only
  /// then, so the caller creates the owner of the name only for a new name).
  template <class NameOf, class MakeId>
  uint32_t insert(std::string_view name, const NameOf& name_of, const MakeId& make_id) {
    if ((size_ + 1) * 2 > slots_.size()) rehash((size_ + 1) * 2, name_of);
    const uint64_t h = hash(name);
    const size_t slot = locate(name, h, name_of);
    if (slots_[slot].id != kAbsent) return slots_[slot].id;
    const uint32_t id = make_id();
    slots_[slot] = Slot{tagOf(h), id};
    ++size_;
    return id;
  }

  /// Where `name` (which must be present) is stored, for a later setId: names may
  /// change owners (two values trading names), and the slot must be found while
  /// name_of still reads the old owner.
  template <class NameOf>
  size_t slotOf(std::string_view name, const NameOf& name_of) const {
    return locate(name, hash(name), name_of);
  }
  void setId(size_t slot, uint32_t id) { slots_[slot].id = id; }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = kAbsent;
  };

  static uint32_t tagOf(uint64_t h) { return static_cast<uint32_t>(h >> 32); }

  /// The slot holding `name`, or the empty slot where it would go.
  template <class NameOf>
  size_t locate(std::string_view name, uint64_t h, const NameOf& name_of) const {
    const size_t mask = slots_.size() - 1;
    const uint32_t tag = tagOf(h);
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kAbsent || (s.tag == tag && name_of(s.id) == name)) return i;
    }
  }

  /// Grows to a power of two >= min_slots; slots keep only half of each hash, so the
  /// names are hashed again (rare: callers reserve).
  template <class NameOf>
  void rehash(size_t min_slots, const NameOf& name_of) {
    size_t n = 16;
    while (n < min_slots) n *= 2;
    std::vector<Slot> old(n);
    old.swap(slots_);
    const size_t mask = n - 1;
    for (const Slot& s : old) {
      if (s.id == kAbsent) continue;
      size_t i = static_cast<size_t>(hash(name_of(s.id))) & mask;
      while (slots_[i].id != kAbsent) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace onnx_rewrite
