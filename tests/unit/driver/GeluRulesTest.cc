//===- GeluRulesTest.cc - the hand-written Gelu fusions -------------------===//
//
// Positive models in every form the matcher claims, and negative models that
// break exactly one condition each and must come out unchanged. Numeric
// equality of the positive forms is checked in ONNX Runtime by OracleTest.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/builtin/BuiltinRules.h"
#include "tests/support/GeluModels.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::GeluForm;
using testing::geluModel;
using testing::opTypes;
using testing::parseModel;
using testing::serialize;

std::vector<std::string> fuse(const std::string& text) {
  onnx::ModelProto model = parseModel(text);
  rewrite(model);
  return opTypes(model);
}

void expectUnchanged(const std::string& text) {
  onnx::ModelProto model = parseModel(text);
  const std::string before = serialize(model);
  Result result = rewrite(model);
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(serialize(model), before);
}

const std::vector<std::string> kFused = {"com.microsoft::Gelu"};

TEST(GeluErfRule, FusesTheTorchScriptForm) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript)), kFused);
}
TEST(GeluErfRule, FusesTheHuggingFaceForm) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kHuggingFace)), kFused);
}
TEST(GeluErfRule, FusesWithConstantsOnTheLeft) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kHalfFirst)), kFused);
}
TEST(GeluErfRule, FusesMulByReciprocalSqrt2) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kReciprocalScale)), kFused);
}

TEST(GeluErfRule, EmitsOnnxGeluFromOpset20) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript, 20)), std::vector<std::string>{"Gelu"});
}

TEST(GeluErfRule, KeepsTheOutputName) {
  onnx::ModelProto model = parseModel(geluModel(GeluForm::kTorchScript));
  rewrite(model);
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).output(0), "y");
  EXPECT_EQ(model.graph().node(0).input(0), "x");
  EXPECT_EQ(model.graph().initializer_size(), 2)
      << "half, one and sqrt2 are gone; b, inv_sqrt2 stay";
}

TEST(GeluErfRule, ImportsTheComMicrosoftDomain) {
  onnx::ModelProto model = parseModel(geluModel(GeluForm::kTorchScript));
  rewrite(model);
  ASSERT_EQ(model.opset_import_size(), 2);
  EXPECT_EQ(model.opset_import(1).domain(), "com.microsoft");
  EXPECT_EQ(model.opset_import(1).version(), 1);
}

TEST(GeluErfRule, DoesNotFuseWhenTheHalfIsWrong) {
  expectUnchanged(geluModel(GeluForm::kTorchScript, 17, "0.6"));
}
TEST(GeluErfRule, DoesNotFuseWhenTheOneIsWrong) {
  expectUnchanged(geluModel(GeluForm::kHuggingFace, 17, "0.5", "2.0"));
}
TEST(GeluErfRule, DoesNotFuseWhenTheScaleIsNotSqrt2) {
  expectUnchanged(geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "2.0"));
}

TEST(GeluErfRule, DoesNotFuseWhenErfReadsAnotherTensor) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x, float[N, 4] z) => (float[N, 4] y)
  <float half = {0.5}, float one = {1.0}, float sqrt2 = {1.4142135}> {
  s = Div(z, sqrt2)
  e = Erf(s)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
}
)");
}

TEST(GeluErfRule, DoesNotFuseWhenAnIntermediateIsUsedElsewhere) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y, float[N, 4] e)
  <float half = {0.5}, float one = {1.0}, float sqrt2 = {1.4142135}> {
  s = Div(x, sqrt2)
  e = Erf(s)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
}
)");
}

TEST(GeluErfRule, DoesNotFuseWhenAConstantIsAGraphInput) {
  // An initializer that is also a graph input can be overridden at run time.
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x, float half) => (float[N, 4] y)
  <float one = {1.0}, float sqrt2 = {1.4142135}> {
  s = Div(x, sqrt2)
  e = Erf(s)
  p = Add(e, one)
  m = Mul(x, p)
  y = Mul(m, half)
}
)");
}

TEST(BiasGeluRule, FusesAnAddOfA1DBiasIntoGelu) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4142135", true)),
            std::vector<std::string>{"com.microsoft::BiasGelu"})
      << "gelu_erf then bias_gelu, in one run";
}

TEST(BiasGeluRule, DoesNotFuseABroadcastScalarBias) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, 4] x) => (float[N, 4] y) <float[1] b = {0.5}> {
  a = Add(x, b)
  y = com.microsoft.Gelu(a)
}
)");
}

TEST(BiasGeluRule, DoesNotFuseWhenTheLastDimIsUnknown) {
  Options options;
  options.shape_inference = false;  // keep xa's shape unknown
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, M] x) => (float[N, M] y) <float[4] b = {1, 2, 3, 4}> {
  a = Add(x, b)
  y = com.microsoft.Gelu(a)
}
)");
  Result result = rewrite(model, options);
  EXPECT_EQ(result.stats.rewrites, 0u);
}

}  // namespace
}  // namespace onnx_rewrite
