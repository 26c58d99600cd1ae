//===- LayerNormTest.cc - docs/dsl.md's LayerNorm rule, interpreted -------===//
//
// End to end: the first rule of docs/dsl.md, built as the Rule IR a front end
// makes, fuses LayerNorm written out the way torch.onnx exports it (opset 17,
// ReduceMean axes as an attribute) and the way opset 18 writes it (axes as an
// input, with the Mul/Reciprocal forms and swapped operands), and ONNX Runtime
// computes the same outputs before and after.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/support/Oracle.h"
#include "tests/unit/interp/InterpTestSupport.h"
#include "tests/unit/interp/LayerNormRule.h"

namespace onnx_rewrite {
namespace {

using namespace interp_test;
using Ops = std::vector<std::string>;

void expectFusedAndEqual(const std::string& text) {
  const onnx::ModelProto before = testing::parseModel(text);
  Outcome out = runRules(text, layerNormRule());
  ASSERT_EQ(out.ops(), Ops{"LayerNormalization"}) << (out.log.reasons.empty() ? "" : out.reason());
  const onnx::NodeProto& ln = out.node(0);
  EXPECT_EQ(ln.input(0), "x");
  EXPECT_EQ(ln.input(1), "scale");
  EXPECT_EQ(ln.input(2), "bias");
  EXPECT_EQ(attribute(ln, "axis")->i(), -1);
  EXPECT_FLOAT_EQ(attribute(ln, "epsilon")->f(), 1e-5f);
  for (const onnx::TensorProto& t : out.model.graph().initializer())
    EXPECT_TRUE(t.name() == "scale" || t.name() == "bias" || t.name() == "two")
        << t.name() << " was only read by the match";
  testing::OracleVerdict verdict = testing::compareInOrt(before, out.model, {"batch=2", "seq=3"});
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(InterpLayerNorm, FusesTorchScriptsOpset17FormAndOrtAgrees) {
  expectFusedAndEqual(torchOpset17());
}

TEST(InterpLayerNorm, FusesTheOpset18FormWithAxesInputsAndOrtAgrees) {
  expectFusedAndEqual(opset18());
}

TEST(InterpLayerNorm, ALargeEpsilonIsNotALayerNorm) {
  std::string text = torchOpset17();
  text.replace(text.find("eps = {1e-5}"), 12, "eps = {0.5}");
  Outcome out = runRules(text, layerNormRule());
  EXPECT_EQ(out.ops().size(), 9u);
  EXPECT_EQ(out.reasonFor("y"),
            "test.yaml:50:5: eps: 'eps' is 0.5, expected a scalar in [0.0, 0.001]");
}

TEST(InterpLayerNorm, AMeanOverAnotherAxisIsNotALayerNorm) {
  std::string text = torchOpset17();
  text.replace(text.find("mean = ReduceMean <axes = [-1]>"), 31, "mean = ReduceMean <axes = [1]> ");
  Outcome out = runRules(text, layerNormRule());
  EXPECT_EQ(out.ops().size(), 9u);
  EXPECT_EQ(out.reasonFor("y"),
            "test.yaml:3:5: ReduceMean: attribute axes is [1], expected [-1] (rank 3)");
}

TEST(InterpLayerNorm, RewritingIsDeterministic) {
  Outcome first = runRules(opset18(), layerNormRule());
  Outcome second = runRules(opset18(), layerNormRule());
  EXPECT_EQ(testing::serialize(first.model), testing::serialize(second.model));
}

}  // namespace
}  // namespace onnx_rewrite
