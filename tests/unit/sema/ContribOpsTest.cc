//===- ContribOpsTest.cc - the contrib op declarations, C++ and YAML ------===//
//
// contribOpDecls() and rules/com_microsoft.yaml declare the same ops; the
// signatures themselves were checked against ONNX Runtime (docs/target-ops.md).
// These tests pin the details rules depend on.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/ContribOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "compiler/ir/RulePrinter.h"
#include "compiler/sema/RuleChecks.h"
#include "tests/unit/sema/RuleBuilder.h"

#ifdef ONNX_REWRITE_HAVE_YAML_FRONT_END
#include "dsl/yaml/YamlFrontEnd.h"
#endif

namespace onnx_rewrite {
namespace {

const ir::OpDecl& findDecl(const std::vector<ir::OpDecl>& decls, const std::string& domain,
                           const std::string& op) {
  for (const ir::OpDecl& d : decls)
    if (d.domain == domain && d.op == op) return d;
  static ir::OpDecl none;
  ADD_FAILURE() << "no declaration of " << domain << "." << op;
  return none;
}

std::vector<std::string> paramNames(const std::vector<ir::OpDecl::Param>& ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) out.push_back(p.name + (p.optional ? "?" : ""));
  return out;
}

/// The declarations as printed, sorted by op, without locations: what must agree.
std::vector<std::string> printed(std::vector<ir::OpDecl> decls) {
  std::vector<std::string> out;
  for (const ir::OpDecl& d : decls) out.push_back(ir::printOpDecl(d));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ContribOps, DeclaresTheOpsRulesEmit) {
  std::vector<std::string> ops;
  for (const ir::OpDecl& d : contribOpDecls())
    ops.push_back((d.domain.empty() ? "" : d.domain + ".") + d.op);
  std::sort(ops.begin(), ops.end());
  EXPECT_EQ(ops,
            (std::vector<std::string>{
                "LayerNormalization", "SimplifiedLayerNormalization", "com.microsoft.Attention",
                "com.microsoft.BiasGelu", "com.microsoft.EmbedLayerNormalization",
                "com.microsoft.FastGelu", "com.microsoft.FusedMatMul", "com.microsoft.Gelu",
                "com.microsoft.GroupQueryAttention", "com.microsoft.MultiHeadAttention",
                "com.microsoft.QuickGelu", "com.microsoft.RotaryEmbedding",
                "com.microsoft.SkipLayerNormalization",
                "com.microsoft.SkipSimplifiedLayerNormalization"}));
}

TEST(ContribOps, DeclarationsPassTheChecks) {
  DiagnosticEngine diag;
  std::vector<std::string> seen;
  diag.setHandler([&](const Diagnostic& d) { seen.push_back(test::diagnosticText(d)); });
  ir::RuleFile file;
  EXPECT_TRUE(checkRules(file, contribOpDecls(), diag));
  EXPECT_EQ(seen, std::vector<std::string>{});
}

TEST(ContribOps, SkipLayerNormalizationReexportsTheSumAsOutput3) {
  std::vector<ir::OpDecl> decls = contribOpDecls();
  const ir::OpDecl& d = findDecl(decls, "com.microsoft", "SkipLayerNormalization");
  EXPECT_EQ(paramNames(d.inputs),
            (std::vector<std::string>{"input", "skip", "gamma", "beta?", "bias?"}));
  EXPECT_EQ(paramNames(d.outputs),
            (std::vector<std::string>{"output", "mean?", "inv_std_var?", "input_skip_bias_sum?"}));
}

TEST(ContribOps, RotaryEmbeddingTakesPositionIdsSecond) {
  std::vector<ir::OpDecl> decls = contribOpDecls();
  const ir::OpDecl& d = findDecl(decls, "com.microsoft", "RotaryEmbedding");
  EXPECT_EQ(paramNames(d.inputs),
            (std::vector<std::string>{"input", "position_ids", "cos_cache", "sin_cache"}));
}

TEST(ContribOps, SimplifiedLayerNormalizationLivesInTheOnnxDomain) {
  std::vector<ir::OpDecl> decls = contribOpDecls();
  const ir::OpDecl& d = findDecl(decls, "", "SimplifiedLayerNormalization");
  EXPECT_EQ(paramNames(d.inputs), (std::vector<std::string>{"X", "scale"}));
  EXPECT_EQ(d.since_version, 1);
}

TEST(ContribOps, AttentionOpsRequireTheirHeadCounts) {
  std::vector<ir::OpDecl> decls = contribOpDecls();
  auto required = [](const ir::OpDecl& d) {
    std::vector<std::string> out;
    for (const auto& a : d.attrs)
      if (a.required) out.push_back(a.name);
    return out;
  };
  EXPECT_EQ(required(findDecl(decls, "com.microsoft", "Attention")),
            (std::vector<std::string>{"num_heads"}));
  EXPECT_EQ(required(findDecl(decls, "com.microsoft", "MultiHeadAttention")),
            (std::vector<std::string>{"num_heads"}));
  EXPECT_EQ(required(findDecl(decls, "com.microsoft", "GroupQueryAttention")),
            (std::vector<std::string>{"kv_num_heads", "num_heads"}));
}

TEST(ContribOps, YamlDeclarationsMatchTheCppTable) {
#ifndef ONNX_REWRITE_HAVE_YAML_FRONT_END
  GTEST_SKIP() << "YAML front end not available";
#else
  const std::string path = std::string(ONNX_REWRITE_SOURCE_DIR) + "/rules/com_microsoft.yaml";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  std::ostringstream text;
  text << in.rdbuf();
  DiagnosticEngine diag;
  std::vector<std::string> seen;
  diag.setHandler([&](const Diagnostic& d) { seen.push_back(test::diagnosticText(d)); });
  ir::RuleFile file;
  bool parsed = parseYamlRules(path, text.str(), file, diag);
  EXPECT_EQ(seen, std::vector<std::string>{});
  ASSERT_TRUE(parsed);
  EXPECT_EQ(printed(file.ops), printed(contribOpDecls()));
#endif
}

}  // namespace
}  // namespace onnx_rewrite
