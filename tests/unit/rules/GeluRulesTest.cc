//===- GeluRulesTest.cc - the GELU family and the FusedMatMul rules -------===//
//
// The rules of rules/gelu.yaml on models shaped like torch.onnx (TorchScript and
// dynamo), Hugging Face and CLIP exports (tests/support/GeluModels.h). Each
// variant a rule claims has a positive test asserting the exact op list and an
// ONNX Runtime check of equal outputs; each negative breaks one condition and
// must come out byte-identical.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/builtin/BuiltinRules.h"
#include "runtime/driver/RuleSet.h"
#include "tests/support/GeluModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fastGeluModel;
using testing::FastGeluSpec;
using testing::fuse;
using testing::GeluForm;
using testing::geluModel;
using testing::matMulModel;
using testing::MatMulSpec;
using testing::parseModel;
using testing::quickGeluModel;
using testing::QuickGeluSpec;
using testing::shippedRules;
using Ops = std::vector<std::string>;

const Ops kMsGelu = {"com.microsoft::Gelu"};

/// geluModel's models are over x: float[N, 4]; the ORT check needs N. The rewrite runs
/// with `options`; `tolerance` replaces the oracle's default one.
void expectSameInOrtN(const std::string& text, const Options& options = {},
                      const std::string& tolerance = "") {
  onnx::ModelProto before = parseModel(text);
  onnx::ModelProto after = before;
  Result r = rewrite(after, shippedRules(), options);
  ASSERT_GT(r.stats.rewrites, 0u) << "nothing was fused";
  testing::OracleVerdict verdict = testing::compareInOrt(before, after, {"N=3"}, tolerance);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

/// The attribute `name` of the first node of `model` (null if absent).
const onnx::AttributeProto* attribute(const onnx::ModelProto& model, const std::string& name) {
  return testing::attribute(model.graph().node(0), name);
}

// ---- gelu_erf ----------------------------------------------------------------------------

TEST(GeluErfRule, FusesTheTorchScriptForm) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kTorchScript));
}

TEST(GeluErfRule, FusesTheHuggingFaceForm) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kHuggingFace)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kHuggingFace));
}

TEST(GeluErfRule, FusesWithConstantsOnTheLeft) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kHalfFirst)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kHalfFirst));
}

TEST(GeluErfRule, FusesMulByReciprocalSqrt2) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kReciprocalScale)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kReciprocalScale));
}

TEST(GeluErfRule, FusesTheDynamoForms) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kDynamo, 18)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kDynamo, 18));
  EXPECT_EQ(fuse(geluModel(GeluForm::kDynamoOuterHalf, 18)), kMsGelu);
  expectSameInOrtN(geluModel(GeluForm::kDynamoOuterHalf, 18));
}

TEST(GeluErfRule, FusesFp16RoundedConstants) {
  // 1.4142135 is 1.4140625 in fp16; such a model still computes GELU.
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4140625")), kMsGelu);
}

TEST(GeluErfRule, FusesConstantNodes) {
  // TorchScript exports constants as Constant nodes. They are leaves of the match, not
  // matched nodes; the rewrite leaves them without readers, so they go too.
  EXPECT_EQ(fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  sqrt2 = Constant <value = float {1.4142135}> ()
  s = Div(x, sqrt2)
  e = Erf(s)
  one = Constant <value = float {1.0}> ()
  p = Add(e, one)
  m = Mul(x, p)
  half = Constant <value = float {0.5}> ()
  y = Mul(m, half)
}
)"),
            (Ops{"com.microsoft::Gelu"}));
}

TEST(GeluErfRule, EmitsOnnxGeluFromOpset20) {
  onnx::ModelProto model;
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript, 20), &model), Ops{"Gelu"});
  const onnx::AttributeProto* approximate = attribute(model, "approximate");
  ASSERT_NE(approximate, nullptr);
  EXPECT_EQ(approximate->s(), "none");
  expectSameInOrtN(geluModel(GeluForm::kTorchScript, 20));
}

TEST(GeluErfRule, KeepsTheOutputNameAndDropsTheConstants) {
  onnx::ModelProto model;
  fuse(geluModel(GeluForm::kTorchScript), &model);
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).output(0), "y");
  EXPECT_EQ(model.graph().node(0).input(0), "x");
  EXPECT_EQ(model.graph().initializer_size(), 2)
      << "half, one and sqrt2 are gone; b, inv_sqrt2 stay";
}

TEST(GeluErfRule, ImportsTheComMicrosoftDomain) {
  onnx::ModelProto model;
  fuse(geluModel(GeluForm::kTorchScript), &model);
  ASSERT_EQ(model.opset_import_size(), 2);
  EXPECT_EQ(model.opset_import(1).domain(), "com.microsoft");
  EXPECT_EQ(model.opset_import(1).version(), 1);
}

TEST(GeluErfRule, IsShippedInTheBuiltinRules) {
  // The command and rewrite() run builtinRules(); the benchmarks and CLI tests name these.
  const RuleSet rules = builtinRules();
  ASSERT_NE(rules.find("gelu_erf"), nullptr);
  // bias_gelu's root is an alternative of two ops: one pattern per root op.
  ASSERT_NE(rules.find("bias_gelu/com.microsoft::Gelu"), nullptr);
  EXPECT_EQ(rules.find("gelu_erf")->info().priority, 50);
  EXPECT_EQ(rules.find("bias_gelu/com.microsoft::Gelu")->info().priority, 40);
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

// ---- bias_gelu ---------------------------------------------------------------------------

TEST(BiasGeluRule, FusesAnAddOfA1DBiasIntoGelu) {
  const std::string model = geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4142135", true);
  EXPECT_EQ(fuse(model), Ops{"com.microsoft::BiasGelu"}) << "gelu_erf then bias_gelu, in one run";
  expectSameInOrtN(model);
}

// ---- gelu_approximation (opt-in) -----------------------------------------------------------

/// Options that turn the opt-in approximation rule on.
Options withApproximation() {
  Options o;
  o.filter.enable = "approximation";
  return o;
}

/// The rewrite with `options` computes what the original does within the approximation's
/// error (tanh against erf: under 1e-3).
void expectApproximatelySameInOrt(const std::string& text, const Options& options) {
  expectSameInOrtN(text, options, "--atol 1e-3 --rtol 1e-3");
}

TEST(GeluApproximationRule, IsOffByDefault) {
  EXPECT_EQ(fuse(geluModel(GeluForm::kTorchScript)), kMsGelu);
  const RewritePattern* rule = shippedRules().find("gelu_approximation/com.microsoft::Gelu");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(whyFilteredOut(*rule, RuleFilter{}),
            "it is tagged opt_in and runs only when --enable matches it");
  EXPECT_EQ(whyFilteredOut(*rule, RuleFilter{"", "", "rotary"}),
            "it is tagged opt_in and runs only when --enable matches it ('rotary' does not)");
}

TEST(GeluApproximationRule, TurnsGeluIntoFastGeluWhenEnabled) {
  const std::string text = geluModel(GeluForm::kTorchScript);
  EXPECT_EQ(fuse(text, nullptr, nullptr, withApproximation()), Ops{"com.microsoft::FastGelu"});
  expectApproximatelySameInOrt(text, withApproximation());
}

TEST(GeluApproximationRule, KeepsTheBiasOfBiasGelu) {
  const std::string text = geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4142135", true);
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withApproximation()), Ops{"com.microsoft::FastGelu"});
  EXPECT_EQ(model.graph().node(0).input_size(), 2) << "x and the bias";
  expectApproximatelySameInOrt(text, withApproximation());
}

TEST(GeluApproximationRule, TurnsOnnxGeluOfOpset20IntoFastGelu) {
  const std::string text = geluModel(GeluForm::kTorchScript, 20);
  EXPECT_EQ(fuse(text, nullptr, nullptr, withApproximation()), Ops{"com.microsoft::FastGelu"});
  expectApproximatelySameInOrt(text, withApproximation());
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
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, M] x) => (float[N, M] y) <float[4] b = {1, 2, 3, 4}> {
  a = Add(x, b)
  y = com.microsoft.Gelu(a)
}
)");
}

TEST(BiasGeluRule, FusesANonConstantBias) {
  // ONNX Runtime's kernel adds any 1-D bias along the last axis, constant or not.
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, 4] x, float[4] b) => (float[N, 4] y) {
  a = Add(x, b)
  y = com.microsoft.Gelu(a)
}
)";
  EXPECT_EQ(fuse(text), (Ops{"com.microsoft::BiasGelu"}));
  expectSameInOrtN(text);
}

TEST(BiasGeluRule, DoesNotFuseABiasOfAnotherLength) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, 4] x, float[1] b) => (float[N, 4] y) {
  a = Add(x, b)
  y = com.microsoft.Gelu(a)
}
)");
}

TEST(BiasGeluRule, FoldsTheAddInFrontOfOnnxGelu) {
  // Opset 20: gelu_erf makes ONNX Gelu, and the bias folds into the contrib BiasGelu.
  const std::string text = geluModel(GeluForm::kTorchScript, 20, "0.5", "1.0", "1.4142135", true);
  EXPECT_EQ(fuse(text), (Ops{"com.microsoft::BiasGelu"}));
  expectSameInOrtN(text);
}

// ---- fast_gelu and fast_gelu_bias --------------------------------------------------------

FastGeluSpec fast(void (*edit)(FastGeluSpec&) = nullptr) {
  FastGeluSpec s;
  if (edit) edit(s);
  return s;
}

const Ops kFastGelu = {"com.microsoft::FastGelu"};

TEST(FastGeluRule, FusesHuggingFaceNewGelu) {
  EXPECT_EQ(fuse(fastGeluModel(fast())), kFastGelu);
  expectSameInOrt(fastGeluModel(fast()));
}

TEST(FastGeluRule, FusesTheTorchScriptTanhGelu) {
  auto s = fast([](FastGeluSpec& s) { s.form = FastGeluSpec::Form::kTorchScript; });
  EXPECT_EQ(fuse(fastGeluModel(s)), kFastGelu);
  expectSameInOrt(fastGeluModel(s));
}

TEST(FastGeluRule, FusesTheDynamoTanhGelu) {
  auto s = fast([](FastGeluSpec& s) {
    s.form = FastGeluSpec::Form::kDynamo;
    s.opset = 18;
  });
  EXPECT_EQ(fuse(fastGeluModel(s)), kFastGelu);
  expectSameInOrt(fastGeluModel(s));
}

TEST(FastGeluRule, FusesTheUnfoldedDynamoTanhGelu) {
  auto s = fast([](FastGeluSpec& s) {
    s.form = FastGeluSpec::Form::kDynamoUnfolded;
    s.opset = 18;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(fastGeluModel(s), &model), kFastGelu);
  expectSameInOrt(fastGeluModel(s));
}

TEST(FastGeluRule, FusesHuggingFaceFastGelu) {
  auto s = fast([](FastGeluSpec& s) { s.form = FastGeluSpec::Form::kHuggingFaceFast; });
  EXPECT_EQ(fuse(fastGeluModel(s)), kFastGelu);
  expectSameInOrt(fastGeluModel(s));
}

TEST(FastGeluRule, DoesNotFuseHuggingFaceFastGeluWithAnotherKappa) {
  auto s = fast([](FastGeluSpec& s) {
    s.form = FastGeluSpec::Form::kHuggingFaceFast;
    s.kappa = "0.05";
  });
  expectUnchanged(fastGeluModel(s), "^fast_gelu");
}

TEST(FastGeluRule, FusesConstantsWithinTolerance) {
  auto s = fast([](FastGeluSpec& s) {
    s.beta = "0.7978515625";  // fp16's sqrt(2/pi)
    s.kappa = "0.0447";
  });
  EXPECT_EQ(fuse(fastGeluModel(s)), kFastGelu);
}

TEST(FastGeluRule, EmitsOnnxTanhGeluFromOpset20) {
  auto s = fast([](FastGeluSpec& s) { s.opset = 20; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(fastGeluModel(s), &model), Ops{"Gelu"});
  const onnx::AttributeProto* approximate = attribute(model, "approximate");
  ASSERT_NE(approximate, nullptr);
  EXPECT_EQ(approximate->s(), "tanh");
  expectSameInOrt(fastGeluModel(s));
}

TEST(FastGeluRule, FoldsABiasAddIntoFastGelu) {
  auto s = fast([](FastGeluSpec& s) { s.bias = true; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(fastGeluModel(s), &model), kFastGelu);
  ASSERT_EQ(model.graph().node(0).input_size(), 2);
  EXPECT_EQ(model.graph().node(0).input(1), "b");
  expectSameInOrt(fastGeluModel(s));
}

const char* kFastGeluRules = "^fast_gelu";

TEST(FastGeluRule, DoesNotFuseAnotherKappa) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.kappa = "0.05"; })), kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseAnotherBeta) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.beta = "0.75"; })), kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseAnotherHalf) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.half = "0.6"; })), kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseAnotherOne) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.one = "2.0"; })), kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseASquare) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.exponent = "2.0"; })), kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseTheCubeOfAnotherTensor) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.cube_of_other = true; })),
                  kFastGeluRules);
}

TEST(FastGeluRule, DoesNotFuseWhenTheTanhIsUsedElsewhere) {
  expectUnchanged(fastGeluModel(fast([](FastGeluSpec& s) { s.leak_tanh = true; })), kFastGeluRules);
}

TEST(FastGeluBiasRule, DoesNotFoldABroadcastScalarBias) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, 4] x) => (float[N, 4] y) <float[1] b = {0.5}> {
  a = Add(x, b)
  y = com.microsoft.FastGelu(a)
}
)");
}

TEST(FastGeluBiasRule, DoesNotFoldIntoAFastGeluWithABias) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[N, 4] x) => (float[N, 4] y) <float[4] b = {1, 2, 3, 4}, float[4] c = {1, 2, 3, 4}> {
  a = Add(x, b)
  y = com.microsoft.FastGelu(a, c)
}
)");
}

// ---- quick_gelu --------------------------------------------------------------------------

TEST(QuickGeluRule, FusesClipQuickGeluWithItsAlpha) {
  onnx::ModelProto model;
  EXPECT_EQ(fuse(quickGeluModel({}), &model), Ops{"com.microsoft::QuickGelu"});
  const onnx::AttributeProto* alpha = attribute(model, "alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_FLOAT_EQ(alpha->f(), 1.702f);
  expectSameInOrt(quickGeluModel({}));
}

TEST(QuickGeluRule, FusesTheAlphaOnEitherSide) {
  QuickGeluSpec s;
  s.alpha_first = true;
  s.alpha = "1.5";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(quickGeluModel(s), &model), Ops{"com.microsoft::QuickGelu"});
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 1.5f);
  expectSameInOrt(quickGeluModel(s));
}

TEST(QuickGeluRule, DoesNotFuseAPerChannelAlpha) {
  QuickGeluSpec s;
  s.alpha_dims = "4";
  expectUnchanged(quickGeluModel(s));
}

TEST(QuickGeluRule, DoesNotFuseTheSigmoidOfAnotherTensor) {
  QuickGeluSpec s;
  s.sigmoid_of_other = true;
  expectUnchanged(quickGeluModel(s));
}

// ---- silu ---------------------------------------------------------------------------------

TEST(SiluRule, FusesLlamaSiluAsQuickGeluWithAlphaOne) {
  QuickGeluSpec s;
  s.silu = true;
  onnx::ModelProto model;
  EXPECT_EQ(fuse(quickGeluModel(s), &model), Ops{"com.microsoft::QuickGelu"});
  ASSERT_NE(attribute(model, "alpha"), nullptr);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 1.0f);
  expectSameInOrt(quickGeluModel(s));
}

TEST(SiluRule, DoesNotFuseTheSigmoidOfAnotherTensor) {
  QuickGeluSpec s;
  s.silu = true;
  s.sigmoid_of_other = true;
  expectUnchanged(quickGeluModel(s));
}

// ---- fused_matmul and fused_matmul_scale -------------------------------------------------

const Ops kFusedMatMul = {"com.microsoft::FusedMatMul"};

MatMulSpec mm(void (*edit)(MatMulSpec&)) {
  MatMulSpec s;
  edit(s);
  return s;
}

/// The int attribute `name` of the first node, or -1.
int64_t intAttr(const onnx::ModelProto& model, const std::string& name) {
  const onnx::AttributeProto* a = attribute(model, name);
  return a ? a->i() : -1;
}

TEST(FusedMatMulRule, FoldsATransposeOfB) {
  auto s = mm([](MatMulSpec& s) { s.perm_b = "0, 2, 1"; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 0);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsATransposeOfA) {
  auto s = mm([](MatMulSpec& s) { s.perm_a = "0, 2, 1"; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 1);
  EXPECT_EQ(intAttr(model, "transB"), 0);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsTransposesOfBoth) {
  auto s = mm([](MatMulSpec& s) {
    s.perm_a = "0, 2, 1";
    s.perm_b = "0, 2, 1";
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 1);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  expectSameInOrt(matMulModel(s));
}

// A Transpose without perm reverses the axes: of a 2-D A it is A^T (tf2onnx writes it so).
TEST(FusedMatMulRule, FoldsATwoDimensionalTransposeWithoutPerm) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 3] x, float[4, 5] z) => (float[3, 5] y) {
  tx = Transpose(x)
  y = MatMul(tx, z)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 1);
  EXPECT_EQ(intAttr(model, "transBatchA"), 0);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, LeavesAThreeDimensionalTransposeWithoutPerm) {
  // Reversing [2, 4, 3] moves every axis: neither a swap of the last two nor a batch move.
  EXPECT_EQ(fuse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 4, 2] x, float[2, 3, 5] z) => (float[2, 4, 5] y) {
  tx = Transpose(x)
  y = MatMul(tx, z)
}
)"),
            (Ops{"Transpose", "MatMul"}));
}

TEST(FusedMatMulRule, FoldsLlamaScoresTransposeAndScale) {
  // q @ k.transpose(2, 3) / sqrt(head_dim), when no attention rule took it.
  auto s = mm([](MatMulSpec& s) {
    s.rank4 = true;
    s.perm_b = "0, 1, 3, 2";
    s.scale = MatMulSpec::Scale::kDiv;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.5f);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsAScalarMul) {
  auto s = mm([](MatMulSpec& s) { s.scale = MatMulSpec::Scale::kMul; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 2.0f);
  EXPECT_EQ(intAttr(model, "transA"), 0);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsAScalarDiv) {
  auto s = mm([](MatMulSpec& s) {
    s.scale = MatMulSpec::Scale::kDiv;
    s.scale_value = "8.0";
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.125f);
  expectSameInOrt(matMulModel(s));
}

/// y = MatMul(Transpose(x, perm_a), Transpose(z, perm_b)) on the given types.
std::string transposedMatMul(const std::string& x, const std::string& perm_a, const std::string& z,
                             const std::string& perm_b, const std::string& y) {
  return "<ir_version: 8, opset_import: [\"\" : 13]>\ng (" + x + " x, " + z + " z) => (" + y +
         " y) {\n  ta = Transpose <perm = [" + perm_a + "]> (x)\n" + "  tb = Transpose <perm = [" +
         perm_b + "]> (z)\n  y = MatMul(ta, tb)\n}\n";
}

TEST(FusedMatMulRule, FoldsBatchTransposesOfBothInputs) {
  // A [S, 2, 3, 4] read as [2, 3, S, 4] (transBatchA); B [S, 2, 3, 4] as [2, 3, 4, S]
  // (transBatchB, then transB).
  const std::string text = transposedMatMul("float[S, 2, 3, 4]", "1, 2, 0, 3", "float[S, 2, 3, 4]",
                                            "1, 2, 3, 0", "float[2, 3, S, S]");
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 0);
  EXPECT_EQ(intAttr(model, "transBatchA"), 1);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  EXPECT_EQ(intAttr(model, "transBatchB"), 1);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, FoldsRank3BatchTransposesBesideALastTwoSwap) {
  // A [S, 2, 4] -> [2, S, 4] (transBatchA) times B [5, 2, 4] -> [2, 4, 5] (both flags).
  const std::string text =
      transposedMatMul("float[S, 2, 4]", "1, 0, 2", "float[5, 2, 4]", "1, 2, 0", "float[2, S, 5]");
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transBatchA"), 1);
  EXPECT_EQ(intAttr(model, "transA"), 0);
  EXPECT_EQ(intAttr(model, "transBatchB"), 1);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  expectSameInOrt(text);
  // A's last two axes swapped, B batch-transposed.
  const std::string mixed =
      transposedMatMul("float[2, 4, S]", "0, 2, 1", "float[4, 2, 5]", "1, 0, 2", "float[2, S, 5]");
  EXPECT_EQ(fuse(mixed, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 1);
  EXPECT_EQ(intAttr(model, "transBatchA"), 0);
  EXPECT_EQ(intAttr(model, "transBatchB"), 1);
  EXPECT_EQ(intAttr(model, "transB"), 0);
  expectSameInOrt(mixed);
}

TEST(FusedMatMulRule, FoldsBatchTransposesWithBroadcastBatchAxes) {
  // B's batch axes [1, 3] broadcast against A's [2, 3].
  const std::string text = transposedMatMul("float[S, 2, 3, 4]", "1, 2, 0, 3", "float[4, 1, 3, 6]",
                                            "1, 2, 0, 3", "float[2, 3, S, 6]");
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, DoesNotFoldABatchTransposeBesideAnotherRank) {
  // ONNX Runtime's kernel refuses transBatchA/B unless both inputs have the same rank:
  // FusedMatMul's inference says so and the driver refuses the rewrite (fused_matmul's, and
  // fused_matmul_one_side's first alternative, A's; a refused rewrite tries no other).
  expectUnchanged(transposedMatMul("float[K, 3, M]", "1, 2, 0", "float[2, 3, 6, K]", "0, 1, 3, 2",
                                   "float[2, 3, M, 6]"),
                  "fused_matmul");
}

TEST(FusedMatMulRule, DoesNotFoldAnotherPermutationOfTheBatchAxes) {
  // [2, 0, 1, 3] and [2, 0, 1] move the axis before the matrix axes to the front: no
  // flag of FusedMatMul reads that (and the identity perms of B are no transpose).
  expectUnchanged(transposedMatMul("float[2, 3, 5, 4]", "2, 0, 1, 3", "float[4, 6]", "0, 1",
                                   "float[5, 2, 3, 6]"),
                  "fused_matmul");
  expectUnchanged(
      transposedMatMul("float[4, 2, 5]", "2, 0, 1", "float[2, 6]", "0, 1", "float[5, 4, 6]"),
      "fused_matmul");
}

TEST(FusedMatMulRule, FoldsAScaledInput) {
  auto s = mm([](MatMulSpec& s) { s.input_scale = MatMulSpec::InputScale::kMulA; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(model.graph().node(0).input(0), "x");
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 2.0f);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsAnInputDividedByAScalar) {
  auto s = mm([](MatMulSpec& s) {
    s.input_scale = MatMulSpec::InputScale::kDivB;
    s.scale_value = "4.0";
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(model.graph().node(0).input(1), "z");
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.25f);
  expectSameInOrt(matMulModel(s));
}

TEST(FusedMatMulRule, FoldsTheTransposeThenTheScaledInput) {
  // q * c @ k^T: fused_matmul (20) folds the Transpose, then the scale joins as alpha.
  auto s = mm([](MatMulSpec& s) {
    s.rank4 = true;
    s.perm_b = "0, 1, 3, 2";
    s.input_scale = MatMulSpec::InputScale::kMulA;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 2.0f);
  expectSameInOrt(matMulModel(s));
}

// ONNX Runtime's MatMulScaleFusion folds every scale; a second one multiplies the alpha
// the first set.
TEST(FusedMatMulRule, FoldsAnInputScaleAndAnOutputScaleIntoOneAlpha) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 4] x, float[B, 4, S] z) => (float[B, S, S] y)
  <float two = {2.0}, float four = {4.0}> {
  sx = Mul(x, two)
  m = MatMul(sx, z)
  y = Div(m, four)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.5f);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, FoldsThreeScalesOfATransposedProduct) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 4] x, float[B, S, 4] z) => (float[B, S, S] y)
  <float two = {2.0}, float three = {3.0}, float eight = {8.0}> {
  zd = Div(z, eight)
  sz = Transpose <perm = [0, 2, 1]> (zd)
  sx = Mul(two, x)
  m = MatMul(sx, sz)
  y = Mul(m, three)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.75f);
  expectSameInOrt(text);
}

// k^T / c: the Div sits between the Transpose and the MatMul, so the scale folds first and
// the Transpose then reaches the FusedMatMul it made.
TEST(FusedMatMulRule, FoldsATransposeAboveAScaleIntoTheFusedMatMul) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, 2, S, 4] q, float[B, 2, S, 4] k) => (float[B, 2, S, S] y)
  <float c = {2.0}> {
  kt = Transpose <perm = [0, 1, 3, 2]> (k)
  ks = Div(kt, c)
  y = MatMul(q, ks)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transB"), 1);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.5f);
  expectSameInOrt(text);
}

// A batch transpose ([1, 2, 0, 3]: axis 0 moved behind the batch axes) on A of a
// FusedMatMul that already transposes B's batch: both sides' flags set.
TEST(FusedMatMulRule, FoldsABatchTransposeIntoAFusedMatMulWithOtherFlags) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[4, 2, 3, 5] x, float[5, 2, 3, 6] z) => (float[2, 3, 4, 6] y) {
  xt = Transpose <perm = [1, 2, 0, 3]> (x)
  y = com.microsoft.FusedMatMul <alpha = 3.0, transBatchB = 1> (xt, z)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kFusedMatMul);
  EXPECT_EQ(intAttr(model, "transA"), 0);
  EXPECT_EQ(intAttr(model, "transBatchA"), 1);
  EXPECT_EQ(intAttr(model, "transBatchB"), 1);
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 3.0f);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, DoesNotFoldATransposeOnASideAlreadyTransposed) {
  expectUnchanged(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2, 4, 3] x, float[2, 4, 5] z) => (float[2, 3, 5] y) {
  xt = Transpose <perm = [0, 2, 1]> (x)
  y = com.microsoft.FusedMatMul <transA = 1> (xt, z)
}
)",
                  "^fused_matmul");
}

// ONNX Runtime's reused-input-scale case: one scaled input read by two MatMuls; both fold
// it, and the Mul, read by nothing then, goes.
TEST(FusedMatMulRule, FoldsAScaledInputIntoEveryMatMulReadingIt) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 4] x, float[B, 4, S] z, float[B, 4, 2] w) => (float[B, S, S] y, float[B, S, 2] v)
  <float c = {0.5}> {
  sx = Mul(x, c)
  y = MatMul(sx, z)
  v = MatMul(sx, w)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), (Ops{"com.microsoft::FusedMatMul", "com.microsoft::FusedMatMul"}));
  EXPECT_FLOAT_EQ(attribute(model, "alpha")->f(), 0.5f);
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, FoldsAScaledInputAndKeepsItForAnotherReader) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 4] x, float[B, 4, S] z) => (float[B, S, S] y, float[B, S, 4] r)
  <float c = {0.5}> {
  sx = Mul(x, c)
  y = MatMul(sx, z)
  r = Relu(sx)
}
)";
  EXPECT_EQ(fuse(text), (Ops{"Mul", "com.microsoft::FusedMatMul", "Relu"}));
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, DoesNotFoldANonConstantInputScale) {
  expectUnchanged(matMulModel(mm([](MatMulSpec& s) {
                    s.input_scale = MatMulSpec::InputScale::kMulA;
                    s.scale_is_input = true;
                  })),
                  "^fused_matmul");
}

TEST(FusedMatMulRule, RunsAfterEveryAttentionRule) {
  // FusedMatMul must not take the Q*K^T MatMul (and its scale) an attention rule fuses.
  // (A rule with several root ops is registered once per root op: fused_matmul_scale/Mul,
  // fused_matmul_scale/Div, ...)
  size_t matmul_rules = 0;
  for (const auto& fused : shippedRules().rules()) {
    if (fused->info().name.rfind("fused_matmul", 0) != 0) continue;
    ++matmul_rules;
    for (const auto& rule : shippedRules().rules()) {
      if (rule->info().name.find("attention") == std::string::npos) continue;
      EXPECT_LT(fused->info().priority, rule->info().priority)
          << fused->info().name << " vs " << rule->info().name;
    }
  }
  EXPECT_GE(matmul_rules, 3u);
}

const char* kFusedMatMulRules = "^fused_matmul";

TEST(FusedMatMulRule, DoesNotFuseAPlainMatMul) {
  expectUnchanged(matMulModel(MatMulSpec{}), kFusedMatMulRules);
}

TEST(FusedMatMulRule, DoesNotFoldAPermThatMovesOtherAxes) {
  // transB transposes the last two axes only; this perm also swaps the two batch axes.
  auto s = mm([](MatMulSpec& s) {
    s.rank4 = true;
    s.perm_b = "1, 0, 3, 2";
  });
  expectUnchanged(matMulModel(s), kFusedMatMulRules);
}

// As ONNX Runtime's MatMul fusions do: the FusedMatMul reads B itself, the Transpose stays
// for its other reader.
TEST(FusedMatMulRule, FoldsATransposeUsedElsewhereAndKeepsIt) {
  auto s = mm([](MatMulSpec& s) {
    s.perm_b = "0, 2, 1";
    s.leak_transpose = true;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(matMulModel(s), &model), (Ops{"Transpose", "com.microsoft::FusedMatMul"}));
  EXPECT_EQ(testing::attribute(model.graph().node(1), "transB")->i(), 1);
  expectSameInOrt(matMulModel(s));
}

// ONNX Runtime's preserved-transpose case: a 2-D Transpose without perm that is also a graph
// output.
TEST(FusedMatMulRule, FoldsATransposeWithoutPermThatIsAlsoAnOutput) {
  const std::string text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 3] x, float[4, 5] z) => (float[3, 5] y, float[3, 4] tx) {
  tx = Transpose(x)
  y = MatMul(tx, z)
}
)";
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), (Ops{"Transpose", "com.microsoft::FusedMatMul"}));
  expectSameInOrt(text);
}

TEST(FusedMatMulRule, DoesNotFuseAnIntegerMatMul) {
  expectUnchanged(matMulModel(mm([](MatMulSpec& s) {
                    s.perm_b = "0, 2, 1";
                    s.elem = "int32";
                  })),
                  kFusedMatMulRules);
}

TEST(FusedMatMulRule, DoesNotFoldANonConstantScale) {
  expectUnchanged(matMulModel(mm([](MatMulSpec& s) {
                    s.scale = MatMulSpec::Scale::kMul;
                    s.scale_is_input = true;
                  })),
                  kFusedMatMulRules);
}

TEST(FusedMatMulRule, DoesNotFoldAScaleThatAddsAxes) {
  // [B, S, S] * float[1, 1, 1, 1] is 4-D; FusedMatMul's output would stay 3-D.
  expectUnchanged(matMulModel(mm([](MatMulSpec& s) {
                    s.scale = MatMulSpec::Scale::kMul;
                    s.scale_dims = "1, 1, 1, 1";
                  })),
                  kFusedMatMulRules);
}

TEST(FusedMatMulRule, DoesNotFoldAConstantDividedByTheProduct) {
  expectUnchanged(
      matMulModel(mm([](MatMulSpec& s) { s.scale = MatMulSpec::Scale::kDivByConstantFirst; })),
      kFusedMatMulRules);
}

TEST(FusedMatMulRule, DoesNotFoldADivisionByZero) {
  expectUnchanged(matMulModel(mm([](MatMulSpec& s) {
                    s.scale = MatMulSpec::Scale::kDiv;
                    s.scale_value = "0.0";
                  })),
                  kFusedMatMulRules);
}

}  // namespace
}  // namespace onnx_rewrite
