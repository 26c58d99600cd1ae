//===- GeluNatives.cc - native functions of the gelu rules ----------------===//
//
// rules/gelu.yaml folds a division of a MatMul by a scalar constant c into
// FusedMatMul's alpha, which is then 1 / c: the rule language has no arithmetic
// on matched values, so this helper computes it.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"

namespace onnx_rewrite {
namespace {

/// FLOAT 1 / c for a one-element constant c that is finite, nonzero and whose reciprocal
/// is a finite float.
std::optional<onnx::AttributeProto> reciprocalOf(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  const auto values = constantValues(ctx.model, ctx.graph, args[0], 1);
  if (!values || values->size() != 1) return std::nullopt;
  const double c = (*values)[0];
  if (!std::isfinite(c) || c == 0.0) return std::nullopt;
  const double r = 1.0 / c;
  if (!std::isfinite(static_cast<float>(r))) return std::nullopt;
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(static_cast<float>(r));
  return a;
}

}  // namespace

NativeFamily geluNatives() {
  NativeFamily family;
  family.attribute_helpers.push_back(
      AttributeHelper{"reciprocal_of", 1, &reciprocalOf,
                      "FLOAT 1 / c for a one-element, finite, nonzero constant c (a FusedMatMul "
                      "alpha from a division)"});
  return family;
}

}  // namespace onnx_rewrite
