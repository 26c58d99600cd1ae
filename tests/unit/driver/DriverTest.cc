//===- DriverTest.cc - the greedy driver: order, fixpoint, caps -----------===//
//
// Specifies the driver's contract with small hand-written rules: higher priority
// wins globally, equal priority keeps declaration order, chains of rewrites reach
// a fixpoint, caps are reported rather than fatal, results are deterministic and
// idempotent, and rules run inside functions and control-flow bodies too.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/Driver.h"
#include "runtime/driver/Rewriter.h"
#include "runtime/driver/RuleSet.h"
#include "runtime/graph/Model.h"
#include "runtime/match/MatchSupport.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::makeBypassRule;
using testing::makeFusePairRule;
using testing::makeRenameRule;
using testing::opTypes;
using testing::parseModel;
using testing::serialize;

OpId op(const char* type) { return OpId::get("", type); }

Options noInference() {
  Options options;
  options.shape_inference = false;
  return options;
}

const char* kReluNeg = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  n = Neg(x)
  y = Relu(n)
}
)";

TEST(Driver, HigherPriorityRuleWinsOverEarlierCandidates) {
  // fuse_relu_neg (root Relu, priority 10) and neg_to_abs (root Neg, priority 5) overlap
  // on Neg. Neg comes first in the graph, but priority is global: the fusion wins.
  RuleSet rules;
  rules.add(makeRenameRule("neg_to_abs", op("Neg"), op("Abs"), 5));
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid"), 10));
  onnx::ModelProto model = parseModel(kReluNeg);
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"Sigmoid"});
  EXPECT_EQ(result.stats.rules[1].applied, 1u);
  EXPECT_EQ(result.stats.rules[0].applied, 0u);
}

TEST(Driver, LowerPriorityRuleAppliesWhenHigherOneDoesNotMatch) {
  RuleSet rules;
  rules.add(makeRenameRule("neg_to_abs", op("Neg"), op("Abs"), 10));
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid"), 5));
  onnx::ModelProto model = parseModel(kReluNeg);
  rewrite(model, rules, noInference());
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Abs", "Relu"}));
}

TEST(Driver, EqualPrioritiesKeepDeclarationOrder) {
  for (bool sigmoid_first : {true, false}) {
    RuleSet rules;
    auto to_sigmoid = makeRenameRule("relu_to_sigmoid", op("Relu"), op("Sigmoid"), 1);
    auto to_tanh = makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh"), 1);
    if (sigmoid_first) {
      rules.add(std::move(to_sigmoid));
      rules.add(std::move(to_tanh));
    } else {
      rules.add(std::move(to_tanh));
      rules.add(std::move(to_sigmoid));
    }
    onnx::ModelProto model = parseModel(kReluNeg);
    rewrite(model, rules, noInference());
    EXPECT_EQ(opTypes(model)[1], sigmoid_first ? "Sigmoid" : "Tanh");
  }
}

TEST(Driver, ChainsOfRewritesReachAFixpoint) {
  // Relu -> Sigmoid -> Tanh -> Abs: each product is the next rule's root.
  RuleSet rules;
  rules.add(makeRenameRule("a", op("Relu"), op("Sigmoid")));
  rules.add(makeRenameRule("b", op("Sigmoid"), op("Tanh")));
  rules.add(makeRenameRule("c", op("Tanh"), op("Abs")));
  onnx::ModelProto model = parseModel(kReluNeg);
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Neg", "Abs"}));
  EXPECT_TRUE(result.stats.converged);
  EXPECT_EQ(result.stats.rewrites, 3u);
  EXPECT_EQ(result.stats.iterations, 2) << "one sweep rewrites, the next proves the fixpoint";
}

TEST(Driver, EscapeCheckBlocksAFusionWhileAnotherConsumerRemains) {
  // Neg(x) feeds two Relus (once Identity is bypassed); fuse_relu_neg may not swallow Neg.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  n = Neg(x)
  i = Identity(n)
  y = Relu(n)
  z = Relu(i)
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid"), 1));
  rules.add(makeBypassRule("drop_identity", op("Identity"), 2));
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Neg", "Relu", "Relu"}));
  EXPECT_GE(result.stats.rules[0].matched, 1u) << "matched, but blocked by the escape check";
  EXPECT_EQ(result.stats.rules[0].applied, 0u);
}

/// Abs(Neg(w)) -> Abs(w): the Neg stays (it is not part of the match) but loses a reader.
class AbsSkipsNeg : public RewritePattern {
 public:
  AbsSkipsNeg() : RewritePattern(RuleInfo{"abs_skips_neg", op("Abs"), 1, {}, "test", {}}) {}
  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    NodeId neg = producerIf(g, g.node(root).input(0), op("Neg"));
    if (neg == kNoId) return false;
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable({root}, {y})) return false;
    NodeSpec spec;
    spec.op = op("Abs");
    spec.inputs = {g.node(neg).input(0)};
    NodeId n = rw.createNode(std::move(spec));
    return rw.replaceMatch({root}, {{y, g.node(n).output(0)}});
  }
};

TEST(Driver, AFusionBlockedByAConsumerAppliesOnceThatConsumerIsGone) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  n = Neg(x)
  y = Relu(n)
  z = Abs(n)
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid"), 10));
  rules.add(std::make_unique<AbsSkipsNeg>());
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "Abs"}));
  EXPECT_EQ(result.stats.rules[0].applied, 1u);
  EXPECT_TRUE(result.stats.converged);
}

TEST(Driver, ANewNodeThatComputesWhatAnotherAlreadyDoesIsThatNode) {
  // abs_skips_neg makes Abs(x), which t's node already computes: y reads it, and no second
  // Abs(x) is added (a rule moving a shared Cast or Transpose per reader leaves one).
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  t = Abs(x)
  z = Relu(t)
  n = Neg(x)
  y = Abs(n)
}
)");
  RuleSet rules;
  rules.add(std::make_unique<AbsSkipsNeg>());
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rules[0].applied, 1u);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Abs", "Relu"}));
  EXPECT_EQ(model.graph().node(0).output(0), "y") << "the graph output's name is kept";
  EXPECT_EQ(model.graph().node(1).input(0), "y");
}

TEST(Driver, ANodeThatComputesAGraphOutputIsNotReused) {
  // Reusing z's Abs(x) for y would replace one graph output by another, which naming
  // forbids: y gets its own node.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  z = Abs(x)
  n = Neg(x)
  y = Abs(n)
}
)");
  RuleSet rules;
  rules.add(std::make_unique<AbsSkipsNeg>());
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rules[0].applied, 1u);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Abs", "Abs"}));
}

TEST(Driver, IterationCapIsReportedNotFatal) {
  // Two rules that undo each other never converge.
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh")));
  rules.add(makeRenameRule("tanh_to_relu", op("Tanh"), op("Relu")));
  onnx::ModelProto model = parseModel(kReluNeg);
  Options options = noInference();
  options.max_iterations = 3;
  options.max_rewrites = 1000;
  Result result = rewrite(model, rules, options);
  EXPECT_FALSE(result.stats.converged);
  EXPECT_FALSE(result.stats.cap_hit.empty());
  EXPECT_NE(result.notes.back().find("max-rewrites (1000) reached in main"), std::string::npos)
      << result.notes.back();
  EXPECT_EQ(model.graph().node_size(), 2) << "the model is still whole and saved";
}

TEST(Driver, RulesThatUndoEachOtherStopAtTheDefaultBudgetInsideOneSweepNamingThem) {
  // Each rewrite makes a node the other rule rewrites back: one sweep never drains, so
  // the sweep cap cannot stop it; the default budget (4 per node + 10000) does.
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh")));
  rules.add(makeRenameRule("tanh_to_relu", op("Tanh"), op("Relu")));
  onnx::ModelProto model = parseModel(kReluNeg);
  Options options = noInference();
  options.max_iterations = 1;
  Result result = rewrite(model, rules, options);
  EXPECT_EQ(result.stats.rewrites, 10008u) << "2 nodes: 4 x 2 + 10000";
  EXPECT_FALSE(result.stats.converged);
  EXPECT_EQ(result.stats.cap_hit,
            "rewrite budget (10008, 4 per node + 10000) reached in main; more rewrites may "
            "apply; rules still firing: relu_to_tanh (500), tanh_to_relu (500) (rules that "
            "undo each other never stop; --max-rewrites N changes the budget, 0 lifts it)");
  EXPECT_EQ(result.notes.back(), result.stats.cap_hit);
  EXPECT_EQ(model.graph().node_size(), 2) << "the model is still whole and saved";
}

TEST(Driver, NoLimitLiftsTheDefaultBudget) {
  onnx::ModelProto model = parseModel(kReluNeg);
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh")));
  rules.add(makeRenameRule("tanh_to_relu", op("Tanh"), op("Relu")));
  Options options = noInference();
  options.max_iterations = 1;
  options.max_rewrites = 20000;  // an explicit budget above the default one is honoured
  Result result = rewrite(model, rules, options);
  EXPECT_EQ(result.stats.rewrites, 20000u);
  EXPECT_EQ(result.stats.cap_hit.rfind("max-rewrites (20000) reached in main", 0), 0u)
      << result.stats.cap_hit;
}

TEST(Driver, TheDefaultBudgetGrowsWithTheModel) {
  EXPECT_EQ(proportionalRewriteBudget(0), 10000);
  EXPECT_EQ(proportionalRewriteBudget(1000000), 4010000);
  EXPECT_GT(proportionalRewriteBudget(UINT64_MAX), 0) << "no overflow";
}

TEST(Driver, RewriteCapStopsEarlyAndSaysSo) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Relu(x)
  b = Relu(a)
  y = Relu(b)
}
)");
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh")));
  Options options = noInference();
  options.max_rewrites = 2;
  Result result = rewrite(model, rules, options);
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_FALSE(result.stats.converged);
  EXPECT_EQ(result.stats.cap_hit,
            "max-rewrites (2) reached in main; more rewrites may apply; rules still firing: "
            "relu_to_tanh (2)");
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Tanh", "Tanh", "Relu"}));
}

TEST(Driver, IterationCapWithSweepsStillChangingIsReported) {
  onnx::ModelProto model = parseModel(kReluNeg);
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_tanh", op("Relu"), op("Tanh")));
  Options options = noInference();
  options.max_iterations = 1;
  Result result = rewrite(model, rules, options);
  EXPECT_FALSE(result.stats.converged) << "one sweep that rewrote proves no fixpoint";
  EXPECT_EQ(result.stats.cap_hit, "max-iterations (1) reached in main while rules still applied");
}

const char* kMixed = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  a = Neg(x)
  b = Relu(a)
  c = Identity(b)
  d = Neg(c)
  e = Relu(d)
  f = Identity(e)
  y = Add(f, b)
}
)";

RuleSet mixedRules() {
  RuleSet rules;
  rules.add(makeBypassRule("drop_identity", op("Identity"), 20));
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid"), 10));
  rules.add(makeRenameRule("neg_to_abs", op("Neg"), op("Abs"), 5));
  return rules;
}

TEST(Driver, IsDeterministic) {
  const RuleSet rules = mixedRules();
  onnx::ModelProto first = parseModel(kMixed);
  onnx::ModelProto second = parseModel(kMixed);
  rewrite(first, rules, noInference());
  rewrite(second, rules, noInference());
  EXPECT_EQ(serialize(first), serialize(second));
  EXPECT_EQ(opTypes(first), (std::vector<std::string>{"Sigmoid", "Sigmoid", "Add"}));
}

TEST(Driver, IsIdempotent) {
  const RuleSet rules = mixedRules();
  onnx::ModelProto model = parseModel(kMixed);
  rewrite(model, rules, noInference());
  const std::string once = serialize(model);
  Result again = rewrite(model, rules, noInference());
  EXPECT_EQ(again.stats.rewrites, 0u);
  EXPECT_EQ(serialize(model), once);
}

TEST(Driver, RewritesInsideModelLocalFunctionsKeptAsCalls) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.Block(x)
}
<domain: "local", opset_import: ["" : 17]>
Block (a) => (b) {
  t = Neg(a)
  b = Relu(t)
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid")));
  Options options = noInference();
  options.inline_functions = false;  // inlined, the pair would fuse in the main graph
  Result result = rewrite(model, rules, options);
  EXPECT_EQ(result.stats.rewrites, 1u);
  ASSERT_EQ(model.functions_size(), 1);
  ASSERT_EQ(model.functions(0).node_size(), 1);
  EXPECT_EQ(model.functions(0).node(0).op_type(), "Sigmoid");
  EXPECT_EQ(model.functions(0).node(0).output(0), "b") << "function outputs keep their names";
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"local::Block"});
}

TEST(Driver, RewritesInsideIfBranches) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[2] x) => (float[2] y) {
  y = If(cond) <then_branch = then_g () => (float[2] a) { t = Neg(x)  a = Relu(t) },
                else_branch = else_g () => (float[2] b) { b = Abs(x) }>
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid")));
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rewrites, 1u);
  const onnx::GraphProto& then_g = model.graph().node(0).attribute(0).g();
  EXPECT_EQ(testing::opTypes(then_g), std::vector<std::string>{"Sigmoid"});
  EXPECT_EQ(then_g.node(0).input(0), "x") << "reads the outer value by name";
  EXPECT_EQ(then_g.node(0).output(0), "a");
}

TEST(Driver, NeverRemovesAValueASubgraphReads) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[2] x) => (float[2] y) {
  t = Neg(x)
  r = Relu(t)
  y = If(cond) <then_branch = then_g () => (float[2] a) { a = Abs(t) },
                else_branch = else_g () => (float[2] b) { b = Abs(r) }>
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid")));
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rules[0].matched, 1u);
  EXPECT_EQ(result.stats.rules[0].applied, 0u) << "t is read by the then-branch";
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Neg", "Relu", "If"}));
}

/// Names of the main graph's initializers.
std::vector<std::string> initializerNames(const onnx::ModelProto& model) {
  std::vector<std::string> names;
  for (const onnx::TensorProto& t : model.graph().initializer()) names.push_back(t.name());
  return names;
}

// A merged decoder's weights are main-graph initializers only its branches read. One that
// rewrites in every branch stopped reading (its rotary caches) goes, as a main-graph
// initializer goes when a rewrite takes its last reader; one a branch still reads stays, and
// so does one nothing read on import.
TEST(Driver, DropsAnInitializerNoBodyReadsAnyMore) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[2] x) => (float[2] y) <float one = {1.0}, float half = {1.0}, float unread = {4.0}> {
  y = If(cond) <then_branch = then_g () => (float[2] a) { p = Mul(x, one)  a = Mul(p, half) },
                else_branch = else_g () => (float[2] b) { q = Mul(x, one)  b = Add(q, half) }>
}
)");
  RuleSet rules;
  rules.add(testing::makeMulByConstantRule("mul_by_one", 1.0));
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rewrites, 3u);
  EXPECT_EQ(initializerNames(model), (std::vector<std::string>{"half", "unread"}));
}

TEST(Driver, KeepsAnInitializerANestedBodyStillReads) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[2] x) => (float[2] y) <float one = {1.0}> {
  y = If(cond) <then_branch = then_g () => (float[2] a) {
        p = Mul(x, one)
        a = If(cond) <then_branch = t2 () => (float[2] c) { c = Add(p, one) },
                      else_branch = e2 () => (float[2] d) { d = Neg(p) }>
      },
      else_branch = else_g () => (float[2] b) { b = Mul(x, one) }>
}
)");
  RuleSet rules;
  rules.add(testing::makeMulByConstantRule("mul_by_one", 1.0));
  Result result = rewrite(model, rules, noInference());
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(initializerNames(model), std::vector<std::string>{"one"}) << "t2's Add reads it";
}

TEST(Driver, OnlyAndSkipSelectRulesByNameOrTag) {
  const RuleSet rules = mixedRules();
  auto names = [&](const RuleFilter& f) {
    std::vector<std::string> out;
    for (const RewritePattern* r : selectRules(rules, f)) out.push_back(r->name());
    return out;
  };
  EXPECT_EQ(names({"neg", "", ""}), (std::vector<std::string>{"fuse_relu_neg", "neg_to_abs"}));
  EXPECT_EQ(names({"", "neg", ""}), std::vector<std::string>{"drop_identity"});
  EXPECT_EQ(names({"test", "identity", ""}).size(), 2u) << "tags match too";
  EXPECT_THROW(names({"(", "", ""}), std::invalid_argument);
}

TEST(Driver, StatisticsAreJson) {
  const RuleSet rules = mixedRules();
  onnx::ModelProto model = parseModel(kMixed);
  Result result = rewrite(model, rules, noInference());
  const std::string json = result.toJson();
  EXPECT_NE(json.find("\"converged\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"name\": \"drop_identity\", \"priority\": 20, \"tried\": "),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"external_bytes_read\": 0"), std::string::npos) << json;
  EXPECT_EQ(json.back(), '}');
  EXPECT_EQ(json.find("]\n,"), std::string::npos) << "the rules list closes cleanly";
}

/// Records match failures, as explain mode will.
class FailureLog : public RewriteListener {
 public:
  bool wantsMatchFailures() const override { return true; }
  void onMatchFailure(const RewritePattern& rule, Graph& g, NodeId root,
                      const std::string& reason) override {
    lines.push_back(rule.name() + " at " + g.node(root).opType() + ": " + reason);
  }
  std::vector<std::string> lines;
};

TEST(Driver, ListenersHearWhyAMatchFailed) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Abs(x)
  y = Relu(a)
}
)");
  RuleSet rules;
  rules.add(makeFusePairRule("fuse_relu_neg", op("Relu"), op("Neg"), op("Sigmoid")));
  FailureLog log;
  Options options = noInference();
  options.listener = &log;
  rewrite(model, rules, options);
  ASSERT_FALSE(log.lines.empty());
  EXPECT_EQ(log.lines[0], "fuse_relu_neg at Relu: input 0 is not produced by Neg");
}

}  // namespace
}  // namespace onnx_rewrite
