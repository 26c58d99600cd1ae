//===- DecoderPastAttentionTest.cc - LLaMA attention on a KV cache --------===//
//
// group_query_attention_past (rules/attention.yaml) on the decoding step of LLaMA with
// past_key_values as tests/support/ExporterModels.h builds it (`past`): the new K heads
// (after RoPE) and V heads concatenated behind past_key_i/past_value_i, the Concats returned
// as present_key_i/present_value_i, repeat_kv, HF's additive mask over all P + S keys. A
// one-token step becomes GroupQueryAttention on the cache, which returns the presents; ONNX
// Runtime gives the same outputs. Each negative breaks one condition: the step then goes to
// MultiHeadAttention on the concatenated heads (multi_head_attention_rotary), never to a
// GroupQueryAttention.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "runtime/api/Rewrite.h"
#include "tests/support/ExporterModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::Exporter;
using testing::ExporterModelSpec;
using testing::ModelFamily;

/// LLaMA (4 heads of 8, 2 K/V heads) decoding one token with a cache.
ExporterModelSpec oneTokenStep(Exporter exporter = Exporter::kTorchScript) {
  ExporterModelSpec s;
  s.family = ModelFamily::kLlama;
  s.exporter = exporter;
  s.past = true;
  s.one_token = true;
  return s;
}

onnx::ModelProto fused(onnx::ModelProto m, const ExporterModelSpec& spec) {
  Options options;
  options.max_positions = testing::resolved(spec).max_positions;
  rewrite(m, testing::shippedRules(), options);
  return m;
}

int count(const onnx::ModelProto& m, const std::string& op) {
  const std::vector<std::string> ops = testing::opTypes(m);
  return static_cast<int>(std::count(ops.begin(), ops.end(), op));
}

/// The int attribute `name` of n, -1 when absent.
int64_t intAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return a.i();
  return -1;
}

void expectSameInOrt(const onnx::ModelProto& before, const onnx::ModelProto& after,
                     const ExporterModelSpec& spec, const std::vector<std::string>& dims) {
  testing::OracleVerdict v =
      testing::compareInOrt(before, after, dims, testing::oracleIntRanges(spec));
  EXPECT_TRUE(v.equal) << v.report;
}

const std::vector<std::string> kOneTokenDims = {"batch=2", "past=3", "total=4"};

TEST(GroupQueryAttentionPastRule, FusesAOneTokenStepOnTheCacheAndReturnsThePresents) {
  for (Exporter e : {Exporter::kTorchScript, Exporter::kDynamo}) {
    const ExporterModelSpec spec = oneTokenStep(e);
    const onnx::ModelProto before = testing::makeExporterModel(spec);
    const onnx::ModelProto after = fused(before, spec);
    EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 2) << testing::exporterName(e);
    EXPECT_EQ(count(after, "com.microsoft::MultiHeadAttention"), 0);
    int layer = 0;
    for (const onnx::NodeProto& n : after.graph().node()) {
      if (n.op_type() != "GroupQueryAttention") continue;
      const std::string i = std::to_string(layer++);
      ASSERT_EQ(n.input_size(), 11) << "through attention_bias";
      EXPECT_EQ(n.input(3), "past_key_" + i);
      EXPECT_EQ(n.input(4), "past_value_" + i);
      ASSERT_EQ(n.output_size(), 3);
      EXPECT_EQ(n.output(1), "present_key_" + i) << "the Concat's output, re-exported";
      EXPECT_EQ(n.output(2), "present_value_" + i);
      EXPECT_EQ(intAttr(n, "causal"), 0) << "the mask is attention_bias";
      EXPECT_EQ(intAttr(n, "num_heads"), 4);
      EXPECT_EQ(intAttr(n, "kv_num_heads"), 2);
    }
    EXPECT_EQ(layer, 2);
    // The cache is GroupQueryAttention's to extend: no Concat of the past or repeat_kv stays.
    for (const onnx::NodeProto& n : after.graph().node()) {
      if (n.op_type() != "Concat") continue;
      for (const std::string& in : n.input()) EXPECT_NE(in.rfind("past_", 0), 0u) << n.name();
    }
    expectSameInOrt(before, after, spec, kOneTokenDims);
  }
}

// ONNX Runtime 1.30's CPU kernel refuses a cache with more than one new token unless the
// batch is 1: a step of symbolic length must not become GroupQueryAttention.
TEST(GroupQueryAttentionPastRule, LeavesAStepOfSymbolicLengthToMultiHeadAttention) {
  ExporterModelSpec spec = oneTokenStep();
  spec.one_token = false;
  const onnx::ModelProto before = testing::makeExporterModel(spec);
  const onnx::ModelProto after = fused(before, spec);
  EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 0);
  EXPECT_EQ(count(after, "com.microsoft::MultiHeadAttention"), 2);
  expectSameInOrt(before, after, spec, {"batch=2", "seq=2", "past=3", "total=5"});
}

TEST(GroupQueryAttentionPastRule, LeavesHeadSizesItsKernelRejectsToMultiHeadAttention) {
  ExporterModelSpec spec = oneTokenStep();
  spec.hidden = 16;  // 4 heads of 4
  const onnx::ModelProto before = testing::makeExporterModel(spec);
  const onnx::ModelProto after = fused(before, spec);
  EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 0);
  EXPECT_EQ(count(after, "com.microsoft::MultiHeadAttention"), 2);
  expectSameInOrt(before, after, spec, kOneTokenDims);
}

TEST(GroupQueryAttentionPastRule, LeavesEqualHeadCountsToMultiHeadAttention) {
  ExporterModelSpec spec = oneTokenStep();
  spec.kv_heads = 4;
  const onnx::ModelProto before = testing::makeExporterModel(spec);
  const onnx::ModelProto after = fused(before, spec);
  EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 0);
  EXPECT_EQ(count(after, "com.microsoft::MultiHeadAttention"), 2);
  expectSameInOrt(before, after, spec, kOneTokenDims);
}

// A cache kept behind the new token (Concat(new, past)) is not GroupQueryAttention's
// present, which always appends the new positions.
TEST(GroupQueryAttentionPastRule, DoesNotFuseACacheConcatenatedBehindTheNewHeads) {
  const ExporterModelSpec spec = oneTokenStep();
  onnx::ModelProto before = testing::makeExporterModel(spec);
  int swapped = 0;
  for (onnx::NodeProto& n : *before.mutable_graph()->mutable_node())
    if (n.op_type() == "Concat" && n.output(0).rfind("present_", 0) == 0) {
      std::swap(*n.mutable_input(0), *n.mutable_input(1));
      ++swapped;
    }
  ASSERT_EQ(swapped, 4);
  const onnx::ModelProto after = fused(before, spec);
  EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 0);
  expectSameInOrt(before, after, spec, kOneTokenDims);
}

// transformers slices the mask to key_states.shape[-2]: the step fuses as without the slice,
// the mask cut again to the T the rule computes (WholeModel's *_mask_sliced cases). A mask
// sliced to another length (here the head size, dim 3 of the keys) is not the keys' cut:
// the rule must not cut it to T.
TEST(GroupQueryAttentionPastRule, FusesAMaskSlicedToTheKeysButNoOtherLength) {
  ExporterModelSpec spec = oneTokenStep(Exporter::kDynamo);
  spec.mask_sliced_by_keys = true;
  const onnx::ModelProto sliced = testing::makeExporterModel(spec);
  const onnx::ModelProto after = fused(sliced, spec);
  EXPECT_EQ(count(after, "com.microsoft::GroupQueryAttention"), 2);
  expectSameInOrt(sliced, after, spec, kOneTokenDims);

  // The slices' ends, Shape(k, start=2, end=3) (the keys' length), read dim 3 instead.
  onnx::ModelProto other = sliced;
  std::set<std::string> ends;
  for (const onnx::NodeProto& n : other.graph().node())
    if (n.op_type() == "Slice" && n.input_size() > 2) ends.insert(n.input(2));
  int moved = 0;
  for (onnx::NodeProto& n : *other.mutable_graph()->mutable_node()) {
    if (n.op_type() != "Shape" || !ends.count(n.output(0))) continue;
    for (onnx::AttributeProto& a : *n.mutable_attribute())
      if (a.name() == "start" && a.i() == 2)
        a.set_i(3), ++moved;
      else if (a.name() == "end" && a.i() == 3)
        a.set_i(4);
  }
  ASSERT_EQ(moved, 2);
  const onnx::ModelProto other_after = fused(other, spec);
  EXPECT_EQ(count(other_after, "com.microsoft::GroupQueryAttention"), 0);
  expectSameInOrt(other, other_after, spec, kOneTokenDims);
}

}  // namespace
}  // namespace onnx_rewrite
