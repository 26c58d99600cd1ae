//===- AttentionRulesTest.cc - multi-head attention rules ------------------===//
//
// The shipped attention rules (rules/attention.yaml) on models shaped like torch.onnx
// exports of Hugging Face BERT, GPT-2 and Whisper attention (tests/support/
// AttentionModels.h). Each variant has a positive test asserting the exact op list and an
// ONNX Runtime check of equal outputs; each negative breaks one condition and must come
// out unchanged.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "tests/support/AttentionModels.h"
#include "tests/support/EinsumAttentionModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::attentionModel;
using testing::AttentionSpec;
using testing::EinsumAttentionSpec;
using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using Ops = std::vector<std::string>;
using Mask = AttentionSpec::Mask;
using Scale = AttentionSpec::Scale;

AttentionSpec spec(void (*edit)(AttentionSpec&) = nullptr) {
  AttentionSpec s;
  if (edit) edit(s);
  return s;
}

/// The projections of the BERT form, left in place.
const Ops kBertProjections = {"MatMul", "Add", "MatMul", "Add", "MatMul", "Add"};
/// The attention_bias built from a mask: expanded to [1, 1, S, T].
const Ops kBiasShape = {"Shape", "Slice", "Shape", "Slice", "Concat"};
/// From opset 23, an additive mask's float lowest raised to the next float up
/// (softmax_mask): Where(Equal(mask, lowest), next, mask).
const Ops kRaisedLowest = {"Equal", "Where"};

Ops concat(std::initializer_list<Ops> parts) {
  Ops out;
  for (const Ops& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// The attribute `name` of the first node of `op_type` in `model` that has it (a test
/// failure and null if none has).
const onnx::AttributeProto* opAttribute(const onnx::ModelProto& model, const std::string& op_type,
                                        const std::string& name) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == op_type)
      if (const onnx::AttributeProto* a = testing::attribute(n, name)) return a;
  ADD_FAILURE() << "no attribute " << name << " on " << op_type;
  return nullptr;
}

float floatAttribute(const onnx::ModelProto& model, const std::string& op_type,
                     const std::string& name) {
  const onnx::AttributeProto* a = opAttribute(model, op_type, name);
  return a ? a->f() : 0;
}

int64_t intAttribute(const onnx::ModelProto& model, const std::string& op_type,
                     const std::string& name) {
  const onnx::AttributeProto* a = opAttribute(model, op_type, name);
  return a ? a->i() : 0;
}

/// Rule names of multi_head_attention alone: on BERT's constant projections
/// packed_attention (higher priority) fuses the same core, tested separately.
const char* kMhaOnly = "^multi_head_attention$";

/// fuse() restricted to the rules matching `only`.
Ops fuseOnly(const std::string& text, const std::string& only, onnx::ModelProto* out = nullptr) {
  onnx::ModelProto model = testing::parseModel(text);
  Options options;
  options.filter.only = only;
  rewrite(model, testing::shippedRules(), options);
  Ops ops = testing::opTypes(model);
  if (out) *out = std::move(model);
  return ops;
}

/// expectSameInOrt() restricted to the rules matching `only`, with symbolic dims `dims`.
void expectSameInOrtOnly(const std::string& text, const std::string& only,
                         const std::vector<std::string>& dims = {"B=2", "S=5"}) {
  onnx::ModelProto before = testing::parseModel(text);
  onnx::ModelProto after = before;
  Options options;
  options.filter.only = only;
  Result r = rewrite(after, testing::shippedRules(), options);
  ASSERT_GT(r.stats.rewrites, 0u) << "nothing was fused";
  testing::OracleVerdict verdict = testing::compareInOrt(before, after, dims);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

// ---- Attention (packed Q/K/V): BERT ------------------------------------------------------

/// What packed_attention leaves: the [1, 1, S, S] bias shape, the expanded mask, Attention.
const Ops kPackedWithMask = {"Shape", "Slice", "Concat", "Expand", "com.microsoft::Attention"};

TEST(PackedAttentionRule, FusesBertTorchScript) {
  const std::string text = attentionModel(spec());
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kPackedWithMask);
  EXPECT_EQ(intAttribute(model, "Attention", "num_heads"), 2);
  EXPECT_FLOAT_EQ(floatAttribute(model, "Attention", "scale"), 0.5f);
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Attention") {
      ASSERT_EQ(n.input_size(), 6);
      for (const auto& t : model.graph().initializer()) {
        if (t.name() == n.input(1)) {
          EXPECT_EQ(t.dims(1), 24) << "[Wq | Wk | Wv]";
        }
        if (t.name() == n.input(2)) {
          EXPECT_EQ(t.dims(0), 24) << "[bq, bk, bv]";
        }
      }
    }
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesOpset17) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.opset = 17; }));
  EXPECT_EQ(fuse(text), kPackedWithMask);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesTorch1xBertAtOpset11) {
  // Head-split shapes read at run time with Unsqueeze's axes as an attribute.
  const std::string text = testing::withAttributeParams(attentionModel(spec([](AttentionSpec& s) {
    s.opset = 11;
    s.shapes = AttentionSpec::Shapes::kTorchScript;
  })));
  EXPECT_NE(text.find("Unsqueeze <axes = [0]>"), std::string::npos);
  EXPECT_EQ(fuse(text).back(), "com.microsoft::Attention");
  expectSameInOrt(text);
}

/// `text` with every initializer listed as a graph input too (torch.onnx's
/// keep_initializers_as_inputs, which IR versions 1 to 3 required) at IR version `ir`.
onnx::ModelProto initializersAsInputs(const std::string& text, int64_t ir) {
  onnx::ModelProto model = testing::parseModel(text);
  model.set_ir_version(ir);
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    onnx::ValueInfoProto* in = model.mutable_graph()->add_input();
    in->set_name(t.name());
    auto* tensor = in->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return model;
}

// At IR 3 every initializer is an input, and a constant (as ONNX Runtime reads it): the
// weights pack. From IR 4 an initializer listed as an input is a default a feed may
// replace, the head-split shapes too: nothing fuses (as in ONNX Runtime).
TEST(PackedAttentionRule, PacksWeightsListedAsInputsOnlyBeforeIr4) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.opset = 9; }));
  for (int64_t ir : {3, 7}) {
    const onnx::ModelProto before = initializersAsInputs(text, ir);
    onnx::ModelProto after = before;
    rewrite(after, testing::shippedRules(), Options{});
    const Ops ops = testing::opTypes(after);
    EXPECT_EQ(ops.back(), ir < 4 ? "com.microsoft::Attention" : "Reshape")
        << "IR " << ir << ": " << ::testing::PrintToString(ops);
    testing::OracleVerdict v = testing::compareInOrt(before, after, {"B=2", "S=5"});
    EXPECT_TRUE(v.equal) << "IR " << ir << ": " << v.report;
  }
}

TEST(PackedAttentionRule, FusesWithoutMask) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.mask = Mask::kNone; }));
  EXPECT_EQ(fuse(text), Ops{"com.microsoft::Attention"});
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesWhisperScaleOnQAndK) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.scale = Scale::kQAndK; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kPackedWithMask);
  EXPECT_NEAR(floatAttribute(model, "Attention", "scale"), 0.5f, 1e-7);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesACausalWhere) {
  const std::string text =
      attentionModel(spec([](AttentionSpec& s) { s.mask = Mask::kCausalAdd; }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::Attention");
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, KeepsAScaleOtherThanTheKernelDefault) {
  // Div by 3 instead of sqrt(H) = 2: the kernel's default 1/sqrt(H) would be wrong.
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.scale_value = "3.0"; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), kPackedWithMask);
  EXPECT_FLOAT_EQ(floatAttribute(model, "Attention", "scale"), 1.0f / 3.0f);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesTorchScriptShapesComputedAtRunTime) {
  // view(x.size(0), x.size(1), N, H) with dynamic axes: Unsqueeze(Gather(Shape(x), i)).
  const std::string text = attentionModel(
      spec([](AttentionSpec& s) { s.shapes = AttentionSpec::Shapes::kTorchScript; }));
  EXPECT_EQ(fuse(text), kPackedWithMask);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesDynamoShapesComputedAtRunTime) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 17;
    s.shapes = AttentionSpec::Shapes::kDynamo;
  }));
  EXPECT_EQ(fuse(text), kPackedWithMask);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, DoesNotFuseANonConstantWeight) {
  // The weights a graph input: multi_head_attention fuses the core instead.
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.wk_is_input = true; }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::MultiHeadAttention");
  expectUnchanged(text, "^packed_attention$");
}

TEST(PackedAttentionRule, LeavesWeightsStoredAsExternalDataOnDisk) {
  // Packing would read the weights and write a packed copy into the model; weights kept
  // outside the model (large models) stay there, and multi_head_attention fuses the core.
  onnx::ModelProto model = testing::parseModel(attentionModel(spec()));
  testing::TempDir dir;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.name() != "wv") continue;
    std::string bytes;
    for (float f : t.float_data()) bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
    ASSERT_EQ(bytes.size(), 8u * 8u * sizeof(float)) << "the text parser's float_data";
    std::FILE* file = std::fopen(dir.file("wv.bin").c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
    std::fclose(file);
    t.clear_float_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = t.add_external_data();
    location->set_key("location");
    location->set_value("wv.bin");
  }
  Options options;
  options.base_dir = dir.path();
  Result r = rewrite(model, testing::shippedRules(), options);
  const std::vector<std::string> ops = testing::opTypes(model);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::Attention"), 0) << r.toJson();
  EXPECT_EQ(ops.back(), "com.microsoft::MultiHeadAttention") << r.toJson();
  for (const auto& t : model.graph().initializer()) {
    if (t.name() != "wv") continue;
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << "still on disk";
  }
}

// ---- MultiHeadAttention: BERT ------------------------------------------------------------

TEST(MultiHeadAttentionRule, FusesBertTorchScript) {
  const std::string text = attentionModel(spec());
  onnx::ModelProto model;
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly, &model),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  EXPECT_EQ(intAttribute(model, "MultiHeadAttention", "num_heads"), 2);
  EXPECT_FLOAT_EQ(floatAttribute(model, "MultiHeadAttention", "scale"), 0.5f);
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesBertOpset17) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.opset = 17; }));
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesKTransposedTwice) {
  const std::string text =
      attentionModel(spec([](AttentionSpec& s) { s.k_two_transposes = true; }));
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesScoresMultipliedByTheScale) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.scale = Scale::kMul; }));
  onnx::ModelProto model;
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly, &model),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  EXPECT_FLOAT_EQ(floatAttribute(model, "MultiHeadAttention", "scale"), 0.5f);
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesWhisperScaleOnQAndK) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.scale = Scale::kQAndK;
    s.mask = Mask::kNone;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuseOnly(text, kMhaOnly, &model),
            concat({kBertProjections, {"com.microsoft::MultiHeadAttention"}}));
  EXPECT_NEAR(floatAttribute(model, "MultiHeadAttention", "scale"), 0.5f, 1e-7);
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesUnscaledScoresWithScale1) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.scale = Scale::kNone; }));
  onnx::ModelProto model;
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly, &model),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  EXPECT_FLOAT_EQ(floatAttribute(model, "MultiHeadAttention", "scale"), 1.0f)
      << "not the kernel's default 1/sqrt(H)";
  expectSameInOrtOnly(text, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesSoftmaxAxis3) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.softmax_axis = "3"; }));
  EXPECT_EQ(
      fuseOnly(text, kMhaOnly),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
}

TEST(MultiHeadAttentionRule, FusesStaticHeadSplitShapes) {
  // Some exports (static batch and sequence) give the Reshapes positive dims.
  const std::string text = testing::attentionModel(spec([](AttentionSpec& s) {
    s.q_shape = "2, 5, 2, 4";
    s.k_shape = "2, 5, 2, 4";
    s.out_shape = "2, 5, 8";
  }));
  std::string fixed = text;
  for (auto [from, to] : {std::pair<std::string, std::string>{"[B, S, 8]", "[2, 5, 8]"},
                          {"[B, 1, 1, S]", "[2, 1, 1, 5]"}})
    for (size_t at; (at = fixed.find(from)) != std::string::npos;)
      fixed.replace(at, from.size(), to);
  EXPECT_EQ(
      fuseOnly(fixed, kMhaOnly),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrtOnly(fixed, kMhaOnly);
}

TEST(MultiHeadAttentionRule, FusesCrossAttention) {
  // K and V from another sequence (an encoder's output, length L): not packable.
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.cross = true; }));
  EXPECT_EQ(
      fuse(text),
      concat({kBertProjections, kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrtOnly(text, "", {"B=2", "S=5", "L=7"});
}

// ---- MultiHeadAttention: GPT-2 -----------------------------------------------------------

const Ops kGpt2Projection = {"MatMul", "Add", "Split"};

TEST(MultiHeadAttentionRule, FusesGpt2CausalWhere) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
  }));
  EXPECT_EQ(fuse(text), concat({kGpt2Projection,
                                {"Shape", "Slice", "Sub", "Slice", "Slice", "Where"},
                                kBiasShape,
                                {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRule, FusesGpt2CausalWhereAndPaddingMask) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
  }));
  EXPECT_EQ(fuse(text), concat({kGpt2Projection,
                                {"Shape", "Slice", "Sub", "Slice", "Slice", "Where", "Add"},
                                kBiasShape,
                                {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRule, FusesGpt2WithShapesComputedAtRunTime) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
    s.shapes = AttentionSpec::Shapes::kTorchScript;
  }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::MultiHeadAttention");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionCausalSliceRule, FusesGpt2EagerSliceByTheHeadsLengths) {
  // key_length - query_length from Shape of the V and Q heads: the slice is rebuilt from
  // the lengths of q and k.
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
    s.shapes = AttentionSpec::Shapes::kTorchScript;
    s.causal_from_heads = true;
  }));
  EXPECT_EQ(fuse(text),
            concat({kGpt2Projection,
                    {"Shape", "Slice", "Shape", "Slice", "Sub", "Slice", "Slice", "Where", "Add",
                     "Concat", "Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionCausalSliceRule, FusesTorch1xGpt2AtOpset11) {
  // Split and Unsqueeze with attributes; Slice with inputs (opset 10 on).
  AttentionSpec s = spec([](AttentionSpec& s) {
    s.opset = 11;
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
    s.shapes = AttentionSpec::Shapes::kTorchScript;
    s.causal_from_heads = true;
  });
  const std::string text = testing::withAttributeParams(attentionModel(s));
  EXPECT_NE(text.find("Split <axis = 2, split = [8, 8, 8]> (qkv)"), std::string::npos);
  EXPECT_EQ(fuse(text).back(), "com.microsoft::MultiHeadAttention");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionCausalSliceRule, FusesWithoutPaddingMask) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
    s.causal_from_heads = true;
  }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::MultiHeadAttention");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionCausalSliceRule, DoesNotFuseAFillThatSoftmaxDoesNotZero) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) {
                    s.projection = AttentionSpec::Projection::kSplit;
                    s.mask = Mask::kCausal;
                    s.causal_from_heads = true;
                    s.fill = "-100.0";
                  })),
                  "attention");
}

TEST(MultiHeadAttentionRule, FusesACausalFillOfMinus10000) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
    s.fill = "-10000.0";
  }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::MultiHeadAttention");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRule, FusesACausalFillOfMinusInfinity) {
  // masked_fill(-inf); ONNX's text format has no -inf, so the constant is set afterwards.
  onnx::ModelProto before = testing::parseModel(attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
  })));
  for (auto& t : *before.mutable_graph()->mutable_initializer())
    if (t.name() == "fill") t.set_float_data(0, -std::numeric_limits<float>::infinity());
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  EXPECT_EQ(testing::opTypes(after).back(), "com.microsoft::MultiHeadAttention");
  testing::OracleVerdict verdict = testing::compareInOrt(before, after, {"B=2", "S=5"});
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

// ---- float16 exports ------------------------------------------------------------------------
//
// The fused ops add masks and fills to the scores in float, where a float16 model rounds
// `scores + mask`: they agree but for rounding wherever a query row keeps a key. A row
// masked whole (a padded query) would get other weights, so in float16 only a mask that
// cannot do that, none or a -inf fill, is fused (exact_masking).

/// The model of `s` as a float16 export writes it; `fill`, if given, set afterwards (the
/// text format has no -inf).
onnx::ModelProto halfModel(const AttentionSpec& s, std::optional<float> fill = std::nullopt) {
  onnx::ModelProto m = testing::parseModel(attentionModel(s));
  if (fill)
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == "fill") t.set_float_data(0, *fill);
  testing::toFloat16(m);
  return m;
}

/// Rewrites `before` with the shipped rules; expects `ops` and, in ORT, float16 rounding.
void expectHalfFusion(const onnx::ModelProto& before, const Ops& ops) {
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  EXPECT_EQ(testing::opTypes(after), ops);
  const testing::OracleVerdict verdict =
      testing::compareInOrt(before, after, {"B=2", "S=5"}, "--atol 4e-3 --runs 3");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(PackedAttentionRule, FusesFloat16WithoutMask) {
  expectHalfFusion(halfModel(spec([](AttentionSpec& s) { s.mask = Mask::kNone; })),
                   {"com.microsoft::Attention"});
}

TEST(MultiHeadAttentionRule, FusesFloat16CausalFillOfMinusInfinityAsAFloat16Bias) {
  // The bias Where(causal, 0, fill) is built in the fill's float16: tensor(like(fill), 0.0).
  const onnx::ModelProto before = halfModel(spec([](AttentionSpec& s) {
                                              s.projection = AttentionSpec::Projection::kSplit;
                                              s.mask = Mask::kCausal;
                                            }),
                                            -std::numeric_limits<float>::infinity());
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  ASSERT_EQ(testing::opTypes(after).back(), "com.microsoft::MultiHeadAttention");
  int half_zeros = 0;
  for (const onnx::TensorProto& t : after.graph().initializer()) {
    EXPECT_NE(t.data_type(), onnx::TensorProto::FLOAT) << t.name() << " is a float constant";
    half_zeros += t.data_type() == onnx::TensorProto::FLOAT16 && t.int32_data_size() == 1 &&
                  t.int32_data(0) == 0;
  }
  EXPECT_EQ(half_zeros, 1);
  const testing::OracleVerdict verdict =
      testing::compareInOrt(before, after, {"B=2", "S=5"}, "--atol 4e-3 --runs 3");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(MultiHeadAttentionRule, FusesFloat16Gpt2CausalSliceWithFloat16Lowest) {
  // finfo(float16).min, GPT-2's fill: scores + fill in float is not the model's fill, but
  // every row of a causal buffer's slice keeps key 0, so no row is masked whole
  // (exact_fill), and masked keys weigh 0 either way.
  expectHalfFusion(
      halfModel(spec([](AttentionSpec& s) {
        s.projection = AttentionSpec::Projection::kSplit;
        s.mask = Mask::kCausal;
      })),
      {"MatMul", "Add", "Split", "Shape", "Slice", "Sub", "Slice", "Slice", "Where", "Shape",
       "Slice", "Shape", "Slice", "Concat", "Expand", "com.microsoft::MultiHeadAttention"});
}

TEST(MultiHeadAttentionCausalSliceRule, FusesFloat16Gpt2EagerSliceByTheHeadsLengths) {
  // The causal slice rule's own fill check: the tril buffer's cut keeps key 0 in every row.
  const onnx::ModelProto before = halfModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
    s.causal_from_heads = true;
  }));
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  EXPECT_EQ(testing::opTypes(after).back(), "com.microsoft::MultiHeadAttention");
  const testing::OracleVerdict verdict =
      testing::compareInOrt(before, after, {"B=2", "S=5"}, "--atol 4e-3 --runs 3");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

/// Expects the shipped rules to fuse no attention op in `before`.
void expectNoAttention(const onnx::ModelProto& before) {
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  for (const std::string& op : testing::opTypes(after))
    EXPECT_EQ(op.find("Attention"), std::string::npos) << op;
}

/// The model's [1, 1, 16, 16] tril buffer (float16 or bool, in int32_data) transposed: a
/// triu, which is no causal buffer, so nothing proves a query row keeps a key.
onnx::ModelProto withTriu(onnx::ModelProto m) {
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != "tril") continue;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < i; ++j) {
        const int32_t below = t.int32_data(i * 16 + j);
        t.set_int32_data(i * 16 + j, t.int32_data(j * 16 + i));
        t.set_int32_data(j * 16 + i, below);
      }
  }
  return m;
}

TEST(MultiHeadAttentionRule, DoesNotFuseFloat16CausalWhereOfAnotherBuffer) {
  expectNoAttention(withTriu(halfModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
  }))));
}

TEST(MultiHeadAttentionRule, DoesNotFuseFloat16CausalSliceWithAPaddingMask) {
  // The padding mask may mask a row whole.
  expectNoAttention(halfModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
  })));
}

TEST(PackedAttentionRule, FusesFloat16NanoGptMaskedFillOfFloat16Lowest) {
  // masked_fill(tril[:, :, :T, :T] == 0, finfo(float16).min): every row keeps key 0.
  const onnx::ModelProto before =
      halfModel(spec([](AttentionSpec& s) { s.mask = Mask::kMaskedFill; }));
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  EXPECT_EQ(testing::opTypes(after).back(), "com.microsoft::Attention");
  const testing::OracleVerdict verdict =
      testing::compareInOrt(before, after, {"B=2", "S=5"}, "--atol 4e-3 --runs 3");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(PackedAttentionRule, DoesNotFuseFloat16MaskedFillOfAnotherBuffer) {
  expectNoAttention(
      withTriu(halfModel(spec([](AttentionSpec& s) { s.mask = Mask::kMaskedFill; }))));
}

TEST(PackedAttentionRule, DoesNotFuseFloat16UnderAMaskInput) {
  // A float16 mask input may mask a row whole: the model rounds scores + mask there.
  const onnx::ModelProto before = halfModel(spec([](AttentionSpec& s) { s.mask = Mask::kAdd; }));
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  for (const std::string& op : testing::opTypes(after))
    EXPECT_EQ(op.find("Attention"), std::string::npos) << op;
}

TEST(PackedAttentionRule, DoesNotFuseBertFloat16PaddingMask) {
  const onnx::ModelProto before =
      halfModel(spec([](AttentionSpec& s) { s.mask = Mask::kPadding; }));
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules());
  for (const std::string& op : testing::opTypes(after))
    EXPECT_EQ(op.find("Attention"), std::string::npos) << op;
}

// ---- masked_fill (nanoGPT's CausalSelfAttention) ------------------------------------------

TEST(MultiHeadAttentionRule, FusesNanoGptMaskedFill) {
  // c_attn split in three, att.masked_fill(bias[:, :, :T, :T] == 0, -inf): the masked
  // entries take the fill, so the bias is Where(masked, fill, 0).
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kMaskedFill;
  }));
  EXPECT_EQ(fuse(text), concat({kGpt2Projection,
                                {"Shape", "Slice", "Slice", "Slice", "Equal", "Where"},
                                kBiasShape,
                                {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

/// nanoGPT's attention with B and T read once (B, T, C = x.size()) and shared by the views
/// of Q, K, V, the merge and the buffer's slice [:T, :T], as each exporter reads dims.
std::string nanoGptOnDimsReadOnce(AttentionSpec::Shapes shapes) {
  AttentionSpec s;
  s.projection = AttentionSpec::Projection::kSplit;
  s.mask = Mask::kMaskedFill;
  s.shapes = shapes;
  s.shared_dims = true;
  if (shapes == AttentionSpec::Shapes::kDynamo) s.opset = 18;
  return attentionModel(s);
}

// The fused op's bias reads the slice by T, so the shared dims stay for it.
TEST(MultiHeadAttentionRule, FusesNanoGptMaskedFillOnDimsReadOnce) {
  for (auto shapes : {AttentionSpec::Shapes::kTorchScript, AttentionSpec::Shapes::kDynamo}) {
    SCOPED_TRACE(shapes == AttentionSpec::Shapes::kDynamo ? "dynamo dims" : "TorchScript dims");
    const std::string text = nanoGptOnDimsReadOnce(shapes);
    const Ops ops = fuse(text);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
        << ::testing::PrintToString(ops);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
    expectSameInOrt(text);
  }
}

TEST(PackedAttentionRule, FusesMaskedFill) {
  const std::string text =
      attentionModel(spec([](AttentionSpec& s) { s.mask = Mask::kMaskedFill; }));
  EXPECT_EQ(fuse(text), Ops({"Shape", "Slice", "Slice", "Slice", "Equal", "Where", "Slice",
                             "Concat", "Expand", "com.microsoft::Attention"}));
  expectSameInOrt(text);
}

/// BART's SDPA export (transformers >= 4.49, torch's math SDPA): Q and K scaled apart, K^T
/// through bmm's 3-D layout, a boolean mask as Where(mask, 0, finfo.min), the weights
/// guarded against NaN.
AttentionSpec bartSdpa(void (*edit)(AttentionSpec&) = nullptr) {
  AttentionSpec s;
  s.scale = AttentionSpec::Scale::kQAndK;
  s.k_transpose_3d = true;
  s.mask = Mask::kBoolWhere;
  s.nan_guard = true;
  if (edit) edit(s);
  return s;
}

TEST(PackedAttentionRule, FusesBartSdpa) {
  // The guard goes (the scores and the finite mask cannot make NaN) and the 3-D K^T is one
  // Transpose: packed Attention, as ONNX Runtime's FusionBartAttention makes it.
  const std::string text = attentionModel(bartSdpa());
  // The bias shape [B, 1, S, T] reads S and T from one Shape (x's: T is S here).
  EXPECT_EQ(fuse(text),
            Ops({"Where", "Shape", "Slice", "Concat", "Expand", "com.microsoft::Attention"}));
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesBartSdpaWithoutMask) {
  const std::string text = attentionModel(bartSdpa([](AttentionSpec& s) { s.mask = Mask::kNone; }));
  EXPECT_EQ(fuse(text), Ops({"com.microsoft::Attention"}));
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesBartSdpaUnderAMaskInputWithTheGuardAfter) {
  // A float mask given to the model may mask a row whole with -inf: the guard stays, moved
  // after the merge of the heads (nan_guard_after_heads), and the attention fuses before it.
  const std::string text = attentionModel(bartSdpa([](AttentionSpec& s) { s.mask = Mask::kAdd; }));
  EXPECT_EQ(fuse(text), Ops({"Shape", "Slice", "Concat", "Expand", "com.microsoft::Attention",
                             "IsNaN", "Where"}));
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, FusesTorchlibBooleanMaskSdpaWithRowsMaskedWholeStillZero) {
  // torchlib's boolean mask is Where(mask, 0, -inf): a query row whose keys are all masked
  // is NaN after Softmax, 0 after the guard. Attention gives NaN there; the guard after it
  // gives the model's 0. With S = 2, the random masks of 8 seeds mask rows whole.
  onnx::ModelProto before =
      testing::parseModel(attentionModel(bartSdpa([](AttentionSpec& s) { s.fill = "-1.0"; })));
  for (onnx::TensorProto& t : *before.mutable_graph()->mutable_initializer()) {
    if (t.name() != "fill") continue;
    t.clear_raw_data();
    t.clear_float_data();
    t.add_float_data(-INFINITY);
  }
  onnx::ModelProto after = before;
  rewrite(after, testing::shippedRules(), Options{});
  const Ops ops = testing::opTypes(after);
  ASSERT_GE(ops.size(), 3u);
  EXPECT_EQ(Ops(ops.end() - 3, ops.end()), Ops({"com.microsoft::Attention", "IsNaN", "Where"}));
  const testing::OracleVerdict verdict =
      testing::compareInOrt(before, after, {"B=2", "S=2"}, "--runs 8");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(OnnxAttentionRule, FusesMaskedFillAtOpset23) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 23;
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kMaskedFill;
  }));
  EXPECT_EQ(fuse(text), concat({kGpt2Projection,
                                {"Shape", "Slice", "Slice", "Slice", "Equal", "Equal", "Where"},
                                {"Where"},
                                kBiasShape,
                                {"Expand", "Attention"}}))
      << "the fill raised (Equal, Where) before the masked_fill's Where";
  expectSameInOrt(text);
}

AttentionSpec distilBert(void (*edit)(AttentionSpec&) = nullptr) {
  AttentionSpec s;
  s.mask = Mask::kDistilBert;
  s.scale_q_first = true;
  s.q_shape = "0, -1, 2, 4";
  s.k_shape = "0, -1, 2, 4";
  if (edit) edit(s);
  return s;
}

TEST(PackedAttentionRule, FusesDistilBert) {
  // view(bs, -1, n_heads, dim), q / sqrt(H) first, the mask expanded to the scores' shape.
  const std::string text = attentionModel(distilBert());
  EXPECT_EQ(fuse(text).back(), "com.microsoft::Attention");
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, DoesNotFuseADistilBertMaskThatFillsZeros) {
  // Where(masked, 0.0, scores) keeps masked scores at 0: Softmax does not drop them.
  expectUnchanged(attentionModel(distilBert([](AttentionSpec& s) { s.fill = "0.0"; })),
                  "attention");
}

// Exported without attention_mask, DistilBERT builds its mask from ones of the input's shape:
// mask == 0 is false everywhere, the masked_fill fills nothing, and the attention has no mask.
// Even a fill of 0 (ONNX Runtime's own DistilBERT test) is never chosen.
TEST(PackedAttentionRule, FusesDistilBertWithoutAMaskInputAsUnmasked) {
  const std::string finfo_min =
      attentionModel(distilBert([](AttentionSpec& s) { s.mask_ones = true; }));
  const std::string zero_fill = attentionModel(distilBert([](AttentionSpec& s) {
    s.mask_ones = true;
    s.fill = "0.0";
  }));
  for (const std::string& text : {finfo_min, zero_fill}) {
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    EXPECT_EQ(ops.back(), "com.microsoft::Attention");
    for (const char* gone : {"Where", "Equal", "ConstantOfShape"})
      EXPECT_EQ(std::count(ops.begin(), ops.end(), gone), 0) << gone;
    const onnx::NodeProto& attention = model.graph().node(model.graph().node_size() - 1);
    EXPECT_LE(attention.input_size(), 3) << "no mask_index";
    expectSameInOrt(text);
  }
}

TEST(PackedAttentionRule, KeepsTheMaskOfOnesThatAreNotOne) {
  // ConstantOfShape of 0: mask == 0 everywhere, every key filled; the fill stays a mask.
  const std::string text = attentionModel(distilBert([](AttentionSpec& s) {
    s.mask_ones = true;
    s.ones_value = "0.0";
  }));
  const Ops ops = fuse(text);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "ConstantOfShape"), 1)
      << ::testing::PrintToString(ops);
  expectSameInOrt(text);
}

// BERT without attention_mask: (1 - ones) * finfo.min is zero everywhere, and so is the Add.
TEST(PackedAttentionRule, FusesBertWithoutAMaskInputAsUnmasked) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.mask = Mask::kPadding;
    s.mask_ones = true;
  }));
  onnx::ModelProto model;
  const Ops ops = fuse(text, &model);
  EXPECT_EQ(ops.back(), "com.microsoft::Attention");
  for (const char* gone : {"Sub", "Mul", "ConstantOfShape"})
    EXPECT_EQ(std::count(ops.begin(), ops.end(), gone), 0) << gone;
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, KeepsTheMaskOfOnesSubtractedFromTwo) {
  // (2 - ones) * finfo.min is finfo.min everywhere: a mask, not a zero.
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.mask = Mask::kPadding;
    s.mask_ones = true;
    s.padding_one = "2.0";
  }));
  const Ops ops = fuse(text);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "ConstantOfShape"), 1)
      << ::testing::PrintToString(ops);
  expectSameInOrt(text);
}

TEST(PackedAttentionRule, DoesNotFuseASplitWithTwoDimsLeftOpen) {
  // [0, -1, 2, -1]: nothing forces the heads' count and size apart.
  expectUnchanged(attentionModel(distilBert([](AttentionSpec& s) { s.q_shape = "0, -1, 2, -1"; })),
                  "attention");
}

TEST(MultiHeadAttentionRule, DoesNotFuseAMaskedFillThatSoftmaxDoesNotZero) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) {
                    s.projection = AttentionSpec::Projection::kSplit;
                    s.mask = Mask::kMaskedFill;
                    s.fill = "-100.0";
                  })),
                  "attention");
}

// ---- heads merged into the batch (BART, Whisper, CLIP eager) ---------------------------

/// BART's, Whisper's and CLIP's eager attention (transformers < 4.48) as TorchScript exports
/// it: q = q_proj(x) * scale, each of Q, K, V viewed [B, S, N, H], transposed, viewed
/// [B*N, -1, H]; torch.bmm(q, k.transpose(1, 2)), softmax, bmm with v, viewed [B, N, S, H],
/// transposed and reshaped to [B, S, D].
struct BatchedHeadsSpec {
  /// B and S read from x's shape (B*N a Mul); else constant shapes (B = 3, S = 5: B is not
  /// N, so the order of a split shows).
  bool dynamic = false;
  std::string split = "bsz1, cN, tgt1, cH";  ///< the view back of the batch
  /// [B, 1, S, S] mask inputs (0 to 2) added to the scores viewed [B, N, S, S], each viewed
  /// back to [B*N, S, S] after (BART's attention_mask; CLIP's causal mask, then its
  /// attention_mask).
  int masks = 0;
  /// The masks' last dim as declared (run-time shapes): the keys' S, or a name of its own
  /// (HF's 4-D mask is [B, 1, S, T] of attention_mask [B, T]), which nothing proves S.
  std::string mask_keys = "S";
  bool k_bias = true;  ///< Whisper's k_proj has none
  bool cross = false;  ///< K and V from enc [B, L, 8] (a decoder's cross attention)
  /// A decoder step with past (BART's past_key_value): the new K and V heads concatenated
  /// behind past_k, past_v [B, 2, P, 4] on axis 2, those Concats the present outputs; the
  /// scores' key length read from K (src_len = key_states.size(1)). With `cross`, K and V
  /// are the cached encoder heads past_k, past_v themselves (no projection, no present).
  bool past = false;
  /// With two masks (opset 13 and later, no past): not inputs but built as CLIP's text
  /// encoder (transformers < 4.48) builds them: mask1 by _make_causal_mask (full((S, S),
  /// finfo.min) masked_fill'ed with 0 where arange < (arange + 1).view(S, 1), expanded to
  /// [B, 1, S, S]), mask2 by _expand_mask of the int64 input am [B, S] (inv = 1 - am
  /// expanded, masked_fill(inv.bool(), finfo.min)).
  bool clip_masks = false;
  int opset = 14;
};

/// The statements of BatchedHeadsSpec::clip_masks, reading bsz1 and tgt1.
std::string clipMasks() {
  return "cshape = Concat <axis = 0> (tgt1, tgt1)\n"
         "cfull = ConstantOfShape <value = float[1] {-3.4028234663852886e38}> (cshape)\n"
         "csh = Shape(cfull)\ncsz = Gather <axis = 0> (csh, cim1)\n"
         "cr = Range(ci0, csz, ci1)\ncr1 = Add(cr, ci1)\n"
         "csz1 = Unsqueeze(csz, cax0)\nrshape = Concat <axis = 0> (csz1, cone)\n"
         "crows = Reshape(cr1, rshape)\ncless = Less(cr, crows)\n"
         "causal = Where(cless, czero, cfull)\nc4 = Unsqueeze(causal, cax01)\n"
         "eshape = Concat <axis = 0> (bsz1, cone, tgt1, tgt1)\n"
         "mask1 = Expand(c4, eshape)\n"
         "am4 = Unsqueeze(am, cax12)\name = Expand(am4, eshape)\n"
         "amf = Cast <to = 1> (ame)\ninv = Sub(cone_f, amf)\n"
         "invb = Cast <to = 9> (inv)\nmask2 = Where(invb, cmin, inv)\n";
}

std::string batchedHeadsModel(const BatchedHeadsSpec& spec) {
  std::string inits, body;
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  int seed = 1;
  for (const char* p : {"q", "k", "v", "o"}) {
    init("float[8, 8] w" + std::string(p) + " = " + testing::attentionWeights(8, 8, seed));
    init("float[8] b" + std::string(p) + " = " + testing::attentionWeights(1, 8, seed + 10));
    ++seed;
  }
  init("float scale = {0.5}");
  init("int64[1] cN = {2}, int64[1] cH = {4}, int64[1] cm1 = {-1}, int64[1] cD = {8}");
  const bool cached_cross = spec.past && spec.cross;
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p), from = spec.cross && n != "q" ? "enc" : "x";
    if (cached_cross && n != "q") continue;
    body += n + "_mm = MatMul(" + from + ", w" + n + ")\n";
    body += n == "k" && !spec.k_bias ? "k_lin = Identity(k_mm)\n"
                                     : n + "_lin = Add(" + n + "_mm, b" + n + ")\n";
  }
  body += "q_s = Mul(q_lin, scale)\n";
  if (spec.dynamic) {
    init("int64 i0 = {0}, int64 i1 = {1}, int64[1] ax0 = {0}, int64 nN = {2}");
    body +=
        "xs = Shape(x)\nbsz = Gather <axis = 0> (xs, i0)\ntgt = Gather <axis = 0> (xs, i1)\n"
        "bn = Mul(bsz, nN)\n";
    body += testing::onAxis0("Unsqueeze", spec.opset, "bsz1", "bsz") +
            testing::onAxis0("Unsqueeze", spec.opset, "tgt1", "tgt") +
            testing::onAxis0("Unsqueeze", spec.opset, "bn1", "bn");
  } else {
    init("int64[1] bsz1 = {3}, int64[1] tgt1 = {5}, int64[1] bn1 = {6}");
  }
  body +=
      "shape4 = Concat <axis = 0> (bsz1, tgt1, cN, cH)\n"
      "shape4m = Concat <axis = 0> (bsz1, cm1, cN, cH)\n"
      "shape3 = Concat <axis = 0> (bn1, cm1, cH)\n";
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p), from = n == "q" ? "q_s" : n + "_lin";
    if (cached_cross && n != "q") {
      body += n + "3 = Reshape(past_" + n + ", shape3)\n";
      continue;
    }
    body += n + "4 = Reshape(" + from + ", " + (n == "q" ? "shape4" : "shape4m") + ")\n";
    body += n + "4t = Transpose <perm = [0, 2, 1, 3]> (" + n + "4)\n";
    std::string heads = n + "4t";
    if (spec.past && n != "q") {
      body += "present_" + n + " = Concat <axis = 2> (past_" + n + ", " + heads + ")\n";
      heads = "present_" + n;
    }
    body += n + "3 = Reshape(" + heads + ", shape3)\n";
  }
  body += "k3t = Transpose <perm = [0, 2, 1]> (k3)\nscores = MatMul(q3, k3t)\n";
  std::string src1 = "tgt1";  // only the masks' views read the key length
  if (spec.past && spec.masks > 0 && spec.dynamic) {
    body += "k3s = Shape(k3)\nsrc = Gather <axis = 0> (k3s, i1)\n" +
            testing::onAxis0("Unsqueeze", spec.opset, "src1", "src");
    src1 = "src1";
  } else if (spec.past && spec.masks > 0) {
    init(std::string("int64[1] src1 = {") + (cached_cross ? "4" : "9") + "}");
    src1 = "src1";
  }
  if (spec.masks > 0)
    body += "sshape4 = Concat <axis = 0> (bsz1, cN, tgt1, " + src1 +
            ")\n"
            "sshape3 = Concat <axis = 0> (bn1, tgt1, " +
            src1 + ")\n";
  if (spec.clip_masks) {
    init("int64 ci0 = {0}, int64 ci1 = {1}, int64 cim1 = {-1}, int64[1] cone = {1}");
    init("int64[1] cax0 = {0}, int64[2] cax01 = {0, 1}, int64[2] cax12 = {1, 2}");
    init("float czero = {0.0}, float cone_f = {1.0}, float cmin = {-3.4028234663852886e38}");
    body += clipMasks();
  }
  std::string scores = "scores";
  for (int i = 1; i <= spec.masks; ++i) {
    const std::string n = std::to_string(i);
    body += "s4_" + n + " = Reshape(" + scores + ", sshape4)\nm4_" + n + " = Add(s4_" + n +
            ", mask" + n + ")\ns3_" + n + " = Reshape(m4_" + n + ", sshape3)\n";
    scores = "s3_" + n;
  }
  const std::string softmax_axis = spec.opset < 13 ? "2" : "-1";
  body += "p = Softmax <axis = " + softmax_axis + "> (" + scores + ")\no3 = MatMul(p, v3)\n";
  body += "oshape4 = Concat <axis = 0> (" + spec.split + ")\n";
  body +=
      "oshape3 = Concat <axis = 0> (bsz1, tgt1, cD)\n"
      "o4 = Reshape(o3, oshape4)\no4t = Transpose <perm = [0, 2, 1, 3]> (o4)\n"
      "o = Reshape(o4t, oshape3)\no_mm = MatMul(o, wo)\ny = Add(o_mm, bo)\n";
  const std::string dims = spec.dynamic ? "B, S, 8" : "3, 5, 8";
  std::string signature = "float[" + dims + "] x";
  if (spec.cross && !cached_cross)
    signature += spec.dynamic ? ", float[B, L, 8] enc" : ", float[3, 4, 8] enc";
  std::string outputs = "float[" + dims + "] y";
  if (spec.past)
    for (const char* n : {"k", "v"}) {
      signature +=
          std::string(spec.dynamic ? ", float[B, 2, P, 4] past_" : ", float[3, 2, 4, 4] past_") + n;
      if (!cached_cross)
        outputs += std::string(spec.dynamic ? ", float[B, 2, T, 4] present_"
                                            : ", float[3, 2, 9, 4] present_") +
                   n;
    }
  const std::string keys = cached_cross ? "4" : spec.past ? "9" : "5";
  for (int i = 1; i <= spec.masks && !spec.clip_masks; ++i)
    signature += ", float[" + (spec.dynamic ? "B, 1, S, " + spec.mask_keys : "3, 1, 5, " + keys) +
                 "] mask" + std::to_string(i);
  if (spec.clip_masks) signature += spec.dynamic ? ", int64[B, S] am" : ", int64[3, 5] am";
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(spec.opset) + "]>\ng (" +
         signature + ") => (" + outputs + ")\n<" + inits + ">\n{\n" + body + "}\n";
}

/// The spec with `dynamic` set.
BatchedHeadsSpec batchedHeads(bool dynamic) {
  BatchedHeadsSpec s;
  s.dynamic = dynamic;
  return s;
}

TEST(MultiHeadAttentionRule, FusesHeadsMergedIntoTheBatch) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "B, S read at run time" : "constant shapes");
    const std::string text = batchedHeadsModel(batchedHeads(dynamic));
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
        << ::testing::PrintToString(ops);
    EXPECT_EQ(intAttribute(model, "MultiHeadAttention", "num_heads"), 2);
    for (const char* gone : {"Softmax", "Reshape", "Transpose"})
      EXPECT_EQ(std::count(ops.begin(), ops.end(), gone), 0) << gone;
    expectSameInOrt(text);
  }
}

TEST(MultiHeadAttentionRule, FusesHeadsMergedIntoTheBatchWithAMaskAddedIn4d) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "B, S read at run time" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.masks = 1;
    const std::string text = batchedHeadsModel(spec);
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
        << ::testing::PrintToString(ops);
    EXPECT_EQ(intAttribute(model, "MultiHeadAttention", "num_heads"), 2);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
    expectSameInOrt(text);
  }
}

// The mask's key dim declared T, not provably the keys' S: in a run the model completes it
// is S (or 1), since the sum is viewed back as the scores and multiplied by V.
TEST(MultiHeadAttentionRule, FusesHeadsMergedIntoTheBatchWithAMaskOfItsOwnKeyDim) {
  BatchedHeadsSpec spec = batchedHeads(true);
  spec.masks = 1;
  spec.mask_keys = "T";
  const std::string text = batchedHeadsModel(spec);
  onnx::ModelProto model;
  const Ops ops = fuse(text, &model);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
      << ::testing::PrintToString(ops);
  for (const char* keys : {"T=5", "T=1"}) {
    const testing::OracleVerdict v =
        testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5", keys}, "");
    EXPECT_TRUE(v.equal) << keys << ": " << v.report;
  }
}

// Whisper: k_proj has no bias. A decoder's cross attention: K and V from the encoder's
// states, of another length. Opset 12: Softmax on axis 2 of the 3-D scores.
TEST(MultiHeadAttentionRule, FusesHeadsMergedIntoTheBatchInWhisperAndCrossAttention) {
  for (bool dynamic : {false, true})
    for (int variant = 0; variant < 3; ++variant) {
      BatchedHeadsSpec spec = batchedHeads(dynamic);
      spec.k_bias = variant != 0;
      spec.cross = variant == 1;
      if (variant == 2) spec.opset = 12;
      SCOPED_TRACE(std::string(dynamic ? "run-time shapes, " : "constant shapes, ") +
                   (variant == 0   ? "no K bias"
                    : variant == 1 ? "cross attention"
                                   : "opset 12"));
      const std::string text = batchedHeadsModel(spec);
      onnx::ModelProto model;
      const Ops ops = fuse(text, &model);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
          << ::testing::PrintToString(ops);
      EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 0);
      const testing::OracleVerdict v =
          testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5", "L=3"}, "");
      EXPECT_TRUE(v.equal) << v.report;
    }
}

// Two masks of any values, each added in 4-D: the views between them go (reshape_back) and
// the attention is the 4-D one, but (s + m1) + m2 is not s + (m1 + m2) in float for every
// m1 and m2: no fused op takes two masks, so the Softmax stays.
TEST(MultiHeadAttentionRule, KeepsTwoMasksAddedOneAfterTheOther) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "B, S read at run time" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.masks = 2;
    const std::string text = batchedHeadsModel(spec);
    const Ops ops = fuse(text);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 1) << ::testing::PrintToString(ops);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Add"), 2 + 4) << "two masks, four biases";
    expectSameInOrt(text);
  }
}

// CLIP's own two masks hold only 0 and finfo.min, so their sum added once is the same
// (masks_summed_first): one MultiHeadAttention with it as attention_bias. Compared in ONNX
// Runtime on 0/1 attention masks, which pad keys (and whole rows when key 0 is padded).
TEST(MultiHeadAttentionRule, FusesClipsCausalAndPaddingMasksAsTheirSum) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "B, S read at run time" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.masks = 2, spec.clip_masks = true;
    const std::string text = batchedHeadsModel(spec);
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
        << ::testing::PrintToString(ops);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
    for (int seed : {1, 2, 3}) {
      const testing::OracleVerdict v =
          testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5"},
                                "--int-range am=0:2 --seed " + std::to_string(seed));
      EXPECT_TRUE(v.equal) << "seed " << seed << ": " << v.report;
    }
  }
}

TEST(MultiHeadAttentionRule, KeepsABatchOfHeadsSplitBackInAnotherOrder) {
  // The result viewed [N, B, S, H]: not the heads it merged, so not the 4-D attention (the
  // 3-D product itself is still one head's attention per batch row).
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "B, S read at run time" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.split = "cN, bsz1, tgt1, cH";
    const std::string text = batchedHeadsModel(spec);
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    EXPECT_EQ(intAttribute(model, "MultiHeadAttention", "num_heads"), 1)
        << ::testing::PrintToString(ops);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 8);
    expectSameInOrt(text);
  }
}

/// The node of `op_type` (domain::type as opTypes writes it) in `model`; a test failure
/// and an empty node if there is none.
const onnx::NodeProto& nodeOf(const onnx::ModelProto& model, const std::string& op) {
  static const onnx::NodeProto kNone;
  for (const auto& n : model.graph().node())
    if ((n.domain().empty() ? "" : n.domain() + "::") + n.op_type() == op) return n;
  ADD_FAILURE() << "no " << op;
  return kNone;
}

/// ORT parity of a decoder step's fused `model` with `text`, the run-time dims B=2, S=3,
/// P=4 (cache) and T=7 (keys) when `dynamic`.
void expectStepSameInOrt(const std::string& text, const onnx::ModelProto& model, bool dynamic) {
  const std::vector<std::string> dims =
      dynamic ? std::vector<std::string>{"B=2", "S=3", "P=4", "T=7"} : std::vector<std::string>{};
  const testing::OracleVerdict v =
      testing::compareInOrt(testing::parseModel(text), model, dims, "");
  EXPECT_TRUE(v.equal) << v.report;
}

// A BART/Marian/Whisper decoder step with past (transformers < 4.48): the new K and V heads
// concatenated behind the cache, under the prepared [B, 1, S, T] mask or none. The cache
// goes in as past_key/past_value, and the presents come out of the op.
TEST(MultiHeadAttentionRule, FusesADecoderStepOnACacheAsMultiHeadAttentionWithPast) {
  for (bool dynamic : {false, true})
    for (int masks : {0, 1}) {
      SCOPED_TRACE(std::string(dynamic ? "run-time shapes, " : "constant shapes, ") +
                   (masks ? "a mask" : "no mask"));
      BatchedHeadsSpec spec = batchedHeads(dynamic);
      spec.past = true;
      spec.masks = masks;
      spec.mask_keys = "T";
      const std::string text = batchedHeadsModel(spec);
      onnx::ModelProto model;
      const Ops ops = fuse(text, &model);
      ASSERT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
          << ::testing::PrintToString(ops);
      for (const char* gone : {"Softmax", "Transpose"})
        EXPECT_EQ(std::count(ops.begin(), ops.end(), gone), 0) << gone;
      const onnx::NodeProto& mha = nodeOf(model, "com.microsoft::MultiHeadAttention");
      ASSERT_EQ(mha.input_size(), 8);
      EXPECT_EQ(mha.input(6), "past_k");
      EXPECT_EQ(mha.input(7), "past_v");
      EXPECT_EQ(mha.input(5).empty(), masks == 0) << "the mask is attention_bias";
      ASSERT_EQ(mha.output_size(), 3);
      EXPECT_EQ(mha.output(1), "present_k");
      EXPECT_EQ(mha.output(2), "present_v");
      expectStepSameInOrt(text, model, dynamic);
    }
}

// A decoder's cross attention on the cached encoder heads (past_key_value's cross half,
// given as they are): the heads go in as K and V.
TEST(MultiHeadAttentionRule, FusesCrossAttentionOnCachedEncoderHeads) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "run-time shapes" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.past = true;
    spec.cross = true;
    spec.masks = 1;
    spec.mask_keys = "P";
    const std::string text = batchedHeadsModel(spec);
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    ASSERT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
        << ::testing::PrintToString(ops);
    const onnx::NodeProto& mha = nodeOf(model, "com.microsoft::MultiHeadAttention");
    EXPECT_EQ(mha.input(1), "past_k");
    EXPECT_EQ(mha.input(2), "past_v");
    expectStepSameInOrt(text, model, dynamic);
  }
}

// Hugging Face's 4-D eager decoder with past (BART >= 4.48, LLaMA's eager path): the mask
// sliced to the keys' length, attention_mask[:, :, :, :key_states.shape[-2]], read from the
// Concat that is the present output. A target that re-exports that Concat and reads the
// sliced mask would read its own output; the rewrite takes K and V as given instead.
TEST(MultiHeadAttentionRule, DoesNotFeedAPresentItReExportsBackIntoItsOwnMask) {
  std::string inits =
      "float scale = {0.5}, int64[1] cm1 = {-1}, int64[1] cH = {4}, "
      "int64[1] ax0 = {0}, int64[1] ax3 = {3}, int64[1] z = {0}, "
      "int64 i0 = {0}, int64 i1 = {1}, int64 i2 = {2}";
  int seed = 1;
  for (const char* p : {"q", "k", "v", "o"}) {
    inits += ", float[8, 8] w" + std::string(p) + " = " + testing::attentionWeights(8, 8, seed);
    inits += ", float[8] b" + std::string(p) + " = " + testing::attentionWeights(1, 8, seed + 10);
    ++seed;
  }
  std::string body;
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p);
    body += n + "_mm = MatMul(x, w" + n + ")\n" + n + "_lin = Add(" + n + "_mm, b" + n + ")\n";
  }
  body +=
      "xs = Shape(x)\nbsz = Gather <axis = 0> (xs, i0)\ntgt = Gather <axis = 0> (xs, i1)\n"
      "bsz1 = Unsqueeze(bsz, ax0)\ntgt1 = Unsqueeze(tgt, ax0)\n"
      "hshape = Concat <axis = 0> (bsz1, tgt1, cm1, cH)\n";
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p);
    body += n + "4 = Reshape(" + n + "_lin, hshape)\n" + n +
            "h = Transpose <perm = [0, 2, 1, 3]> (" + n + "4)\n";
  }
  body +=
      "present_k = Concat <axis = 2> (past_k, kh)\npresent_v = Concat <axis = 2> (past_v, vh)\n"
      "kt = Transpose <perm = [0, 1, 3, 2]> (present_k)\ns0 = MatMul(qh, kt)\n"
      "s1 = Mul(s0, scale)\nks = Shape(present_k)\nkl = Gather <axis = 0> (ks, i2)\n"
      "kl1 = Unsqueeze(kl, ax0)\ncm = Slice(mask, z, kl1, ax3)\ns2 = Add(s1, cm)\n"
      "p = Softmax <axis = -1> (s2)\no = MatMul(p, present_v)\n"
      "ot = Transpose <perm = [0, 2, 1, 3]> (o)\noshape = Concat <axis = 0> (bsz1, tgt1, cm1)\n"
      "o3 = Reshape(ot, oshape)\no_mm = MatMul(o3, wo)\ny = Add(o_mm, bo)\n";
  const std::string text =
      "<ir_version: 7, opset_import: [\"\" : 14]>\n"
      "g (float[B, S, 8] x, float[B, 1, S, M] mask, float[B, 2, P, 4] past_k, "
      "float[B, 2, P, 4] past_v) => (float[B, S, 8] y, float[B, 2, T, 4] present_k, "
      "float[B, 2, T, 4] present_v)\n<" +
      inits + ">\n{\n" + body + "}\n";
  onnx::ModelProto model;
  const Ops ops = fuse(text, &model);  // saving it checks it is acyclic
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
      << ::testing::PrintToString(ops);
  const testing::OracleVerdict v = testing::compareInOrt(testing::parseModel(text), model,
                                                         {"B=2", "S=3", "P=4", "T=7", "M=9"}, "");
  EXPECT_TRUE(v.equal) << v.report;
}

// The new heads in front of the cache: not what MultiHeadAttention's present holds (the
// cache, then the new heads), so the Concats stay and the heads go in as K and V.
TEST(MultiHeadAttentionRule, KeepsACacheConcatenatedBehindTheNewHeads) {
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "run-time shapes" : "constant shapes");
    BatchedHeadsSpec spec = batchedHeads(dynamic);
    spec.past = true;
    spec.masks = 1;
    spec.mask_keys = "T";
    std::string text = batchedHeadsModel(spec);
    for (const char* n : {"k", "v"}) {
      const std::string cat = "(past_" + std::string(n) + ", " + n + "4t)";
      text.replace(text.find(cat), cat.size(), "(" + std::string(n) + "4t, past_" + n + ")");
    }
    onnx::ModelProto model;
    const Ops ops = fuse(text, &model);
    for (const auto& n : model.graph().node()) {
      if (n.output(0) == "present_k" || n.output(0) == "present_v") {
        EXPECT_EQ(n.op_type(), "Concat") << n.output(0);
      }
    }
    EXPECT_LE(nodeOf(model, "com.microsoft::MultiHeadAttention").input_size(), 6) << "no past_key";
    expectStepSameInOrt(text, model, dynamic);
  }
}

// ---- ONNX Attention (opset 23) ----------------------------------------------------------

/// The domain of the first node of `op_type` in `model`.
std::string domainOf(const onnx::ModelProto& model, const std::string& op_type) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == op_type) return n.domain();
  return "<none>";
}

TEST(OnnxAttentionRule, FusesBertIntoOnnxAttentionAtOpset23) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) { s.opset = 23; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model),
            concat({kBertProjections, kRaisedLowest, kBiasShape, {"Expand", "Attention"}}))
      << "not packed: the standard op is preferred";
  EXPECT_EQ(domainOf(model, "Attention"), "");
  EXPECT_EQ(intAttribute(model, "Attention", "q_num_heads"), 2);
  EXPECT_EQ(intAttribute(model, "Attention", "kv_num_heads"), 2);
  EXPECT_FLOAT_EQ(floatAttribute(model, "Attention", "scale"), 0.5f);
  expectSameInOrt(text);
}

// ONNX Runtime's Attention (opset 23) gives 0 on a query row whose scores all end at float's
// lowest, where Softmax averages the values: the mask goes in with lowest raised to the next
// float. attention_mask 0:1 pads every key, so every row is such a row.
TEST(OnnxAttentionRule, AveragesARowWithEveryKeyPaddedAsSoftmaxDoes) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 23;
    s.mask = Mask::kPadding;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({kBertProjections,
                                        {"Unsqueeze", "Unsqueeze", "Cast", "Sub", "Mul"},
                                        kRaisedLowest,
                                        kBiasShape,
                                        {"Expand", "Attention"}}));
  for (const char* padding : {"0:1", "0:2 --runs 4"}) {
    testing::OracleVerdict v =
        testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5"},
                              std::string("--int-range attention_mask=") + padding);
    EXPECT_TRUE(v.equal) << padding << ": " << v.report;
  }
}

/// `text` with its float input `name` read from an int64 input `name`_ids by a Cast, so
/// that the oracle can draw it from an integer range (0:1, all zeros).
std::string fedByIntegers(std::string text, const std::string& name) {
  const std::string input = "float[B, S] " + name, first_read = "Equal(" + name + ",";
  text.replace(text.find(input), input.size(), "int64[B, S] " + name + "_ids");
  const size_t line = text.rfind('\n', text.find(first_read)) + 1;
  text.insert(line, name + " = Cast <to = 1> (" + name + "_ids)\n");
  return text;
}

TEST(OnnxAttentionRule, AveragesARowWithEveryKeyMaskedFilledAsSoftmaxDoes) {
  const std::string text =
      fedByIntegers(attentionModel(distilBert([](AttentionSpec& s) { s.opset = 23; })), "mask");
  onnx::ModelProto model;
  fuse(text, &model);
  ASSERT_EQ(testing::opTypes(model).back(), "Attention");
  for (const char* padding : {"0:1", "0:2 --runs 4"}) {
    testing::OracleVerdict v =
        testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5"},
                              std::string("--int-range mask_ids=") + padding);
    EXPECT_TRUE(v.equal) << padding << ": " << v.report;
  }
}

// Below opset 23 the targets add the mask as Softmax does: it goes in as it is.
TEST(MultiHeadAttentionRule, TakesTheMaskAsItIsBelowOpset23) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 22;
    s.mask = Mask::kPadding;
  }));
  onnx::ModelProto model;
  const Ops ops = fuseOnly(text, kMhaOnly, &model);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Equal"), 0) << ::testing::PrintToString(ops);
  EXPECT_EQ(ops.back(), "com.microsoft::MultiHeadAttention");
  testing::OracleVerdict v = testing::compareInOrt(testing::parseModel(text), model, {"B=2", "S=5"},
                                                   "--int-range attention_mask=0:1");
  EXPECT_TRUE(v.equal) << v.report;
}

TEST(OnnxAttentionRule, PassesGpt2sCausalSliceAsABooleanMask) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 23;
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausal;
  }));
  EXPECT_EQ(fuse(text),
            concat({kGpt2Projection, {"Shape", "Slice", "Sub", "Slice", "Slice", "Attention"}}));
  expectSameInOrt(text);
}

TEST(OnnxAttentionRule, FusesCausalAndPaddingMasks) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 23;
    s.projection = AttentionSpec::Projection::kSplit;
    s.mask = Mask::kCausalAdd;
  }));
  EXPECT_EQ(fuse(text), concat({kGpt2Projection,
                                {"Shape", "Slice", "Sub", "Slice", "Slice", "Where"},
                                kRaisedLowest,
                                {"Add", "Attention"}}));
  expectSameInOrt(text);
}

TEST(OnnxAttentionRule, FusesWhisperWithoutMask) {
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.opset = 23;
    s.scale = Scale::kQAndK;
    s.mask = Mask::kNone;
  }));
  EXPECT_EQ(fuse(text), concat({kBertProjections, {"Attention"}}));
  expectSameInOrt(text);
}

// ---- After RotaryEmbedding: LLaMA, Phi ---------------------------------------------------
//
// The rotary rules (95, 94) fuse the rotate-half RoPE of the Q and K heads first; the
// attention rules then take the core. Below opset 23, MultiHeadAttention gets the 3-D q
// with its RotaryEmbedding moved in front of the head split and K, V as [B, N, L, H]
// heads (repeat_kv stays for grouped K/V heads); from 23, ONNX Attention replaces the
// core on the heads and repeat_kv goes.

using testing::ropeAttentionModel;
using testing::RopeAttentionSpec;
using RopeMask = RopeAttentionSpec::Mask;

RopeAttentionSpec ropeSpec(void (*edit)(RopeAttentionSpec&) = nullptr) {
  RopeAttentionSpec s;
  if (edit) edit(s);
  return s;
}

const std::vector<std::string> kRopeDims = {"B=2", "S=5"};

/// The op list after the rotary rules alone: what a negative must leave (the attention
/// rules' matches need the rotary rules' output, so they cannot be tested apart).
Ops rotaryOnly(const std::string& text) { return fuseOnly(text, "^rotary"); }

void expectRopeAttentionUnfused(const std::string& text) {
  EXPECT_EQ(fuseOnly(text, "^rotary|attention"), rotaryOnly(text));
}

/// What stays of a LLaMA block below opset 23 once MultiHeadAttention took the core: the
/// projections, K's and V's head splits, K's RotaryEmbedding on the heads, and (`repeat`)
/// repeat_kv of K and V.
Ops llamaKept(bool repeat) {
  Ops ops = {"MatMul", "MatMul",  "Reshape",   "Transpose",
             "MatMul", "Reshape", "Transpose", "com.microsoft::RotaryEmbedding"};
  if (repeat)
    ops.insert(ops.end(), {"Unsqueeze", "Expand", "Reshape", "Unsqueeze", "Expand", "Reshape"});
  return ops;
}

int64_t intOf(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* a = testing::attribute(node, name);
  return a ? a->i() : -1;
}

TEST(MultiHeadAttentionRotaryRule, FusesLlamaTorchScriptWithGroupedKvHeads) {
  const std::string text =
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.kv_heads = 1; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({llamaKept(true),
                                        {"com.microsoft::RotaryEmbedding"},
                                        kBiasShape,
                                        {"Expand", "com.microsoft::MultiHeadAttention"}}));
  const onnx::NodeProto& mha = nodeOf(model, "com.microsoft::MultiHeadAttention");
  EXPECT_EQ(intOf(mha, "num_heads"), 2);
  EXPECT_FLOAT_EQ(testing::attribute(mha, "scale")->f(), 0.5f);
  EXPECT_EQ(mha.input(1), "krep") << "K as [B, N, L, H] heads, repeated";
  EXPECT_EQ(mha.input(2), "vrep");
  // The query's RotaryEmbedding now works on the 3-D projection, split by num_heads.
  const onnx::NodeProto& rope = model.graph().node(14);
  ASSERT_EQ(rope.op_type(), "RotaryEmbedding");
  EXPECT_EQ(rope.input(0), "qm");
  EXPECT_EQ(rope.input(1), "pos");
  EXPECT_EQ(intOf(rope, "num_heads"), 2);
  EXPECT_EQ(mha.input(0), rope.output(0));
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, FusesEqualHeadCountsWithoutMask) {
  const std::string text =
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kNone; }));
  EXPECT_EQ(fuse(text),
            concat({llamaKept(false),
                    {"com.microsoft::RotaryEmbedding", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, FusesDynamoScaleOnQAndKWithACausalWhere) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 18;
    s.dynamo = true;
    s.kv_heads = 1;
    s.mask = RopeMask::kCausal;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({llamaKept(true),
                                        {"com.microsoft::RotaryEmbedding", "Where"},
                                        kBiasShape,
                                        {"Expand", "com.microsoft::MultiHeadAttention"}}));
  EXPECT_FLOAT_EQ(
      testing::attribute(nodeOf(model, "com.microsoft::MultiHeadAttention"), "scale")->f(), 0.5f);
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, FusesPhiPartialRotaryTorchScript) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.partial = true;
    s.bias = true;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(
      fuse(text, &model),
      Ops({"MatMul", "Add", "MatMul", "Add", "Reshape", "Transpose", "MatMul", "Add", "Reshape",
           "Transpose", "com.microsoft::RotaryEmbedding", "com.microsoft::RotaryEmbedding", "Shape",
           "Slice", "Shape", "Slice", "Concat", "Expand", "com.microsoft::MultiHeadAttention"}));
  const onnx::NodeProto& rope = model.graph().node(11);
  EXPECT_EQ(rope.input(0), "qa");
  EXPECT_EQ(intOf(rope, "rotary_embedding_dim"), 2) << "Phi's partial rotary carried over";
  EXPECT_EQ(intOf(rope, "num_heads"), 2);
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, FusesPhiPartialRotaryDynamo) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 18;
    s.dynamo = true;
    s.partial = true;
    s.bias = true;
  }));
  EXPECT_EQ(fuse(text), Ops({"MatMul", "Add", "MatMul", "Add", "Reshape", "Transpose", "MatMul",
                             "Add", "Reshape", "Transpose", "com.microsoft::RotaryEmbedding",
                             "com.microsoft::RotaryEmbedding", "Shape", "Slice", "Shape", "Slice",
                             "Concat", "Expand", "com.microsoft::MultiHeadAttention"}));
  expectSameInOrt(text);
}

// ---- ONNX Attention on heads (opset 23) ---------------------------------------------------

/// A LLaMA block at opset 23 after the rules: projections, head splits, both
/// RotaryEmbeddings, then (after Attention) the merge of the heads.
const Ops kLlama23Heads = {"MatMul",    "Reshape",         "Transpose",      "MatMul",
                           "Reshape",   "Transpose",       "MatMul",         "Reshape",
                           "Transpose", "RotaryEmbedding", "RotaryEmbedding"};

TEST(AttentionHeadsRule, FusesGroupedKvHeadsWithoutRepeatKv) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.kv_heads = 1;
    s.opset = 23;
    s.dynamo = true;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({kLlama23Heads,
                                        kRaisedLowest,
                                        kBiasShape,
                                        {"Expand", "Attention", "Transpose", "Reshape"}}))
      << "repeat_kv dropped: Attention repeats the one K/V head itself";
  const onnx::NodeProto& attention = nodeOf(model, "Attention");
  EXPECT_EQ(attention.input(0), nodeOf(model, "RotaryEmbedding").output(0));
  EXPECT_EQ(attention.input(2), "vh") << "V's one head, not its repeat";
  EXPECT_FLOAT_EQ(testing::attribute(attention, "scale")->f(), 0.5f);
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, FusesTorchScriptFormWithoutMask) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.mask = RopeMask::kNone;
  }));
  EXPECT_EQ(fuse(text), concat({kLlama23Heads, {"Attention", "Transpose", "Reshape"}}));
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, PassesACausalWhereAsABooleanMask) {
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.kv_heads = 1;
    s.mask = RopeMask::kCausal;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({kLlama23Heads, {"Attention", "Transpose", "Reshape"}}));
  EXPECT_EQ(nodeOf(model, "Attention").input(3), "causal");
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, TakesARepeatItCannotReadAsPlainHeads) {
  // Unsqueeze at 1 instead of repeat_kv's 2 (the same copies for one K/V head, but not the
  // pattern): the repeated K and V go in as two heads each, exact but not grouped.
  const std::string text = ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.kv_heads = 1;
    s.opset = 23;
    s.repeat_axis = "1";
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model),
            concat({kLlama23Heads,
                    {"Unsqueeze", "Expand", "Reshape", "Unsqueeze", "Expand", "Reshape"},
                    kRaisedLowest,
                    kBiasShape,
                    {"Expand", "Attention", "Transpose", "Reshape"}}));
  EXPECT_EQ(nodeOf(model, "Attention").input(2), "vrep");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseVNotTransposedToHeads) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.v_perm = "0, 2, 3, 1"; })));
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseKTransposedOtherwise) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.kt_perm = "0, 2, 1, 3"; })));
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseHeadsMergedInAnotherOrder) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.out_perm = "0, 2, 3, 1"; })));
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseSoftmaxOverAnotherAxis) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.softmax_axis = "2"; })));
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseANonConstantScale) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.scale_is_input = true; })));
}

TEST(MultiHeadAttentionRotaryRule, DoesNotFuseScoresUsedOutside) {
  expectRopeAttentionUnfused(
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.leak_scores = true; })));
}

TEST(MultiHeadAttentionRotaryRule, LeavesAQueryWithoutRotaryToTheGivenKeyHeads) {
  // K rotated, Q not: no RotaryEmbedding on the query heads to move in front of MHA. The
  // rotated K heads are then MHA's key as given ([B, N, L, H]), Q stays the 3-D projection.
  const std::string text =
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.rotate_k_only = true; }));
  onnx::ModelProto model;
  EXPECT_EQ(
      fuse(text, &model),
      concat({llamaKept(false), kBiasShape, {"Expand", "com.microsoft::MultiHeadAttention"}}));
  const onnx::NodeProto& mha = nodeOf(model, "com.microsoft::MultiHeadAttention");
  EXPECT_EQ(mha.input(0), "qm") << "the query's projection, not rotated";
  EXPECT_EQ(mha.input(1), nodeOf(model, "com.microsoft::RotaryEmbedding").output(0));
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, DoesNotFuseSoftmaxOverAnotherAxis) {
  expectRopeAttentionUnfused(ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.kv_heads = 1;
    s.opset = 23;
    s.softmax_axis = "2";
  })));
}

TEST(AttentionHeadsRule, DoesNotFuseScoresUsedOutside) {
  expectRopeAttentionUnfused(ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.leak_scores = true;
  })));
}

TEST(AttentionHeadsRule, DoesNotFuseANonConstantScale) {
  expectRopeAttentionUnfused(ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.scale_is_input = true;
  })));
}

// ---- GroupQueryAttention: LLaMA with grouped K/V heads ------------------------------------

/// A LLaMA block GroupQueryAttention can take: one K/V head for two Q heads of 8.
RopeAttentionSpec gqaSpec(void (*edit)(RopeAttentionSpec&) = nullptr) {
  RopeAttentionSpec s;
  s.kv_heads = 1;
  s.head_size = 8;
  s.repeat_shapes_from_heads = true;
  if (edit) edit(s);
  return s;
}

/// What a GroupQueryAttention rewrite leaves: the three projections, Q's and K's
/// RotaryEmbedding on them, seqlens_k = S - 1 per batch entry and total_sequence_length = S
/// (int32) computed from q's shape.
Ops gqaKept() {
  return {"MatMul",
          "MatMul",
          "MatMul",
          "com.microsoft::RotaryEmbedding",
          "com.microsoft::RotaryEmbedding",
          "Shape",
          "Slice",
          "Sub",
          "Slice",
          "Expand",
          "Cast",
          "Squeeze",
          "Cast"};
}

TEST(GroupQueryAttentionRule, FusesLlamaTorchScriptWithAnAdditiveMask) {
  const std::string text = ropeAttentionModel(gqaSpec());
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model),
            concat({gqaKept(), {"Concat", "Expand", "com.microsoft::GroupQueryAttention"}}));
  const onnx::NodeProto& gqa = nodeOf(model, "com.microsoft::GroupQueryAttention");
  EXPECT_EQ(intOf(gqa, "num_heads"), 2);
  EXPECT_EQ(intOf(gqa, "kv_num_heads"), 1) << "the K/V heads before repeat_kv";
  EXPECT_EQ(intOf(gqa, "causal"), 0) << "the mask is attention_bias, not assumed causal";
  EXPECT_NEAR(testing::attribute(gqa, "scale")->f(), 0.35355339f, 1e-6);
  ASSERT_EQ(gqa.input_size(), 11);
  EXPECT_EQ(gqa.input(0), model.graph().node(3).output(0)) << "Q's RotaryEmbedding";
  EXPECT_EQ(gqa.input(1), model.graph().node(4).output(0)) << "K's RotaryEmbedding";
  EXPECT_EQ(gqa.input(2), "vm") << "the 3-D V projection";
  EXPECT_EQ(intOf(model.graph().node(4), "num_heads"), 1) << "K is split into its own heads";
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, FusesSdpaIsCausalAsItsOwnCausalMask) {
  const std::string text = ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) {
    s.opset = 18;
    s.dynamo = true;
    s.mask = RopeMask::kSdpaCausal;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({gqaKept(), {"com.microsoft::GroupQueryAttention"}}));
  const onnx::NodeProto& gqa = nodeOf(model, "com.microsoft::GroupQueryAttention");
  EXPECT_EQ(intOf(gqa, "causal"), 1);
  EXPECT_EQ(gqa.input_size(), 7) << "no attention_bias";
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, FusesWithoutMask) {
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kNone; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model), concat({gqaKept(), {"com.microsoft::GroupQueryAttention"}}));
  EXPECT_EQ(intOf(nodeOf(model, "com.microsoft::GroupQueryAttention"), "causal"), 0);
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, FusesACausalWhere) {
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kCausal; }));
  EXPECT_EQ(
      fuse(text),
      concat({gqaKept(), {"Where", "Concat", "Expand", "com.microsoft::GroupQueryAttention"}}));
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, FusesMaskedFill) {
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kMaskedFill; }));
  onnx::ModelProto model;
  EXPECT_EQ(
      fuse(text, &model),
      concat({gqaKept(), {"Where", "Concat", "Expand", "com.microsoft::GroupQueryAttention"}}));
  EXPECT_EQ(intOf(nodeOf(model, "com.microsoft::GroupQueryAttention"), "causal"), 0);
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRotaryRule, FusesMaskedFill) {
  const std::string text =
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kMaskedFill; }));
  EXPECT_EQ(fuse(text), concat({llamaKept(false),
                                {"com.microsoft::RotaryEmbedding", "Where"},
                                kBiasShape,
                                {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, FusesMaskedFill) {
  const std::string text = ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.mask = RopeMask::kMaskedFill;
  }));
  // The bias shape's first Shape is one the mask already took (createNode reuses it).
  EXPECT_EQ(fuse(text), concat({kLlama23Heads,
                                {"Shape"},
                                kRaisedLowest,
                                {"Where", "Shape", "Slice", "Slice", "Concat"},
                                {"Expand", "Attention", "Transpose", "Reshape"}}));
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, FusesDynamoRepeatShapes) {
  const std::string text = ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) {
    s.opset = 18;
    s.dynamo = true;
  }));
  EXPECT_EQ(fuse(text),
            concat({gqaKept(), {"Concat", "Expand", "com.microsoft::GroupQueryAttention"}}));
  expectSameInOrt(text);
}

/// The ops of a grouped LLaMA block that MultiHeadAttention took instead: K's rotary and
/// TorchScript's repeat_kv (shapes read from the heads) stay.
Ops mhaWithRepeat(bool k_rotary) {
  Ops ops = {"MatMul", "MatMul", "Reshape", "Transpose", "MatMul", "Reshape", "Transpose"};
  if (k_rotary) ops.push_back("com.microsoft::RotaryEmbedding");
  const Ops repeat = {"Shape",  "Gather", "Unsqueeze", "Shape",  "Gather", "Unsqueeze",
                      "Concat", "Concat", "Unsqueeze", "Expand", "Reshape"};
  for (int i = 0; i < 2; ++i) ops.insert(ops.end(), repeat.begin(), repeat.end());
  return concat({ops,
                 {"com.microsoft::RotaryEmbedding"},
                 kBiasShape,
                 {"Expand", "com.microsoft::MultiHeadAttention"}});
}

TEST(GroupQueryAttentionRule, LeavesHeadSizesItsKernelRejectsToMultiHeadAttention) {
  // ONNX Runtime's GroupQueryAttention fails at run time unless the head size is a multiple
  // of 8: heads of 4 go to MultiHeadAttention with the repeated K/V heads.
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.head_size = 4; }));
  EXPECT_EQ(fuse(text), mhaWithRepeat(true));
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, LeavesEqualHeadCountsToMultiHeadAttention) {
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.kv_heads = 2; }));
  EXPECT_EQ(fuse(text), concat({llamaKept(false),
                                {"com.microsoft::RotaryEmbedding"},
                                kBiasShape,
                                {"Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, LeavesAnUnrotatedKeyToMultiHeadAttention) {
  const std::string text =
      ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) { s.rotate_q_only = true; }));
  EXPECT_EQ(fuse(text), mhaWithRepeat(false));
  expectSameInOrt(text);
}

TEST(GroupQueryAttentionRule, DoesNotFuseAnUpperTriangleAsCausal) {
  // Trilu(upper=1) keeps the future: not SDPA's causal mask, and its Shape readers of the
  // Q heads keep every attention rule off.
  expectRopeAttentionUnfused(ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) {
    s.mask = RopeMask::kSdpaCausal;
    s.tril_upper = "1";
  })));
}

/// SDPA's causal mask rebuilt from the lengths of q and k: [S, L] ones, Trilu, Equal 0,
/// Where(-inf, 0).
const Ops kCausalRebuilt = {"Shape",  "Slice", "Shape", "Slice", "Concat",
                            "Expand", "Trilu", "Equal", "Where"};

TEST(MultiHeadAttentionRotaryRule, FusesSdpaIsCausal) {
  const std::string text =
      ropeAttentionModel(ropeSpec([](RopeAttentionSpec& s) { s.mask = RopeMask::kSdpaCausal; }));
  EXPECT_EQ(fuse(text), concat({llamaKept(false),
                                {"com.microsoft::RotaryEmbedding"},
                                kCausalRebuilt,
                                {"Concat", "Expand", "com.microsoft::MultiHeadAttention"}}));
  expectSameInOrt(text);
}

TEST(AttentionHeadsRule, FusesSdpaIsCausal) {
  const std::string text = ropeAttentionModel(gqaSpec([](RopeAttentionSpec& s) {
    s.opset = 23;
    s.dynamo = true;
    s.mask = RopeMask::kSdpaCausal;
  }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model),
            concat({kLlama23Heads, kCausalRebuilt, {"Attention", "Transpose", "Reshape"}}))
      << "repeat_kv and its shape computations are gone";
  EXPECT_EQ(nodeOf(model, "Attention").input(2), "vh");
  expectSameInOrt(text);
}

// ---- MultiHeadAttention: negatives --------------------------------------------------------

const char* kAttentionRules = "attention";

TEST(MultiHeadAttentionRule, DoesNotFuseACausalFillThatSoftmaxDoesNotZero) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) {
                    s.projection = AttentionSpec::Projection::kSplit;
                    s.mask = Mask::kCausal;
                    s.fill = "-100.0";
                  })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseSoftmaxOverAnotherAxis) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.softmax_axis = "2"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseANonConstantScale) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.scale_is_input = true; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseScoresUsedOutside) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.leak_scores = true; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseQAndKWithDifferentHeadCounts) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.k_shape = "0, 0, 4, 2"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, FusesAHeadSplitWithAnInferredDim) {
  // [0, -1, 2, 4]: the Reshape keeps the number of elements, so -1 can only be S.
  const std::string text = attentionModel(spec([](AttentionSpec& s) {
    s.q_shape = "0, -1, 2, 4";
    s.k_shape = "0, -1, 2, 4";
  }));
  EXPECT_EQ(fuse(text).back(), "com.microsoft::Attention");
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionRule, FusesAMergeWhoseOneUncheckedDimTheOthersForce) {
  // The merge reads dims 0 and 1 of the mask [B, 1, 1, S]: dim 1 is not the sequence, but
  // wherever the model runs the Reshape keeps B * S * 8 elements, so it is S (S = 1).
  std::string text = attentionModel(
      spec([](AttentionSpec& s) { s.shapes = AttentionSpec::Shapes::kTorchScript; }));
  for (const std::string from : {"x_b_s = Shape(x)", "x_t_s = Shape(x)"}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, from.size(), from.substr(0, from.size() - 2) + "mask)");
  }
  EXPECT_EQ(fuse(text).back(), "com.microsoft::Attention");
}

TEST(MultiHeadAttentionRule, DoesNotFuseAMergeWithTwoDimsLeftOpen) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.out_shape = "-1, -1, 8"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseHeadsMergedInAnotherOrder) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.out_perm = "0, 2, 3, 1"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseVNotTransposedToHeads) {
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.v_perm = "0, 2, 3, 1"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionRule, DoesNotFuseBelowOpset9) {
  // The rules require opset 9 (Where); below, nothing is tried.
  expectUnchanged(attentionModel(spec([](AttentionSpec& s) { s.opset = 8; })), kAttentionRules);
}

// ---- multi_head_attention_einsum: tf2onnx's Keras MultiHeadAttention ------------------

EinsumAttentionSpec einsumSpec(void (*edit)(EinsumAttentionSpec&) = nullptr) {
  EinsumAttentionSpec s;
  if (edit) edit(s);
  return s;
}

TEST(MultiHeadAttentionEinsumRule, FusesTf2OnnxKerasAttentionWithMask) {
  const std::string text = testing::einsumAttentionModel(einsumSpec());
  onnx::ModelProto model;
  const Ops ops = fuse(text, &model);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1)
      << ::testing::PrintToString(ops);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Softmax"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Einsum"), 4) << "3 projections and the output's";
  const onnx::NodeProto& mha = nodeOf(model, "com.microsoft::MultiHeadAttention");
  EXPECT_EQ(intOf(mha, "num_heads"), 2);
  EXPECT_FLOAT_EQ(testing::attribute(mha, "scale")->f(), 0.5f);
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionEinsumRule, FusesWithoutMaskAtOpset17) {
  const std::string text = testing::einsumAttentionModel(einsumSpec([](EinsumAttentionSpec& s) {
    s.mask = false;
    s.opset = 17;
  }));
  const Ops ops = fuse(text);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::MultiHeadAttention"), 1);
  expectSameInOrt(text);
}

TEST(MultiHeadAttentionEinsumRule, DoesNotFuseScoresOfAnotherEquation) {
  // The query's positions as the last axis: Softmax would then run over the queries.
  expectUnchanged(testing::einsumAttentionModel(einsumSpec(
                      [](EinsumAttentionSpec& s) { s.scores_equation = "abcd,aecd->acbe"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionEinsumRule, DoesNotFuseSoftmaxOverAnotherAxis) {
  expectUnchanged(testing::einsumAttentionModel(
                      einsumSpec([](EinsumAttentionSpec& s) { s.softmax_axis = "2"; })),
                  kAttentionRules);
}

TEST(MultiHeadAttentionEinsumRule, DoesNotFuseANonConstantScale) {
  expectUnchanged(testing::einsumAttentionModel(
                      einsumSpec([](EinsumAttentionSpec& s) { s.scale_is_input = true; })),
                  kAttentionRules);
}

}  // namespace
}  // namespace onnx_rewrite
