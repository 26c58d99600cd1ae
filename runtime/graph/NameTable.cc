//===- NameTable.cc - model-wide unique names ----------------------------===//
#include "runtime/graph/NameTable.h"

#include <functional>

namespace onnx_rewrite {
namespace {

uint64_t hashOf(std::string_view name) {
  const uint64_t h = std::hash<std::string_view>{}(name);
  return h == 0 ? 1 : h;
}

}  // namespace

void NameTable::reserve(size_t n) {
  if (n * 2 > slots_.size()) grow(n * 2);
}

void NameTable::grow(size_t min_slots) {
  size_t n = 16;
  while (n < min_slots) n *= 2;
  std::vector<uint64_t> old(n, 0);
  old.swap(slots_);
  size_ = 0;
  for (uint64_t h : old)
    if (h != 0) insertHash(h);
}

bool NameTable::insertHash(uint64_t h) {
  if ((size_ + 1) * 2 > slots_.size()) grow((size_ + 1) * 2);
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return false;
    if (slots_[i] == 0) {
      slots_[i] = h;
      ++size_;
      return true;
    }
  }
}

bool NameTable::insert(std::string_view name) { return insertHash(hashOf(name)); }

bool NameTable::contains(std::string_view name) const {
  if (slots_.empty()) return false;
  const uint64_t h = hashOf(name);
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return true;
    if (slots_[i] == 0) return false;
  }
}

std::string NameTable::fresh(std::string_view hint) {
  std::string base(hint.empty() ? std::string_view("v") : hint);
  if (insert(base)) return base;
  uint64_t& suffix = next_suffix_[base];
  for (;;) {
    std::string candidate = base + "_" + std::to_string(++suffix);
    if (insert(candidate)) return candidate;
  }
}

}  // namespace onnx_rewrite
