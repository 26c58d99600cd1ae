//===- RuleTestSupport.cc - running the shipped rules in tests ------------===//
#include "tests/unit/rules/RuleTestSupport.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "compiler/diag/Diagnostics.h"
#include "dsl/RuleLoader.h"
#include "runtime/interp/RuleInterpreter.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite::testing {

const RuleSet& shippedRules() {
  static const RuleSet rules = [] {
    std::vector<std::string> files;
    for (const char* name :
         {"com_microsoft.yaml", "layer_norm.yaml", "rms_norm.td", "skip_layer_norm.yaml"})
      files.push_back(std::string(ONNX_REWRITE_RULES_DIR) + "/" + name);
    DiagnosticEngine diag;
    ir::RuleFile file;
    if (!loadRuleFiles(files, RuleLoadOptions{}, file, diag))
      throw std::runtime_error("the shipped rules do not load");
    return interpretRules(file);
  }();
  return rules;
}

std::vector<std::string> fuse(const std::string& text, onnx::ModelProto* out, Result* result) {
  onnx::ModelProto model = parseModel(text);
  Result r = rewrite(model, shippedRules());
  if (result) *result = r;
  std::vector<std::string> ops = opTypes(model);
  if (out) *out = std::move(model);
  return ops;
}

void expectUnchanged(const std::string& text, const std::string& only) {
  onnx::ModelProto model = parseModel(text);
  const std::string before = serialize(model);
  Options options;
  options.filter.only = only;
  Result r = rewrite(model, shippedRules(), options);
  EXPECT_EQ(r.stats.rewrites, 0u) << r.toJson();
  EXPECT_EQ(serialize(model), before);
}

void expectSameInOrt(const std::string& text, const std::string& tolerance) {
  onnx::ModelProto before = parseModel(text);
  onnx::ModelProto after = before;
  Result r = rewrite(after, shippedRules());
  ASSERT_GT(r.stats.rewrites, 0u) << "nothing was fused";
  OracleVerdict verdict = compareInOrt(before, after, {"B=2", "S=5"}, tolerance);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

}  // namespace onnx_rewrite::testing
