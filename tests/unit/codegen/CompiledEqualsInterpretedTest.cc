//===- CompiledEqualsInterpretedTest.cc - generated/ vs the interpreter ---===//
//
// DESIGN.md "How we know it works", item 4: on every model the rule tests use
// (positives and negatives, tests/unit/rules/RuleTestSupport normModelCases),
// the compiled rules (generated/, populateGeneratedRules) and the interpreter
// running rules/ must give byte-identical output models, identical per-rule
// statistics and identical failure reasons (what --explain prints).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;
using testing::RuleMode;
using testing::serialize;

/// Records every match failure as "rule @ root: reason".
class FailureLog : public RewriteListener {
 public:
  bool wantsMatchFailures() const override { return true; }
  void onMatchFailure(const RewritePattern& rule, Graph& graph, NodeId root,
                      const std::string& reason) override {
    lines.push_back(rule.name() + " @ " + std::to_string(root) + ": " + reason);
  }
  std::vector<std::string> lines;
};

struct Outcome {
  std::string model;
  std::string stats;
  std::vector<std::string> failures;
};

Outcome runIn(RuleMode mode, const std::string& text) {
  onnx::ModelProto model = parseModel(text);
  FailureLog log;
  Options options;
  options.listener = &log;
  Result r = rewrite(model, testing::shippedRules(mode), options);
  std::string stats;
  for (const RuleStats& s : r.stats.rules)
    stats += s.name + " tried " + std::to_string(s.tried) + " matched " +
             std::to_string(s.matched) + " applied " + std::to_string(s.applied) + "\n";
  return {serialize(model), stats, std::move(log.lines)};
}

TEST(CompiledEqualsInterpreted, SameRulesInTheSameOrder) {
  const auto& a = testing::shippedRules(RuleMode::kInterpreted).rules();
  const auto& b = testing::shippedRules(RuleMode::kCompiled).rules();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const RuleInfo& x = a[i]->info();
    const RuleInfo& y = b[i]->info();
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.root, y.root) << x.name;
    EXPECT_EQ(x.priority, y.priority) << x.name;
    EXPECT_EQ(x.tags, y.tags) << x.name;
    EXPECT_EQ(x.source, y.source) << x.name;
    EXPECT_EQ(x.creates, y.creates) << x.name;
  }
}

TEST(CompiledEqualsInterpreted, EveryRuleTestModel) {
  size_t fused = 0;
  for (const auto& [name, text] : testing::normModelCases()) {
    SCOPED_TRACE(name);
    const Outcome interpreted = runIn(RuleMode::kInterpreted, text);
    const Outcome compiled = runIn(RuleMode::kCompiled, text);
    EXPECT_TRUE(interpreted.model == compiled.model) << "output models differ";
    EXPECT_EQ(interpreted.stats, compiled.stats);
    EXPECT_EQ(interpreted.failures, compiled.failures);
    fused += interpreted.model != serialize(parseModel(text));
  }
  EXPECT_GT(fused, 20u) << "the model list should mostly fuse";
}

}  // namespace
}  // namespace onnx_rewrite
