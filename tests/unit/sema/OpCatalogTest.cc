//===- OpCatalogTest.cc - ops by domain, opset and name -------------------===//
//
// The catalog answers from ONNX 1.12's registry up to opset 17, from the table
// of later changes up to opset 24, and from op declarations for other domains
// and for the ONNX Runtime ops of the ONNX domain.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/OpCatalog.h"

#include <gtest/gtest.h>

#include "compiler/sema/ContribOps.h"

namespace onnx_rewrite {
namespace {

std::vector<std::string> names(const std::vector<OpParam>& ps) {
  std::vector<std::string> out;
  for (const OpParam& p : ps) out.push_back(p.name + (p.optional ? "?" : ""));
  return out;
}

ir::Literal intLit(int64_t v) { return ir::Literal{ir::Literal::Kind::kInt, {v}, {}, {}}; }
ir::Literal floatLit(double v) { return ir::Literal{ir::Literal::Kind::kFloat, {}, {v}, {}}; }
ir::Literal stringLit(std::string v) {
  return ir::Literal{ir::Literal::Kind::kString, {}, {}, {std::move(v)}};
}

// ---- ONNX up to opset 17: the registry ---------------------------------------------------

TEST(OpCatalog, ReduceMeanTakesAxesAsAnAttributeAtOpset13) {
  OpCatalog catalog;
  const OpSignature* s = catalog.find("", "ReduceMean", 13);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->since_version, 13);
  EXPECT_EQ(names(s->inputs), (std::vector<std::string>{"data"}));
  EXPECT_EQ(s->max_inputs, 1);
  ASSERT_NE(s->findAttr("axes"), nullptr);
  EXPECT_EQ(s->findAttr("axes")->type, "ints");
  EXPECT_EQ(s->findAttr("keepdims")->default_value, intLit(1));
}

TEST(OpCatalog, ReduceSumTakesAxesAsAnInputFromOpset13) {
  OpCatalog catalog;
  const OpSignature* s = catalog.find("", "ReduceSum", 13);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(names(s->inputs), (std::vector<std::string>{"data", "axes?"}));
  EXPECT_EQ(s->findAttr("axes"), nullptr);
  EXPECT_NE(catalog.find("", "ReduceSum", 11)->findAttr("axes"), nullptr);
}

TEST(OpCatalog, FloatDefaultsReadAsWrittenInTheSchema) {
  OpCatalog catalog;
  const OpSignature* s = catalog.find("", "LayerNormalization", 17);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->findAttr("epsilon")->default_value, floatLit(1e-5));
}

TEST(OpCatalog, DeprecatedOpsNoLongerExist) {
  OpCatalog catalog;
  EXPECT_NE(catalog.find("", "Scatter", 9), nullptr);
  EXPECT_EQ(catalog.find("", "Scatter", 11), nullptr);
  EXPECT_EQ(catalog.availability("", "Scatter"), std::make_pair(int64_t{9}, int64_t{10}));
}

TEST(OpCatalog, AiOnnxIsTheOnnxDomain) {
  OpCatalog catalog;
  EXPECT_EQ(catalog.find("ai.onnx", "Add", 14), catalog.find("", "Add", 14));
  EXPECT_EQ(OpCatalog::displayName("ai.onnx", "Add"), "Add");
}

// ---- ONNX after opset 17: the table of later changes -------------------------------------

TEST(OpCatalog, ReduceMeanTakesAxesAsAnInputFromOpset18) {
  OpCatalog catalog;
  const OpSignature* s = catalog.find("", "ReduceMean", 18);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->since_version, 18);
  EXPECT_EQ(s->source, OpSignature::Source::kOnnxLater);
  EXPECT_EQ(names(s->inputs), (std::vector<std::string>{"data", "axes?"}));
  EXPECT_EQ(s->min_inputs, 1);
  EXPECT_EQ(s->max_inputs, 2);
  EXPECT_EQ(s->findAttr("axes"), nullptr);
  EXPECT_EQ(s->findAttr("keepdims")->default_value, intLit(1));
  EXPECT_EQ(s->findAttr("noop_with_empty_axes")->default_value, intLit(0));
}

TEST(OpCatalog, GeluExistsFromOpset20NotAt17) {
  OpCatalog catalog;
  EXPECT_EQ(catalog.find("", "Gelu", 17), nullptr);
  EXPECT_EQ(catalog.find("", "Gelu", 19), nullptr);
  const OpSignature* s = catalog.find("", "Gelu", 20);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(names(s->inputs), (std::vector<std::string>{"X"}));
  EXPECT_EQ(s->findAttr("approximate")->default_value, stringLit("none"));
  EXPECT_EQ(catalog.availability("", "Gelu"), std::make_pair(int64_t{20}, int64_t{24}));
}

TEST(OpCatalog, RmsNormalizationRotaryEmbeddingAndAttentionExistFromOpset23) {
  OpCatalog catalog;
  for (const char* op : {"RMSNormalization", "RotaryEmbedding", "Attention"}) {
    EXPECT_EQ(catalog.find("", op, 22), nullptr) << op;
    EXPECT_NE(catalog.find("", op, 23), nullptr) << op;
  }
  const OpSignature* rms = catalog.find("", "RMSNormalization", 23);
  EXPECT_EQ(names(rms->inputs), (std::vector<std::string>{"X", "scale"}));
  EXPECT_EQ(rms->findAttr("stash_type")->default_value, intLit(1));
  const OpSignature* rope = catalog.find("", "RotaryEmbedding", 23);
  EXPECT_EQ(names(rope->inputs),
            (std::vector<std::string>{"X", "cos_cache", "sin_cache", "position_ids?"}));
}

TEST(OpCatalog, AttentionGainsNonpadKvSeqlenAtOpset24) {
  OpCatalog catalog;
  EXPECT_EQ(catalog.find("", "Attention", 23)->max_inputs, 6);
  const OpSignature* s = catalog.find("", "Attention", 24);
  EXPECT_EQ(s->max_inputs, 7);
  EXPECT_EQ(s->inputs.back().name, "nonpad_kv_seqlen");
  EXPECT_EQ(names(s->outputs),
            (std::vector<std::string>{"Y", "present_key?", "present_value?", "qk_matmul_output?"}));
}

TEST(OpCatalog, SplitPadAndCastChangesAfterOpset17) {
  OpCatalog catalog;
  EXPECT_EQ(catalog.find("", "Split", 17)->findAttr("num_outputs"), nullptr);
  EXPECT_NE(catalog.find("", "Split", 18)->findAttr("num_outputs"), nullptr);
  EXPECT_EQ(catalog.find("", "Pad", 17)->max_inputs, 3);
  EXPECT_EQ(catalog.find("", "Pad", 18)->max_inputs, 4);
  EXPECT_EQ(catalog.find("", "Cast", 18)->findAttr("saturate"), nullptr);
  EXPECT_EQ(catalog.find("", "Cast", 19)->findAttr("saturate")->default_value, intLit(1));
}

TEST(OpCatalog, OpsetsPastTheNewestUseTheNewest) {
  OpCatalog catalog;
  EXPECT_EQ(catalog.find("", "Attention", 30), catalog.find("", "Attention", 24));
}

// ---- Declared ops ------------------------------------------------------------------------

TEST(OpCatalog, SimplifiedLayerNormalizationIsKnownInTheOnnxDomainWhenDeclared) {
  EXPECT_EQ(OpCatalog().find("", "SimplifiedLayerNormalization", 17), nullptr);
  OpCatalog catalog(contribOpDecls());
  const OpSignature* s = catalog.find("", "SimplifiedLayerNormalization", 17);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->source, OpSignature::Source::kDeclared);
  EXPECT_EQ(catalog.find("ai.onnx", "SimplifiedLayerNormalization", 1),
            catalog.find("", "SimplifiedLayerNormalization", 1));
  EXPECT_EQ(names(s->outputs), (std::vector<std::string>{"Y", "inv_std_var?"}));
}

TEST(OpCatalog, TheRegistryWinsOverAnOnnxDomainDeclaration) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_EQ(catalog.find("", "LayerNormalization", 13)->source, OpSignature::Source::kDeclared);
  EXPECT_EQ(catalog.find("", "LayerNormalization", 17)->source, OpSignature::Source::kOnnxRegistry);
}

TEST(OpCatalog, SkipLayerNormalizationTakesThreeToFiveInputsAndUpToFourOutputs) {
  OpCatalog catalog(contribOpDecls());
  const OpSignature* s = catalog.find("com.microsoft", "SkipLayerNormalization", 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->min_inputs, 3);
  EXPECT_EQ(s->max_inputs, 5);
  EXPECT_EQ(s->min_outputs, 1);
  EXPECT_EQ(s->max_outputs, 4);
  EXPECT_EQ(s->outputs[3].name, "input_skip_bias_sum");
  EXPECT_EQ(s->findAttr("epsilon")->default_value, floatLit(1e-12));
}

TEST(OpCatalog, GroupQueryAttentionNeedsSevenInputsBecauseOfItsInt32Lengths) {
  OpCatalog catalog(contribOpDecls());
  const OpSignature* s = catalog.find("com.microsoft", "GroupQueryAttention", 1);
  EXPECT_EQ(s->min_inputs, 7);
  EXPECT_EQ(s->max_inputs, 16);
  EXPECT_TRUE(s->findAttr("num_heads")->required);
  EXPECT_TRUE(s->findAttr("kv_num_heads")->required);
}

TEST(OpCatalog, DeclaredDomainsAreKnownAndVersioned) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_TRUE(catalog.knowsDomain("com.microsoft"));
  EXPECT_FALSE(catalog.knowsDomain("com.example"));
  EXPECT_EQ(catalog.newestOpset("com.microsoft"), 1);
  EXPECT_EQ(catalog.newestOpset(""), OpCatalog::kNewestOnnxOpset);
  EXPECT_EQ(catalog.newestOpset("ai.onnx.ml"), 3);
  EXPECT_EQ(catalog.newestOpset("com.example"), -1);
  EXPECT_EQ(catalog.find("com.example", "Foo", 1), nullptr);
}

TEST(OpCatalog, UnknownOpsDoNotExist) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_FALSE(catalog.knowsOp("", "ReduceMaen"));
  EXPECT_FALSE(catalog.knowsOp("com.microsoft", "Add"));
  EXPECT_TRUE(catalog.knowsOp("com.microsoft", "FastGelu"));
}

// ---- Commutativity -----------------------------------------------------------------------

TEST(OpCatalog, OnnxBinaryOpsThatCommute) {
  OpCatalog catalog;
  for (const char* op : {"Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Xor", "Equal",
                         "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    EXPECT_TRUE(catalog.isCommutative("", op)) << op;
  for (const char* op : {"Sub", "Div", "Pow", "MatMul", "Less"})
    EXPECT_FALSE(catalog.isCommutative("", op)) << op;
  EXPECT_TRUE(catalog.find("", "BitwiseAnd", 18)->commutative);
  EXPECT_TRUE(catalog.find("", "Add", 14)->commutative);
}

TEST(OpCatalog, DeclaredOpsCommuteWhenTheirDeclarationSaysSo) {
  ir::OpDecl d;
  d.domain = "com.example";
  d.op = "Plus";
  d.inputs = {{"A", false, false}, {"B", false, false}};
  d.outputs = {{"C", false, false}};
  d.commutative = true;
  OpCatalog catalog({d});
  EXPECT_TRUE(catalog.isCommutative("com.example", "Plus"));
  EXPECT_TRUE(catalog.find("com.example", "Plus", 1)->commutative);
  EXPECT_FALSE(OpCatalog(contribOpDecls()).isCommutative("com.microsoft", "FusedMatMul"));
}

// ---- Suggestions -------------------------------------------------------------------------

TEST(OpCatalog, SuggestsTheClosestOpOfTheSameDomain) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_EQ(catalog.suggestOp("", "ReduceMaen"), "ReduceMean");
  EXPECT_EQ(catalog.suggestOp("", "layernormalization"), "LayerNormalization");
  EXPECT_EQ(catalog.suggestOp("com.microsoft", "FastGeLU"), "com.microsoft.FastGelu");
  EXPECT_EQ(catalog.suggestOp("com.microsoft", "SkipLayerNorm"),
            "com.microsoft.SkipLayerNormalization");
}

TEST(OpCatalog, SuggestsAnOpOfAnotherDomainWhenNoneIsClose) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_EQ(catalog.suggestOp("", "QuickGelu"), "com.microsoft.QuickGelu");
}

TEST(OpCatalog, SuggestsNothingForAnUnrelatedName) {
  OpCatalog catalog(contribOpDecls());
  EXPECT_EQ(catalog.suggestOp("", "Frobnicate"), "");
}

TEST(EditDistance, CountsASwapOfNeighboursAsOne) {
  EXPECT_EQ(editDistance("ReduceMaen", "ReduceMean"), 1u);
  EXPECT_EQ(editDistance("abc", "abc"), 0u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
}

}  // namespace
}  // namespace onnx_rewrite
