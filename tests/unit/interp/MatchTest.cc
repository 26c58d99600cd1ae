//===- MatchTest.cc - the interpreter's source-pattern semantics ----------===//
//
// Specifies how an interpreted rule matches (docs/dsl.md, RuleInterpreter.h):
// shared names and shared sub-patterns, commutative operands, alternatives and
// their tags, optional nodes, both opset forms of moved attributes, schema
// defaults, axes normalisation, inputs beyond the pattern, other outputs, and
// the rule's metadata and applicability.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/unit/interp/InterpTestSupport.h"

namespace onnx_rewrite {
namespace {

using namespace interp_test;
using Ops = std::vector<std::string>;

/// y = Relu(Neg(x)) -> y = Sigmoid(x).
Rule reluNegRule() {
  Rule r("fuse_relu_neg", 10);
  ExprId x = r.cap("x");
  r.root(r.op("Relu", {r.op("Neg", {x})}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("x")}));
  return r;
}

TEST(InterpMatch, FusesAChainIntoOneNodeThatKeepsTheOutputName) {
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  n = Neg(x)
  y = Relu(n)
}
)",
                         reluNegRule());
  EXPECT_EQ(out.ops(), Ops{"Sigmoid"});
  EXPECT_EQ(out.node(0).input(0), "x");
  EXPECT_EQ(out.node(0).output(0), "y");
  EXPECT_EQ(out.node(0).name(), "fuse_relu_neg") << "new nodes are named after the rule";
  EXPECT_EQ(out.result.stats.rules[0].applied, 1u);
}

TEST(InterpMatch, RuleInfoCarriesTheRulesMetadata) {
  Rule r = reluNegRule();
  r.tags({"ort", "onnx"});
  auto pattern = makeInterpretedRule(r.build());
  EXPECT_EQ(pattern->name(), "fuse_relu_neg");
  EXPECT_EQ(pattern->info().root, OpId::get("", "Relu"));
  EXPECT_EQ(pattern->info().priority, 10);
  EXPECT_EQ(pattern->info().tags, (std::vector<std::string>{"ort", "onnx"}));
  EXPECT_EQ(pattern->info().source, "test.yaml:1:1");
  EXPECT_EQ(pattern->info().creates, std::vector<OpId>{OpId::get("", "Sigmoid")});
}

// ---- Shared names and sub-patterns -------------------------------------------------------

/// d = Sub(x, ReduceMean(x, axes=[-1])): two uses of the name x, two capture exprs.
Rule centeredRule() {
  Rule r("centered");
  ExprId mean = r.op("ReduceMean", {r.cap("x")}, {eq("axes", Is({-1}))});
  r.root(r.op("Sub", {r.cap("x"), mean}), "d");
  Target t = r.rewrite();
  t.replace("d", t.op("Neg", {t.ref("x")}));
  return r;
}

TEST(InterpMatch, ANameUsedTwiceMustBeOneValue) {
  Outcome same = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] d) {
  m = ReduceMean <axes = [-1]> (x)
  d = Sub(x, m)
}
)",
                          centeredRule());
  EXPECT_EQ(same.ops(), Ops{"Neg"});

  Outcome differ = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, float[2, 4] z) => (float[2, 4] d) {
  m = ReduceMean <axes = [-1]> (z)
  d = Sub(x, m)
}
)",
                            centeredRule());
  EXPECT_EQ(differ.ops(), (Ops{"ReduceMean", "Sub"}));
  EXPECT_EQ(differ.reason(), "test.yaml:2:5: x: is 'z' here but 'x' earlier");
}

TEST(InterpMatch, ASharedSubPatternMatchesOneValue) {
  // r = Relu(x) used twice by one expr id: Mul(r, r).
  Rule rule("square_relu");
  ExprId relu = rule.op("Relu", {rule.cap("x")});
  rule.root(rule.op("Mul", {relu, relu}), "y");
  Target t = rule.rewrite();
  t.replace("y", t.op("Abs", {t.ref("x")}));

  Outcome shared = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  r = Relu(x)
  y = Mul(r, r)
}
)",
                            rule);
  EXPECT_EQ(shared.ops(), Ops{"Abs"});

  Outcome two = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Relu(x)
  b = Relu(x)
  y = Mul(a, b)
}
)",
                         rule);
  EXPECT_EQ(two.ops(), (Ops{"Relu", "Relu", "Mul"})) << "two Relu nodes are two values";
  EXPECT_EQ(two.reason(), "test.yaml:3:5: Relu: is 'b' here but 'a' earlier");
}

// ---- Operand order -----------------------------------------------------------------------

/// y = op(Neg(a), Relu(b)) -> y = Max(a, b).
Rule pairRule(const std::string& op) {
  Rule r("pair");
  r.root(r.op(op, {r.op("Neg", {r.cap("a")}), r.op("Relu", {r.cap("b")})}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Max", {t.ref("a"), t.ref("b")}));
  return r;
}

std::string pairModel(const std::string& op, bool neg_first) {
  return std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] p, float[2] q) => (float[2] y) {
  n = Neg(p)
  r = Relu(q)
  y = )") +
         op + (neg_first ? "(n, r)" : "(r, n)") + "\n}\n";
}

TEST(InterpMatch, CommutativeOpsMatchEitherOperandOrder) {
  for (bool neg_first : {true, false}) {
    Outcome out = runRules(pairModel("Add", neg_first), pairRule("Add"));
    ASSERT_EQ(out.ops(), Ops{"Max"}) << neg_first;
    EXPECT_EQ(out.node(0).input(0), "p") << "a is Neg's input whatever the order";
    EXPECT_EQ(out.node(0).input(1), "q");
  }
}

TEST(InterpMatch, OtherOpsKeepTheOperandOrderWritten) {
  EXPECT_EQ(runRules(pairModel("Sub", true), pairRule("Sub")).ops(), Ops{"Max"});
  Outcome swapped = runRules(pairModel("Sub", false), pairRule("Sub"));
  EXPECT_EQ(swapped.ops(), (Ops{"Neg", "Relu", "Sub"}));
  EXPECT_EQ(swapped.reason(), "test.yaml:3:5: Neg: 'r' is computed by Relu, not Neg");
}

TEST(InterpMatch, AConstraintFailureBacktracksIntoTheOtherOperandOrder) {
  // Add(x, b) with b constant: the constant may be either operand.
  Rule r("bias_add");
  r.root(r.op("Add", {r.cap("x"), r.cap("b")}), "y");
  r.constant("b");
  Target t = r.rewrite();
  t.replace("y", t.op("Sub", {t.ref("x"), t.ref("b")}));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {1.0, 2.0}> {
  y = Add(w, x)
}
)",
                         r);
  ASSERT_EQ(out.ops(), Ops{"Sub"});
  EXPECT_EQ(out.node(0).input(0), "x");
  EXPECT_EQ(out.node(0).input(1), "w");
}

// ---- Alternatives and optional nodes ------------------------------------------------------

/// y = Sqrt(Pow(d, 2.0) @pow | Mul(d, d) @mul); variant by tag.
Rule squareRule() {
  Rule r("sqrt_square");
  ExprId d = r.cap("d");
  ExprId pow = r.op("Pow", {d, r.cst(F(2.0))});
  ExprId mul = r.op("Mul", {r.cap("d"), r.cap("d")});
  r.root(r.op("Sqrt", {r.alt({pow, mul}, {"pow", "mul"})}), "y");
  Target by_pow = r.rewrite();
  by_pow.whenTags({"pow"});
  by_pow.replace("y", by_pow.op("Abs", {by_pow.ref("d")}));
  Target other = r.rewrite();
  other.replace("y", other.op("Neg", {other.ref("d")}));
  return r;
}

TEST(InterpMatch, AlternativesMatchAnyFormAndTheirTagsPickTheVariant) {
  const char* kPow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] d) => (float[2] y) <float two = {2.0}> {
  p = Pow(d, two)
  y = Sqrt(p)
}
)";
  const char* kMul = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] d) => (float[2] y) {
  p = Mul(d, d)
  y = Sqrt(p)
}
)";
  const char* kMulOfTwo = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] d, float[2] e) => (float[2] y) {
  p = Mul(d, e)
  y = Sqrt(p)
}
)";
  EXPECT_EQ(runRules(kPow, squareRule()).ops(), Ops{"Abs"}) << "tag pow selects the first variant";
  EXPECT_EQ(runRules(kMul, squareRule()).ops(), Ops{"Neg"}) << "tag mul falls through";
  Outcome none = runRules(kMulOfTwo, squareRule());
  EXPECT_EQ(none.ops(), (Ops{"Mul", "Sqrt"}));
  EXPECT_EQ(none.reason(), "test.yaml:6:5: d: is 'e' here but 'd' earlier")
      << "the failure that got furthest: the Mul alternative, at its second d";
}

/// y = Relu(Cast?(x, to=1)) -> y = Sigmoid(x).
Rule optionalCastRule() {
  Rule r("relu_of_cast");
  r.root(r.op("Relu", {r.opt("Cast", {r.cap("x")}, {eq("to", I(1))})}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("x")}));
  return r;
}

TEST(InterpMatch, AnOptionalNodeMatchesPresentOrAbsent) {
  Outcome present = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] h) => (float[2] y) {
  c = Cast <to = 1> (h)
  y = Relu(c)
}
)",
                             optionalCastRule());
  ASSERT_EQ(present.ops(), Ops{"Sigmoid"}) << "the Cast is part of the match";
  EXPECT_EQ(present.node(0).input(0), "h");

  Outcome absent = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
}
)",
                            optionalCastRule());
  ASSERT_EQ(absent.ops(), Ops{"Sigmoid"});
  EXPECT_EQ(absent.node(0).input(0), "x");

  Outcome other_cast = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  c = Cast <to = 1> (x)
  d = Cast <to = 10> (c)
  y = Relu(d)
}
)",
                                optionalCastRule(), false);
  ASSERT_EQ(other_cast.ops(), (Ops{"Cast", "Cast", "Sigmoid"}))
      << "a Cast to float16 is not the optional Cast: x stands for its output";
  EXPECT_EQ(other_cast.node(2).input(0), "d");
}

// ---- Attributes -----------------------------------------------------------------------------

/// m = ReduceMean(x, axes=[-1], keepdims=1) -> m = ReduceMax(x, axes=[-1]).
Rule reduceRule(bool keepdims_default = true) {
  Rule r("mean_to_max");
  ExprId m = r.op("ReduceMean", {r.cap("x")},
                  {eq("axes", Is({-1})),
                   eq("keepdims", I(1), keepdims_default ? std::optional(I(1)) : std::nullopt)});
  r.get().pattern.exprs[m].attrs[1].loc = at(7, 12);
  r.root(m, "m");
  Target t = r.rewrite();
  t.replace("m", t.op("ReduceMax", {t.ref("x")}, {lit("axes", Is({-1}))}));
  return r;
}

TEST(InterpMatch, AMovedAttributeMatchesInBothOpsetForms) {
  Outcome attr = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) {
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
}
)",
                          reduceRule());
  EXPECT_EQ(attr.ops(), Ops{"ReduceMax"});

  Outcome input = runRules(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) <int64[1] axes = {-1}> {
  m = ReduceMean <keepdims = 1> (x, axes)
}
)",
                           reduceRule());
  EXPECT_EQ(input.ops(), Ops{"ReduceMax"});
  // The old axes constant died with the match; at opset 18 the new node takes its axes as
  // an input too (OpsetFormOfNode), a constant of its own.
  const onnx::GraphProto& g = input.model.graph();
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_NE(g.initializer(0).name(), "axes");
  ASSERT_EQ(g.node(0).input_size(), 2);
  EXPECT_EQ(g.node(0).input(1), g.initializer(0).name());
  EXPECT_EQ(g.node(0).attribute_size(), 0);
}

TEST(InterpMatch, AnAbsentAttributeHasItsSchemaDefault) {
  const char* kNoKeepdims = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) {
  m = ReduceMean <axes = [-1]> (x)
}
)";
  EXPECT_EQ(runRules(kNoKeepdims, reduceRule()).ops(), Ops{"ReduceMax"});
  Outcome no_default = runRules(kNoKeepdims, reduceRule(false));
  EXPECT_EQ(no_default.ops(), Ops{"ReduceMean"});
  EXPECT_EQ(no_default.reason(),
            "test.yaml:7:12: ReduceMean: attribute keepdims is absent and has no default");

  Outcome zero = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[2, 3] m) {
  m = ReduceMean <axes = [-1], keepdims = 0> (x)
}
)",
                          reduceRule());
  EXPECT_EQ(zero.ops(), Ops{"ReduceMean"});
  EXPECT_EQ(zero.reason(), "test.yaml:7:12: ReduceMean: attribute keepdims is 0, expected 1");
}

TEST(InterpMatch, AxesCompareAfterNormalisingByTheInputRank) {
  const char* kAxis2 = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) <int64[1] axes = {2}> {
  m = ReduceMean(x, axes)
}
)";
  EXPECT_EQ(runRules(kAxis2, reduceRule()).ops(), Ops{"ReduceMax"}) << "[-1] is [2] at rank 3";

  Outcome axis1 = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[2, 1, 4] m) {
  m = ReduceMean <axes = [1]> (x)
}
)",
                           reduceRule());
  EXPECT_EQ(axis1.ops(), Ops{"ReduceMean"});
  EXPECT_EQ(axis1.reason(),
            "test.yaml:3:5: ReduceMean: attribute axes is [1], expected [-1] (rank 3)");

  Outcome unknown_rank = runRules(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) <int64[1] axes = {2}> {
  t = Identity(x)
  m = ReduceMean(t, axes)
}
)",
                                  reduceRule(), /*shape_inference=*/false);
  EXPECT_EQ(unknown_rank.ops(), (Ops{"Identity", "ReduceMean"}));
  EXPECT_EQ(unknown_rank.reason(),
            "test.yaml:3:5: ReduceMean: axes (input 1) is [2], expected [-1] (rank unknown)");
}

TEST(InterpMatch, AMovedParameterThatIsNotConstantDoesNotMatch) {
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x, int64[1] axes) => (float[2, 3, 1] m) {
  m = ReduceMean(x, axes)
}
)",
                         reduceRule());
  EXPECT_EQ(out.ops(), Ops{"ReduceMean"});
  EXPECT_EQ(out.reason(), "test.yaml:3:5: ReduceMean: axes (input 1) is not a constant");
}

TEST(InterpMatch, OneOfAndRangeConditions) {
  Rule r("leaky");
  ExprId c = r.op("Cast", {r.cap("x")}, {oneOf("to", {I(1), I(10)})});
  r.root(r.op("LeakyRelu", {c}, {range("alpha", 0.0, 0.5, F(0.01))}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Relu", {t.ref("x")}));
  // The Cast keeps x's type (the driver refuses a rewrite that changes y's).
  auto model = [](const std::string& to, const std::string& alpha) {
    const std::string type = to == "10" ? "float16" : "float";
    return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (" + type + "[2] x) => (" + type +
           "[2] y) {\n  c = Cast <to = " + to + "> (x)\n  y = LeakyRelu " + alpha + " (c)\n}\n";
  };
  EXPECT_EQ(runRules(model("1", "<alpha = 0.2>"), r).ops(), Ops{"Relu"});
  EXPECT_EQ(runRules(model("10", ""), r).ops(), Ops{"Relu"}) << "absent alpha: default 0.01";
  Outcome to = runRules(model("11", "<alpha = 0.2>"), r);
  EXPECT_EQ(to.ops(), (Ops{"Cast", "LeakyRelu"}));
  EXPECT_EQ(to.reason(), "test.yaml:3:5: Cast: attribute to is 11, expected one of [1, 10]");
  Outcome alpha = runRules(model("1", "<alpha = 0.75>"), r);
  EXPECT_EQ(alpha.reason(),
            "test.yaml:4:5: LeakyRelu: attribute alpha is 0.75, expected in [0.0, 0.5]");
}

// ---- Inputs and outputs --------------------------------------------------------------------

TEST(InterpMatch, InputsBeyondThePatternBlockAMatchUnlessTheyAreMovedParameters) {
  Rule r("gemm2");
  r.root(r.op("Gemm", {r.cap("a"), r.cap("b")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("MatMul", {t.ref("a"), t.ref("b")}));
  Outcome with_bias = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] a, float[3, 4] b, float[4] c) => (float[2, 4] y) {
  y = Gemm(a, b, c)
}
)",
                               r);
  EXPECT_EQ(with_bias.ops(), Ops{"Gemm"});
  EXPECT_EQ(with_bias.reason(), "test.yaml:4:5: Gemm: has 3 inputs, the pattern expects 2");
  Outcome without = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] a, float[3, 4] b) => (float[2, 4] y) {
  y = Gemm(a, b)
}
)",
                             r);
  EXPECT_EQ(without.ops(), Ops{"MatMul"});
}

// ---- none and rests of inputs --------------------------------------------------------------

/// y = Clip(x, none, m) -> y = Min(x, m): Clip without a lower bound.
Rule clipWithoutMinRule() {
  Rule r("clip_max");
  r.root(r.op("Clip", {r.cap("x"), r.none(), r.cap("m")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Min", {t.ref("x"), t.ref("m")}));
  return r;
}

TEST(InterpMatch, NoneMatchesAnOmittedInputOnly) {
  Outcome omitted = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, float m) => (float[2] y) {
  y = Clip(x, , m)
}
)",
                             clipWithoutMinRule());
  EXPECT_EQ(omitted.ops(), Ops{"Min"});
  Outcome given = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, float lo, float m) => (float[2] y) {
  y = Clip(x, lo, m)
}
)",
                           clipWithoutMinRule());
  EXPECT_EQ(given.ops(), Ops{"Clip"});
  EXPECT_EQ(given.reason(), "test.yaml:3:5: none: 'lo' is an input here, expected an omitted one");
}

/// y = Concat(Neg(a), Neg(b), rest..., axis=0) -> y = Concat(Neg(Add(a, b)), rest..., axis=0)
/// (not an identity, but easy to recognise; the models' symbolic lengths let the driver's
/// soundness check, which compares static dims only, allow the shorter result).
Rule concatRestRule() {
  Rule r("concat_rest");
  ExprId na = r.op("Neg", {r.cap("a")});
  ExprId nb = r.op("Neg", {r.cap("b")});
  r.root(r.opRest("Concat", {na, nb}, "rest", {eq("axis", I(0))}), "y");
  Target t = r.rewrite();
  const uint32_t sum = t.op("Add", {t.ref("a"), t.ref("b")});
  t.replace("y", t.op("Concat", {t.op("Neg", {sum}), t.rest("rest")}, {lit("axis", I(0))}));
  return r;
}

TEST(InterpMatch, ARestTakesEveryFurtherInputAndTheRewriteSplicesIt) {
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N] a, float[N] b, float[N] c, float[N] d) => (float[M] y) {
  na = Neg(a)
  nb = Neg(b)
  y = Concat <axis = 0> (na, nb, c, d)
}
)",
                         concatRestRule());
  EXPECT_EQ(out.ops(), (Ops{"Add", "Neg", "Concat"}));
  const auto& concat = out.node(2);
  ASSERT_EQ(concat.input_size(), 3);
  EXPECT_EQ(concat.input(1), "c");
  EXPECT_EQ(concat.input(2), "d");
}

TEST(InterpMatch, ARestMayBeEmptyButTheWrittenInputsMustBeThere) {
  Outcome two = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N] a, float[N] b) => (float[M] y) {
  na = Neg(a)
  nb = Neg(b)
  y = Concat <axis = 0> (na, nb)
}
)",
                         concatRestRule());
  EXPECT_EQ(two.ops(), (Ops{"Add", "Neg", "Concat"}));
  EXPECT_EQ(two.node(2).input_size(), 1);
  Outcome one = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[2] y) {
  na = Neg(a)
  y = Concat <axis = 0> (na)
}
)",
                         concatRestRule());
  EXPECT_EQ(one.ops(), (Ops{"Neg", "Concat"}));
}

TEST(InterpMatch, OtherOutputsOfAMatchedNodeBindNames) {
  // a, b = Split(x); y = Add(a, b) -> y = Relu(x) (x of symbolic length, so that the
  // driver's soundness check, which compares static dims only, allows the longer result).
  Rule r("split_add");
  ExprId split = r.named(r.op("Split", {r.cap("x")}), "a");
  r.expr(split).other_outputs = {{1, "b"}};
  r.root(r.op("Add", {split, r.cap("b")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Relu", {t.ref("x")}));
  const char* kSplit = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N] x, float[2] z) => (float[2] y) {
  s0, s1 = Split(x)
  y = Add(s0, %s)
}
)";
  auto model = [&](const char* second) {
    std::string text = kSplit;
    text.replace(text.find("%s"), 2, second);
    return text;
  };
  EXPECT_EQ(runRules(model("s1"), r).ops(), Ops{"Relu"});
  Outcome other = runRules(model("z"), r);
  EXPECT_EQ(other.ops(), (Ops{"Split", "Add"}));
  EXPECT_EQ(other.reason(), "test.yaml:4:5: b: is 'z' here but 's1' earlier");
}

// ---- Roots and applicability ------------------------------------------------------------------

TEST(InterpMatch, RootAlternativesGiveOnePatternPerRootOp) {
  // y = Div(d, s) | Mul(d, Reciprocal(s)) -> y = com.test.Scale(d, s).
  Rule r("scale");
  ExprId div = r.op("Div", {r.cap("d"), r.cap("s")});
  ExprId mul = r.op("Mul", {r.cap("d"), r.op("Reciprocal", {r.cap("s")})});
  r.root(r.alt({div, mul}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("com.test.Scale", {t.ref("d"), t.ref("s")}));
  auto patterns = makeInterpretedRules(r.build());
  ASSERT_EQ(patterns.size(), 2u);
  EXPECT_EQ(patterns[0]->name(), "scale/Div");
  EXPECT_EQ(patterns[0]->info().root, OpId::get("", "Div"));
  EXPECT_EQ(patterns[1]->name(), "scale/Mul");
  EXPECT_THROW(makeInterpretedRule(r.build()), std::invalid_argument);

  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2] d, float[2] s, float[2] e, float[2] f) => (float[2] y, float[2] z) {
  r = Reciprocal(f)
  z = Mul(r, e)
  y = Div(d, s)
}
)",
                         r);
  EXPECT_EQ(out.ops(), (Ops{"com.test::Scale", "com.test::Scale"}));
  EXPECT_EQ(out.node(0).name(), "scale") << "created nodes record the rule, not the pattern";
}

TEST(InterpMatch, RequiredOpsetsGateTheRule) {
  Rule r = reluNegRule();
  r.requires("", 18);
  const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  n = Neg(x)
  y = Relu(n)
}
)";
  Outcome out = runRules(kModel, r);
  EXPECT_EQ(out.ops(), (Ops{"Neg", "Relu"}));
  EXPECT_EQ(out.result.stats.rules[0].tried, 0u) << "not even tried";
  Rule ok = reluNegRule();
  ok.requires("", 13, 17);
  EXPECT_EQ(runRules(kModel, ok).ops(), Ops{"Sigmoid"});
  Rule custom = reluNegRule();
  custom.requires("com.microsoft", 1);
  EXPECT_EQ(runRules(kModel, custom).ops(), (Ops{"Neg", "Relu"})) << "the domain is not imported";
}

TEST(InterpMatch, RulesThatCannotRunAreRejectedWhenLoaded) {
  auto error = [](const Rule& r) {
    try {
      makeInterpretedRules(r.build());
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Rule capture_root("capture_root");
  capture_root.root(capture_root.cap("x"));
  capture_root.rewrite().replace("x", 0);
  EXPECT_EQ(
      error(capture_root),
      "test.yaml:2:5: capture_root: the root of a pattern must be an op or alternatives of ops");

  Rule unknown_native = reluNegRule();
  unknown_native.native("no_such_check", {"x"});
  EXPECT_EQ(error(unknown_native),
            "test.yaml:50:5: fuse_relu_neg: no native predicate named 'no_such_check'");

  Rule wrong_arity = reluNegRule();
  wrong_arity.native("last_axis", {"x"});
  EXPECT_EQ(error(wrong_arity),
            "test.yaml:50:5: fuse_relu_neg: native predicate last_axis takes 2 arguments, not 1");

  Rule unbound_ref("unbound_ref");
  unbound_ref.root(unbound_ref.op("Relu", {unbound_ref.cap("x")}), "y");
  Target t = unbound_ref.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("w")}));
  EXPECT_EQ(error(unbound_ref),
            "test.yaml:100:1: unbound_ref: the rewrite reads 'w', which the match never binds");

  Rule bad_type = reluNegRule();
  bad_type.dtype("x", {"float32"});
  EXPECT_EQ(error(bad_type), "test.yaml:50:5: fuse_relu_neg: unknown element type 'float32'");

  Rule optional_root("optional_root");
  optional_root.root(optional_root.opt("Cast", {optional_root.cap("x")}), "y");
  optional_root.rewrite().replace("y", 0);
  EXPECT_EQ(error(optional_root),
            "test.yaml:3:5: optional_root: the root of a pattern cannot be optional");
}

}  // namespace
}  // namespace onnx_rewrite
