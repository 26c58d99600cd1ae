//===- Gpt2PastAttentionTest.cc - attention on cached K/V heads ----------===//
//
// GPT-2 attention with past as torch.onnx exports transformers 2.x-3.x and 4.x with a
// stacked cache (tests/support/Gpt2PastModels.h):
// - attention_past (rules/attention.yaml) makes the whole block, present included, one
//   com.microsoft.Attention with past and present;
// - without it (--skip), multi_head_attention_kv_given and multi_head_attention_past make
//   the core MultiHeadAttention on the concatenated K/V heads and the present output keeps
//   being computed: those rules also serve separate key/value caches (WholeModelTest).
// Both must compute the same as the original in ONNX Runtime. Each negative breaks one
// condition and must come out unchanged.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/Gpt2PastModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::fuse;
using testing::gpt2PastModel;
using testing::Gpt2PastSpec;
using Ops = std::vector<std::string>;

Gpt2PastSpec spec(void (*edit)(Gpt2PastSpec&) = nullptr) {
  Gpt2PastSpec s;
  if (edit) edit(s);
  return s;
}

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

/// Runs `before` and `after` in ONNX Runtime with a past of 4 and 3 new tokens (or 1).
void expectSameInOrt(const Gpt2PastSpec& model_spec, const std::string& text,
                     const onnx::ModelProto& after) {
  const onnx::ModelProto before = testing::parseModel(text);
  testing::OracleVerdict verdict = testing::compareInOrt(
      before, after,
      model_spec.one_token ? std::vector<std::string>{"B=2", "P=4", "T=5"}
                           : std::vector<std::string>{"B=2", "S=3", "P=4", "T=7"});
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

/// attention_past: the block becomes one Attention with past whose present is the graph's
/// present (the stack is gone), with no scores, causal slice or K/V Concat left.
void expectAttentionWithPast(const Gpt2PastSpec& model_spec) {
  const std::string text = gpt2PastModel(model_spec);
  onnx::ModelProto after;
  const Ops ops = fuse(text, &after);
  EXPECT_EQ(count(ops, "com.microsoft::Attention"), 1u) << ::testing::PrintToString(ops);
  for (const char* gone : {"Softmax", "Where", "Split", "MatMul", "Transpose"})
    EXPECT_EQ(count(ops, gone), 0u) << gone << " in " << ::testing::PrintToString(ops);
  // The position ids' Unsqueeze stays (the embedding Gather reads it).
  EXPECT_EQ(count(ops, "Unsqueeze"), model_spec.position_embedding ? 1u : 0u)
      << ::testing::PrintToString(ops);
  for (const auto& n : after.graph().node()) {
    if (n.op_type() != "Attention") continue;
    ASSERT_EQ(n.output_size(), 2);
    EXPECT_EQ(n.output(1), "present") << "the present output is Attention's own";
    EXPECT_EQ(n.input(4), "past");
  }
  expectSameInOrt(model_spec, text, after);
}

/// The rules after attention_past: the core becomes one MultiHeadAttention, without Softmax
/// or scores left, and the present's stack stays.
void expectFusedAndSame(const Gpt2PastSpec& model_spec) {
  const std::string text = gpt2PastModel(model_spec);
  onnx::ModelProto after;
  Options options;
  options.filter.skip = "^attention_past$";
  const Ops ops = fuse(text, &after, nullptr, options);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "Softmax"), 0u);
  EXPECT_EQ(count(ops, "Where"), 1u) << "the causal slice becomes an additive bias";
  // The stack of K and V for present stays (Unsqueeze, Unsqueeze, Concat), and so does the
  // padding mask's [B, 1, 1, T] (two Unsqueezes).
  // The position ids' Unsqueeze stays too (the embedding Gather reads it).
  EXPECT_EQ(count(ops, "Unsqueeze"),
            (model_spec.padding_mask ? 4u : 2u) + (model_spec.position_embedding ? 1u : 0u))
      << ::testing::PrintToString(ops);
  expectSameInOrt(model_spec, text, after);
}

/// Both: attention_past's result on the model without its padding mask (ONNX Runtime's
/// Attention takes no attention_bias with past), and the MultiHeadAttention rules' on the
/// model as it is.
void expectBothFusedAndSame(const Gpt2PastSpec& model_spec) {
  Gpt2PastSpec unpadded = model_spec;
  unpadded.padding_mask = false;
  expectAttentionWithPast(unpadded);
  expectFusedAndSame(model_spec);
}

TEST(MultiHeadAttentionKvGivenRule, FusesGpt2WithTransposedKCacheAtOpset11) {
  expectBothFusedAndSame(spec());
}

TEST(MultiHeadAttentionKvGivenRule, FusesGpt2WithKCacheAsHeads) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.k_cached_transposed = false; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesOpset13ParametersAsInputs) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.opset = 13; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesWithoutPaddingMask) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.padding_mask = false; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesAUint8CausalBuffer) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.tril_type = "uint8"; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesABoolCausalBuffer) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.tril_type = "bool"; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesTheMergeShapeReadFromTheContext) {
  // torch 1.x writes a.view(a.size(0), a.size(1), a.size(-2) * a.size(-1)): the Shape
  // chain reads the context heads, but what it computes is their own dims (a 0 spelled
  // out), and it goes with the match since it feeds only the merge.
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) { s.merge_shape_computed = true; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesOneTokenStepWithPositionEmbeddings) {
  // PyTorch 1.6's GPT-2 decoding graph: one new token, positions Range(P, P + 1) read from
  // a 16-row embedding, the merge shape computed.
  expectBothFusedAndSame(spec([](Gpt2PastSpec& s) {
    s.one_token = true;
    s.position_embedding = true;
    s.merge_shape_computed = true;
  }));
}

TEST(MultiHeadAttentionKvGivenRule, LeavesNoTransposePairForKTransposedAfterTheConcat) {
  // K given as Transpose(kc): the rewrite's Transpose back is folded by transpose_pair.
  Options options;
  options.filter.skip = "^attention_past$";
  const Ops ops = fuse(gpt2PastModel(spec([](Gpt2PastSpec& s) { s.k_cached_transposed = false; })),
                       nullptr, nullptr, options);
  EXPECT_EQ(count(ops, "Transpose"), 2u)
      << "Q's head split and V's; " << ::testing::PrintToString(ops);
}

TEST(MultiHeadAttentionKvGivenRule, DoesNotFuseACausalSliceNotEndingAtTheLastRow) {
  // bias[:, :, 0:ns, :ns] is not the causal mask of the last nd rows once there is a past.
  testing::expectUnchanged(gpt2PastModel(spec([](Gpt2PastSpec& s) { s.rows_start = "zero"; })),
                           "attention");
}

TEST(MultiHeadAttentionKvGivenRule, DoesNotFuseAFillThatSoftmaxDoesNotZero) {
  testing::expectUnchanged(gpt2PastModel(spec([](Gpt2PastSpec& s) { s.fill = "-100.0"; })),
                           "attention");
}

TEST(MultiHeadAttentionKvGivenRule, DoesNotFuseSoftmaxOverAnotherAxis) {
  testing::expectUnchanged(gpt2PastModel(spec([](Gpt2PastSpec& s) { s.softmax_axis = "2"; })),
                           "attention");
}

// ---- multi_head_attention_past: transformers 4.x, the slice by the heads' lengths ---------

/// transformers 4.x: K kept as heads, concatenated on axis -2, transposed for the scores.
Gpt2PastSpec spec4x(void (*edit)(Gpt2PastSpec&) = nullptr) {
  Gpt2PastSpec s;
  s.k_cached_transposed = false;
  s.causal_by_heads = true;
  s.opset = 13;
  if (edit) edit(s);
  return s;
}

TEST(MultiHeadAttentionPastRule, FusesGpt2Transformers4WithPast) {
  expectBothFusedAndSame(spec4x());
  // K goes in as the concatenated heads themselves: no Transpose is added.
  Options options;
  options.filter.skip = "^(attention_past|multi_head_attention_cache)$";
  const Ops ops = fuse(gpt2PastModel(spec4x()), nullptr, nullptr, options);
  EXPECT_EQ(count(ops, "Transpose"), 2u) << ::testing::PrintToString(ops);
}

// ---- multi_head_attention_cache: the cache as MultiHeadAttention's past ---------------------

TEST(MultiHeadAttentionCacheRule, GivesMultiHeadAttentionTheCacheAndTakesItsPresents) {
  // With a padding mask attention_past does not apply: K and V are concatenated behind the
  // halves of the stacked cache, which MultiHeadAttention takes as past_key/past_value.
  const Gpt2PastSpec s = spec4x();
  onnx::ModelProto after;
  const Ops ops = fuse(gpt2PastModel(s), &after);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "Transpose"), 0u) << "the heads stay 3-D: " << ::testing::PrintToString(ops);
  for (const auto& n : after.graph().node()) {
    if (n.op_type() != "MultiHeadAttention") continue;
    ASSERT_EQ(n.input_size(), 8);
    EXPECT_EQ(n.input(1), "k") << "the new K, 3-D";
    EXPECT_EQ(n.input(2), "v");
    EXPECT_EQ(n.input(6), "pk");
    EXPECT_EQ(n.input(7), "pv");
    ASSERT_EQ(n.output_size(), 3) << "present_key and present_value";
  }
  expectSameInOrt(s, gpt2PastModel(s), after);
}

TEST(MultiHeadAttentionCacheRule, DoesNotTakeACacheConcatenatedBehindTheNewHeads) {
  // Concat(new, cache): MultiHeadAttention's present is cache then new. The core still
  // fuses (multi_head_attention_past, on the concatenated heads), without the cache inputs.
  const Gpt2PastSpec s = spec4x([](Gpt2PastSpec& m) { m.new_heads_first = true; });
  onnx::ModelProto after;
  const Ops ops = fuse(gpt2PastModel(s), &after);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
  for (const auto& n : after.graph().node()) {
    if (n.op_type() == "MultiHeadAttention") {
      EXPECT_LE(n.input_size(), 6) << "no past inputs";
    }
  }
  expectSameInOrt(s, gpt2PastModel(s), after);
}

TEST(MultiHeadAttentionPastRule, FusesOpset11WithoutPaddingMask) {
  expectBothFusedAndSame(spec4x([](Gpt2PastSpec& s) {
    s.opset = 11;
    s.padding_mask = false;
  }));
}

TEST(MultiHeadAttentionPastRule, FusesABoolCausalBuffer) {
  expectBothFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.tril_type = "bool"; }));
}

// torch >= 1.13 reads query.size(-2) and key.size(-2) as a Gather of each Shape, of index 2
// when it knows the heads' rank (as whole-model GPT-2 exports with past do), else -2.
TEST(MultiHeadAttentionPastRule, FusesSizesReadByGatherOfIndex2) {
  expectBothFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.size_index = "2"; }));
}

TEST(MultiHeadAttentionPastRule, FusesSizesReadByGatherOfIndexMinus2AtOpset14) {
  expectBothFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.size_index = "-2", s.opset = 14; }));
}

TEST(MultiHeadAttentionPastRule, DoesNotFuseSizesGatheredFromAnotherDim) {
  // Index 3 reads the head size, not the lengths: not the causal slice of the scores.
  testing::expectUnchanged(gpt2PastModel(spec4x([](Gpt2PastSpec& s) { s.size_index = "3"; })),
                           "attention");
  testing::expectUnchanged(gpt2PastModel(spec4x([](Gpt2PastSpec& s) { s.size_index = "1"; })),
                           "attention");
}

TEST(MultiHeadAttentionPastRule, DoesNotFuseACausalSliceNotEndingAtTheLastRow) {
  testing::expectUnchanged(gpt2PastModel(spec4x([](Gpt2PastSpec& s) { s.rows_start = "zero"; })),
                           "attention");
}

TEST(MultiHeadAttentionPastRule, DoesNotFuseAFillThatSoftmaxDoesNotZero) {
  testing::expectUnchanged(gpt2PastModel(spec4x([](Gpt2PastSpec& s) { s.fill = "-100.0"; })),
                           "attention");
}

// ---- attention_past only -----------------------------------------------------------------

TEST(AttentionPastRule, FusesTheCacheSplitInHalves) {
  expectBothFusedAndSame(spec([](Gpt2PastSpec& m) { m.past_split = true; }));
  expectBothFusedAndSame(spec4x([](Gpt2PastSpec& m) { m.past_split = true; }));
  expectBothFusedAndSame(spec([](Gpt2PastSpec& m) { m.past_split = true, m.opset = 13; }));
}

TEST(MultiHeadAttentionKvGivenRule, LeavesAFillOfMinusTenThousandBeforeAPaddingMaskUnfused) {
  // transformers 2.x-3.x: masked_bias -1e4, then the padding mask's -1e4. A query row whose
  // kept keys are all padded (a left-padded prompt's padding token) spreads its weights
  // evenly over the filled keys in the model, by their scores in a fused op: not exact.
  const Ops ops = fuse(gpt2PastModel(spec([](Gpt2PastSpec& m) { m.fill = "-10000.0"; })));
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 0u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "com.microsoft::Attention"), 0u);
  EXPECT_EQ(count(ops, "Softmax"), 1u);
}

TEST(MultiHeadAttentionKvGivenRule, FusesAFillOfMinusTenThousandWithoutAPaddingMask) {
  // Without a mask after it every row keeps its diagonal key, which -1e4 leaves alone.
  expectFusedAndSame(spec([](Gpt2PastSpec& m) {
    m.fill = "-10000.0";
    m.padding_mask = false;
  }));
}

TEST(AttentionPastRule, LeavesAPaddingMaskToMultiHeadAttention) {
  // ONNX Runtime 1.30: "Attention cannot have both past and attention_bias"; its int32
  // mask_index would hold the additive mask only for binary masks.
  const Ops ops = fuse(gpt2PastModel(spec()));
  EXPECT_EQ(count(ops, "com.microsoft::Attention"), 0u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
}

TEST(AttentionPastRule, LeavesABufferThatIsNotTrilToMultiHeadAttention) {
  // One 1 above the diagonal: the slice is no causal mask, which unidirectional=1 would
  // apply. multi_head_attention_kv_given re-cuts the buffer itself, exact for any buffer.
  const Gpt2PastSpec s = spec([](Gpt2PastSpec& m) {
    m.tril_above_diagonal = true;
    m.padding_mask = false;
  });
  onnx::ModelProto after;
  const Ops ops = fuse(gpt2PastModel(s), &after);
  EXPECT_EQ(count(ops, "com.microsoft::Attention"), 0u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
  expectSameInOrt(s, gpt2PastModel(s), after);
}

TEST(AttentionPastRule, DoesNotTakeKFromTheValueHalfOfThePast) {
  // K concatenated behind past[1]: Attention's present would put it at 0.
  const Gpt2PastSpec s = spec([](Gpt2PastSpec& m) {
    m.past_k_index = "i1";
    m.padding_mask = false;
  });
  const Ops ops = fuse(gpt2PastModel(s));
  EXPECT_EQ(count(ops, "com.microsoft::Attention"), 0u) << ::testing::PrintToString(ops);
}

}  // namespace
}  // namespace onnx_rewrite
