//===- Gpt2PastAttentionTest.cc - attention on cached K/V heads ----------===//
//
// multi_head_attention_kv_given and multi_head_attention_past (rules/attention.yaml) on
// GPT-2 attention with past as torch.onnx exports transformers 2.x-3.x and 4.x
// (tests/support/Gpt2PastModels.h): the core
// becomes MultiHeadAttention on the concatenated K/V heads, the present output keeps
// being computed, and ONNX Runtime gives the same outputs. Each negative breaks one
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

/// The model fuses into one MultiHeadAttention, without Softmax or scores left, and
/// computes the same in ONNX Runtime with a past of 4 and 3 new tokens.
void expectFusedAndSame(const Gpt2PastSpec& model_spec) {
  const std::string text = gpt2PastModel(model_spec);
  onnx::ModelProto after;
  const Ops ops = fuse(text, &after);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 1u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "Softmax"), 0u);
  EXPECT_EQ(count(ops, "Where"), 1u) << "the causal slice becomes an additive bias";
  // The stack of K and V for present stays (Unsqueeze, Unsqueeze, Concat), and so does the
  // padding mask's [B, 1, 1, T] (two Unsqueezes).
  // The position ids' Unsqueeze stays too (the embedding Gather reads it).
  EXPECT_EQ(count(ops, "Unsqueeze"),
            (model_spec.padding_mask ? 4u : 2u) + (model_spec.position_embedding ? 1u : 0u))
      << ::testing::PrintToString(ops);
  const onnx::ModelProto before = testing::parseModel(text);
  testing::OracleVerdict verdict = testing::compareInOrt(
      before, after,
      model_spec.one_token ? std::vector<std::string>{"B=2", "P=4", "T=5"}
                           : std::vector<std::string>{"B=2", "S=3", "P=4", "T=7"});
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(MultiHeadAttentionKvGivenRule, FusesGpt2WithTransposedKCacheAtOpset11) {
  expectFusedAndSame(spec());
}

TEST(MultiHeadAttentionKvGivenRule, FusesGpt2WithKCacheAsHeads) {
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.k_cached_transposed = false; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesOpset13ParametersAsInputs) {
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.opset = 13; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesWithoutPaddingMask) {
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.padding_mask = false; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesAUint8CausalBuffer) {
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.tril_type = "uint8"; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesABoolCausalBuffer) {
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.tril_type = "bool"; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesTheMergeShapeReadFromTheContext) {
  // torch 1.x writes a.view(a.size(0), a.size(1), a.size(-2) * a.size(-1)): the Shape
  // chain reads the context heads, but what it computes is their own dims (a 0 spelled
  // out), and it goes with the match since it feeds only the merge.
  expectFusedAndSame(spec([](Gpt2PastSpec& s) { s.merge_shape_computed = true; }));
}

TEST(MultiHeadAttentionKvGivenRule, FusesOneTokenStepWithPositionEmbeddings) {
  // PyTorch 1.6's GPT-2 decoding graph: one new token, positions Range(P, P + 1) read from
  // a 16-row embedding, the merge shape computed.
  expectFusedAndSame(spec([](Gpt2PastSpec& s) {
    s.one_token = true;
    s.position_embedding = true;
    s.merge_shape_computed = true;
  }));
}

TEST(MultiHeadAttentionKvGivenRule, LeavesNoTransposePairForKTransposedAfterTheConcat) {
  // K given as Transpose(kc): the rewrite's Transpose back is folded by transpose_pair.
  const Ops ops = fuse(gpt2PastModel(spec([](Gpt2PastSpec& s) { s.k_cached_transposed = false; })));
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
  expectFusedAndSame(spec4x());
  // K goes in as the concatenated heads themselves: no Transpose is added.
  const Ops ops = fuse(gpt2PastModel(spec4x()));
  EXPECT_EQ(count(ops, "Transpose"), 2u) << ::testing::PrintToString(ops);
}

TEST(MultiHeadAttentionPastRule, FusesOpset11WithoutPaddingMask) {
  expectFusedAndSame(spec4x([](Gpt2PastSpec& s) {
    s.opset = 11;
    s.padding_mask = false;
  }));
}

TEST(MultiHeadAttentionPastRule, FusesABoolCausalBuffer) {
  expectFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.tril_type = "bool"; }));
}

// torch >= 1.13 reads query.size(-2) and key.size(-2) as a Gather of each Shape, of index 2
// when it knows the heads' rank (as whole-model GPT-2 exports with past do), else -2.
TEST(MultiHeadAttentionPastRule, FusesSizesReadByGatherOfIndex2) {
  expectFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.size_index = "2"; }));
}

TEST(MultiHeadAttentionPastRule, FusesSizesReadByGatherOfIndexMinus2AtOpset14) {
  expectFusedAndSame(spec4x([](Gpt2PastSpec& s) { s.size_index = "-2", s.opset = 14; }));
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

}  // namespace
}  // namespace onnx_rewrite
