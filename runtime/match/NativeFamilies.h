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
/// A 1-D int64 tensor of `values`, as shape tensor helpers return it.
onnx::TensorProto int64Vector(const std::vector<int64_t>& values);

/// A mask value no score survives: at most -2^100 (finfo.min, -inf, ...). Added to a score
/// of the models' magnitudes it rounds to itself.
inline constexpr double kHugeNegative = -1.2676506002282294e30;  // -2^100

NativeFamily attentionNatives();  // AttentionNatives.cc
NativeFamily rotaryNatives();     // RotaryNatives.cc
NativeFamily geluNatives();       // GeluNatives.cc
NativeFamily embedNatives();      // EmbedNatives.cc
NativeFamily canonicalNatives();  // CanonicalNatives.cc

}  // namespace onnx_rewrite
