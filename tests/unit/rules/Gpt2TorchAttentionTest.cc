//===- Gpt2TorchAttentionTest.cc - attention behind computed shapes ------===//
//
// GPT-2 as torch 1.x exports it (tests/support/Gpt2TorchModels.h) computes every shape at
// run time; ONNX's inference leaves the attention's inputs unsized and the attention rules
// refuse. The symbolic shape pass (runtime/io/SymbolicShapes.h) sizes them: the core fuses
// into one MultiHeadAttention, and ONNX Runtime gives the same outputs.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/Gpt2TorchModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::fuse;
using testing::gpt2TorchModel;
using testing::Gpt2TorchSpec;
using Ops = std::vector<std::string>;

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

void expectFusedAndSame(const Gpt2TorchSpec& spec) {
  const std::string text = gpt2TorchModel(spec);
  onnx::ModelProto after;
  const Ops ops = fuse(text, &after);
  EXPECT_EQ(
      count(ops, "com.microsoft::MultiHeadAttention") + count(ops, "com.microsoft::Attention"), 1u)
      << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, "Softmax"), 0u) << ::testing::PrintToString(ops);
  const onnx::ModelProto before = testing::parseModel(text);
  // With past, 4 cached and 3 new positions (7 of the 16 the causal buffer holds).
  const std::vector<std::string> dims =
      spec.past ? std::vector<std::string>{"batch=2", "seq_len=3", "past_len=4", "total_len=7"}
                : std::vector<std::string>{"batch=2", "seq_len=5"};
  const testing::OracleVerdict verdict = testing::compareInOrt(before, after, dims);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(Gpt2TorchAttention, FusesBehindComputedShapesAtOpset11) { expectFusedAndSame({11}); }

TEST(Gpt2TorchAttention, FusesBehindComputedShapesAtOpset13) { expectFusedAndSame({13}); }

TEST(Gpt2TorchAttention, FusesWithPastWhosePositionsStartAtTheCacheLength) {
  // Range(P, P + S) has S elements: the symbolic pass subtracts linear forms.
  Gpt2TorchSpec spec;
  spec.past = true;
  expectFusedAndSame(spec);
}

TEST(Gpt2TorchAttention, FusesWithPastAtOpset13) {
  Gpt2TorchSpec spec;
  spec.past = true;
  spec.opset = 13;
  expectFusedAndSame(spec);
}

TEST(Gpt2TorchAttention, DoesNotFuseWithoutShapeInference) {
  // --no-shape-inference turns the symbolic pass off with ONNX's: q has no shape.
  Options options;
  options.shape_inference = false;
  const Ops ops = fuse(gpt2TorchModel({11}), nullptr, nullptr, options);
  EXPECT_EQ(count(ops, "com.microsoft::MultiHeadAttention"), 0u) << ::testing::PrintToString(ops);
}

TEST(Gpt2TorchAttention, SavesOnlyTheTypesTheModelCameWith) {
  // Inference and the symbolic pass are undone: no value_info appears in the output.
  onnx::ModelProto after;
  fuse(gpt2TorchModel({11}), &after);
  EXPECT_EQ(after.graph().value_info_size(), 0);
  ASSERT_EQ(after.graph().output_size(), 1);
  EXPECT_EQ(after.graph().output(0).type().tensor_type().shape().dim(1).dim_param(), "seq_len");
}

}  // namespace
}  // namespace onnx_rewrite
