//===- HeadsModelsTest.cc - the per-head attention test models -----------===//
//
// The models of tests/support/HeadsModels.h, before any rule fuses them: every knob value
// gives a model that parses, passes ONNX's checker and runs in ONNX Runtime as generated,
// and the default is the per-head attention nanoGPT's lecture exports.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <onnx/checker.h>

#include "tests/support/HeadsModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::headsModel;
using testing::HeadsSpec;
using testing::headsSpec;
using testing::parsedHeadsModel;
using Ops = std::vector<std::string>;
using Mask = HeadsSpec::Mask;
using MaskSource = HeadsSpec::MaskSource;
using ShapeChain = HeadsSpec::ShapeChain;
using Scale = HeadsSpec::Scale;

/// Parses, checks and runs the model of `s` in ONNX Runtime against itself: a model ORT
/// cannot load or run fails here, not later in a rule test that uses it.
void expectValid(const HeadsSpec& s, const std::vector<std::string>& dims = {"B=2", "S=5"}) {
  ASSERT_NO_THROW(testing::parseModel(headsModel(s))) << headsModel(s);
  const onnx::ModelProto model = parsedHeadsModel(s);
  EXPECT_NO_THROW(onnx::checker::check_model(model)) << headsModel(s);
  const testing::OracleVerdict verdict = testing::compareInOrt(model, model, dims);
  EXPECT_TRUE(verdict.equal) << verdict.report << "\n" << headsModel(s);
}

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

/// The last dim of graph output `i`.
int64_t lastDim(const onnx::ModelProto& model, int i = 0) {
  const auto& shape = model.graph().output(i).type().tensor_type().shape();
  return shape.dim(shape.dim_size() - 1).dim_value();
}

// ---- the default: nanoGPT's Head modules, exported by TorchScript ---------------------------

TEST(HeadsModels, ALoneHeadIsNanoGptsHeadForward) {
  const onnx::ModelProto model = parsedHeadsModel(headsSpec([](HeadsSpec& s) {
    s.heads = 1;
    s.concat = false;
  }));
  EXPECT_EQ(
      testing::opTypes(model),
      Ops({"MatMul",   "MatMul", "MatMul",   "Transpose", "Constant", "MatMul",   "Mul",   "Shape",
           "Constant", "Gather", "Constant", "Unsqueeze", "Constant", "Constant", "Slice", "Slice",
           "Constant", "Equal",  "Constant", "Where",     "Softmax",  "MatMul"}));
  EXPECT_EQ(lastDim(model), 4);
}

TEST(HeadsModels, DefaultConcatenatesFourHeadsOnTheLastAxis) {
  const onnx::ModelProto model = parsedHeadsModel(headsSpec());
  const Ops ops = testing::opTypes(model);
  EXPECT_EQ(count(ops, "Softmax"), 4u);
  EXPECT_EQ(count(ops, "Shape"), 4u) << "each head reads the length itself";
  EXPECT_EQ(ops.back(), "Concat");
  EXPECT_EQ(lastDim(model), 16);
  EXPECT_EQ(model.graph().initializer_size(), 4 * 4) << "three weights and a tril per head";
}

TEST(HeadsModels, FillIsMinusInfinity) {
  const onnx::ModelProto model = parsedHeadsModel(headsSpec());
  int fills = 0;
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Constant" && n.output(0).find("fill") != std::string::npos) {
      EXPECT_TRUE(std::isinf(n.attribute(0).t().float_data(0)));
      EXPECT_LT(n.attribute(0).t().float_data(0), 0);
      ++fills;
    }
  EXPECT_EQ(fills, 4);
}

TEST(HeadsModels, DefaultIsValid) { expectValid(headsSpec()); }

TEST(HeadsModels, ALoneHeadIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) {
    s.heads = 1;
    s.concat = false;
  }));
}

TEST(HeadsModels, OneHeadConcatenatedIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.heads = 1; }));
}

TEST(HeadsModels, OtherSizesAreValid) {
  expectValid(headsSpec([](HeadsSpec& s) {
    s.heads = 2;
    s.hidden = 8;
    s.head_size = 8;
  }));
}

TEST(HeadsModels, Opset18IsValid) {
  for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
    HeadsSpec s;
    s.opset = 18;
    s.shape_chain = c;
    expectValid(s);
  }
}

TEST(HeadsModels, Opset23IsValid) {
  for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
    HeadsSpec s;
    s.opset = 23;
    s.shape_chain = c;
    expectValid(s);
  }
}

// ---- masks ----------------------------------------------------------------------------------

TEST(HeadsModels, NoMaskIsValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.mask = Mask::kNone; });
  EXPECT_EQ(count(testing::opTypes(parsedHeadsModel(s)), "Where"), 0u);
  expectValid(s);
}

TEST(HeadsModels, CausalWhereIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.mask = Mask::kCausalWhere; }));
}

TEST(HeadsModels, AdditiveMaskIsValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.mask = Mask::kAdd; });
  EXPECT_EQ(count(testing::opTypes(parsedHeadsModel(s)), "Add"), 4u);
  expectValid(s);
}

TEST(HeadsModels, ConstantMasksAreValid) {
  for (Mask m : {Mask::kMaskedFill, Mask::kCausalWhere, Mask::kAdd})
    for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
      HeadsSpec s;
      s.mask = m;
      s.mask_source = MaskSource::kConstant;
      s.shape_chain = c;
      EXPECT_EQ(count(testing::opTypes(parsedHeadsModel(s)), "Slice"), 0u);
      expectValid(s);
    }
}

// ---- shape chains ---------------------------------------------------------------------------

TEST(HeadsModels, SharedDynamoChainIsValid) {
  for (Mask m : {Mask::kMaskedFill, Mask::kCausalWhere, Mask::kAdd, Mask::kNone}) {
    HeadsSpec s;
    s.mask = m;
    s.shape_chain = ShapeChain::kSharedDynamo;
    const Ops ops = testing::opTypes(parsedHeadsModel(s));
    EXPECT_EQ(count(ops, "Constant"), 0u);
    EXPECT_EQ(count(ops, "Shape"), m == Mask::kNone ? 0u : 1u) << "one length for all heads";
    expectValid(s);
  }
}

// ---- scales ---------------------------------------------------------------------------------

TEST(HeadsModels, DivScaleIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.scale = Scale::kDiv; }));
}

TEST(HeadsModels, NoScaleIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.scale = Scale::kNone; }));
}

TEST(HeadsModels, ScaledQAndKIsValid) {
  for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
    HeadsSpec s;
    s.scale = Scale::kQAndK;
    s.shape_chain = c;
    expectValid(s);
  }
}

// ---- negatives: each breaks one thing in the last head --------------------------------------

TEST(HeadsModels, LastHeadScaleDiffersIsValid) {
  for (Scale sc : {Scale::kMul, Scale::kDiv, Scale::kQAndK})
    for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
      HeadsSpec s;
      s.scale = sc;
      s.shape_chain = c;
      s.last_head_scale_differs = true;
      expectValid(s);
    }
}

TEST(HeadsModels, LastHeadMaskDiffersIsValid) {
  for (MaskSource m : {MaskSource::kTrilSlice, MaskSource::kConstant})
    for (ShapeChain c : {ShapeChain::kPerHeadTorchScript, ShapeChain::kSharedDynamo}) {
      HeadsSpec s;
      s.mask_source = m;
      s.shape_chain = c;
      s.last_head_mask_differs = true;
      expectValid(s);
    }
}

TEST(HeadsModels, LastHeadSizeDiffersIsValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.last_head_size_differs = true; });
  EXPECT_EQ(lastDim(parsedHeadsModel(s)), 14);
  expectValid(s);
}

TEST(HeadsModels, LastHeadReadingAnotherInputIsValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.last_head_reads_other_input = true; });
  EXPECT_EQ(parsedHeadsModel(s).graph().input_size(), 2);
  expectValid(s);
}

TEST(HeadsModels, WeightsAsInputsAreValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.weights_are_inputs = true; });
  EXPECT_EQ(parsedHeadsModel(s).graph().input_size(), 5);
  expectValid(s);
}

TEST(HeadsModels, ConcatAlongTheSequenceIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.concat_axis = 1; }));
}

TEST(HeadsModels, SoftmaxOverTheQueriesIsValid) {
  expectValid(headsSpec([](HeadsSpec& s) { s.softmax_axis = 1; }));
}

TEST(HeadsModels, EscapingScoresAreValid) {
  const HeadsSpec s = headsSpec([](HeadsSpec& s) { s.scores_escape = true; });
  EXPECT_EQ(parsedHeadsModel(s).graph().output(1).name(), "h3_s2");
  expectValid(s);
}

TEST(HeadsModels, UntransposedKeyIsValidWhenTheSequenceIsAHead) {
  // K not transposed multiplies only when S == head_size.
  expectValid(headsSpec([](HeadsSpec& s) { s.k_perm = "0, 1, 2"; }), {"B=2", "S=4"});
}

}  // namespace
}  // namespace onnx_rewrite
