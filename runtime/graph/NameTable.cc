//===- NameTable.cc - model-wide unique names ----------------------------===//
#include "runtime/graph/NameTable.h"

namespace onnx_rewrite {

std::string NameTable::fresh(std::string_view hint) {
  std::string base(hint.empty() ? std::string_view("v") : hint);
  if (names_.insert(base).second) return base;
  uint64_t& suffix = next_suffix_[base];
  for (;;) {
    std::string candidate = base + "_" + std::to_string(++suffix);
    if (names_.insert(candidate).second) return candidate;
  }
}

}  // namespace onnx_rewrite
