//===- RuleChecksTest.cc - the semantic checks, one behaviour per test ----===//
//
// Each test builds the Rule IR a front end would produce for a small rule (the
// YAML it stands for is in the comment above it; locations are where that text
// would be) and asserts the exact diagnostics. Negative tests sit next to the
// positive ones they break.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/RuleChecks.h"

#include <gtest/gtest.h>

#include "compiler/sema/ContribOps.h"
#include "tests/unit/sema/RuleBuilder.h"

namespace onnx_rewrite {
namespace {

using ir::ExprId;
using test::at;
using test::captureAttr;
using test::CheckResult;
using test::equals;
using test::lfloat;
using test::lint;
using test::lints;
using test::lstr;
using test::RuleBuilder;
using test::tattr;
using test::tlit;
using test::tvalue;
using Strings = std::vector<std::string>;

/// Checks `rules` (and `ops`) with the shipped contrib declarations.
CheckResult check(std::vector<ir::Rule> rules, std::vector<ir::OpDecl> ops = {}) {
  CheckResult result;
  result.file.rules = std::move(rules);
  result.file.ops = std::move(ops);
  DiagnosticEngine diag;
  diag.setHandler(
      [&](const Diagnostic& d) { result.diagnostics.push_back(test::diagnosticText(d)); });
  result.ok = checkRules(result.file, contribOpDecls(), diag);
  return result;
}

CheckResult check(RuleBuilder& b) { return check({b.rule()}); }

// rule: quick_gelu                                            (1:3)
// requires: { opset: ">=13" }                                 (3:15)
// match: |
//   y = Mul(x, Sigmoid(x))                                    Mul 5:11, x 5:15, Sigmoid 5:18
// rewrite: |
//   y = com.microsoft.QuickGelu(x, alpha=1.702)               7:5, op 7:11, x 7:35, alpha 7:38
RuleBuilder quickGelu() {
  RuleBuilder b("quick_gelu");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId x = b.capture("x", at(5, 15));
  ExprId sigmoid = b.op("Sigmoid", {x}, {}, at(5, 18));
  b.root(b.op("Mul", {x, sigmoid}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("com.microsoft.QuickGelu", {t.ref("x", at(7, 35))},
                      {tlit("alpha", lfloat(1.702), at(7, 38))}, at(7, 11)));
  return b;
}

/// A rule `y = <root>` rewritten to `y = Identity(x)`; `x` must be bound by the match.
RuleBuilder withRoot(const std::function<ExprId(RuleBuilder&)>& root, int64_t min_opset = 13,
                     int64_t max_opset = -1) {
  RuleBuilder b("r");
  b.requiresOpset("", min_opset, max_opset, at(3, 15));
  b.root(root(b), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Identity", {t.ref("x", at(7, 20))}, {}, at(7, 11)));
  return b;
}

/// A rule `y = Softsign(x)` rewritten to `y = <target>`.
RuleBuilder withTarget(const std::function<uint32_t(test::TargetBuilder&)>& target,
                       int64_t min_opset = 13, int64_t max_opset = -1) {
  RuleBuilder b("r");
  b.requiresOpset("", min_opset, max_opset, at(3, 15));
  b.root(b.op("Softsign", {b.capture("x", at(5, 20))}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", target(t));
  return b;
}

// ---- A well-formed rule, and what the checks fill in ------------------------------------

TEST(RuleChecks, AcceptsAWellFormedRule) {
  RuleBuilder b = quickGelu();
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{});
}

TEST(RuleChecks, MarksCommutativeBinaryOps) {
  RuleBuilder b = quickGelu();
  CheckResult r = check(b);
  const ir::Pattern& p = r.file.rules[0].pattern;
  EXPECT_TRUE(p.exprs[p.root].commutative);  // Mul
  EXPECT_FALSE(p.exprs[1].commutative);      // Sigmoid
}

TEST(RuleChecks, MarksDeclaredCommutativeOps) {
  // ops: [{ op: com.example.Plus, inputs: [A, B], outputs: [C], commutative: true }]
  // match: y = com.example.Plus(x, z)   rewrite: y = Add(x, z)
  ir::OpDecl plus;
  plus.domain = "com.example";
  plus.op = "Plus";
  plus.inputs = {{"A", false, false}, {"B", false, false}};
  plus.outputs = {{"C", false, false}};
  plus.commutative = true;
  RuleBuilder b("plus");
  b.requiresOpset("", 13);
  b.root(b.op("com.example.Plus", {b.capture("x"), b.capture("z")}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Add", {t.ref("x"), t.ref("z")}, {}, at(7, 11)));
  CheckResult r = check({b.rule()}, {plus});
  EXPECT_EQ(r.diagnostics, Strings{});
  const ir::Pattern& p = r.file.rules[0].pattern;
  EXPECT_TRUE(p.exprs[p.root].commutative);
}

TEST(RuleChecks, FillsAttributeDefaultsFromTheSchema) {
  // y = ReduceMean(x, axes=[-1])
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("ReduceMean", {b.capture("x")},
                {equals("axes", lints({-1})), equals("keepdims", lint(1))}, at(5, 11));
  });
  CheckResult r = check(b);
  EXPECT_EQ(r.diagnostics, Strings{});
  const ir::Expr& root = r.file.rules[0].pattern.exprs[r.file.rules[0].pattern.root];
  EXPECT_FALSE(root.attrs[0].default_value.has_value());  // axes: none
  EXPECT_EQ(root.attrs[1].default_value, lint(1));        // keepdims
}

// ---- Ops that do not exist -----------------------------------------------------------------

TEST(RuleChecks, ReportsAnUnknownOpWithTheClosestName) {
  // y = ReduceMaen(x)
  RuleBuilder b =
      withRoot([](RuleBuilder& b) { return b.op("ReduceMaen", {b.capture("x")}, {}, at(5, 11)); });
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            Strings{"rule.yaml:5:11: error: unknown op 'ReduceMaen'; did you mean 'ReduceMean'?"});
}

TEST(RuleChecks, ReportsAnOpOfAnUnknownDomain) {
  // y = com.example.Bar(x)
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) { return b.op("com.example.Bar", {b.capture("x")}, {}, at(5, 11)); });
  CheckResult r = check(b);
  EXPECT_EQ(r.diagnostics,
            Strings{"rule.yaml:5:11: error: unknown domain 'com.example' of op "
                    "'com.example.Bar': it is neither ONNX nor declared under 'ops:'"});
}

TEST(RuleChecks, AcceptsAnOpOfADeclaredDomain) {
  ir::OpDecl bar;
  bar.domain = "com.example";
  bar.op = "Bar";
  bar.inputs = {{"X", false, false}};
  bar.outputs = {{"Y", false, false}};
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) { return b.op("com.example.Bar", {b.capture("x")}, {}, at(5, 11)); });
  CheckResult r = check({b.rule()}, {bar});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{});
}

// ---- Ops at the opsets a rule requires ---------------------------------------------------

TEST(RuleChecks, ReportsAMatchOpMissingAtEveryRequiredOpset) {
  // requires: { opset: ">=13,<=19" }   match: y = Gelu(x)
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) { return b.op("Gelu", {b.capture("x")}, {}, at(5, 11)); }, 13, 19);
  CheckResult r = check(b);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:11: error: op 'Gelu' does not exist at the opsets "
                                   "this rule covers (ai.onnx 13-19); it exists from opset 20"});
}

TEST(RuleChecks, AcceptsAMatchOpThatExistsAtSomeRequiredOpset) {
  // requires: { opset: ">=13" }   match: y = Gelu(x)   (matches from opset 20 on)
  RuleBuilder b =
      withRoot([](RuleBuilder& b) { return b.op("Gelu", {b.capture("x")}, {}, at(5, 11)); }, 13);
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ChecksTheNewestOpsetWhenARuleRequiresNone) {
  // match: y = Scatter(x, i, u)   (deprecated at opset 11)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("Scatter", {b.capture("x"), b.capture("_"), b.capture("_")}, {}, at(5, 11));
  });
  b.rule().requires.clear();
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:5:11: error: op 'Scatter' does not exist at the opsets this "
                    "rule covers (ai.onnx 24, the newest: the rule has no 'requires'); it "
                    "exists at opsets 9-10"});
}

// rule with requires >=17:  match y = com.microsoft.Gelu(x)   rewrite y = Gelu(x)
RuleBuilder msGeluToOnnxGelu() {
  RuleBuilder b("gelu");
  b.requiresOpset("", 17, -1, at(3, 15));
  b.root(b.op("com.microsoft.Gelu", {b.capture("x", at(5, 30))}, {}, at(5, 11)), "y");
  return b;
}

TEST(RuleChecks, ReportsARewriteOpMissingAtARequiredOpset) {
  RuleBuilder b = msGeluToOnnxGelu();
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Gelu", {t.ref("x")}, {}, at(7, 11)));
  EXPECT_EQ(
      check(b).diagnostics,
      Strings{"rule.yaml:7:11: error: op 'Gelu' does not exist at opset 17, which this rewrite "
              "must support (ai.onnx 17-24); it exists from opset 20"});
}

TEST(RuleChecks, AcceptsARewriteOpInAVariantLimitedToItsOpsets) {
  // rewrite: [{ when: { opset: ">=20" }, do: "y = Gelu(x)" }, { do: "y = Erf(x)" }]
  RuleBuilder b = msGeluToOnnxGelu();
  auto t = b.target(at(7, 5));
  t.when("", 20).replace("y", t.op("Gelu", {t.ref("x")}, {}, at(7, 11)));
  auto fallback = b.target(at(9, 5));
  fallback.replace("y", fallback.op("Erf", {fallback.ref("x")}, {}, at(9, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ChecksAFallbackOnlyAtTheOpsetsNoEarlierVariantTakes) {
  // requires >=9, <=12   match: y = Abs(Scatter(d, i, u))
  // rewrite: [{ when: { opset: ">=11" }, do: "y = ScatterElements(d, i, u)" },
  //           { do: "y = Scatter(d, i, u)" }]        (Scatter is deprecated from opset 11)
  RuleBuilder b("scatter");
  b.requiresOpset("", 9, 12, at(3, 15));
  b.root(b.op("Abs",
              {b.op("Scatter", {b.capture("d"), b.capture("i"), b.capture("u")}, {}, at(5, 15))},
              {}, at(5, 11)),
         "y");
  auto v1 = b.target(at(7, 7));
  v1.when("", 11).replace(
      "y", v1.op("ScatterElements", {v1.ref("d"), v1.ref("i"), v1.ref("u")}, {}, at(8, 13)));
  auto fallback = b.target(at(9, 7));
  fallback.replace(
      "y", fallback.op("Scatter", {fallback.ref("d"), fallback.ref("i"), fallback.ref("u")}, {},
                       at(10, 13)));
  EXPECT_EQ(check(b).diagnostics, Strings{}) << "the fallback is built at opsets 9-10 only";
  // Without the first variant, the fallback is built at 11 and 12 too.
  b.rule().targets.erase(b.rule().targets.begin());
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:10:13: error: op 'Scatter' does not exist at opset 11, which this "
                    "rewrite must support (ai.onnx 9-12); it exists at opsets 9-10"});
}

TEST(RuleChecks, WarnsWhenARequiredOpsetIsNewerThanTheChecksKnow) {
  RuleBuilder b = quickGelu();
  b.rule().requires[0].min_opset = 30;
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:3:15: warning: opset 30 of ai.onnx is newer than the newest the "
                    "checks know (24); checking against 24"});
}

// ---- Attributes ----------------------------------------------------------------------------

TEST(RuleChecks, ReportsAnUnknownAttributeWithTheClosestName) {
  // y = ReduceMean(x, axes=[-1], keepdim=1)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("ReduceMean", {b.capture("x")},
                {equals("axes", lints({-1}), at(5, 25)), equals("keepdim", lint(1), at(5, 36))},
                at(5, 11));
  });
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:36: error: op 'ReduceMean' has no attribute "
                                          "'keepdim'; did you mean 'keepdims'?"});
}

TEST(RuleChecks, AcceptsAnAttributeThatMovedToAnInput) {
  // requires: { opset: ">=18" }   y = ReduceMean(x, axes=[-1])   (axes is input 1 from 18)
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) {
        return b.op("ReduceMean", {b.capture("x")}, {equals("axes", lints({-1}), at(5, 25))},
                    at(5, 11));
      },
      18);
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsALiteralOfTheWrongTypeForAnAttribute) {
  // y = ReduceMean(x, keepdims=1.5)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("ReduceMean", {b.capture("x")}, {equals("keepdims", lfloat(1.5), at(5, 25))},
                at(5, 11));
  });
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:25: error: attribute 'keepdims' of op "
                                          "'ReduceMean' expects int, got float 1.5"});
}

TEST(RuleChecks, AcceptsAnIntLiteralForAFloatAttribute) {
  RuleBuilder b = quickGelu();
  b.rule().targets[0].exprs[1].attrs[0].literal = lint(2);  // alpha=2
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsARangeOnAStringAttribute) {
  // requires >=20   y = Gelu(x, approximate=range(0, 1))
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) {
        return b.op("Gelu", {b.capture("x")}, {test::inRange("approximate", 0, 1, at(5, 19))},
                    at(5, 11));
      },
      20);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:5:19: error: attribute 'approximate' of op "
                    "'Gelu' expects string, which a numeric range cannot match"});
}

TEST(RuleChecks, ReportsAnAttributeGivenTwice) {
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("ReduceMean", {b.capture("x")},
                {equals("keepdims", lint(1), at(5, 25)), equals("keepdims", lint(0), at(5, 37))},
                at(5, 11));
  });
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:5:37: error: attribute 'keepdims' is given twice"});
}

TEST(RuleChecks, AcceptsARewriteAttributeThatIsAnInputAtSomeOpsets) {
  // requires >=13   rewrite: y = ReduceMean(x, axes=[-1])
  // From opset 18 the node is built with axes as input 1 (runtime/driver/OpsetFormOfNode).
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    return t.op("ReduceMean", {t.ref("x")}, {tlit("axes", lints({-1}), at(7, 28))}, at(7, 11));
  });
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, AcceptsARewriteInputThatIsAnAttributeAtSomeOpsetsWhenItIsALiteral) {
  // requires >=9   rewrite: y = Unsqueeze(x, tensor(int64, [0]))
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) {
        return t.op("Unsqueeze", {t.ref("x"), t.tensor("int64", lints({0}), at(7, 25))}, {},
                    at(7, 11));
      },
      9);
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsARewriteInputThatIsAnAttributeAtSomeOpsetsWhenItIsComputed) {
  // requires >=9   rewrite: y = Unsqueeze(x, Shape(x))
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) {
        return t.op("Unsqueeze", {t.ref("x"), t.op("Shape", {t.ref("x")}, {}, at(7, 25))}, {},
                    at(7, 11));
      },
      9);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:25: error: input 1 of op 'Unsqueeze' is attribute 'axes' at "
                    "opset 9, which this rewrite must support; write it as an integer tensor "
                    "literal or as the attribute"});
}

TEST(RuleChecks, AcceptsARewriteAttributeBeforeItMoved) {
  // requires >=13,<=17   rewrite: y = ReduceMean(x, axes=[-1])
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) {
        return t.op("ReduceMean", {t.ref("x")}, {tlit("axes", lints({-1}), at(7, 28))}, at(7, 11));
      },
      13, 17);
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsARewriteAttributeMissingAtSomeRequiredOpset) {
  // requires >=13   rewrite: y = Cast(x, to=1, saturate=0)   (saturate from opset 19)
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    return t.op("Cast", {t.ref("x")},
                {tlit("to", lint(1), at(7, 22)), tlit("saturate", lint(0), at(7, 28))}, at(7, 11));
  });
  EXPECT_EQ(
      check(b).diagnostics,
      Strings{"rule.yaml:7:28: error: op 'Cast' has no attribute 'saturate' at opset 13, which "
              "this rewrite must support"});
}

TEST(RuleChecks, ReportsAMissingRequiredAttributeInTheRewrite) {
  // rewrite: y = com.microsoft.Attention(x, w)
  RuleBuilder b("attention");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("MatMul", {b.capture("x"), b.capture("w")}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("com.microsoft.Attention", {t.ref("x"), t.ref("w")}, {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:7:11: error: op 'com.microsoft.Attention' "
                                          "requires attribute 'num_heads'"});
  b.rule().targets[0].exprs[2].attrs.push_back(tlit("num_heads", lint(12)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsValueOfIntoAStringAttribute) {
  // requires >=20   match: y = Mul(x, a)   rewrite: y = Gelu(x, approximate=value(a))
  RuleBuilder b("r");
  b.requiresOpset("", 20, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x"), b.capture("a")}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Gelu", {t.ref("x")}, {tvalue("approximate", "a", at(7, 19))}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:7:19: error: attribute 'approximate' of op "
                                          "'Gelu' expects string, but value(a) gives a number"});
}

// ---- Input and output counts -------------------------------------------------------------

TEST(RuleChecks, ReportsTooManyInputsInTheMatch) {
  // y = Add(x, _, _)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("Add", {b.capture("x"), b.capture("_"), b.capture("_")}, {}, at(5, 11));
  });
  EXPECT_EQ(
      check(b).diagnostics,
      Strings{"rule.yaml:5:11: error: too many inputs for op 'Add': 3 given, it takes at most 2"});
}

TEST(RuleChecks, ReportsTooFewInputsInTheMatch) {
  // requires >=17   y = LayerNormalization(x)
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) { return b.op("LayerNormalization", {b.capture("x")}, {}, at(5, 11)); },
      17);
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:11: error: too few inputs for op "
                                          "'LayerNormalization': 1 given, it takes at least 2"});
}

TEST(RuleChecks, ReportsAMatchedOutputTheOpDoesNotHave) {
  // requires >=17   _, _, _, y = LayerNormalization(x, _)
  RuleBuilder b = withRoot(
      [](RuleBuilder& b) {
        ExprId ln = b.op("LayerNormalization", {b.capture("x"), b.capture("_")}, {}, at(5, 11));
        b.expr(ln).output = 3;
        return ln;
      },
      17);
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:11: error: op 'LayerNormalization' has no "
                                          "output 3 (it has 3 outputs)"});
}

TEST(RuleChecks, ReportsTooManyInputsInTheRewrite) {
  // rewrite: y = com.microsoft.QuickGelu(x, x, alpha=1.702)
  RuleBuilder b = quickGelu();
  b.rule().targets[0].exprs[1].inputs.push_back(0);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:11: error: too many inputs for op "
                    "'com.microsoft.QuickGelu': 2 given, it takes at most 1"});
}

TEST(RuleChecks, NamesTheOpsetWhereTheRewriteHasTooManyInputs) {
  // requires >=13   match: y = Abs(Pad(x, p, c, a))   rewrite: y = Relu(Pad(x, p, c, a))
  // (axes input from opset 18)
  RuleBuilder b("pad");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Abs",
              {b.op("Pad", {b.capture("x"), b.capture("p"), b.capture("c"), b.capture("a")}, {},
                    at(5, 15))},
              {}, at(5, 11)),
         "y");
  auto t = b.target(at(7, 5));
  t.replace(
      "y",
      t.op("Relu", {t.op("Pad", {t.ref("x"), t.ref("p"), t.ref("c"), t.ref("a")}, {}, at(7, 16))},
           {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:16: error: too many inputs for op 'Pad' at opset 13: 4 given, it "
                    "takes at most 3"});
  b.rule().requires[0].min_opset = 18;
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

// requires >=13   match: y = Add(Add(x, s), b) ...   rewrite: SkipLayerNormalization(...)
RuleBuilder skipLayerNorm() {
  RuleBuilder b("skip_layer_norm");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId sum =
      b.op("Add", {b.capture("x", at(5, 15)), b.capture("s", at(5, 18))}, {}, at(5, 11), "sum");
  b.root(b.op("com.microsoft.SkipLayerNormalization", {sum, b.capture("g"), b.capture("be")}, {},
              at(6, 11)),
         "y");
  return b;
}

TEST(RuleChecks, ReportsMoreRewriteOutputsThanTheOpHas) {
  // rewrite: y, _, _, sum, _ = com.microsoft.SkipLayerNormalization(x, s, g, be)
  RuleBuilder b = skipLayerNorm();
  auto t = b.target(at(8, 5));
  uint32_t sln = t.op("com.microsoft.SkipLayerNormalization",
                      {t.ref("x"), t.ref("s"), t.ref("g"), t.ref("be")}, {}, at(8, 24), 5, 0);
  t.replace("y", sln);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:8:24: error: too many outputs for op "
                    "'com.microsoft.SkipLayerNormalization': 5 declared, it has at most 4"});
}

TEST(RuleChecks, AcceptsARewriteThatReexportsAnOutput) {
  // rewrite: y, _, _, sum = com.microsoft.SkipLayerNormalization(x, s, g, be)
  RuleBuilder b = skipLayerNorm();
  auto t = b.target(at(8, 5));
  uint32_t sln = t.op("com.microsoft.SkipLayerNormalization",
                      {t.ref("x"), t.ref("s"), t.ref("g"), t.ref("be")}, {}, at(8, 24), 4, 0);
  t.replace("y", sln).replace("sum", t.output(sln, 3, at(8, 14)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsAnOutputBeyondTheOnesTheRewriteDeclares) {
  // rewrite: y, _, _, sum = ... with `sum` read as output 4
  RuleBuilder b = skipLayerNorm();
  auto t = b.target(at(8, 5));
  uint32_t sln = t.op("com.microsoft.SkipLayerNormalization",
                      {t.ref("x"), t.ref("s"), t.ref("g"), t.ref("be")}, {}, at(8, 24), 4, 0);
  t.replace("y", sln).replace("sum", t.output(sln, 4, at(8, 14)));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:8:14: error: output 4 of op 'com.microsoft.SkipLayerNormalization' "
                    "is not among the 4 outputs the rewrite declares"});
}

TEST(RuleChecks, ReportsNoneForARequiredInput) {
  // rewrite: y = com.microsoft.SkipLayerNormalization(x, none, g)
  RuleBuilder b = skipLayerNorm();
  auto t = b.target(at(8, 5));
  t.replace("y", t.op("com.microsoft.SkipLayerNormalization",
                      {t.ref("x"), t.none(at(8, 63)), t.ref("g"), t.ref("be")}, {}, at(8, 11)));
  EXPECT_EQ(check(b).diagnostics,
            (Strings{"rule.yaml:8:63: error: input 1 ('skip') of op "
                     "'com.microsoft.SkipLayerNormalization' is required; 'none' cannot "
                     "stand for it",
                     "rule.yaml:5:18: warning: capture 's' is never used; write '_' to match any "
                     "value without binding it"}));
}

TEST(RuleChecks, AcceptsNoneForAnOptionalInput) {
  // rewrite: y = com.microsoft.SkipLayerNormalization(x, s, g, none, be)
  RuleBuilder b = skipLayerNorm();
  auto t = b.target(at(8, 5));
  t.replace("y", t.op("com.microsoft.SkipLayerNormalization",
                      {t.ref("x"), t.ref("s"), t.ref("g"), t.none(), t.ref("be")}, {}, at(8, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

// ---- Names -------------------------------------------------------------------------------

TEST(RuleChecks, ReportsARewriteNameTheMatchDoesNotBind) {
  // rewrite: y = Relu(zz)
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) { return t.op("Relu", {t.ref("zz", at(7, 16))}, {}, at(7, 11)); });
  EXPECT_EQ(check(b).diagnostics,
            (Strings{"rule.yaml:7:16: error: 'zz' is not bound by the match or by an earlier "
                     "rewrite statement",
                     "rule.yaml:5:20: warning: capture 'x' is never used; write '_' to match any "
                     "value without binding it"}));
}

TEST(RuleChecks, AcceptsANameAnEarlierRewriteStatementDefines) {
  // rewrite: |
  //   t = Neg(x)
  //   y = Relu(t)
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    t.replace("t", t.op("Neg", {t.ref("x")}, {}, at(7, 11)));
    return t.op("Relu", {t.ref("t", at(8, 16))}, {}, at(8, 11));
  });
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsARewriteNameReadByItsOwnDefinition) {
  // rewrite: |
  //   t = Neg(t)
  //   y = Relu(t)
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    t.replace("t", t.op("Neg", {t.ref("t", at(7, 15))}, {}, at(7, 11)));
    return t.op("Relu", {t.ref("t", at(8, 16))}, {}, at(8, 11));
  });
  EXPECT_EQ(check(b).diagnostics,
            (Strings{"rule.yaml:7:15: error: 't' is read before the rewrite defines it",
                     "rule.yaml:5:20: warning: capture 'x' is never used; write '_' to match any "
                     "value without binding it"}));
}

TEST(RuleChecks, ReportsValueOfANameTheMatchDoesNotBind) {
  // rewrite: y = com.microsoft.QuickGelu(x, alpha=value(a))
  RuleBuilder b = quickGelu();
  b.rule().targets[0].exprs[1].attrs[0] = tvalue("alpha", "a", at(7, 38));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:38: error: value(a): 'a' is not bound by the match"});
}

TEST(RuleChecks, AcceptsValueOfABoundConstant) {
  // match: y = Mul(x, Sigmoid(Mul(x, a)))   rewrite: y = com.microsoft.QuickGelu(x, alpha=value(a))
  RuleBuilder b("quick_gelu_alpha");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId x = b.capture("x");
  ExprId scaled = b.op("Mul", {x, b.capture("a")});
  b.root(b.op("Mul", {x, b.op("Sigmoid", {scaled})}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("com.microsoft.QuickGelu", {t.ref("x")}, {tvalue("alpha", "a")}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

// match: y = Relu(Transpose(x, perm=capture(p)))
RuleBuilder transposeRelu() {
  RuleBuilder b("transpose_relu");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId tr = b.op("Transpose", {b.capture("x")}, {captureAttr("perm", "p", at(5, 31))}, at(5, 16));
  b.root(b.op("Relu", {tr}, {}, at(5, 11)), "y");
  return b;
}

TEST(RuleChecks, ReportsAttrOfANameTheMatchDoesNotCapture) {
  // rewrite: y = Transpose(Relu(x), perm=attr(q))
  RuleBuilder b = transposeRelu();
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Transpose", {t.op("Relu", {t.ref("x")})}, {tattr("perm", "q", at(7, 32))},
                      at(7, 11)));
  EXPECT_EQ(check(b).diagnostics,
            (Strings{"rule.yaml:7:32: error: attr(q): the match captures no attribute as 'q'",
                     "rule.yaml:5:31: warning: attribute capture 'p' is never used: no attr(p) in "
                     "the rewrite"}));
}

TEST(RuleChecks, AcceptsAttrOfACapturedAttribute) {
  // rewrite: y = Transpose(Relu(x), perm=attr(p))
  RuleBuilder b = transposeRelu();
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Transpose", {t.op("Relu", {t.ref("x")})}, {tattr("perm", "p", at(7, 32))},
                      at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsAttrOfAnAttributeOfAnotherType) {
  // rewrite: y = Softmax(x, axis=attr(p))
  RuleBuilder b = transposeRelu();
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Softmax", {t.ref("x")}, {tattr("axis", "p", at(7, 25))}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:25: error: attribute 'axis' of op 'Softmax' expects int, but "
                    "attr(p) captures ints attribute 'perm' of op 'Transpose'"});
}

TEST(RuleChecks, ReportsAHelperArgumentTheMatchDoesNotBind) {
  // rewrite: y = LeakyRelu(x, alpha=helper(slope_of, q))
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    return t.op("LeakyRelu", {t.ref("x")}, {test::thelper("alpha", "slope_of", {"q"}, at(7, 27))},
                at(7, 11));
  });
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:27: error: helper argument 'q' is not bound by the match"});
}

TEST(RuleChecks, ReportsATensorLikeANameTheMatchDoesNotBind) {
  // rewrite: y = Add(x, tensor(like(q), 0.0)); like reads a matched value's type
  RuleBuilder b = withTarget([](test::TargetBuilder& t) {
    ir::Literal zero;
    zero.kind = ir::Literal::Kind::kFloat;
    zero.floats = {0.0};
    return t.op("Add", {t.ref("x"), t.tensorLike("q", zero, at(7, 18))}, {}, at(7, 11));
  });
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:18: error: tensor(like(q), ...): 'q' is not bound by the "
                    "match; like takes a matched value"});
}

TEST(RuleChecks, ReportsAConstraintOnANameTheMatchDoesNotBind) {
  // where: { epz: { scalar: true } }   (the match binds eps)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Add", {b.capture("x"), b.capture("eps")}, {}, at(5, 11)), "y");
  b.constraint(ir::Constraint::Kind::kScalar, "epz", at(7, 5));
  auto t = b.target(at(9, 5));
  t.replace("y", t.op("Sub", {t.ref("x"), t.ref("eps")}, {}, at(9, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:7:5: error: constraint on 'epz', which the "
                                          "match does not bind; did you mean 'eps'?"});
  b.rule().pattern.constraints[0].subject = "eps";
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsANativePredicateArgumentTheMatchDoesNotBind) {
  // where: { scale: { native: "last_dim_of(scale, inp)" } }
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x"), b.capture("scale")}, {}, at(5, 11)), "y");
  ir::Constraint& c = b.constraint(ir::Constraint::Kind::kNative, "scale", at(7, 5));
  c.native = "last_dim_of";
  c.args = {"scale", "inp"};
  auto t = b.target(at(9, 5));
  t.replace("y", t.op("Div", {t.ref("x"), t.ref("scale")}, {}, at(9, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:7:5: error: native predicate 'last_dim_of' "
                                          "reads 'inp', which the match does not bind"});
}

TEST(RuleChecks, ReportsARewriteThatDoesNotReplaceTheRoot) {
  // rewrite: t = Relu(x)
  RuleBuilder b =
      withTarget([](test::TargetBuilder& t) { return t.op("Relu", {t.ref("x")}, {}, at(7, 11)); });
  b.rule().targets[0].replacements[0].first = "t";
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:5: error: the rewrite does not replace the match root 'y'"});
}

TEST(RuleChecks, ReportsAMatchRootWithoutAName) {
  RuleBuilder b = quickGelu();
  b.expr(b.rule().pattern.root).name.clear();
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:5:11: error: the match root has no name, so the rewrite cannot "
                    "replace it"});
}

// ---- Unused captures ---------------------------------------------------------------------

TEST(RuleChecks, WarnsAboutACaptureNeverUsed) {
  // match: y = Mul(x, z)   rewrite: y = Neg(x)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x", at(5, 15)), b.capture("z", at(5, 18))}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Neg", {t.ref("x")}, {}, at(7, 11)));
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:18: warning: capture 'z' is never used; write '_' "
                                   "to match any value without binding it"});
}

TEST(RuleChecks, DoesNotWarnAboutAnOtherOutputReadLater) {
  // match: a, b = Split(x)   y = Add(Neg(b), a)   rewrite: y = Neg(x)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  const ir::ExprId split = b.op("Split", {b.capture("x", at(5, 22))}, {}, at(5, 16));
  b.expr(split).name = "a";
  b.expr(split).other_outputs.push_back({1, "b"});
  const ir::ExprId neg = b.op("Neg", {b.capture("b", at(6, 19))}, {}, at(6, 15));
  b.root(b.op("Add", {neg, split}, {}, at(6, 11)), "y");
  auto t = b.target(at(8, 5));
  t.replace("y", t.op("Neg", {t.ref("x")}, {}, at(8, 11)));
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotWarnAboutTheAnonymousCapture) {
  // match: y = Mul(x, _)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x"), b.capture("_")}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Neg", {t.ref("x")}, {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotWarnAboutACaptureUsedTwiceInTheMatch) {
  // match: y = Mul(s, Sub(x, ReduceMean(x)))   rewrite: y = Neg(s)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId x = b.capture("x");
  ExprId sub = b.op("Sub", {x, b.op("ReduceMean", {x})});
  b.root(b.op("Mul", {b.capture("s"), sub}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Neg", {t.ref("s")}, {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotWarnAboutACaptureUsedOnlyInAConstraint) {
  // match: y = Mul(x, c)   where: { c: { constant: true } }   rewrite: y = Neg(x)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x"), b.capture("c")}, {}, at(5, 11)), "y");
  b.constraint(ir::Constraint::Kind::kConstant, "c", at(7, 5));
  auto t = b.target(at(9, 5));
  t.replace("y", t.op("Neg", {t.ref("x")}, {}, at(9, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, WarnsAboutAnAttributeCaptureNeverUsed) {
  // match: y = Relu(Transpose(x, perm=capture(p)))   rewrite: y = Neg(x)
  RuleBuilder b = transposeRelu();
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Neg", {t.ref("x")}, {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:31: warning: attribute capture 'p' is never "
                                          "used: no attr(p) in the rewrite"});
}

// ---- Alternatives ------------------------------------------------------------------------

/// match: y = Sqrt(<alternatives>)   rewrite: y = Abs(d)
RuleBuilder sqrtOf(const std::function<ExprId(RuleBuilder&, ExprId)>& alts) {
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId d = b.capture("d");
  b.root(b.op("Sqrt", {alts(b, d)}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Abs", {t.ref("d")}, {}, at(7, 11)));
  return b;
}

TEST(RuleChecks, AcceptsDistinctAlternatives) {
  // Pow(d, 2.0) | Mul(d, d)
  RuleBuilder b = sqrtOf([](RuleBuilder& b, ExprId d) {
    return b.alternatives(
        {b.op("Pow", {d, b.constant(2.0)}, {}, at(5, 16)), b.op("Mul", {d, d}, {}, at(5, 30))});
  });
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsAnAlternativeIdenticalToAnEarlierOne) {
  // Mul(d, d) | Mul(d, d)
  RuleBuilder b = sqrtOf([](RuleBuilder& b, ExprId d) {
    return b.alternatives({b.op("Mul", {d, d}, {}, at(5, 16)), b.op("Mul", {d, d}, {}, at(5, 28))});
  });
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:28: error: alternative 2 can never be "
                                          "reached: it is the same as alternative 1"});
}

TEST(RuleChecks, ReportsAnAlternativeIdenticalUpToCommutation) {
  // Mul(d, e) | Mul(e, d)
  RuleBuilder b = sqrtOf([](RuleBuilder& b, ExprId d) {
    ExprId e = b.capture("e");
    return b.alternatives({b.op("Mul", {d, e}, {}, at(5, 16)), b.op("Mul", {e, d}, {}, at(5, 28))});
  });
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:28: error: alternative 2 can never be "
                                          "reached: it is the same as alternative 1"});
}

TEST(RuleChecks, ReportsAnAlternativeAfterOneThatMatchesAnything) {
  // d | Abs(d)
  RuleBuilder b = sqrtOf([](RuleBuilder& b, ExprId d) {
    return b.alternatives({d, b.op("Abs", {d}, {}, at(5, 20))});
  });
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:5:20: error: alternative 2 can never be "
                                          "reached: alternative 1 matches any value"});
}

// ---- Endless loops -----------------------------------------------------------------------

TEST(RuleChecks, ReportsARewriteThatItsOwnMatchMatchesAgain) {
  // match: y = Softsign(x)   rewrite: y = Softsign(x)
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) { return t.op("Softsign", {t.ref("x")}, {}, at(7, 11)); });
  EXPECT_EQ(
      check(b).diagnostics,
      Strings{
          "rule.yaml:7:11: error: rule 'r' matches the Softsign its own rewrite creates: it would "
          "apply to its own result forever"});
}

TEST(RuleChecks, ReportsALoopWhenTheRewriteReliesOnAnAttributeDefault) {
  // match: y = LeakyRelu(x, alpha=0.01)   rewrite: y = LeakyRelu(x)   (alpha defaults to 0.01)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("LeakyRelu", {b.capture("x")}, {equals("alpha", lfloat(0.01))}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("LeakyRelu", {t.ref("x")}, {}, at(7, 11)));
  EXPECT_EQ(
      check(b).diagnostics,
      Strings{
          "rule.yaml:7:11: error: rule 'r' matches the LeakyRelu its own rewrite creates: it would "
          "apply to its own result forever"});
}

TEST(RuleChecks, AcceptsASameOpRewriteWhoseAttributesTheMatchRejects) {
  // match: y = Transpose(x, perm=[1, 0])   rewrite: y = Transpose(x, perm=[0, 1])
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Transpose", {b.capture("x")}, {equals("perm", lints({1, 0}))}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Transpose", {t.ref("x")}, {tlit("perm", lints({0, 1}))}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, AcceptsASameOpRewriteWhenTheMatchNeedsMoreStructure) {
  // match: y = Relu(Neg(x))   rewrite: y = Relu(x)
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Relu", {b.op("Neg", {b.capture("x")})}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Relu", {t.ref("x")}, {}, at(7, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

/// match: y = Relu(Relu(x))   rewrite: y = `rewrite` of x.
RuleBuilder reluOfRelu(const std::string& name,
                       const std::function<uint32_t(test::TargetBuilder&)>& rewrite) {
  RuleBuilder b(name);
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Relu", {b.op("Relu", {b.capture("x")}, {}, at(5, 16))}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", rewrite(t));
  return b;
}

TEST(RuleChecks, ReportsARewriteThatGrowsWhatItsMatchMatches) {
  // rewrite: y = Relu(Relu(Relu(x))): each application leaves another to make.
  RuleBuilder b = reluOfRelu("grow", [](test::TargetBuilder& t) {
    return t.op("Relu", {t.op("Relu", {t.op("Relu", {t.ref("x")})})});
  });
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:5: error: rule 'grow' matches the Relu its own rewrite creates: "
                    "it would apply to its own result forever"});
}

TEST(RuleChecks, ReportsAMatchFittingANodeInsideItsRewrite) {
  // rewrite: y = Neg(Relu(Relu(x))): the match fits the rewrite's inner Relu.
  RuleBuilder b = reluOfRelu("wrap", [](test::TargetBuilder& t) {
    return t.op("Neg", {t.op("Relu", {t.op("Relu", {t.ref("x")})})});
  });
  EXPECT_FALSE(check(b).ok);
}

TEST(RuleChecks, AcceptsARewriteThatShrinksWhatItsMatchMatches) {
  // rewrite: y = Relu(x): a Relu of x is not a Relu of a Relu (x is whatever it was).
  RuleBuilder b =
      reluOfRelu("shrink", [](test::TargetBuilder& t) { return t.op("Relu", {t.ref("x")}); });
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotJudgeAMatchWithConstraints) {
  // The same growing rule with x: { rank: 4 }: whether it fits depends on the model (and the
  // driver's rewrite budget still ends it).
  RuleBuilder b = reluOfRelu("grow", [](test::TargetBuilder& t) {
    return t.op("Relu", {t.op("Relu", {t.op("Relu", {t.ref("x")})})});
  });
  b.constraint(ir::Constraint::Kind::kRank, "x", at(6, 9)).ints = {4};
  EXPECT_TRUE(check(b).ok);
}

/// match: y = `from`(a, b)   rewrite: y = `to`(a, Neg(b))
RuleBuilder swapWithNeg(const std::string& name, const std::string& from, const std::string& to,
                        int line, int64_t max_opset = -1) {
  RuleBuilder b(name);
  b.requiresOpset("", 13, max_opset, at(line, 15));
  b.root(b.op(from, {b.capture("a"), b.capture("b")}, {}, at(line + 2, 11)), "y");
  auto t = b.target(at(line + 4, 5));
  t.replace("y", t.op(to, {t.ref("a"), t.op("Neg", {t.ref("b")})}, {}, at(line + 4, 11)));
  return b;
}

TEST(RuleChecks, ReportsTwoRulesThatUndoEachOther) {
  // Add(a, b) -> Sub(a, Neg(b)) and Sub(a, b) -> Add(a, Neg(b)): each creates what the
  // other matches, and the graph grows a Neg per round.
  CheckResult r = check({swapWithNeg("add_to_sub", "Add", "Sub", 1).rule(),
                         swapWithNeg("sub_to_add", "Sub", "Add", 11).rule()});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            (Strings{"rule.yaml:15:11: error: rules 'add_to_sub' and 'sub_to_add' undo each "
                     "other: 'add_to_sub' matches this Add, and 'sub_to_add' the Sub "
                     "'add_to_sub' creates: they would apply forever",
                     "rule.yaml:5:11: note: 'add_to_sub' creates the Sub here"}));
}

TEST(RuleChecks, AcceptsTwoSuchRulesAtDisjointOpsets) {
  // Never run on one model: add_to_sub runs up to opset 13, sub_to_add from opset 14.
  RuleBuilder late = swapWithNeg("sub_to_add", "Sub", "Add", 11);
  late.rule().requires[0].min_opset = 14;
  CheckResult r = check({swapWithNeg("add_to_sub", "Add", "Sub", 1, 13).rule(), late.rule()});
  EXPECT_TRUE(r.ok) << ::testing::PrintToString(r.diagnostics);
}

TEST(RuleChecks, AcceptsARulePairWhereOnlyOneFeedsTheOther) {
  // Add(a, b) -> Sub(a, Neg(b)) and Sub(a, Neg(b)) -> Mul(a, b): the second's rewrite is no
  // Add, so the chain ends.
  RuleBuilder second("sub_of_neg");
  second.requiresOpset("", 13, -1, at(11, 15));
  second.root(second.op("Sub", {second.capture("a"), second.op("Neg", {second.capture("b")})}, {},
                        at(13, 11)),
              "y");
  auto t = second.target(at(15, 5));
  t.replace("y", t.op("Mul", {t.ref("a"), t.ref("b")}, {}, at(15, 11)));
  CheckResult r = check({swapWithNeg("add_to_sub", "Add", "Sub", 1).rule(), second.rule()});
  EXPECT_TRUE(r.ok) << ::testing::PrintToString(r.diagnostics);
}

TEST(RuleChecks, ReportsARewriteThatReplacesTheRootWithItself) {
  // rewrite: y = y
  RuleBuilder b = withTarget([](test::TargetBuilder& t) { return t.ref("y", at(7, 9)); });
  EXPECT_EQ(check(b).diagnostics,
            (Strings{"rule.yaml:7:5: error: the rewrite replaces the match root 'y' with itself",
                     "rule.yaml:5:20: warning: capture 'x' is never used; write '_' to match any "
                     "value without binding it"}));
}

// ---- Rule-set level ----------------------------------------------------------------------

TEST(RuleChecks, ReportsDuplicateRuleNames) {
  RuleBuilder first = quickGelu();
  RuleBuilder second = quickGelu();
  second.rule().loc = at(10, 3);
  CheckResult r = check({first.rule(), second.rule()});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, (Strings{"rule.yaml:10:3: error: duplicate rule name 'quick_gelu'",
                                    "rule.yaml:1:3: note: 'quick_gelu' is first defined here"}));
}

TEST(RuleChecks, AcceptsDistinctRuleNames) {
  // The same match twice is legal (a warning says the second never applies).
  RuleBuilder first = quickGelu();
  RuleBuilder second = quickGelu();
  second.rule().name = "quick_gelu_2";
  EXPECT_TRUE(check({first.rule(), second.rule()}).ok);
}

// ---- Shadowed rules and equal-priority ties ----------------------------------------------

/// `name`: y = Relu(<inner>) rewritten to Identity(x), at `priority`.
RuleBuilder reluRule(const std::string& name, int priority,
                     const std::function<ExprId(RuleBuilder&)>& inner) {
  RuleBuilder b(name);
  b.requiresOpset("", 13, -1, at(3, 15));
  b.priority(priority);
  b.root(b.op("Relu", {inner(b)}, {}, at(5, 11)), "y");
  auto t = b.target(at(7, 5));
  t.replace("y", t.op("Identity", {t.ref("x", at(7, 20))}, {}, at(7, 11)));
  return b;
}

ExprId anyX(RuleBuilder& b) { return b.capture("x", at(5, 16)); }
ExprId negOfX(RuleBuilder& b) { return b.op("Neg", {b.capture("x")}, {}, at(5, 16)); }
ExprId sigmoidOfX(RuleBuilder& b) { return b.op("Sigmoid", {b.capture("x")}, {}, at(5, 16)); }

TEST(RuleChecks, WarnsOfARuleAWiderRuleOfHigherPriorityShadows) {
  // relu_any: y = Relu(x) at 20 goes first on every Relu(Neg(x)) relu_neg would take.
  RuleBuilder wide = reluRule("relu_any", 20, anyX);
  RuleBuilder narrow = reluRule("relu_neg", 10, negOfX);
  EXPECT_EQ(check({wide.rule(), narrow.rule()}).diagnostics,
            (Strings{"rule.yaml:1:3: warning: rule 'relu_neg' never applies: rule 'relu_any' "
                     "(priority 20) matches everything it matches and goes first",
                     "rule.yaml:1:3: note: 'relu_any' is here"}));
}

TEST(RuleChecks, AcceptsANarrowRuleAboveTheWiderOne) {
  // The specific form first, the general one for the rest: the intended order.
  RuleBuilder narrow = reluRule("relu_neg", 20, negOfX);
  RuleBuilder wide = reluRule("relu_any", 10, anyX);
  EXPECT_EQ(check({narrow.rule(), wide.rule()}).diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotCallARuleShadowedByOneWithAConstraintItLacks) {
  // relu_const: y = Relu(x), x a constant: it does not take every Relu(Neg(x)).
  RuleBuilder wide = reluRule("relu_const", 20, anyX);
  wide.constraint(ir::Constraint::Kind::kConstant, "x", at(9, 7));
  RuleBuilder narrow = reluRule("relu_neg", 10, negOfX);
  EXPECT_EQ(check({wide.rule(), narrow.rule()}).diagnostics, Strings{});
}

TEST(RuleChecks, DoesNotCallARuleShadowedByOneThatRunsAtFewerOpsets) {
  RuleBuilder wide = reluRule("relu_any", 20, anyX);
  wide.rule().requires[0].min_opset = 18;
  RuleBuilder narrow = reluRule("relu_neg", 10, negOfX);
  EXPECT_EQ(check({wide.rule(), narrow.rule()}).diagnostics, Strings{});
}

TEST(RuleChecks, WarnsOfEqualPrioritiesOnRulesThatCanMatchOneNode) {
  // Relu(x) and Relu(Neg(x)) at 10: on Relu(Neg(a)) the load order decides.
  RuleBuilder a = reluRule("relu_neg", 10, negOfX);
  RuleBuilder b = reluRule("relu_any", 10, anyX);
  b.rule().loc = at(11, 3);
  EXPECT_EQ(check({a.rule(), b.rule()}).diagnostics,
            (Strings{"rule.yaml:11:3: warning: rules 'relu_neg' and 'relu_any' have the same "
                     "priority (10) and can match the same Relu: which applies depends on the "
                     "order they are loaded in; give the one that should go first a higher "
                     "priority",
                     "rule.yaml:1:3: note: 'relu_neg' is here"}));
}

TEST(RuleChecks, AcceptsEqualPrioritiesOnRulesNoNodeMatchesBoth) {
  // Relu(Neg(x)) and Relu(Sigmoid(x)): different ops under the root.
  RuleBuilder a = reluRule("relu_neg", 10, negOfX);
  RuleBuilder b = reluRule("relu_sigmoid", 10, sigmoidOfX);
  EXPECT_EQ(check({a.rule(), b.rule()}).diagnostics, Strings{});
}

TEST(RuleChecks, AcceptsEqualPrioritiesWhenACaptureWouldHaveToContainItself) {
  // SiLU x * Sigmoid(x) and QuickGelu x * Sigmoid(x * a): one node matching both would need
  // x = x * a, which no finite graph has.
  RuleBuilder silu("silu");
  silu.requiresOpset("", 13, -1, at(3, 15));
  silu.priority(50);
  {
    ExprId x = silu.capture("x");
    silu.root(silu.op("Mul", {x, silu.op("Sigmoid", {x})}), "y");
    auto t = silu.target(at(7, 5));
    t.replace("y", t.op("Identity", {t.ref("x")}, {}, at(7, 11)));
  }
  RuleBuilder quick("quick_gelu");
  quick.requiresOpset("", 13, -1, at(3, 15));
  quick.priority(50);
  {
    ExprId x = quick.capture("x");
    ExprId scaled = quick.op("Mul", {x, quick.capture("_")});
    quick.root(quick.op("Mul", {x, quick.op("Sigmoid", {scaled})}), "y");
    auto t = quick.target(at(7, 5));
    t.replace("y", t.op("Identity", {t.ref("x")}, {}, at(7, 11)));
  }
  EXPECT_EQ(check({silu.rule(), quick.rule()}).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsAPriorityOutOfRange) {
  RuleBuilder b = quickGelu();
  b.priority(20000);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:1:3: error: priority 20000 is out of range [-10000, 10000]"});
  b.priority(-10001);
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:1:3: error: priority -10001 is out of range [-10000, 10000]"});
}

TEST(RuleChecks, AcceptsTheExtremePriorities) {
  RuleBuilder b = quickGelu();
  b.priority(10000);
  EXPECT_EQ(check(b).diagnostics, Strings{});
  b.priority(-10000);
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, WarnsAboutAnUnknownTag) {
  RuleBuilder b = quickGelu();
  b.tags({"ort", "gpu"});
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:1:3: warning: unknown tag 'gpu' (known: ort, onnx, "
                                   "cpu, cuda, test, opt_in, approximation)"});
}

TEST(RuleChecks, AcceptsTheKnownTags) {
  RuleBuilder b = quickGelu();
  b.tags({"ort", "onnx", "cpu", "cuda", "test", "opt_in", "approximation"});
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

// ---- Rewrite variants and opset ranges ---------------------------------------------------

/// requires >=13   match: y = Mul(x, s)   rewrite variants added by the test.
RuleBuilder rmsNorm() {
  RuleBuilder b("rms_norm");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(b.op("Mul", {b.capture("x"), b.capture("s")}, {}, at(5, 11)), "y");
  return b;
}

TEST(RuleChecks, AcceptsAVariantWithWhenBeforeADefault) {
  // - when: { opset: ">=23" }  do: y = RMSNormalization(x, s)
  // - do: y = SimplifiedLayerNormalization(x, s)
  RuleBuilder b = rmsNorm();
  auto v1 = b.target(at(7, 7));
  v1.when("", 23).replace("y",
                          v1.op("RMSNormalization", {v1.ref("x"), v1.ref("s")}, {}, at(8, 13)));
  auto v2 = b.target(at(9, 7));
  v2.replace("y",
             v2.op("SimplifiedLayerNormalization", {v2.ref("x"), v2.ref("s")}, {}, at(10, 13)));
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

TEST(RuleChecks, ReportsAVariantAfterOneWithoutWhen) {
  RuleBuilder b = rmsNorm();
  auto v1 = b.target(at(7, 7));
  v1.replace("y", v1.op("SimplifiedLayerNormalization", {v1.ref("x"), v1.ref("s")}, {}, at(8, 13)));
  auto v2 = b.target(at(9, 7));
  v2.when("", 23).replace("y",
                          v2.op("RMSNormalization", {v2.ref("x"), v2.ref("s")}, {}, at(10, 13)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:9:7: error: rewrite variant 2 can never be "
                                          "chosen: variant 1 has no 'when' and always applies"});
}

TEST(RuleChecks, ReportsAnEmptyOpsetRangeInWhen) {
  RuleBuilder b = rmsNorm();
  auto v1 = b.target(at(7, 7));
  v1.when("", 20, 18).replace("y", v1.op("Div", {v1.ref("x"), v1.ref("s")}, {}, at(8, 13)));
  auto v2 = b.target(at(9, 7));
  v2.replace("y",
             v2.op("SimplifiedLayerNormalization", {v2.ref("x"), v2.ref("s")}, {}, at(10, 13)));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:7: error: empty opset range in 'when': >= 20 and <= 18"});
}

TEST(RuleChecks, ReportsAnEmptyOpsetRangeInRequires) {
  RuleBuilder b = quickGelu();
  b.rule().requires[0].min_opset = 20;
  b.rule().requires[0].max_opset = 18;
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:3:15: error: empty opset range in 'requires': >= 20 and <= 18"});
}

TEST(RuleChecks, ReportsAVariantOutsideTheRequiredOpsets) {
  // requires >=13,<=17   - when: { opset: ">=23" } ...
  RuleBuilder b = rmsNorm();
  b.rule().requires[0].max_opset = 17;
  auto v1 = b.target(at(7, 7));
  v1.when("", 23).replace("y",
                          v1.op("RMSNormalization", {v1.ref("x"), v1.ref("s")}, {}, at(8, 13)));
  auto v2 = b.target(at(9, 7));
  v2.replace("y",
             v2.op("SimplifiedLayerNormalization", {v2.ref("x"), v2.ref("s")}, {}, at(10, 13)));
  EXPECT_EQ(check(b).diagnostics,
            Strings{"rule.yaml:7:7: error: rewrite variant 1 can never be chosen: its opsets "
                    "(ai.onnx 23-24) and the rule's (ai.onnx 13-17) do not overlap"});
}

TEST(RuleChecks, ReportsAWhenTagNoAlternativeCarries) {
  RuleBuilder b = sqrtOf([](RuleBuilder& b, ExprId d) {
    return b.alternatives({b.op("Pow", {d, b.constant(2.0)}), b.op("Mul", {d, d})}, at(5, 16),
                          {"pow", "mul"});
  });
  b.rule().targets[0].when = ir::Target::When{"", -1, -1, {"square"}};
  auto fallback = b.target(at(9, 5));
  fallback.replace("y", fallback.op("Abs", {fallback.ref("d")}, {}, at(9, 11)));
  EXPECT_EQ(check(b).diagnostics, Strings{"rule.yaml:7:5: error: 'when' tag 'square' is not a tag "
                                          "of any alternative in the match"});
  b.rule().targets[0].when->tags = {"pow"};
  EXPECT_EQ(check(b).diagnostics, Strings{});
}

// ---- Error recovery ----------------------------------------------------------------------

// ---- none and rests of inputs ----------------------------------------------------------

// match: y = Concat(a, b, rest..., axis=-1)     Concat 5:11, a 5:18, b 5:21, rest 5:24
// rewrite: y = Concat(Max(a, b), rest..., axis=-1)   7:11, Max 7:18 (a 7:22, b 7:25), rest 7:29
RuleBuilder concatWithRest() {
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  ExprId concat = b.op("Concat", {b.capture("a", at(5, 18)), b.capture("b", at(5, 21))},
                       {equals("axis", lint(-1), at(5, 32))}, at(5, 11));
  b.root(b.withRest(concat, "rest", at(5, 24)), "y");
  auto t = b.target(at(7, 5));
  const uint32_t max = t.op("Max", {t.ref("a", at(7, 22)), t.ref("b", at(7, 25))}, {}, at(7, 18));
  t.replace("y", t.op("Concat", {max, t.rest("rest", at(7, 29))},
                      {tlit("axis", lint(-1), at(7, 40))}, at(7, 11)));
  return b;
}

TEST(RuleChecks, AcceptsARestOfInputsSplicedIntoTheRewrite) {
  RuleBuilder b = concatWithRest();
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{});
}

TEST(RuleChecks, WarnsAboutARestTheRewriteDrops) {
  // rewrite: y = Concat(Max(a, b), axis=-1)
  RuleBuilder b = concatWithRest();
  b.rule().targets[0].exprs[4].inputs = {2};
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics,
            Strings{"rule.yaml:5:24: warning: rest 'rest' is never spliced: the rewrite drops "
                    "those inputs; write '_...' to match them unbound"});
}

TEST(RuleChecks, ReportsARestThatIsAlsoAValue) {
  // match: y = Concat(a, rest, rest..., axis=-1)
  RuleBuilder b = concatWithRest();
  b.rule().pattern.exprs[1].name = "rest";
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:24: error: 'rest' names a rest of inputs "
                                   "('rest...') and a single value; use two names"});
}

TEST(RuleChecks, ReportsAConstraintOnARest) {
  // where: { rest: { rank: 3 } }
  RuleBuilder b = concatWithRest();
  b.constraint(ir::Constraint::Kind::kRank, "rest", at(9, 13)).ints = {3};
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:9:13: error: constraint on 'rest', a rest of "
                                   "inputs: constraints apply to single values"});
}

TEST(RuleChecks, ReportsARestReadAsAValueOrSplicedWithoutBeingBound) {
  // rewrite: y = Concat(Max(a, rest), other..., axis=-1)
  RuleBuilder b = concatWithRest();
  ir::Target& t = b.rule().targets[0];
  t.exprs[1].name = "rest";
  t.exprs[3].name = "other";
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            (Strings{"rule.yaml:7:25: error: 'rest' is a rest of inputs; write 'rest...' to "
                     "splice it into a node's inputs",
                     "rule.yaml:7:29: error: 'other...' splices a rest of inputs, but the match "
                     "binds no rest 'other'",
                     "rule.yaml:5:21: warning: capture 'b' is never used; write '_' to match any "
                     "value without binding it",
                     "rule.yaml:5:24: warning: rest 'rest' is never spliced: the rewrite drops "
                     "those inputs; write '_...' to match them unbound"}));
}

TEST(RuleChecks, ReportsARewriteThatKeepsAsManyInputsAsTheRestNeeds) {
  // rewrite: y = Concat(Max(a, b), a, rest..., axis=-1): as many inputs as before, forever.
  RuleBuilder b = concatWithRest();
  ir::Target& t = b.rule().targets[0];
  t.exprs[4].inputs = {2, 0, 3};
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(
      r.diagnostics,
      Strings{
          "rule.yaml:7:11: error: rule 'r' matches the Concat its own rewrite creates: it would "
          "apply to its own result forever"});
}

TEST(RuleChecks, WarnsAboutARestOfAnOpThatTakesNoMoreInputs) {
  // match: y = Sub(a, b, rest...)    rewrite: y = Neg(Add(b, a, rest...))
  RuleBuilder b("r");
  b.requiresOpset("", 13, -1, at(3, 15));
  b.root(
      b.withRest(b.op("Sub", {b.capture("a", at(5, 15)), b.capture("b", at(5, 18))}, {}, at(5, 11)),
                 "rest", at(5, 21)),
      "y");
  auto t = b.target(at(7, 5));
  t.replace("y",
            t.op("Neg", {t.op("Add", {t.ref("b"), t.ref("a"), t.rest("rest")})}, {}, at(7, 11)));
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:21: warning: 'rest...' is always empty: op "
                                   "'Sub' takes at most 2 inputs"});
}

TEST(RuleChecks, AcceptsNoneWhereAnInputIsOptional) {
  // match: y = Clip(x, none, m)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("Clip", {b.capture("x", at(5, 16)), b.none(at(5, 19)), b.capture("m", at(5, 25))},
                {}, at(5, 11));
  });
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:25: warning: capture 'm' is never used; write "
                                   "'_' to match any value without binding it"});
}

TEST(RuleChecks, ReportsNoneWhereAnInputIsRequired) {
  // match: y = Sub(x, none)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("Sub", {b.capture("x", at(5, 15)), b.none(at(5, 18))}, {}, at(5, 11));
  });
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{"rule.yaml:5:18: error: input 1 ('B') of op 'Sub' is "
                                   "required; 'none' can never match it"});
}

TEST(RuleChecks, EquivalentNamesAnotherMatchedValue) {
  // match: y = Add(Neg(a), Neg(b))   where: { b: { equivalent: c } } (c is never bound)
  RuleBuilder b = withRoot([](RuleBuilder& b) {
    return b.op("Add",
                {b.op("Neg", {b.capture("a", at(5, 19))}, {}, at(5, 15), "x"),
                 b.op("Neg", {b.capture("b", at(5, 27))}, {}, at(5, 23))},
                {}, at(5, 11));
  });
  b.constraint(ir::Constraint::Kind::kEquivalent, "b", at(9, 10)).args = {"a"};
  EXPECT_EQ(check(b).diagnostics, Strings{});
  b.rule().pattern.constraints[0].args = {"c"};
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            (Strings{"rule.yaml:9:10: error: 'equivalent' names 'c', which the match does not bind",
                     "rule.yaml:5:19: warning: capture 'a' is never used; write '_' to match any "
                     "value without binding it"}));
}

TEST(RuleChecks, ReportsEveryProblemOfARule) {
  RuleBuilder b = withTarget(
      [](test::TargetBuilder& t) { return t.op("Relu", {t.ref("zz", at(7, 16))}, {}, at(7, 11)); });
  b.priority(99999);
  b.rule().pattern.exprs[b.rule().pattern.root].op = "Relux";
  CheckResult r = check(b);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            (Strings{"rule.yaml:1:3: error: priority 99999 is out of range [-10000, 10000]",
                     "rule.yaml:5:11: error: unknown op 'Relux'; did you mean 'Relu'?",
                     "rule.yaml:7:16: error: 'zz' is not bound by the match or by an earlier "
                     "rewrite statement",
                     "rule.yaml:5:20: warning: capture 'x' is never used; write '_' to match any "
                     "value without binding it"}));
}

// ---- Declarations ------------------------------------------------------------------------

TEST(RuleChecks, AcceptsDeclarationsIdenticalToTheShippedOnes) {
  RuleBuilder b = quickGelu();
  CheckResult r = check({b.rule()}, contribOpDecls());
  EXPECT_EQ(r.diagnostics, Strings{});
}

TEST(RuleChecks, ReportsADeclarationThatConflictsWithAShippedOne) {
  std::vector<ir::OpDecl> ops = {contribOpDecls()[0]};  // com.microsoft.Gelu
  ops[0].inputs.push_back({"bias", true, false});
  ops[0].loc = at(2, 5);
  CheckResult r = check({}, ops);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics,
            (Strings{"rule.yaml:2:5: error: op 'com.microsoft.Gelu' (since 1) is "
                     "declared twice, with different signatures",
                     "compiler/sema/ContribOps.cc: note: the other declaration is here"}));
}

TEST(RuleChecks, ReportsADeclaredAttributeOfAnUnknownType) {
  ir::OpDecl d;
  d.domain = "com.example";
  d.op = "Foo";
  d.inputs = {{"X", false, false}};
  d.outputs = {{"Y", false, false}};
  d.attrs = {{"n", "integer", false, std::nullopt}};
  d.loc = at(2, 5);
  EXPECT_EQ(check({}, {d}).diagnostics, Strings{"rule.yaml:2:5: error: attribute 'n' of op "
                                                "'com.example.Foo' has unknown type 'integer'"});
}

// ---- The shipped LayerNorm rule, end to end ----------------------------------------------

// rules/layer_norm.yaml, rule layer_norm: ReduceMean's axes as an attribute at every opset
// (an input from 18), LayerNormalization below 17 from ONNX Runtime's ONNX-domain op.
TEST(RuleChecks, AcceptsTheLayerNormRule) {
  RuleBuilder b("layer_norm");
  b.requiresOpset("", 13).tags({"ort", "onnx"}).priority(100);
  std::vector<ir::AttrMatch> last_axis = {equals("axes", lints({-1})), equals("keepdims", lint(1))};
  ExprId x = b.capture("x");
  ExprId mean = b.op("ReduceMean", {x}, last_axis, {}, "mean");
  ExprId d = b.op("Sub", {x, mean}, {}, {}, "d");
  ExprId square = b.alternatives({b.op("Pow", {d, b.constant(2.0)}), b.op("Mul", {d, d})});
  ExprId var = b.op("ReduceMean", {square}, last_axis, {}, "var");
  ExprId std_dev = b.op("Sqrt", {b.op("Add", {var, b.capture("eps")})}, {}, {}, "std");
  ExprId normed =
      b.alternatives({b.op("Div", {d, std_dev}), b.op("Mul", {d, b.op("Reciprocal", {std_dev})})});
  b.root(b.op("Add", {b.op("Mul", {normed, b.capture("scale")}), b.capture("bias")}), "y");
  b.constraint(ir::Constraint::Kind::kScalar, "eps");
  b.constraint(ir::Constraint::Kind::kRank, "scale").ints = {1};
  ir::Constraint& native = b.constraint(ir::Constraint::Kind::kNative, "scale");
  native.native = "last_dim_of";
  native.args = {"scale", "x"};
  b.constraint(ir::Constraint::Kind::kRank, "bias").ints = {1};
  auto t = b.target();
  t.replace("y", t.op("LayerNormalization", {t.ref("x"), t.ref("scale"), t.ref("bias")},
                      {tlit("axis", lint(-1)), tvalue("epsilon", "eps")}));
  CheckResult r = check(b);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.diagnostics, Strings{});
}

}  // namespace
}  // namespace onnx_rewrite
