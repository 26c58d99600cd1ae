//===- HeadsAttentionRulesTest.cc - attention exported one head at a time --===//
//
// single_head_attention, attention_heads_merge(_onnx) and concat_single_input
// (rules/attention.yaml) on the per-head module exports of tests/support/HeadsModels.h:
// each head becomes an attention op of one head, the heads of one Concat merge into one
// op, and ONNX Runtime computes the same outputs. Each negative breaks one condition in
// the last head: the heads before it still merge, the last one stays an op of its own.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"
#include "tests/support/HeadsModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::attribute;
using testing::HeadsSpec;
using testing::headsSpec;
using testing::parsedHeadsModel;
using Ops = std::vector<std::string>;
using Mask = HeadsSpec::Mask;
using MaskSource = HeadsSpec::MaskSource;
using ShapeChain = HeadsSpec::ShapeChain;
using Scale = HeadsSpec::Scale;

constexpr const char* kMha = "com.microsoft::MultiHeadAttention";

/// The model of `s` after the shipped rules, as the CLI runs them.
onnx::ModelProto fused(const HeadsSpec& s) {
  onnx::ModelProto model = parsedHeadsModel(s);
  rewrite(model, testing::shippedRules());
  return model;
}

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

/// The nodes of `op_type` (domain::op as opTypes writes it) in `model`.
std::vector<const onnx::NodeProto*> nodesOf(const onnx::ModelProto& model,
                                            const std::string& op_type) {
  std::vector<const onnx::NodeProto*> out;
  for (const auto& n : model.graph().node())
    if ((n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type()) == op_type)
      out.push_back(&n);
  return out;
}

int64_t intAttr(const onnx::NodeProto& n, const char* name) {
  const onnx::AttributeProto* a = attribute(n, name);
  return a ? a->i() : -1;
}

/// The model of `s` fused computes what it computed before, in ONNX Runtime.
void expectSameInOrt(const HeadsSpec& s, const std::vector<std::string>& dims = {"B=2", "S=5"}) {
  const onnx::ModelProto before = parsedHeadsModel(s);
  onnx::ModelProto after = before;
  Result r = rewrite(after, testing::shippedRules());
  ASSERT_GT(r.stats.rewrites, 0u) << "nothing was fused";
  const testing::OracleVerdict verdict = testing::compareInOrt(before, after, dims);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

// ---- The per-head export of nanoGPT's lecture: one MultiHeadAttention ---------------------

TEST(PerHeadAttention, MergesTheTorchScriptHeadsIntoOneMultiHeadAttention) {
  const onnx::ModelProto model = fused(headsSpec());
  const Ops ops = testing::opTypes(model);
  ASSERT_EQ(count(ops, kMha), 1u) << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "Softmax"), 0u);
  EXPECT_EQ(count(ops, "Concat"), 1u) << "only the bias shape's; the heads' Concat is gone";
  const onnx::NodeProto& mha = *nodesOf(model, kMha)[0];
  EXPECT_EQ(intAttr(mha, "num_heads"), 4);
  EXPECT_FLOAT_EQ(attribute(mha, "scale")->f(), 0.5f);
  EXPECT_EQ(mha.output(0), "y") << "the attention op writes the graph output";
  // The three projections, each one MatMul on the four heads' weights side by side.
  EXPECT_EQ(count(ops, "MatMul"), 3u);
  for (const onnx::TensorProto& w : model.graph().initializer()) {
    if (w.dims_size() == 2 && w.dims(0) == 16) {
      EXPECT_EQ(w.dims(1), 16) << w.name();
    }
  }
  expectSameInOrt(headsSpec());
}

TEST(PerHeadAttention, MergesTheDynamoHeadsSharingOneShapeRead) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) {
    x.opset = 18;
    x.shape_chain = ShapeChain::kSharedDynamo;
  });
  EXPECT_EQ(count(testing::opTypes(fused(s)), kMha), 1u);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, MergesHeadsWhoseMaskIsAConstant) {
  for (ShapeChain chain : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
    HeadsSpec s;
    s.mask_source = MaskSource::kConstant;
    s.shape_chain = chain;
    EXPECT_EQ(count(testing::opTypes(fused(s)), kMha), 1u);
    expectSameInOrt(s, {"B=2"});
  }
}

TEST(PerHeadAttention, MergesEveryMaskForm) {
  for (Mask mask : {Mask::kNone, Mask::kCausalWhere, Mask::kAdd}) {
    HeadsSpec s;
    s.mask = mask;
    const Ops ops = testing::opTypes(fused(s));
    EXPECT_EQ(count(ops, kMha), 1u) << static_cast<int>(mask) << ::testing::PrintToString(ops);
    expectSameInOrt(s);
  }
}

TEST(PerHeadAttention, MergesEveryScaleForm) {
  for (Scale scale : {Scale::kDiv, Scale::kNone, Scale::kQAndK}) {
    HeadsSpec s;
    s.scale = scale;
    const onnx::ModelProto model = fused(s);
    ASSERT_EQ(count(testing::opTypes(model), kMha), 1u) << static_cast<int>(scale);
    EXPECT_FLOAT_EQ(attribute(*nodesOf(model, kMha)[0], "scale")->f(),
                    scale == Scale::kNone ? 1.0f : 0.5f);
    expectSameInOrt(s);
  }
}

TEST(PerHeadAttention, FusesALoneHeadIntoAnOpOfOneHead) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) {
    x.heads = 1;
    x.concat = false;
  });
  const onnx::ModelProto model = fused(s);
  ASSERT_EQ(count(testing::opTypes(model), kMha), 1u);
  EXPECT_EQ(intAttr(*nodesOf(model, kMha)[0], "num_heads"), 1);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, MergesTwoHeadsOfEight) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) {
    x.heads = 2;
    x.head_size = 8;
  });
  const onnx::ModelProto model = fused(s);
  ASSERT_EQ(count(testing::opTypes(model), kMha), 1u);
  EXPECT_EQ(intAttr(*nodesOf(model, kMha)[0], "num_heads"), 2);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, MergesIntoOnnxAttentionAtOpset23) {
  for (ShapeChain chain : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
    HeadsSpec s;
    s.opset = 23;
    s.shape_chain = chain;
    const onnx::ModelProto model = fused(s);
    const Ops ops = testing::opTypes(model);
    ASSERT_EQ(count(ops, "Attention"), 1u) << ::testing::PrintToString(ops);
    const onnx::NodeProto& a = *nodesOf(model, "Attention")[0];
    EXPECT_EQ(intAttr(a, "q_num_heads"), 4);
    EXPECT_EQ(intAttr(a, "kv_num_heads"), 4);
    expectSameInOrt(s);
  }
}

// ---- What keeps a head out of the merge --------------------------------------------------

/// The last head stays its own op of one head: the first three merge, the Concat stays,
/// beside one bias shape per masked op (`bias_shapes`).
void expectLastHeadApart(const HeadsSpec& s, const std::vector<std::string>& dims = {"B=2", "S=5"},
                         size_t bias_shapes = 2) {
  const onnx::ModelProto model = fused(s);
  const auto ops = nodesOf(model, kMha);
  ASSERT_EQ(ops.size(), 2u) << ::testing::PrintToString(testing::opTypes(model));
  EXPECT_EQ(intAttr(*ops[0], "num_heads") + intAttr(*ops[1], "num_heads"), 4);
  EXPECT_EQ(nodesOf(model, "Concat").size(), bias_shapes + 1)
      << "bias shapes and the heads' Concat";
  expectSameInOrt(s, dims);
}

TEST(PerHeadAttention, DoesNotMergeAHeadWithAnotherScale) {
  expectLastHeadApart(headsSpec([](HeadsSpec& x) { x.last_head_scale_differs = true; }));
}

// The last head's tril is all ones. Sliced to S at run time, its mask stays a mask (S is
// not proven within the tril, so the Where may broadcast). As a constant [S, S] of a
// static S, its masked_fill never fills: where_never_true drops it, and that head is
// unmasked, with no bias shape of its own.
TEST(PerHeadAttention, DoesNotMergeAHeadWithAnotherMask) {
  expectLastHeadApart(headsSpec([](HeadsSpec& x) { x.last_head_mask_differs = true; }));
  expectLastHeadApart(headsSpec([](HeadsSpec& x) {
                        x.last_head_mask_differs = true;
                        x.mask_source = MaskSource::kConstant;
                      }),
                      {"B=2"}, 1);
}

TEST(PerHeadAttention, DoesNotMergeAHeadOfAnotherSize) {
  expectLastHeadApart(headsSpec([](HeadsSpec& x) { x.last_head_size_differs = true; }));
}

TEST(PerHeadAttention, DoesNotMergeAHeadProjectingAnotherInput) {
  expectLastHeadApart(headsSpec([](HeadsSpec& x) { x.last_head_reads_other_input = true; }));
}

TEST(PerHeadAttention, FusesHeadsWithWeightsFedAtRunTimeWithoutMergingThem) {
  // Weights that are graph inputs cannot be concatenated ahead of time.
  const HeadsSpec s = headsSpec([](HeadsSpec& x) { x.weights_are_inputs = true; });
  const Ops ops = testing::opTypes(fused(s));
  EXPECT_EQ(count(ops, kMha), 4u);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, DoesNotMergeHeadsConcatenatedOnAnotherAxis) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) { x.concat_axis = 1; });
  const Ops ops = testing::opTypes(fused(s));
  EXPECT_EQ(count(ops, kMha), 4u) << "each head still fuses alone";
  expectSameInOrt(s);
}

TEST(PerHeadAttention, DoesNotFuseSoftmaxOverAnotherAxis) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) { x.softmax_axis = 1; });
  const Ops ops = testing::opTypes(fused(s));
  EXPECT_EQ(count(ops, kMha), 1u);
  EXPECT_EQ(count(ops, "Softmax"), 1u);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, DoesNotFuseScoresReadOutside) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) { x.scores_escape = true; });
  const Ops ops = testing::opTypes(fused(s));
  EXPECT_EQ(count(ops, kMha), 1u);
  EXPECT_EQ(count(ops, "Softmax"), 1u);
  expectSameInOrt(s);
}

TEST(PerHeadAttention, DoesNotFuseAKeyThatIsNotTransposed) {
  const HeadsSpec s = headsSpec([](HeadsSpec& x) { x.k_perm = "0, 1, 2"; });
  const Ops ops = testing::opTypes(fused(s));
  EXPECT_EQ(count(ops, kMha), 1u);
  EXPECT_EQ(count(ops, "Softmax"), 1u);
  expectSameInOrt(s, {"B=2", "S=4"});
}

}  // namespace
}  // namespace onnx_rewrite
