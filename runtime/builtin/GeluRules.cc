//===- GeluRules.cc - hand-written Gelu fusions ---------------------------===//
#include "runtime/builtin/GeluRules.h"

#include <cmath>

#include "runtime/driver/Rewriter.h"
#include "runtime/match/MatchSupport.h"

namespace onnx_rewrite {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kTolerance = 1e-4;

const OpId kMul = OpId::get("", "Mul");
const OpId kAdd = OpId::get("", "Add");
const OpId kDiv = OpId::get("", "Div");
const OpId kErf = OpId::get("", "Erf");
const OpId kGelu = OpId::get("", "Gelu");
const OpId kMsGelu = OpId::get("com.microsoft", "Gelu");
const OpId kMsBiasGelu = OpId::get("com.microsoft", "BiasGelu");

/// Gelu(x) = x * 0.5 * (1 + erf(x / sqrt 2)).
///
/// The root is the outer Mul. Its three factors x, 0.5 and (1 + erf(..)) are spread over
/// two Muls in one of three associations; the matcher flattens the two Muls into a
/// factor list and then identifies each factor, so every association and operand order
/// is one code path.
class GeluErfRule : public RewritePattern {
 public:
  GeluErfRule()
      : RewritePattern(RuleInfo{"gelu_erf",
                                kMul,
                                50,
                                {"ort", "onnx"},
                                "runtime/builtin/GeluRules.cc",
                                {kMsGelu, kGelu}}) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    Model& model = rw.model();
    const Node& outer = g.node(root);
    if (outer.inputs().size() != 2) return rw.notifyMatchFailure([] { return "Mul arity"; });
    // Flatten: one of the outer Mul's operands is itself a Mul holding two factors.
    for (int inner_side = 0; inner_side < 2; ++inner_side) {
      NodeId inner = producerIf(g, outer.input(inner_side), kMul);
      if (inner == kNoId) continue;
      ValueId factors[3] = {g.node(inner).input(0), g.node(inner).input(1),
                            outer.input(1 - inner_side)};
      // Try each factor as the (1 + erf) term and each other one as the 0.5.
      for (int sum_i = 0; sum_i < 3; ++sum_i)
        for (int half_i = 0; half_i < 3; ++half_i) {
          if (half_i == sum_i) continue;
          const int x_i = 3 - sum_i - half_i;
          if (tryRewrite(rw, model, g, root, inner, factors[x_i], factors[half_i], factors[sum_i]))
            return true;
        }
    }
    return rw.notifyMatchFailure(
        [] { return "no factor of the Mul pair is 0.5 * x * (1 + Erf(x / sqrt(2)))"; });
  }

 private:
  bool tryRewrite(Rewriter& rw, Model& model, Graph& g, NodeId root, NodeId inner, ValueId x,
                  ValueId half, ValueId sum) const {
    if (!isScalarConstant(model, g, half, 0.5, kTolerance)) return false;
    NodeId add = producerIf(g, sum, kAdd);
    if (add == kNoId) return false;
    // (1 + erf) with the 1 on either side.
    NodeId erf = kNoId;
    for (int side = 0; side < 2 && erf == kNoId; ++side)
      if (isScalarConstant(model, g, g.node(add).input(1 - side), 1.0, kTolerance))
        erf = producerIf(g, g.node(add).input(side), kErf);
    if (erf == kNoId) return false;
    // erf's argument: x / sqrt(2) or x * (1 / sqrt(2)).
    ValueId scaled = g.node(erf).input(0);
    NodeId scale = producerIf(g, scaled, kDiv);
    if (scale != kNoId) {
      if (g.node(scale).input(0) != x ||
          !isScalarConstant(model, g, g.node(scale).input(1), kSqrt2, kTolerance))
        return false;
    } else {
      scale = producerIf(g, scaled, kMul);
      if (scale == kNoId) return false;
      ValueId factor = otherInput(g.node(scale), x);
      if (factor == kNoId || !isScalarConstant(model, g, factor, 1.0 / kSqrt2, kTolerance))
        return false;
    }
    const std::vector<NodeId> matched = {root, inner, add, erf, scale};
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable(matched, {y})) return false;

    NodeSpec gelu;
    gelu.op = g.opsetVersion("") >= 20 ? kGelu : kMsGelu;
    gelu.inputs = {x};
    NodeId fused = rw.createNode(std::move(gelu));
    return rw.replaceMatch(matched, {{y, g.node(fused).output(0)}});
  }
};

/// BiasGelu(x, b) = Gelu(x + b) for a bias b broadcast along the last axis.
class BiasGeluRule : public RewritePattern {
 public:
  BiasGeluRule()
      : RewritePattern(RuleInfo{
            "bias_gelu", kMsGelu, 40, {"ort"}, "runtime/builtin/GeluRules.cc", {kMsBiasGelu}}) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    NodeId add = producerIf(g, g.node(root).input(0), kAdd);
    if (add == kNoId) return rw.notifyMatchFailure([] { return "Gelu input is not an Add"; });
    for (int bias_side = 0; bias_side < 2; ++bias_side) {
      ValueId bias = g.node(add).input(bias_side);
      ValueId x = g.node(add).input(1 - bias_side);
      auto bias_shape = constantShape(g, bias);
      auto x_shape = staticShape(g, x);
      if (!bias_shape || bias_shape->size() != 1 || !x_shape || x_shape->empty()) continue;
      if (x_shape->back() != (*bias_shape)[0]) continue;
      const std::vector<NodeId> matched = {root, add};
      const ValueId y = g.node(root).output(0);
      if (!rw.checkReplaceable(matched, {y})) return false;
      NodeSpec spec;
      spec.op = kMsBiasGelu;
      spec.inputs = {x, bias};
      NodeId fused = rw.createNode(std::move(spec));
      return rw.replaceMatch(matched, {{y, g.node(fused).output(0)}});
    }
    return rw.notifyMatchFailure([] {
      return "no Add operand is a constant 1-D bias matching the other operand's static last dim";
    });
  }
};

}  // namespace

std::unique_ptr<RewritePattern> makeGeluErfRule() { return std::make_unique<GeluErfRule>(); }
std::unique_ptr<RewritePattern> makeBiasGeluRule() { return std::make_unique<BiasGeluRule>(); }

}  // namespace onnx_rewrite
