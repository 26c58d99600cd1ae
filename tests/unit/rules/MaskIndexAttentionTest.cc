//===- MaskIndexAttentionTest.cc - BERT's padding mask as mask_index (opt-in) ===//
//
// packed_attention_mask_index (rules/attention.yaml) on BERT's attention block with its
// own padding mask, (1 - attention_mask[:, None, None, :]) * c: with --enable mask_index
// the mask goes to com.microsoft.Attention as the raw [B, S] mask_index (expanded to x's
// [B, S], int32) with mask_filter_value c, as ONNX Runtime's BERT optimizer passes it. That is
// exact only for a 0/1 attention_mask, so the rule is opt-in and ONNX Runtime is fed 0/1 masks; one
// test shows the difference on other values.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/driver/RuleSet.h"
#include "tests/support/AttentionModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::attentionModel;
using testing::AttentionSpec;
using testing::fuse;
using Ops = std::vector<std::string>;
using PaddingCast = AttentionSpec::PaddingCast;

/// BERT's self-attention block with its padding mask (finfo.min), edited by `edit`.
AttentionSpec bert(void (*edit)(AttentionSpec&) = nullptr) {
  AttentionSpec s;
  s.mask = AttentionSpec::Mask::kPadding;
  if (edit) edit(s);
  return s;
}

/// Options that turn the opt-in rule on.
Options withMaskIndex() {
  Options o;
  o.filter.enable = "mask_index";
  return o;
}

/// The rule's assumption, kept in ONNX Runtime's inputs: attention_mask holds 0 and 1.
const char* kBinaryMask = "--int-range attention_mask=0:2";

/// The one Attention node of `model` (a test failure and null if there is not exactly one).
const onnx::NodeProto* attentionNode(const onnx::ModelProto& model) {
  const onnx::NodeProto* found = nullptr;
  int n = 0;
  for (const auto& node : model.graph().node())
    if (node.op_type() == "Attention" && node.domain() == "com.microsoft") found = &node, ++n;
  EXPECT_EQ(n, 1) << "Attention nodes";
  return n == 1 ? found : nullptr;
}

/// The producer of `value` in `model`, or null.
const onnx::NodeProto* producer(const onnx::ModelProto& model, const std::string& value) {
  for (const auto& n : model.graph().node())
    for (const std::string& out : n.output())
      if (out == value) return &n;
  return nullptr;
}

/// Expects `model`'s Attention to read attention_mask, expanded to x's [B, S] and cast to
/// int32, as mask_index (input 3), no attention_bias, and mask_filter_value `fill`.
void expectMaskIndex(const onnx::ModelProto& model, float fill) {
  const onnx::NodeProto* a = attentionNode(model);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->input_size(), 4) << "input, weights, bias, mask_index; no attention_bias";
  const onnx::NodeProto* n = producer(model, a->input(3));
  ASSERT_NE(n, nullptr) << a->input(3);
  if (n->op_type() == "Cast") {
    const onnx::AttributeProto* to = testing::attribute(*n, "to");
    ASSERT_NE(to, nullptr);
    EXPECT_EQ(to->i(), onnx::TensorProto::INT32);
    n = producer(model, n->input(0));
    ASSERT_NE(n, nullptr);
  }  // else an int32 mask, whose Cast to int32 canonicalization removed
  EXPECT_EQ(n->op_type(), "Expand");
  EXPECT_EQ(n->input(0), "attention_mask");
  const onnx::AttributeProto* value = testing::attribute(*a, "mask_filter_value");
  ASSERT_NE(value, nullptr) << "set even where it is the kernel's default";
  EXPECT_FLOAT_EQ(value->f(), fill);
}

/// Expects the rule to leave `text` alone with --enable mask_index, and packed_attention to
/// add the mask as attention_bias (input 5) instead.
void expectAttentionBiasOnly(const std::string& text) {
  testing::expectUnchanged(text, "^packed_attention_mask_index$", withMaskIndex());
  onnx::ModelProto model;
  fuse(text, &model, nullptr, withMaskIndex());
  const onnx::NodeProto* a = attentionNode(model);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->input_size(), 6) << "packed_attention's attention_bias";
  EXPECT_EQ(a->input(3), "") << "no mask_index";
}

/// The rewrite with the rule enabled computes what the model does on 0/1 masks.
void expectSameInOrtOnBinaryMasks(const std::string& text) {
  testing::expectSameInOrt(text, kBinaryMask, withMaskIndex());
}

const float kFinfoMin = -3.4028234663852886e38f;

/// What the rule leaves: mask_index = Cast(Expand(attention_mask, x's [B, S]), int32).
const Ops kMaskIndexOps = {"Shape", "Slice", "Expand", "Cast", "com.microsoft::Attention"};

// ---- positives ---------------------------------------------------------------------------

TEST(PackedAttentionMaskIndexRule, PassesBertsPaddingMaskAsMaskIndexWhenEnabled) {
  const std::string text = attentionModel(bert());
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps)
      << "the mask's Unsqueeze/Cast/Sub/Mul and the bias shape's Concat are gone";
  expectMaskIndex(model, kFinfoMin);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, FusesTheMinus10000OfOlderTransformers) {
  const std::string text = attentionModel(bert([](AttentionSpec& s) { s.fill = "-10000.0"; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectMaskIndex(model, -10000.0f);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, FusesTorch1xBertAtOpset11) {
  // Unsqueeze's axes as attributes, head-split shapes read at run time.
  const std::string text = testing::withAttributeParams(attentionModel(bert([](AttentionSpec& s) {
    s.opset = 11;
    s.shapes = AttentionSpec::Shapes::kTorchScript;
    s.fill = "-10000.0";
  })));
  EXPECT_NE(text.find("Unsqueeze <axes = [2]>"), std::string::npos);
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectMaskIndex(model, -10000.0f);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, FusesDynamoShapesAtOpset17) {
  const std::string text = attentionModel(bert([](AttentionSpec& s) {
    s.opset = 17;
    s.shapes = AttentionSpec::Shapes::kDynamo;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, FusesAMaskCastBeforeItsUnsqueezes) {
  const std::string text =
      attentionModel(bert([](AttentionSpec& s) { s.padding_cast = PaddingCast::kBefore; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectMaskIndex(model, kFinfoMin);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, FusesAFloatMaskWithoutCast) {
  const std::string text =
      attentionModel(bert([](AttentionSpec& s) { s.padding_cast = PaddingCast::kNone; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectMaskIndex(model, kFinfoMin);
  // compare.js draws float inputs from [-1, 1): not 0/1, so the float mask is not fed.
}

TEST(PackedAttentionMaskIndexRule, FusesAnInt32MaskWithoutACast) {
  const std::string text = attentionModel(bert([](AttentionSpec& s) { s.padding_type = "int32"; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()).back(), "com.microsoft::Attention");
  expectMaskIndex(model, kFinfoMin);
  expectSameInOrtOnBinaryMasks(text);
}

TEST(PackedAttentionMaskIndexRule, ExpandsAMaskTheModelBroadcasts) {
  // The model's Add broadcasts a [1, S] or [B, 1] mask; the kernel refuses the first and
  // reads the second as no mask at all, so the mask is expanded to [B, S] first.
  for (const char* shape : {"1, S", "B, 1"}) {
    AttentionSpec s = bert();
    s.padding_shape = shape;
    const std::string text = attentionModel(s);
    onnx::ModelProto model;
    EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps) << shape;
    expectMaskIndex(model, kFinfoMin);
    expectSameInOrtOnBinaryMasks(text);
  }
}

TEST(PackedAttentionMaskIndexRule, FusesOneUnsqueezeOfBothAxes) {
  const std::string text =
      attentionModel(bert([](AttentionSpec& s) { s.padding_one_unsqueeze = true; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaskIndex()), kMaskIndexOps);
  expectSameInOrtOnBinaryMasks(text);
}

// ---- negatives ---------------------------------------------------------------------------

TEST(PackedAttentionMaskIndexRule, IsOffByDefault) {
  // Without --enable, packed_attention adds the mask as it is: exact for any mask values.
  const std::string text = attentionModel(bert());
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), (Ops{"Unsqueeze", "Unsqueeze", "Cast", "Sub", "Mul", "Shape",
                                     "Slice", "Concat", "Expand", "com.microsoft::Attention"}));
  const onnx::NodeProto* a = attentionNode(model);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->input_size(), 6);
  EXPECT_EQ(a->input(3), "") << "no mask_index";
  EXPECT_NE(a->input(5), "") << "attention_bias";
  const RewritePattern* rule = testing::shippedRules().find("packed_attention_mask_index");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(whyFilteredOut(*rule, RuleFilter{}),
            "it is tagged opt_in and runs only when --enable matches it");
}

TEST(PackedAttentionMaskIndexRule, ChangesWhatAMaskOtherThan0And1Computes) {
  // The assumption the opt-in stands for: a mask value of 2 keeps the key for the kernel,
  // while the model adds (1 - 2) * c to its score.
  const std::string text = attentionModel(bert([](AttentionSpec& s) { s.fill = "-10000.0"; }));
  onnx::ModelProto before = testing::parseModel(text);
  onnx::ModelProto after = before;
  ASSERT_GT(rewrite(after, testing::shippedRules(), withMaskIndex()).stats.rewrites, 0u);
  EXPECT_TRUE(testing::compareInOrt(before, after, {"B=2", "S=5"}, kBinaryMask).equal);
  EXPECT_FALSE(
      testing::compareInOrt(before, after, {"B=2", "S=5"}, "--int-range attention_mask=0:3").equal);
}

TEST(PackedAttentionMaskIndexRule, DoesNotFuseAFillSoftmaxDoesNotZero) {
  // (1 - m) * -100 leaves a masked key e^-100 of a weight: not a mask that drops keys.
  expectAttentionBiasOnly(attentionModel(bert([](AttentionSpec& s) { s.fill = "-100.0"; })));
}

TEST(PackedAttentionMaskIndexRule, DoesNotFuseAMaskSubtractedFromAnotherConstant) {
  // (2 - m) * c masks every key, twice as much where m is 0.
  expectAttentionBiasOnly(attentionModel(bert([](AttentionSpec& s) { s.padding_one = "2.0"; })));
}

TEST(PackedAttentionMaskIndexRule, DoesNotFuseAMaskOverTheQueries) {
  // attention_mask[:, None, :, None] masks query rows, not keys.
  expectAttentionBiasOnly(attentionModel(bert([](AttentionSpec& s) { s.padding_axis = "3"; })));
}

}  // namespace
}  // namespace onnx_rewrite
