//===- ExplainTest.cc - why a rule never ran -------------------------------===//
//
// Specifies what --explain learns from the driver and the rule filter when a rule
// was tried nowhere: its opset range against the model's imports, no node of its
// root op, higher-priority rules that took every such node, --only and --skip.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/Applicability.h"
#include "runtime/driver/RuleSet.h"
#include "runtime/graph/Model.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::makeRenameRule;
using testing::parseModel;

OpId op(const char* type) { return OpId::get("", type); }

/// Never matches; applies to models whose ai.onnx import is in [min, max] (-1: open).
class OpsetRangeRule : public RewritePattern {
 public:
  OpsetRangeRule(const std::string& name, int64_t min, int64_t max)
      : RewritePattern(RuleInfo{name, op("Relu"), 0, {"ort"}, "test", {}}), min_(min), max_(max) {}
  bool appliesTo(const Graph& graph) const override {
    const int64_t v = graph.opsetVersion("");
    return v >= 0 && (min_ < 0 || v >= min_) && (max_ < 0 || v <= max_);
  }
  bool matchAndRewrite(NodeId, Rewriter&) const override { return false; }

 private:
  int64_t min_, max_;
};

/// Collects why rules did not run, as "rule: reason".
class NotRun : public RewriteListener {
 public:
  bool wantsMatchFailures() const override { return true; }
  void onRuleNotRun(const RewritePattern& rule, const Graph&, const std::string& why) override {
    reasons.push_back(rule.name() + ": " + why);
  }
  std::vector<std::string> reasons;
};

std::string modelAtOpset(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         "]>\ng (float[2] x) => (float[2] y) {\n  n = Neg(x)\n  y = Relu(n)\n}\n";
}

TEST(Explain, TheDriverSaysWhyARuleNeverRan) {
  onnx::ModelProto model = parseModel(modelAtOpset(11));
  RuleSet rules;
  rules.add(std::make_unique<OpsetRangeRule>("from_13", 13, -1));
  rules.add(makeRenameRule("abs_to_neg", op("Abs"), op("Neg")));
  rules.add(makeRenameRule("neg_to_sigmoid", op("Neg"), op("Sigmoid"), 10));
  rules.add(makeRenameRule("neg_to_tanh", op("Neg"), op("Tanh"), 5));
  NotRun listener;
  Options options;
  options.listener = &listener;
  rewrite(model, rules, options);
  EXPECT_EQ(listener.reasons,
            (std::vector<std::string>{
                "from_13: it requires ai.onnx >= 13, the model imports ai.onnx 11",
                "abs_to_neg: main has no Abs node (the op its match is rooted at)",
                "neg_to_tanh: rules of higher priority rewrote every Neg node of main (the op its "
                "match is rooted at) before its turn"}));
}

TEST(Explain, AnOpsetRangeIsDescribedAsTheRuleAcceptsIt) {
  onnx::ModelProto proto = parseModel(modelAtOpset(17));
  Model model(proto);
  const Graph& main = model.mainGraph();
  EXPECT_EQ(whyNotApplicable(OpsetRangeRule("r", 18, -1), model, main),
            "it requires ai.onnx >= 18, the model imports ai.onnx 17");
  EXPECT_EQ(whyNotApplicable(OpsetRangeRule("r", -1, 16), model, main),
            "it requires ai.onnx <= 16, the model imports ai.onnx 17");
  EXPECT_EQ(whyNotApplicable(OpsetRangeRule("r", 18, 22), model, main),
            "it requires ai.onnx 18 to 22, the model imports ai.onnx 17");
  EXPECT_EQ(whyNotApplicable(OpsetRangeRule("r", 23, 23), model, main),
            "it requires ai.onnx 23, the model imports ai.onnx 17");
  EXPECT_EQ(whyNotApplicable(OpsetRangeRule("r", 13, -1), model, main), "")
      << "no reason for a rule that applies";
  model.finish();
}

TEST(Explain, TheFilterSaysWhichPatternDroppedARule) {
  auto rule = makeRenameRule("layer_norm", op("Add"), op("Sub"));  // tagged "test"
  EXPECT_EQ(whyFilteredOut(*rule, {"", "norm", ""}), "--skip 'norm' matches its name");
  EXPECT_EQ(whyFilteredOut(*rule, {"", "^test$", ""}), "--skip '^test$' matches its tag 'test'");
  EXPECT_EQ(whyFilteredOut(*rule, {"gelu", "", ""}),
            "--only 'gelu' matches neither its name nor its tags (test)");
  EXPECT_EQ(whyFilteredOut(*rule, {"norm", "gelu", ""}), "");
}

}  // namespace
}  // namespace onnx_rewrite
