//===- NormRulesTest.cc - LayerNorm, RMSNorm and SkipLayerNorm rules -------===//
//
// The shipped normalization rules (rules/layer_norm.yaml, rules/rms_norm.td,
// rules/skip_layer_norm.yaml) on models shaped like torch.onnx and Hugging Face
// exports (tests/support/NormModels.h). Each variant a rule claims has a
// positive test asserting the exact op list and an ONNX Runtime check of equal
// outputs; each negative breaks one condition and must come out unchanged.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/support/NormModels.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using testing::layerNormModel;
using testing::LayerNormSpec;
using testing::rmsNormModel;
using testing::RmsNormSpec;
using testing::skipLayerNormModel;
using testing::SkipLayerNormSpec;
using Ops = std::vector<std::string>;

const Ops kLayerNorm = {"LayerNormalization"};

LayerNormSpec ln(void (*edit)(LayerNormSpec&) = nullptr) {
  LayerNormSpec s;
  if (edit) edit(s);
  return s;
}

// ---- LayerNormalization ----------------------------------------------------------------

TEST(LayerNormRule, FusesTorchScriptOpset17) {
  EXPECT_EQ(fuse(layerNormModel(ln())), kLayerNorm);
  expectSameInOrt(layerNormModel(ln()));
}

TEST(LayerNormRule, FusesOpset18WithAxesAsInput) {
  auto s = ln([](LayerNormSpec& s) { s.opset = 18; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(layerNormModel(s), &model), kLayerNorm);
  EXPECT_EQ(model.graph().initializer_size(), 2) << "two, eps and axes are gone";
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, FusesOpset13AsOrtContribOp) {
  auto s = ln([](LayerNormSpec& s) { s.opset = 13; });
  EXPECT_EQ(fuse(layerNormModel(s)), kLayerNorm);
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, FusesTorch1xOpset11) {
  // ONNX Runtime runs LayerNormalization in the ONNX domain at every opset.
  auto s = ln([](LayerNormSpec& s) { s.opset = 11; });
  EXPECT_EQ(fuse(layerNormModel(s)), kLayerNorm);
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, FusesMulByItselfAndReciprocal) {
  auto s = ln([](LayerNormSpec& s) {
    s.pow = false;
    s.div = false;
  });
  EXPECT_EQ(fuse(layerNormModel(s)), kLayerNorm);
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, TakesEpsilonFromEitherSideOfTheAdd) {
  auto s = ln([](LayerNormSpec& s) {
    s.eps_first = true;
    s.eps = "1e-12";
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(layerNormModel(s), &model), kLayerNorm);
  const onnx::NodeProto& node = model.graph().node(0);
  bool found = false;
  for (const auto& a : node.attribute())
    if (a.name() == "epsilon") {
      EXPECT_FLOAT_EQ(a.f(), 1e-12f);
      found = true;
    }
  EXPECT_TRUE(found) << "epsilon is the model's, not a default";
}

TEST(LayerNormRule, NormalisesAxesByRank) {
  auto s = ln([](LayerNormSpec& s) { s.axes = "2"; });  // rank 3: axis 2 is the last
  EXPECT_EQ(fuse(layerNormModel(s)), kLayerNorm);
}

TEST(LayerNormRule, FusesWithoutBias) {
  auto s = ln([](LayerNormSpec& s) { s.bias = false; });
  // The model's trailing Identity goes too (canonicalize.yaml).
  EXPECT_EQ(fuse(layerNormModel(s)), (Ops{"LayerNormalization"}));
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, FusesWithoutScaleOrBias) {
  auto s = ln([](LayerNormSpec& s) {
    s.bias = false;
    s.scale = false;
  });
  // The model's trailing Identity goes too (canonicalize.yaml).
  EXPECT_EQ(fuse(layerNormModel(s)), (Ops{"LayerNormalization"}));
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, FusesAnFp16CastSandwich) {
  auto s = ln([](LayerNormSpec& s) { s.fp16 = true; });
  // The two Casts left make the fp16 weights (see NormModels.h).
  EXPECT_EQ(fuse(layerNormModel(s)), (Ops{"Cast", "Cast", "LayerNormalization"}));
  expectSameInOrt(layerNormModel(s), "--atol 1e-2 --rtol 1e-2");
}

// Negatives run the LayerNorm rules alone ("^layer_norm"): other rules may legitimately
// fuse part of a broken LayerNorm (an RMSNorm of d, say), which is checked separately.
const char* kLayerNormRules = "^layer_norm";

TEST(LayerNormRule, DoesNotFuseAnExponentOtherThan2) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.exponent = "3.0"; })),
                  kLayerNormRules);
}

TEST(LayerNormRule, DoesNotFuseOverAnotherAxis) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.axes = "1"; })), kLayerNormRules);
}

TEST(LayerNormRule, DoesNotFuseKeepdims0) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.keepdims = 0; })), kLayerNormRules);
}

TEST(LayerNormRule, DoesNotFuseANonConstantEpsilon) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.eps_is_input = true; })),
                  kLayerNormRules);
}

TEST(LayerNormRule, DoesNotFuseAHugeEpsilon) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.eps = "0.5"; })), kLayerNormRules);
}

TEST(LayerNormRule, DoesNotFuseWhenAnIntermediateIsUsedOutside) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) { s.leak_d = true; })), kLayerNormRules);
}

TEST(LayerNormRule, Fp16SandwichDoesNotFuseKeepdims0) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) {
                    s.fp16 = true;
                    s.keepdims = 0;
                  })),
                  kLayerNormRules);
}

TEST(LayerNormRule, WithoutBiasDoesNotFuseAnExponentOtherThan2) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) {
                    s.bias = false;
                    s.exponent = "3.0";
                  })),
                  kLayerNormRules);
}

TEST(LayerNormRule, WithoutScaleOrBiasDoesNotFuseOverAnotherAxis) {
  expectUnchanged(layerNormModel(ln([](LayerNormSpec& s) {
                    s.bias = false;
                    s.scale = false;
                    s.axes = "1";
                  })),
                  kLayerNormRules);
}

TEST(LayerNormRule, WithALeakedIntermediateTheWholeSetFusesOnlyTheRmsNormOfIt) {
  // d / sqrt(mean(d^2) + eps) * gamma is an RMSNorm of d, which stays available.
  auto s = ln([](LayerNormSpec& s) { s.leak_d = true; });
  EXPECT_EQ(fuse(layerNormModel(s)),
            (Ops{"ReduceMean", "Sub", "SimplifiedLayerNormalization", "Add"}));
  expectSameInOrt(layerNormModel(s));
}

TEST(LayerNormRule, LeavesA3DGammaOutsideTheFusedCore) {
  // layer_norm needs a 1-D scale; layer_norm_no_affine fuses the core and the 3-D Mul stays.
  auto s = ln([](LayerNormSpec& s) { s.gamma_dims = "1, 1, 8"; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(layerNormModel(s), &model), (Ops{"LayerNormalization", "Mul", "Add"}));
  EXPECT_EQ(model.graph().node(1).input(1), "gamma");
  expectSameInOrt(layerNormModel(s));
}

// ---- SimplifiedLayerNormalization (RMSNorm) ----------------------------------------------

const Ops kSimplified = {"SimplifiedLayerNormalization"};

RmsNormSpec rms(void (*edit)(RmsNormSpec&) = nullptr) {
  RmsNormSpec s;
  if (edit) edit(s);
  return s;
}

TEST(SimplifiedLayerNormRule, FusesLlamaWithCasts) {
  EXPECT_EQ(fuse(rmsNormModel(rms())), kSimplified);
  expectSameInOrt(rmsNormModel(rms()));
}

TEST(SimplifiedLayerNormRule, FusesWithoutCasts) {
  auto s = rms([](RmsNormSpec& s) {
    s.cast_in = false;
    s.cast_out = false;
  });
  EXPECT_EQ(fuse(rmsNormModel(s)), kSimplified);
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, FusesOpset11) {
  auto s = rms([](RmsNormSpec& s) { s.opset = 11; });
  EXPECT_EQ(fuse(rmsNormModel(s)), kSimplified);
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, FusesT5DivAndMulByItselfWeightSecond) {
  auto s = rms([](RmsNormSpec& s) {
    s.reciprocal = false;
    s.pow = false;
    s.weight_first = false;
    s.cast_in = false;
  });
  EXPECT_EQ(fuse(rmsNormModel(s)), kSimplified);
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, FusesTorchScriptRsqrtAsDivOfOne) {
  // torch.onnx (TorchScript) exports torch.rsqrt as Div(1, Sqrt(x)), LLaMA then multiplies.
  auto s = rms([](RmsNormSpec& s) { s.one_over = true; });
  EXPECT_EQ(fuse(rmsNormModel(s)), kSimplified);
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, LeavesADivOfAnythingButOne) {
  std::string text = rmsNormModel(rms([](RmsNormSpec& s) { s.one_over = true; }));
  const std::string one = "float[1] one = {1.0}";
  text.replace(text.find(one), one.size(), "float[1] one = {2.0}");
  expectUnchanged(text, "simplified_layer_norm");
}

TEST(SimplifiedLayerNormRule, FusesFp16) {
  auto s = rms([](RmsNormSpec& s) { s.fp16 = true; });
  // The Cast left makes the fp16 weight (see NormModels.h).
  EXPECT_EQ(fuse(rmsNormModel(s)), (Ops{"Cast", "SimplifiedLayerNormalization"}));
  expectSameInOrt(rmsNormModel(s), "--atol 1e-2 --rtol 1e-2");
}

TEST(SimplifiedLayerNormRule, FusesOpset18) {
  auto s = rms([](RmsNormSpec& s) { s.opset = 18; });
  EXPECT_EQ(fuse(rmsNormModel(s)), kSimplified);
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, EmitsOnnxRMSNormalizationFromOpset23) {
  auto s = rms([](RmsNormSpec& s) { s.opset = 23; });
  EXPECT_EQ(fuse(rmsNormModel(s)), Ops{"RMSNormalization"});
  expectSameInOrt(rmsNormModel(s));
}

TEST(SimplifiedLayerNormRule, DoesNotFuseAnExponentOtherThan2) {
  expectUnchanged(rmsNormModel(rms([](RmsNormSpec& s) { s.exponent = "3.0"; })),
                  "simplified_layer_norm");
}

TEST(SimplifiedLayerNormRule, DoesNotFuseOverAnotherAxis) {
  expectUnchanged(rmsNormModel(rms([](RmsNormSpec& s) { s.axes = "1"; })), "simplified_layer_norm");
}

TEST(SimplifiedLayerNormRule, DoesNotFuseAHugeEpsilon) {
  expectUnchanged(rmsNormModel(rms([](RmsNormSpec& s) { s.eps = "0.5"; })),
                  "simplified_layer_norm");
}

// ---- SkipLayerNormalization ------------------------------------------------------------

const Ops kSkip = {"com.microsoft::SkipLayerNormalization"};

TEST(SkipLayerNormRule, FusesAResidualAdd) {
  SkipLayerNormSpec s;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkip);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FusesOpset11WithTheBiasAfterTheResidual) {
  SkipLayerNormSpec s;
  s.opset = 11;
  s.bias = SkipLayerNormSpec::Bias::kAfter;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkip);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FusesEitherAddOrder) {
  SkipLayerNormSpec s;
  s.skip_first = true;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkip);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FoldsABiasAddedBeforeTheResidual) {
  SkipLayerNormSpec s;
  s.bias = SkipLayerNormSpec::Bias::kBefore;
  onnx::ModelProto model;
  EXPECT_EQ(fuse(skipLayerNormModel(s), &model), kSkip);
  EXPECT_EQ(model.graph().node(0).input_size(), 5) << "bias is input 4";
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FoldsABiasAddedAfterTheResidual) {
  SkipLayerNormSpec s;
  s.bias = SkipLayerNormSpec::Bias::kAfter;
  onnx::ModelProto model;
  EXPECT_EQ(fuse(skipLayerNormModel(s), &model), kSkip);
  EXPECT_EQ(model.graph().node(0).input_size(), 5);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, ReExportsASumReadElsewhere) {
  SkipLayerNormSpec s;
  s.sum_used_elsewhere = true;
  s.bias = SkipLayerNormSpec::Bias::kBefore;
  onnx::ModelProto model;
  EXPECT_EQ(fuse(skipLayerNormModel(s), &model),
            (Ops{"com.microsoft::SkipLayerNormalization", "Relu"}));
  const onnx::NodeProto& skip = model.graph().node(0);
  ASSERT_EQ(skip.output_size(), 4);
  EXPECT_EQ(skip.output(1), "");
  EXPECT_EQ(skip.output(2), "");
  EXPECT_EQ(model.graph().node(1).input(0), skip.output(3)) << "Relu reads input_skip_bias_sum";
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FusesOpset18) {
  SkipLayerNormSpec s;
  s.opset = 18;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkip);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, FusesOpset18WithInferredShapes) {
  // a is computed, so its shape comes from shape inference, which for opset 18 goes
  // through NewerOpsetSchemas (ReduceMean reads axes from an input there).
  SkipLayerNormSpec s;
  s.opset = 18;
  s.a_from_node = true;
  s.bias = SkipLayerNormSpec::Bias::kBefore;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), (Ops{"Relu", "com.microsoft::SkipLayerNormalization"}));
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipLayerNormRule, DoesNotFuseMismatchedShapes) {
  SkipLayerNormSpec s;
  s.skip_dims = "S, 8";  // 2-D skip broadcast over the batch
  EXPECT_EQ(fuse(skipLayerNormModel(s)), (Ops{"Add", "LayerNormalization"}));
}

TEST(SkipLayerNormRule, KeepsABiasThatIsNot1D) {
  SkipLayerNormSpec s;
  s.bias = SkipLayerNormSpec::Bias::kBefore;
  s.bias_dims = "1, 8";
  onnx::ModelProto model;
  // The residual Add still fuses; the 2-D bias Add stays in front of it.
  EXPECT_EQ(fuse(skipLayerNormModel(s), &model),
            (Ops{"Add", "com.microsoft::SkipLayerNormalization"}));
  EXPECT_EQ(model.graph().node(1).input_size(), 4);
  expectSameInOrt(skipLayerNormModel(s));
}

const Ops kSkipSimplified = {"com.microsoft::SkipSimplifiedLayerNormalization"};

TEST(SkipSimplifiedLayerNormRule, FusesAResidualAddBeforeRmsNorm) {
  SkipLayerNormSpec s;
  s.simplified = true;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkipSimplified);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipSimplifiedLayerNormRule, ReExportsASumReadElsewhere) {
  SkipLayerNormSpec s;
  s.simplified = true;
  s.sum_used_elsewhere = true;
  onnx::ModelProto model;
  EXPECT_EQ(fuse(skipLayerNormModel(s), &model),
            (Ops{"com.microsoft::SkipSimplifiedLayerNormalization", "Relu"}));
  EXPECT_EQ(model.graph().node(0).output_size(), 4);
  expectSameInOrt(skipLayerNormModel(s));
}

TEST(SkipSimplifiedLayerNormRule, DoesNotFuseMismatchedShapes) {
  SkipLayerNormSpec s;
  s.simplified = true;
  s.skip_dims = "S, 8";
  EXPECT_EQ(fuse(skipLayerNormModel(s)), (Ops{"Add", "SimplifiedLayerNormalization"}));
}

TEST(SkipSimplifiedLayerNormRule, FusesAfterOnnxRMSNormalizationAtOpset23) {
  SkipLayerNormSpec s;
  s.simplified = true;
  s.opset = 23;
  EXPECT_EQ(fuse(skipLayerNormModel(s)), kSkipSimplified);
  expectSameInOrt(skipLayerNormModel(s));
}

}  // namespace
}  // namespace onnx_rewrite
