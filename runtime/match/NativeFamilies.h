//===- NativeFamilies.h - built-in native functions, one file per rule family ---===//
//
// The native functions a family of shipped rules needs (attention's head counts,
// rotary's caches, ...) live next to each other in runtime/match/<Family>Natives.cc.
// Each file returns its entries; the registry adds them when it is first built, so
// they are always available (no static-initialiser registration that a static
// library's linker could drop).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/match/NativeHelpers.h"

namespace onnx_rewrite {

/// The entries of one family.
struct NativeFamily {
  std::vector<NativePredicate> predicates;
  std::vector<AttributeHelper> attribute_helpers;
  std::vector<TensorHelper> tensor_helpers;
};

/// An INT attribute of `value`, as attribute helpers return it (the caller names it).
std::optional<onnx::AttributeProto> intAttribute(int64_t value);

NativeFamily attentionNatives();  // AttentionNatives.cc
NativeFamily rotaryNatives();     // RotaryNatives.cc
NativeFamily geluNatives();       // GeluNatives.cc
NativeFamily embedNatives();      // EmbedNatives.cc
NativeFamily canonicalNatives();  // CanonicalNatives.cc

}  // namespace onnx_rewrite
