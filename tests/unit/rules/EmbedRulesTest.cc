//===- EmbedRulesTest.cc - the EmbedLayerNormalization rules --------------===//
//
// The rules of rules/embed_layer_norm.yaml on BERT and DistilBERT embedding layers in the
// shapes torch.onnx emits (tests/support/EmbedModels.h). Each variant has a positive test
// asserting the exact op list and an ONNX Runtime check of equal outputs; each negative
// breaks one condition and must come out unchanged.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/support/EmbedModels.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::embedModel;
using testing::EmbedSpec;
using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using Ops = std::vector<std::string>;
using P = EmbedSpec::Positions;

const std::string kEln = "com.microsoft::EmbedLayerNormalization";

/// The op types after the shipped rules, sorted (the order of the Casts is not the point).
Ops fusedOps(const EmbedSpec& s, onnx::ModelProto* model = nullptr) {
  Ops ops = fuse(embedModel(s), model);
  std::sort(ops.begin(), ops.end());
  return ops;
}

/// The inputs of the first EmbedLayerNormalization of `model`.
std::vector<std::string> elnInputs(const onnx::ModelProto& model) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == "EmbedLayerNormalization")
      return std::vector<std::string>(n.input().begin(), n.input().end());
  return {};
}

/// Expects the embeddings of `s` fused into one op with casts of the int64 ids, and equal
/// outputs in ONNX Runtime.
void expectFused(const EmbedSpec& s, const Ops& ops) {
  EXPECT_EQ(fusedOps(s), ops);
  expectSameInOrt(embedModel(s));
}

const Ops kBert = {"Cast", "Cast", kEln};  // ids and token types cast to int32
const Ops kDistilBert = {"Cast", kEln};    // ids cast to int32

// ---- embed_layer_norm (positions proven 0 .. S - 1) --------------------------------------

TEST(EmbedLayerNormRule, FusesHuggingFaceBertOpset13SlicedPositions) {
  EmbedSpec s;  // opset 13, buffer[:, :seq_length], (word + token type) + position
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesOpset11RangeExpandedToTheIdsShape) {
  EmbedSpec s;
  s.opset = 11;
  s.positions = P::kRange;
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesRangeExpandedToAConcatOfDims) {
  EmbedSpec s;
  s.positions = P::kRangeConcat;
  s.segment_first = false;  // (word + position) + token type
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesAnExpandTargetBehindWhereEqualMinusOne) {
  EmbedSpec s;
  s.positions = P::kRangeWhere;
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesDynamoSliceOfThePositionBuffer) {
  EmbedSpec s;
  s.positions = P::kDynamoSlice;
  s.opset = 18;
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesOldTorchNonZeroArange) {
  EmbedSpec s;
  s.opset = 11;
  s.positions = P::kNonZero;
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesConstantPositionsOfStaticShapes) {
  EmbedSpec s;
  s.positions = P::kConstant;
  expectFused(s, kBert);
}

TEST(EmbedLayerNormRule, FusesTheLayerNormalizationOpOfOpset17) {
  EmbedSpec s;
  s.opset = 17;
  s.positions = P::kRangeConcat;
  expectFused(s, kBert);
}

/// The outputs of the first EmbedLayerNormalization of `model`.
std::vector<std::string> elnOutputs(const onnx::ModelProto& model) {
  for (const auto& n : model.graph().node())
    if (n.op_type() == "EmbedLayerNormalization")
      return std::vector<std::string>(n.output().begin(), n.output().end());
  return {};
}

TEST(EmbedLayerNormRule, ExportsTheEmbeddingSumWhenItIsReadElsewhere) {
  // GPT-2 and Megatron add the embedding sum to the first attention output: the op's
  // embedding_sum output (2) takes its place.
  EmbedSpec s;
  s.sum_used = true;  // the sum a graph output
  onnx::ModelProto model;
  ASSERT_EQ(fusedOps(s, &model), kBert);
  const std::vector<std::string> outputs = elnOutputs(model);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[2], "s");
  expectSameInOrt(embedModel(s));
}

TEST(EmbedLayerNormRule, WritesNoEmbeddingSumNothingReads) {
  onnx::ModelProto model;
  ASSERT_EQ(fusedOps(EmbedSpec{}, &model), kBert);
  EXPECT_EQ(elnOutputs(model).size(), 2u) << "output, mask_index (ONNX Runtime requires it)";
}

TEST(EmbedLayerNormRule, Int32IdsNeedNoCast) {
  EmbedSpec s;
  s.ids_type = "int32";
  s.positions = P::kRange;
  expectFused(s, {kEln});
}

TEST(EmbedLayerNormRule, DropsThePositionChainAndPassesNoPositionIds) {
  EmbedSpec s;
  s.positions = P::kRange;
  onnx::ModelProto model;
  ASSERT_EQ(fusedOps(s, &model), kBert);
  const auto inputs = elnInputs(model);
  ASSERT_EQ(inputs.size(), 7u);  // input_ids .. beta: no mask, no position_ids
  EXPECT_EQ(inputs[2], "word");
  EXPECT_EQ(inputs[3], "pos_table");
  EXPECT_EQ(inputs[4], "types");
}

TEST(EmbedLayerNormRule, FusesTwoEmbeddingLayersOfOneModel) {
  EmbedSpec s;
  s.multiple = true;
  expectFused(s, {"Cast", "Cast", "Cast", "Cast", kEln, kEln});
}

TEST(EmbedLayerNormConstantPositionsRule, FusesFoldedPositionEmbeddings) {
  EmbedSpec s;
  s.positions = P::kFolded;
  onnx::ModelProto model;
  ASSERT_EQ(fusedOps(s, &model), kBert);
  // The op reads a new [S, H] table: one batch of the folded embeddings.
  const auto inputs = elnInputs(model);
  ASSERT_EQ(inputs.size(), 7u);
  std::vector<int64_t> dims;
  for (const auto& init : model.graph().initializer()) {
    if (init.name() == inputs[3]) dims.assign(init.dims().begin(), init.dims().end());
  }
  EXPECT_EQ(dims, (std::vector<int64_t>{5, 8}));
  expectSameInOrt(embedModel(s));
}

// ---- DistilBERT: no segment embedding ----------------------------------------------------

TEST(EmbedLayerNormNoSegmentRule, FusesDistilBert) {
  EmbedSpec s;
  s.segment = false;
  s.positions = P::kRange;
  expectFused(s, kDistilBert);
}

TEST(EmbedLayerNormNoSegmentRule, FusesDistilBertOpset17) {
  EmbedSpec s;
  s.segment = false;
  s.opset = 17;
  expectFused(s, kDistilBert);
}

TEST(EmbedLayerNormNoSegmentRule, FusesFoldedPositionEmbeddings) {
  EmbedSpec s;
  s.segment = false;
  s.positions = P::kFolded;
  s.opset = 17;
  expectFused(s, kDistilBert);
}

// ---- position ids passed to the op -------------------------------------------------------

TEST(EmbedLayerNormPositionIdsRule, PassesPositionIdsOfAGraphInput) {
  EmbedSpec s;
  s.positions = P::kInput;
  onnx::ModelProto model;
  ASSERT_EQ(fusedOps(s, &model), (Ops{"Cast", "Cast", "Cast", kEln}));
  const auto inputs = elnInputs(model);
  ASSERT_EQ(inputs.size(), 9u);
  EXPECT_EQ(inputs[7], "");  // no mask
  EXPECT_NE(inputs[8], "");
  expectSameInOrt(embedModel(s));
}

TEST(EmbedLayerNormPositionIdsRule, PassesPositionsThatAreNotAnArange) {
  // 1 .. S (offset positions) is not 0 .. S - 1: the positions are kept and passed to
  // the op.
  EmbedSpec s;
  s.positions = P::kConstant;
  s.range_start = 1;
  s.segment = false;
  onnx::ModelProto model;
  const Ops ops = fusedOps(s, &model);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kEln), 1);
  EXPECT_EQ(elnInputs(model).size(), 9u);
  expectSameInOrt(embedModel(s));
}

// ---- an attention mask -------------------------------------------------------------------

TEST(EmbedLayerNormRule, FusesInFrontOfAnAttentionWithAMaskSum) {
  // ONNX Runtime's test graphs: Attention reads the LayerNorm and ReduceSum(Cast(mask)).
  // The mask sum stays (it is not moved into the op's mask_index yet).
  EmbedSpec s;
  s.mask = true;
  EXPECT_EQ(fusedOps(s),
            (Ops{"Cast", "Cast", "Cast", "ReduceSum", "com.microsoft::Attention", kEln}));
  expectSameInOrt(embedModel(s), "--int-range attention_mask=0:2");
}

// ---- negatives ---------------------------------------------------------------------------

/// With the LayerNorm already one op, only the embed rules could change the model.
void expectNotEmbedded(EmbedSpec s) {
  s.ln_op = true;
  expectUnchanged(embedModel(s), "embed");
}

TEST(EmbedLayerNormNegative, PositionTableOfAnotherHiddenSize) {
  EmbedSpec s;
  s.pos_hidden = 6;
  expectNotEmbedded(s);
}

TEST(EmbedLayerNormNegative, WordGatherOnAxis1) {
  EmbedSpec s;
  s.gather_axis = 1;
  expectNotEmbedded(s);
}

TEST(EmbedLayerNormNegative, LayerNormOverANonLastAxis) {
  EmbedSpec s;
  s.ln_axis = 1;
  expectNotEmbedded(s);
  s.ln_axis = 0;
  expectNotEmbedded(s);
}

TEST(EmbedLayerNormNegative, PositionsOfAnotherSequenceLength) {
  // The Range runs over the length of another input: neither provably 0 .. S - 1 nor known
  // to have the ids' shape.
  EmbedSpec s;
  s.positions = P::kRange;
  s.pos_from_other = true;
  expectNotEmbedded(s);
}

TEST(EmbedLayerNormNegative, BufferSlicedFromAnotherStart) {
  EmbedSpec s;  // buffer[:, 1:S]
  s.range_start = 1;
  expectNotEmbedded(s);
}

TEST(EmbedLayerNormNegative, ConstantPositionsOffByOneArePassedNotDropped) {
  EmbedSpec s;
  s.positions = P::kConstant;
  s.range_start = 1;
  s.ln_op = true;
  expectUnchanged(embedModel(s), "^embed_layer_norm$");
}

TEST(EmbedLayerNormNegative, FoldedPositionEmbeddingsThatDifferPerBatch) {
  EmbedSpec s;
  s.positions = P::kFolded;
  s.folded_batches_differ = true;
  expectNotEmbedded(s);
}

}  // namespace
}  // namespace onnx_rewrite
