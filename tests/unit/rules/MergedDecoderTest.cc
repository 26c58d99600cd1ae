//===- MergedDecoderTest.cc - the shipped rules on merged decoders --------===//
//
// optimum's decoder_model_merged.onnx (ExporterModelSpec::merged): one If on
// use_cache_branch whose then_branch is the decoding step with past and whose else_branch
// is the first step without it (issue 13). The branches declare no value_info and read
// every weight, and the inputs, from the main graph, so what rules know of shapes there is
// what inference finds. Each branch must fuse exactly as the standalone model of its step
// does (the same ops, so the same fused-op counts) and the fused model must compute the
// same outputs in ONNX Runtime down either branch.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
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

struct MergedCase {
  std::string name;
  ExporterModelSpec spec;
};

void PrintTo(const MergedCase& c, std::ostream* os) { *os << c.name; }

MergedCase mergedCase(ModelFamily family, Exporter exporter, int opset = 0) {
  ExporterModelSpec s;
  s.family = family;
  s.exporter = exporter;
  s.merged = true;
  std::string name =
      std::string(testing::familyName(family)) + "_" + testing::exporterName(exporter);
  if (opset) {
    s.opset = opset;
    name += "_opset" + std::to_string(opset);
  }
  return {name, s};
}

// GPT-2 with past is built as TorchScript's eager attention only (ExporterModels.h). LLaMA
// at opset 23 takes ONNX's Attention (attention_heads) in both branches; a padded first
// token leaves a query row with no visible key, which the parity check covers.
std::vector<MergedCase> mergedCases() {
  return {mergedCase(ModelFamily::kGpt2, Exporter::kTorchScript),
          mergedCase(ModelFamily::kLlama, Exporter::kTorchScript),
          mergedCase(ModelFamily::kLlama, Exporter::kDynamo),
          mergedCase(ModelFamily::kLlama, Exporter::kDynamo, 23),
          mergedCase(ModelFamily::kPhi, Exporter::kTorchScript),
          mergedCase(ModelFamily::kPhi, Exporter::kDynamo)};
}

/// Down the then_branch: 3 cached tokens and 2 new ones. Down the else_branch: 5 tokens and
/// an empty cache (past = 0), as optimum feeds the first step.
const std::vector<std::string> kWithPastDims = {"batch=2", "seq=2", "past=3", "total=5"};
const std::vector<std::string> kNoPastDims = {"batch=2", "seq=5", "past=0", "total=5"};

int count(const std::vector<std::string>& ops, const std::set<std::string>& kinds) {
  int n = 0;
  for (const std::string& op : ops) n += kinds.count(op) ? 1 : 0;
  return n;
}

std::vector<std::string> sorted(std::vector<std::string> ops) {
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::string summary(const std::vector<std::string>& ops) {
  std::map<std::string, int> histogram;
  for (const std::string& op : ops) ++histogram[op];
  std::string s = "ops:";
  for (const auto& [op, n] : histogram) s += " " + op + "x" + std::to_string(n);
  return s;
}

class MergedDecoder : public ::testing::TestWithParam<MergedCase> {
 protected:
  const ExporterModelSpec& spec() const { return GetParam().spec; }
  /// The standalone model of one branch's step: with past, or the first step.
  ExporterModelSpec step(bool with_past) const {
    ExporterModelSpec s = spec();
    s.merged = false;
    (with_past ? s.past : s.presents) = true;
    return s;
  }

  static onnx::ModelProto fused(onnx::ModelProto m, const ExporterModelSpec& spec) {
    Options options;
    options.max_positions = testing::resolved(spec).max_positions;
    rewrite(m, testing::shippedRules(), options);
    return m;
  }

  const onnx::ModelProto& merged() const {
    if (!merged_) merged_ = testing::makeExporterModel(spec());
    return *merged_;
  }
  const onnx::ModelProto& fusedMerged() const {
    if (!fused_merged_) fused_merged_ = fused(merged(), spec());
    return *fused_merged_;
  }

  void expectSameInOrt(const onnx::ModelProto& before, const onnx::ModelProto& after) const {
    for (bool use_cache : {true, false}) {
      testing::OracleVerdict v =
          testing::compareInOrt(before, after, use_cache ? kWithPastDims : kNoPastDims,
                                testing::oracleIntRanges(spec(), use_cache) + " --runs 4");
      EXPECT_TRUE(v.equal) << (use_cache ? "with past: " : "no past: ") << v.report;
    }
  }

 private:
  mutable std::optional<onnx::ModelProto> merged_, fused_merged_;
};

// ---- the generated model ---------------------------------------------------------------

TEST_P(MergedDecoder, HasOptimumsMergedForm) {
  const onnx::ModelProto& m = merged();
  const onnx::GraphProto& g = m.graph();
  ASSERT_EQ(testing::opTypes(g), std::vector<std::string>{"If"});
  const testing::MergedBranches b = testing::mergedBranches(m);
  ASSERT_TRUE(b.with_past && b.no_past);
  EXPECT_EQ(b.if_node->input(0), "use_cache_branch");
  std::vector<std::string> inputs;
  for (const auto& in : g.input()) inputs.push_back(in.name());
  EXPECT_EQ(inputs.front(), "hidden_states");
  EXPECT_EQ(inputs[1], "attention_mask");
  EXPECT_EQ(g.input(1).type().tensor_type().shape().dim(1).dim_param(), "total");
  EXPECT_EQ(inputs.back(), "use_cache_branch");
  EXPECT_EQ(g.input(g.input_size() - 1).type().tensor_type().elem_type(), onnx::TensorProto::BOOL);
  EXPECT_NE(std::find(inputs.begin(), inputs.end(), "past_key_1"), inputs.end());
  // Every weight once, in the main graph; the branches keep scalars and 1-D integer tensors.
  auto integer = [](const onnx::TensorProto& t) {
    return t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32;
  };
  std::set<std::string> contents;
  for (const onnx::TensorProto& t : g.initializer()) {
    EXPECT_TRUE(t.dims_size() >= 2 || (t.dims_size() == 1 && !integer(t))) << t.name();
    EXPECT_NE(t.name().find("_merged_"), std::string::npos) << t.name();
    onnx::TensorProto unnamed = t;
    unnamed.clear_name();
    EXPECT_TRUE(contents.insert(unnamed.SerializeAsString()).second) << t.name() << ": twice";
  }
  for (const onnx::GraphProto* branch : {b.with_past, b.no_past}) {
    EXPECT_EQ(branch->input_size(), 0) << branch->name();
    EXPECT_EQ(branch->value_info_size(), 0) << branch->name() << ": nothing typed inside";
    for (const onnx::TensorProto& t : branch->initializer())
      EXPECT_TRUE(t.dims_size() == 0 || (t.dims_size() == 1 && integer(t))) << t.name();
    ASSERT_EQ(branch->output_size(), g.output_size());
    for (int i = 0; i < g.output_size(); ++i)
      EXPECT_EQ(branch->output(i).name(), g.output(i).name()) << "the If's output names";
  }
  // The first step reads no cache; the step with past reads every one.
  auto reads = [](const onnx::GraphProto& body, const std::string& name) {
    for (const onnx::NodeProto& n : body.node())
      if (std::find(n.input().begin(), n.input().end(), name) != n.input().end()) return true;
    return false;
  };
  EXPECT_FALSE(reads(*b.no_past, "past_key_0"));
  EXPECT_TRUE(reads(*b.with_past, "past_key_0"));
  EXPECT_TRUE(reads(*b.with_past, "past_value_1"));
}

TEST_P(MergedDecoder, RunsInOrtAsGeneratedDownEitherBranch) { expectSameInOrt(merged(), merged()); }

// ---- fusion in both branches -------------------------------------------------------------

TEST_P(MergedDecoder, FusesEachBranchAsTheStandaloneModelOfItsStep) {
  const testing::MergedBranches b = testing::mergedBranches(fusedMerged());
  ASSERT_TRUE(b.with_past && b.no_past);
  EXPECT_EQ(testing::opTypes(fusedMerged()), std::vector<std::string>{"If"});
  for (bool with_past : {true, false}) {
    const ExporterModelSpec s = step(with_past);
    const std::vector<std::string> branch =
        sorted(testing::opTypes(with_past ? *b.with_past : *b.no_past));
    const std::vector<std::string> standalone =
        sorted(testing::opTypes(fused(testing::makeExporterModel(s), s)));
    EXPECT_EQ(branch, standalone) << (with_past ? "with_past: " : "no_past: ") << summary(branch)
                                  << "\nstandalone: " << summary(standalone);
  }
}

// The counts themselves, per branch: what the family's model calls for (expectedFusions),
// and nothing of what they replace left.
TEST_P(MergedDecoder, FusesEveryLayerInBothBranches) {
  const testing::MergedBranches b = testing::mergedBranches(fusedMerged());
  ASSERT_TRUE(b.with_past && b.no_past);
  const testing::ExpectedFusions e = testing::expectedFusions(spec());
  std::set<std::string> attention = {"com.microsoft::Attention",
                                     "com.microsoft::MultiHeadAttention",
                                     "com.microsoft::GroupQueryAttention"};
  if (testing::resolved(spec()).opset >= 23) attention.insert("Attention");
  for (const onnx::GraphProto* branch : {b.with_past, b.no_past}) {
    const std::vector<std::string> ops = testing::opTypes(*branch);
    const std::string where = branch->name() + ": " + summary(ops);
    EXPECT_EQ(count(ops, attention), e.attention) << where;
    EXPECT_EQ(count(ops, {"LayerNormalization"}), e.layer_norm) << where;
    EXPECT_EQ(count(ops, {"com.microsoft::SkipLayerNormalization"}), e.skip_layer_norm) << where;
    EXPECT_EQ(count(ops, {"SimplifiedLayerNormalization", "RMSNormalization"}), e.simplified_norm)
        << where;
    EXPECT_EQ(count(ops, {"com.microsoft::SkipSimplifiedLayerNormalization"}), e.skip_simplified)
        << where;
    EXPECT_EQ(count(ops, {"com.microsoft::RotaryEmbedding", "RotaryEmbedding"}), e.rotary) << where;
    EXPECT_EQ(count(ops, {"com.microsoft::Gelu", "com.microsoft::BiasGelu",
                          "com.microsoft::FastGelu", "com.microsoft::QuickGelu", "Gelu"}),
              e.gelu)
        << where;
    EXPECT_EQ(count(ops, {"Softmax", "ReduceMean", "Neg", "Erf", "Tanh", "Sigmoid"}), 0) << where;
  }
}

// Weights only a branch read, and no branch reads once fused (TorchScript's cos/sin caches,
// dynamo's inv_freq), leave the main graph as they leave a standalone model.
TEST_P(MergedDecoder, KeepsOnlyWeightsABranchStillReads) {
  const onnx::ModelProto& m = fusedMerged();
  std::set<std::string> read;
  const testing::MergedBranches b = testing::mergedBranches(m);
  for (const onnx::GraphProto* branch : {b.with_past, b.no_past})
    for (const onnx::NodeProto& n : branch->node()) read.insert(n.input().begin(), n.input().end());
  for (const onnx::TensorProto& t : m.graph().initializer())
    EXPECT_TRUE(read.count(t.name())) << t.name() << " is read by neither branch";
}

// ---- numerics -------------------------------------------------------------------------------

TEST_P(MergedDecoder, FusedModelComputesTheSameInOrtDownEitherBranch) {
  expectSameInOrt(merged(), fusedMerged());
}

INSTANTIATE_TEST_SUITE_P(Exporters, MergedDecoder, ::testing::ValuesIn(mergedCases()),
                         [](const ::testing::TestParamInfo<MergedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace onnx_rewrite
