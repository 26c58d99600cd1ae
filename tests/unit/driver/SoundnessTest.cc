//===- SoundnessTest.cc - no rewrite changes what readers of a value see --===//
//
// Specifies the driver's soundness check: a rewrite that would change the element
// type, the rank or a static dim of a replaced value, or that creates a node its
// op's shape inference rejects, is refused with a reason naming the value; the
// graph is left as it was; unknown types refuse nothing; and test builds verify
// every rewrite again after the fact.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/builtin/BuiltinRules.h"
#include "runtime/driver/FailureReasons.h"
#include "runtime/driver/Rewriter.h"
#include "runtime/driver/RuleSet.h"
#include "runtime/driver/Soundness.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::makeBypassRule;
using testing::makeRenameRule;
using testing::opTypes;
using testing::parseModel;
using testing::serialize;

OpId op(const char* type) { return OpId::get("", type); }

/// The shipped rules that fold a constant scale into a MatMul, and nothing else.
Options matmulRulesOnly(RewriteListener* listener) {
  Options options;
  options.filter.only = "^fused_matmul";
  options.listener = listener;
  return options;
}

/// MatMul(x * c, b) with c of shape [1]: the Mul broadcasts a scalar x to rank 1.
const char* kScalarTimesVector = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float x, float[1,4] b) => (float[4] y) {
  c = Constant <value = float[1] {2.0}> ()
  s = Mul(x, c)
  y = MatMul(s, b)
}
)";

TEST(Soundness, RefusesToDropABroadcastThatMadeAScalarAVector) {
  // fused_matmul_input_scale folds c into FusedMatMul's alpha and hands it x itself: a
  // scalar, which FusedMatMul (unlike the Mul) does not accept.
  onnx::ModelProto model = parseModel(kScalarTimesVector);
  const std::string before = serialize(model);
  FailureReasons explain("fused_matmul_input_scale");
  const RuleSet rules = builtinRules();
  Result result = rewrite(model, rules, matmulRulesOnly(&explain));
  EXPECT_EQ(serialize(model), before) << "the refused rewrite leaves the model as it was";
  ASSERT_EQ(explain.reasons.size(), 1u);
  EXPECT_EQ(explain.reasons[0],
            "the rewrite would create com.microsoft::FusedMatMul 'fused_matmul_input_scale' over "
            "(float[], float[1,4]), which its shape inference rejects: Input tensors of wrong "
            "rank (0).");
  uint64_t matched = 0, unsound = 0, applied = 0;
  for (const RuleStats& r : result.stats.rules) {
    matched += r.matched;
    unsound += r.unsound;
    applied += r.applied;
  }
  EXPECT_EQ(matched, 1u);
  EXPECT_EQ(unsound, 1u);
  EXPECT_EQ(applied, 0u);
}

TEST(Soundness, AllowsTheSameFusionWhenNothingWasBroadcast) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3,1] x, float[1,4] b) => (float[3,4] y) {
  c = Constant <value = float[1] {2.0}> ()
  s = Mul(x, c)
  y = MatMul(s, b)
}
)");
  const RuleSet rules = builtinRules();
  Result result = rewrite(model, rules, matmulRulesOnly(nullptr));
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"com.microsoft::FusedMatMul"});
}

/// y = Add(x, b) read by a Relu; `drop_add` replaces y by x, forgetting the broadcast. A
/// shape "" is a scalar ("float x" in ONNX's text format).
std::string addModel(const std::string& x, const std::string& b, const std::string& y) {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float" + x + " x, float" + b +
         " b) => (float" + y + " z) {\n  y = Add(x, b)\n  z = Relu(y)\n}\n";
}

struct Refusal {
  std::string x, b, y;
  std::string reason;
};

TEST(Soundness, RefusesAReplacementOfAnotherRankOrDim) {
  for (const Refusal& c : {
           Refusal{"[1,4]", "[3,1]", "[3,4]",
                   "the rewrite would change 'y' from float[3,4] to float[1,4]"},
           Refusal{"[1,4]", "[2,1,4]", "[2,1,4]",
                   "the rewrite would change 'y' from float[2,1,4] to float[1,4]"},
           Refusal{"", "[4]", "[4]", "the rewrite would change 'y' from float[4] to float[]"},
       }) {
    SCOPED_TRACE(c.reason);
    onnx::ModelProto model = parseModel(addModel(c.x, c.b, c.y));
    RuleSet rules;
    rules.add(makeBypassRule("drop_add", op("Add")));
    FailureReasons explain("drop_add");
    Options options;
    options.listener = &explain;
    Result result = rewrite(model, rules, options);
    EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Add", "Relu"}));
    EXPECT_EQ(explain.reasons, std::vector<std::string>{c.reason});
    EXPECT_EQ(result.stats.rules[0].unsound, 1u);
  }
}

TEST(Soundness, AllowsAReplacementOfTheSameShapeWithOtherSymbols) {
  // Symbolic dims are not compared: exporters and inference name equal dims differently.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x, float[1] b) => (float[M,4] z) <float[M,4] y> {
  y = Add(x, b)
  z = Relu(y)
}
)");
  RuleSet rules;
  rules.add(makeBypassRule("drop_add", op("Add")));
  rewrite(model, rules);
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"Relu"});
}

TEST(Soundness, RefusesAReplacementOfAnotherElementType) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float16[2] z) {
  y = Cast <to = 10> (x)
  z = Relu(y)
}
)");
  RuleSet rules;
  rules.add(makeBypassRule("drop_cast", op("Cast")));
  FailureReasons explain("drop_cast");
  Options options;
  options.listener = &explain;
  rewrite(model, rules, options);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Cast", "Relu"}));
  EXPECT_EQ(explain.reasons,
            std::vector<std::string>{"the rewrite would change 'y' from float16[2] to float[2]"});
}

TEST(Soundness, RefusesNothingWhereTheGraphKnowsNoShapes) {
  // Without shape inference y has no type: there is nothing to compare with.
  onnx::ModelProto model = parseModel(addModel("[1,4]", "[3,1]", "[3,4]"));
  RuleSet rules;
  rules.add(makeBypassRule("drop_add", op("Add")));
  Options options;
  options.shape_inference = false;
  rewrite(model, rules, options);
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"Relu"});
}

TEST(Soundness, TypesDifferOnlyInWhatBothSidesKnow) {
  auto type = [](const std::string& text) {
    // "float[2,N]" style, parsed through a one-input model.
    onnx::ModelProto m = parseModel("<ir_version: 8, opset_import: [\"\" : 17]>\ng (" + text +
                                    " x) => (" + text + " y) {\n  y = Identity(x)\n}\n");
    return m.graph().input(0).type();
  };
  const onnx::TypeProto f23 = type("float[2,3]"), f3 = type("float[3]"), h23 = type("float16[2,3]");
  const onnx::TypeProto fN3 = type("float[N,3]"), f2M = type("float[2,M]");
  EXPECT_TRUE(typesDiffer(&f23, &f3)) << "rank";
  EXPECT_TRUE(typesDiffer(&f23, &h23)) << "element type";
  EXPECT_FALSE(typesDiffer(&f23, &fN3)) << "a symbolic dim may be 2";
  EXPECT_FALSE(typesDiffer(&fN3, &f2M));
  EXPECT_FALSE(typesDiffer(&f23, nullptr)) << "unknown refuses nothing";
  EXPECT_EQ(describeType(&fN3), "float[N,3]");
  EXPECT_EQ(describeType(nullptr), "?");
}

TEST(Soundness, TestBuildsVerifyWhatTheCheckCouldNotTell) {
  // Relu -> a com.microsoft op no inference knows: the check before the rewrite allows the
  // unknown, the check after it (Options::verify_rewrites, always on in test builds) does
  // not, as every op a shipped rule emits must have inference (ops of other domains cannot
  // be checked and pass).
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] z) {
  y = Relu(x)
  z = Neg(y)
}
)");
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_mystery", op("Relu"), OpId::get("com.microsoft", "Mystery")));
  Options options;
  options.verify_rewrites = true;
  try {
    rewrite(model, rules, options);
    FAIL() << "no SoundnessViolation";
  } catch (const SoundnessViolation& e) {
    EXPECT_EQ(std::string(e.what()),
              "soundness check: rule 'relu_to_mystery' at Relu '' in main: the rewrite would "
              "replace 'y' (float[2]) by ?: com.microsoft::Mystery 'relu_to_mystery' has no shape "
              "inference");
  }
}

TEST(Soundness, AFailedRewriteLeavesTheModelAsItWas) {
  // The error leaves rewrite() after the driver ran on inferred value_info: the types it
  // inferred must be undone before the IR exports (and deletes) value_info, not after
  // (reading freed value_info hung a run of a rule whose op had no inference; the
  // sanitizer build of this test reports the use after free).
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] z) {
  a = Neg(x)
  b = Abs(a)
  y = Relu(b)
  z = Neg(y)
}
)");
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_mystery", op("Relu"), OpId::get("com.microsoft", "Mystery")));
  Options options;
  options.verify_rewrites = true;
  EXPECT_THROW(rewrite(model, rules, options), SoundnessViolation);
  // What inference added is gone again, and the graph outputs keep their declared types.
  EXPECT_EQ(model.graph().value_info_size(), 0);
  ASSERT_EQ(model.graph().output_size(), 1);
  EXPECT_EQ(model.graph().output(0).type().tensor_type().shape().dim_size(), 2);
}

/// Neg(x) -> Neg(Add(x, c)) with c a float zero: the Add's output takes x's type, so the
/// Neg's is unchanged, but for an fp16 x the Add mixes float16 and float in its one type T.
class NegOfAddedFloatZero : public RewritePattern {
 public:
  NegOfAddedFloatZero()
      : RewritePattern(RuleInfo{"neg_of_added_zero", op("Neg"), 1, {}, "test", {}}) {}
  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable({root}, {y})) return false;
    onnx::TensorProto zero;
    zero.set_data_type(onnx::TensorProto::FLOAT);
    zero.add_float_data(0.0f);
    NodeSpec add;
    add.op = op("Add");
    add.inputs = {g.node(root).input(0), rw.addInitializer(zero, "zero")};
    const ValueId sum = g.node(rw.createNode(std::move(add))).output(0);
    NodeSpec neg;
    neg.op = op("Neg");
    neg.inputs = {sum};
    const ValueId out = g.node(rw.createNode(std::move(neg))).output(0);
    return rw.replaceMatch({root}, {{y, out}});
  }
};

TEST(Soundness, RefusesANodeMixingTypesItsSchemaBindsToOne) {
  // Shape inference types the Add as its input 0 and lets the float constant pass; ONNX
  // Runtime would refuse the model. (A float constant in a rule meeting an fp16 model.)
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float16[2] x) => (float16[2] y) {
  y = Neg(x)
}
)");
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(std::make_unique<NegOfAddedFloatZero>());
  FailureReasons explain("neg_of_added_zero");
  Options options;
  options.listener = &explain;
  rewrite(model, rules, options);
  EXPECT_EQ(serialize(model), before);
  ASSERT_EQ(explain.reasons.size(), 1u);
  EXPECT_EQ(explain.reasons[0],
            "the rewrite would create Add 'neg_of_added_zero' whose inputs 0 and 1 are float16 "
            "and float, where its type T is one type");
}

TEST(Soundness, AllowsTheSameNodeWhenItsTypesAgree) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Neg(x)
}
)");
  RuleSet rules;
  rules.add(std::make_unique<NegOfAddedFloatZero>());
  Options options;
  options.max_iterations = 1;
  options.max_rewrites = 1;
  rewrite(model, rules, options);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Add", "Neg"}));
}

}  // namespace
}  // namespace onnx_rewrite
