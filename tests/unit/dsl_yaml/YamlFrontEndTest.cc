//===- YamlFrontEndTest.cc - YAML rule files to Rule IR -------------------===//
//
// Whole rule files in, canonical IR (ir::printRule) and exact locations out:
// the LayerNorm rule of docs/dsl.md, rule metadata, constraints, rewrite
// variants, op declarations, where locations land in every scalar style, and
// inputs that must be rejected without crashing.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>

#include "tests/unit/dsl_yaml/YamlTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::parseYaml;
using testing::YamlParse;

/// The LayerNorm rule of docs/dsl.md, verbatim. Line numbers matter to the tests below.
const char* const kLayerNorm = R"(rules:
  - rule: layer_norm
    priority: 100
    tags: [ort, onnx]
    doc: LayerNorm written out as ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add.
    requires: { opset: ">=17" }
    match: |
      mean = ReduceMean(x, axes=[-1], keepdims=1)
      d    = Sub(x, mean)
      var  = ReduceMean(Pow(d, 2.0) | Mul(d, d), axes=[-1], keepdims=1)
      std  = Sqrt(Add(var, eps))
      y    = Add(Mul(Div(d, std) | Mul(d, Reciprocal(std)), scale), bias)
    where:
      eps:   { scalar: [0, 1e-3] }
      scale: { rank: 1 }
      bias:  { rank: 1 }
    rewrite: |
      y = LayerNormalization(x, scale, bias, axis=-1, epsilon=value(eps))
)";

/// Parses `text`, expects no diagnostics and exactly one rule, and returns it.
ir::Rule parseOneRule(const std::string& text) {
  YamlParse p = parseYaml(text);
  EXPECT_TRUE(p.ok) << p.renderedText();
  EXPECT_EQ(p.renderedText(), "");
  EXPECT_EQ(p.file.rules.size(), 1u);
  return p.file.rules.empty() ? ir::Rule{} : p.file.rules[0];
}

/// A rule around the given match and rewrite blocks (indented by the caller's text).
std::string rule(const std::string& match, const std::string& rewrite,
                 const std::string& extra = "") {
  return "rules:\n  - rule: r\n" + extra + "    match: |\n" + match + "    rewrite: |\n" + rewrite;
}

const ir::Expr* findOp(const ir::Pattern& p, const std::string& op) {
  for (const ir::Expr& e : p.exprs)
    if (e.kind == ir::Expr::Kind::kOp && e.op == op) return &e;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The LayerNorm rule
//===----------------------------------------------------------------------===//

TEST(YamlLayerNorm, ParsesToTheCanonicalIR) {
  // Shared names are shared ids (%0 = x, %2 = d, %10 = std); both alternatives of each `|`
  // are present; Pow's exponent is the constant 2.0; the root is the final Add.
  const char* expected =
      "rule layer_norm priority 100 tags [ort, onnx]\n"
      "  doc LayerNorm written out as ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add.\n"
      "  requires ai.onnx >= 17\n"
      "  match\n"
      "    %0 = capture x\n"
      "    %1 = op ReduceMean(%0) {axes == [-1], keepdims == 1} -> mean\n"
      "    %2 = op Sub(%0, %1) -> d\n"
      "    %3 = const 2.0\n"
      "    %4 = op Pow(%2, %3)\n"
      "    %5 = op Mul(%2, %2)\n"
      "    %6 = alt(%4 | %5)\n"
      "    %7 = op ReduceMean(%6) {axes == [-1], keepdims == 1} -> var\n"
      "    %8 = capture eps\n"
      "    %9 = op Add(%7, %8)\n"
      "    %10 = op Sqrt(%9) -> std\n"
      "    %11 = op Div(%2, %10)\n"
      "    %12 = op Reciprocal(%10)\n"
      "    %13 = op Mul(%2, %12)\n"
      "    %14 = alt(%11 | %13)\n"
      "    %15 = capture scale\n"
      "    %16 = op Mul(%14, %15)\n"
      "    %17 = capture bias\n"
      "    %18 = op Add(%16, %17) -> y\n"
      "    root %18\n"
      "  where\n"
      "    eps: scalar min 0.0 max 0.001\n"
      "    scale: rank in [1]\n"
      "    bias: rank in [1]\n"
      "  rewrite\n"
      "    %0 = ref x\n"
      "    %1 = ref scale\n"
      "    %2 = ref bias\n"
      "    %3 = op LayerNormalization(%0, %1, %2) {axis = -1, epsilon = value(eps)}\n"
      "    replace y with %3\n";
  EXPECT_EQ(ir::printRule(parseOneRule(kLayerNorm)), expected);
}

TEST(YamlLayerNorm, SharedNamesAreOneExprEach) {
  ir::Rule r = parseOneRule(kLayerNorm);
  int x = 0, d = 0;
  for (const ir::Expr& e : r.pattern.exprs) {
    x += e.kind == ir::Expr::Kind::kCapture && e.name == "x";
    d += e.name == "d";
  }
  EXPECT_EQ(x, 1);
  EXPECT_EQ(d, 1);
}

TEST(YamlLayerNorm, EveryExprPointsIntoTheBlockScalar) {
  ir::Rule r = parseOneRule(kLayerNorm);
  // Line 12: `      y    = Add(Mul(Div(d, std) | Mul(d, Reciprocal(std)), scale), bias)`
  const ir::Expr* reciprocal = findOp(r.pattern, "Reciprocal");
  ASSERT_NE(reciprocal, nullptr);
  EXPECT_EQ(reciprocal->loc.str(), "rules.yaml:12:43");
  EXPECT_EQ(r.pattern.exprs[r.pattern.root].loc.str(), "rules.yaml:12:14");  // Add
  const ir::Expr* sqrt = findOp(r.pattern, "Sqrt");
  ASSERT_NE(sqrt, nullptr);
  EXPECT_EQ(sqrt->loc.str(), "rules.yaml:11:14");
  for (const ir::Expr& e : r.pattern.exprs) {
    EXPECT_TRUE(e.loc.known());
    EXPECT_EQ(e.loc.file, "rules.yaml");
    EXPECT_GE(e.loc.line, 8u);
    EXPECT_LE(e.loc.line, 12u);
  }
}

TEST(YamlLayerNorm, CapturesPointAtTheirFirstUse) {
  ir::Rule r = parseOneRule(kLayerNorm);
  std::map<std::string, std::string> captures;
  for (const ir::Expr& e : r.pattern.exprs)
    if (e.kind == ir::Expr::Kind::kCapture) captures[e.name] = e.loc.str();
  EXPECT_EQ(captures["x"], "rules.yaml:8:25");
  EXPECT_EQ(captures["eps"], "rules.yaml:11:28");
  EXPECT_EQ(captures["bias"], "rules.yaml:12:69");
}

TEST(YamlLayerNorm, AttributesConstantsAndAlternativesHaveLocations) {
  ir::Rule r = parseOneRule(kLayerNorm);
  const ir::Expr* mean = findOp(r.pattern, "ReduceMean");
  ASSERT_NE(mean, nullptr);
  ASSERT_EQ(mean->attrs.size(), 2u);
  EXPECT_EQ(mean->attrs[0].loc.str(), "rules.yaml:8:28");  // axes
  EXPECT_EQ(mean->attrs[1].loc.str(), "rules.yaml:8:39");  // keepdims
  std::vector<std::string> constants, alternatives;
  for (const ir::Expr& e : r.pattern.exprs) {
    if (e.kind == ir::Expr::Kind::kConstant) constants.push_back(e.loc.str());
    if (e.kind == ir::Expr::Kind::kAlternatives) alternatives.push_back(e.loc.str());
  }
  EXPECT_EQ(constants, (std::vector<std::string>{"rules.yaml:10:32"}));
  // An alternatives expr points at its first '|'.
  EXPECT_EQ(alternatives, (std::vector<std::string>{"rules.yaml:10:37", "rules.yaml:12:34"}));
}

TEST(YamlLayerNorm, RewriteAndConstraintsHaveLocations) {
  ir::Rule r = parseOneRule(kLayerNorm);
  ASSERT_EQ(r.targets.size(), 1u);
  const ir::Target& t = r.targets[0];
  EXPECT_EQ(t.loc.str(), "rules.yaml:17:5");
  ASSERT_EQ(t.replacements.size(), 1u);
  const ir::TargetExpr& ln = t.exprs[t.replacements[0].second];
  EXPECT_EQ(ln.loc.str(), "rules.yaml:18:11");
  ASSERT_EQ(ln.attrs.size(), 2u);
  EXPECT_EQ(ln.attrs[1].loc.str(), "rules.yaml:18:55");  // epsilon
  ASSERT_EQ(r.pattern.constraints.size(), 3u);
  EXPECT_EQ(r.pattern.constraints[0].loc.str(), "rules.yaml:14:16");  // scalar
  EXPECT_EQ(r.requires[0].loc.str(), "rules.yaml:6:15");
  EXPECT_EQ(r.loc.str(), "rules.yaml:2:5");
}

//===----------------------------------------------------------------------===//
// Rule fields
//===----------------------------------------------------------------------===//

TEST(YamlRuleFields, PriorityDefaultsToZeroAndTagsDocAreOptional) {
  ir::Rule r = parseOneRule(rule("      y = Relu(x)\n", "      y = Neg(x)\n"));
  EXPECT_EQ(r.name, "r");
  EXPECT_EQ(r.priority, 0);
  EXPECT_TRUE(r.tags.empty());
  EXPECT_TRUE(r.doc.empty());
  EXPECT_TRUE(r.requires.empty());
}

TEST(YamlRuleFields, NegativePriorityAndMultiLineDoc) {
  ir::Rule r = parseOneRule(rule("      y = Relu(x)\n", "      y = Neg(x)\n",
                                 "    priority: -5\n    doc: >\n      Two lines\n      folded.\n"));
  EXPECT_EQ(r.priority, -5);
  EXPECT_EQ(r.doc, "Two lines folded.");
}

TEST(YamlRuleFields, RequiresTakesEveryOpsetForm) {
  ir::Rule r = parseOneRule(rule("      y = Relu(x)\n", "      y = Neg(x)\n",
                                 "    requires:\n"
                                 "      - { opset: \">=13\" }\n"
                                 "      - { domain: com.microsoft, opset: \"<=1\" }\n"
                                 "      - { domain: ai.onnx, opset: 17 }\n"
                                 "      - { opset: \">= 13 , <= 17\" }\n"));
  std::string printed = ir::printRule(r);
  EXPECT_NE(printed.find("  requires ai.onnx >= 13\n"
                         "  requires com.microsoft <= 1\n"
                         "  requires ai.onnx >= 17 <= 17\n"
                         "  requires ai.onnx >= 13 <= 17\n"),
            std::string::npos)
      << printed;
}

TEST(YamlRuleFields, DefaultsGiveTagsRequiresAndPriorityToRulesWithout) {
  YamlParse p = parseYaml(
      "defaults: { tags: [ort], requires: { opset: \">=9\" }, priority: 1000 }\n"
      "rules:\n"
      "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
      "  - { rule: b, priority: 5, tags: [onnx], requires: { opset: 17 },\n"
      "      match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n");
  ASSERT_TRUE(p.ok) << p.renderedText();
  ASSERT_EQ(p.file.rules.size(), 2u);
  const ir::Rule& a = p.file.rules[0];
  EXPECT_EQ(a.priority, 1000);
  EXPECT_EQ(a.tags, std::vector<std::string>{"ort"});
  ASSERT_EQ(a.requires.size(), 1u);
  EXPECT_EQ(a.requires[0].min_opset, 9);
  const ir::Rule& b = p.file.rules[1];
  EXPECT_EQ(b.priority, 5) << "a rule's own fields win";
  EXPECT_EQ(b.tags, std::vector<std::string>{"onnx"});
  ASSERT_EQ(b.requires.size(), 1u);
  EXPECT_EQ(b.requires[0].min_opset, 17);
}

TEST(YamlRuleFields, DefaultsRejectUnknownKeysAndBadPriorities) {
  YamlParse p = parseYaml(
      "defaults: { priority: high, owner: me }\n"
      "rules:\n"
      "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n");
  EXPECT_FALSE(p.ok);
  const std::string text = p.renderedText();
  EXPECT_NE(text.find("owner"), std::string::npos) << text;
  EXPECT_NE(text.find("priority"), std::string::npos) << text;
  YamlParse big = parseYaml("defaults: { priority: 99999999999 }\nrules: []\n");
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.renderedText().find("'priority' is out of range"), std::string::npos)
      << big.renderedText();
}

TEST(YamlRuleFields, RulesKeepFileOrder) {
  YamlParse p = parseYaml(
      "rules:\n"
      "  - { rule: b, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
      "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n");
  EXPECT_TRUE(p.ok) << p.renderedText();
  ASSERT_EQ(p.file.rules.size(), 2u);
  EXPECT_EQ(p.file.rules[0].name, "b");
  EXPECT_EQ(p.file.rules[1].name, "a");
}

//===----------------------------------------------------------------------===//
// Match features through YAML
//===----------------------------------------------------------------------===//

TEST(YamlMatch, OptionalOpsTagsAndAttributeCaptures) {
  ir::Rule r =
      parseOneRule(rule("      t = Transpose(Cast?(x, to=1), perm=capture(p))\n"
                        "      y = Softmax(t, axis=any(-1, 3)) @soft | LogSoftmax(t) @log\n",
                        "      y = Neg(x)\n"));
  EXPECT_EQ(ir::printRule(r),
            "rule r priority 0\n"
            "  match\n"
            "    %0 = capture x\n"
            "    %1 = optional op Cast(%0) {to == 1}\n"
            "    %2 = op Transpose(%1) {perm -> capture p} -> t\n"
            "    %3 = op Softmax(%2) {axis in {-1, 3}}\n"
            "    %4 = op LogSoftmax(%2)\n"
            "    %5 = alt(%3 @soft | %4 @log) -> y\n"
            "    root %5\n"
            "  rewrite\n"
            "    %0 = ref x\n"
            "    %1 = op Neg(%0)\n"
            "    replace y with %1\n");
}

//===----------------------------------------------------------------------===//
// Rewrites through YAML
//===----------------------------------------------------------------------===//

TEST(YamlRewrite, MultiStatementRewriteReExportsAnIntermediate) {
  ir::Rule r = parseOneRule(
      rule("      sum = Add(a, b)\n"
           "      y = LayerNormalization(sum, g, beta, axis=-1, epsilon=capture(eps))\n",
           "      gb = Identity(beta)\n"
           "      y, _, _, sum = com.microsoft.SkipLayerNormalization(a, b, g, gb, "
           "epsilon=attr(eps))\n"));
  const char* expected =
      "  rewrite\n"
      "    %0 = ref a\n"
      "    %1 = ref b\n"
      "    %2 = ref g\n"
      "    %3 = ref beta\n"
      "    %4 = op Identity(%3)\n"
      "    %5 = op com.microsoft.SkipLayerNormalization(%0, %1, %2, %4).0 of 4 "
      "{epsilon = attr(eps)}\n"
      "    replace y with %5\n"
      "    %6 = op (%5).3 of 4\n"
      "    replace sum with %6\n";
  EXPECT_NE(ir::printRule(r).find(expected), std::string::npos) << ir::printRule(r);
  EXPECT_EQ(r.targets[0].replacements.size(), 2u);  // gb is target-local
}

TEST(YamlRewrite, VariantsCarryTheirWhen) {
  ir::Rule r = parseOneRule(
      "rules:\n"
      "  - rule: rms\n"
      "    match: |\n"
      "      y = Mul(Div(x, Sqrt(Add(ReduceMean(Pow(x, 2.0) @pow | Mul(x, x) @mul), eps))), s)\n"
      "    rewrite:\n"
      "      - when: { opset: \">=23\" }\n"
      "        do: |\n"
      "          y = RMSNormalization(x, s, axis=-1, epsilon=value(eps))\n"
      "      - when: { domain: com.microsoft, opset: \">=1,<=9\", tags: [pow] }\n"
      "        do: y = com.microsoft.SimplifiedLayerNormalization(x, s, epsilon=value(eps))\n"
      "      - do: |\n"
      "          y = SimplifiedLayerNormalization(x, s, axis=-1, stash_type=1)\n");
  ASSERT_EQ(r.targets.size(), 3u);
  std::string printed = ir::printRule(r);
  EXPECT_NE(printed.find("  rewrite when opset(ai.onnx) >= 23\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("  rewrite when opset(com.microsoft) >= 1 <= 9 @pow\n"), std::string::npos)
      << printed;
  EXPECT_FALSE(r.targets[2].when.has_value());
  EXPECT_EQ(r.targets[0].loc.str(), "rules.yaml:6:9");
  EXPECT_EQ(r.targets[2].loc.str(), "rules.yaml:11:9");
  // The plain scalar of the second variant maps its columns too.
  const ir::TargetExpr& y = r.targets[1].exprs[r.targets[1].replacements[0].second];
  EXPECT_EQ(y.loc.str(), "rules.yaml:10:17");
}

//===----------------------------------------------------------------------===//
// Constraints
//===----------------------------------------------------------------------===//

TEST(YamlWhere, EveryConstraintKind) {
  ir::Rule r = parseOneRule(rule("      y = Op(a, b, c, d)\n", "      y = Neg(a)\n",
                                 "    where:\n"
                                 "      a: { constant: true, scalar: true }\n"
                                 "      b: { equals: 2, tolerance: 0.5, rank: [2, 3] }\n"
                                 "      c: { dtype: [float, float16], shape: [_, 7, H] }\n"
                                 "      d: { consumers: [1, 2], native: 'is_causal(d, a)', "
                                 "dtype: int64, rank: 0 }\n"
                                 "      y: { consumers: 1, equals: [1.5, 2], scalar: [0, 1] }\n"));
  const char* expected =
      "  where\n"
      "    a: constant\n"
      "    a: scalar\n"
      "    b: constant == 2\n"
      "    b: rank in [2, 3]\n"
      "    c: elem_type in [float, float16]\n"
      "    c: shape [_, 7, H]\n"
      "    d: consumers min 1.0 max 2.0\n"
      "    d: native is_causal[d, a]\n"
      "    d: elem_type in [int64]\n"
      "    d: rank in [0]\n"
      "    y: consumers min 1.0 max 1.0\n"
      "    y: constant == [1.5, 2.0]\n"
      "    y: scalar min 0.0 max 1.0\n";
  EXPECT_NE(ir::printRule(r).find(expected), std::string::npos) << ir::printRule(r);
  EXPECT_DOUBLE_EQ(r.pattern.constraints[2].tolerance, 0.5);
  EXPECT_DOUBLE_EQ(r.pattern.constraints[10].tolerance, 1e-6);
}

TEST(YamlWhere, ConstraintsPointAtTheirKey) {
  ir::Rule r = parseOneRule(
      rule("      y = Op(a)\n", "      y = Neg(a)\n", "    where:\n      a:\n        rank: 1\n"));
  ASSERT_EQ(r.pattern.constraints.size(), 1u);
  EXPECT_EQ(r.pattern.constraints[0].loc.str(), "rules.yaml:5:9");
}

//===----------------------------------------------------------------------===//
// Op declarations
//===----------------------------------------------------------------------===//

TEST(YamlOps, DeclarationsParseWithParamsAndAttrs) {
  YamlParse p = parseYaml(
      "ops:\n"
      "  - op: com.microsoft.SkipLayerNormalization\n"
      "    since: 1\n"
      "    inputs: [input, skip, gamma, beta?, bias?]\n"
      "    outputs: [output, mean?, inv_std_var?, input_skip_bias_sum?]\n"
      "    attrs:\n"
      "      epsilon: { type: float, default: 1e-12 }\n"
      "      axes: { type: ints, default: [-1] }\n"
      "      mode: { type: string, required: true }\n"
      "    doc: Add + LayerNormalization, fused.\n"
      "  - op: Concat2\n"
      "    inputs: [inputs...]\n"
      "    outputs: [y]\n"
      "    commutative: true\n");
  EXPECT_TRUE(p.ok) << p.renderedText();
  EXPECT_EQ(ir::printRuleFile(p.file),
            "op com.microsoft.SkipLayerNormalization since 1\n"
            "  inputs (input, skip, gamma, beta?, bias?)\n"
            "  outputs (output, mean?, inv_std_var?, input_skip_bias_sum?)\n"
            "  attr epsilon: float = 1e-12\n"
            "  attr axes: ints = [-1]\n"
            "  attr mode: string required\n"
            "op Concat2 since 1 commutative\n"
            "  inputs (inputs...)\n"
            "  outputs (y)\n");
  ASSERT_EQ(p.file.ops.size(), 2u);
  EXPECT_EQ(p.file.ops[0].doc, "Add + LayerNormalization, fused.");
  EXPECT_EQ(p.file.ops[0].loc.str(), "rules.yaml:2:5");
}

TEST(YamlOps, RulesMayBindAsManyOutputsAsTheOpDeclares) {
  YamlParse p = parseYaml(
      "rules:\n"
      "  - rule: r\n"
      "    match: 'y = Relu(x)'\n"
      "    rewrite: 'y, m = my.Op(x)'\n"
      "ops:\n"
      "  - { op: my.Op, inputs: [x], outputs: [y, m?] }\n");
  EXPECT_TRUE(p.ok) << p.renderedText();
}

//===----------------------------------------------------------------------===//
// Locations in every scalar style
//===----------------------------------------------------------------------===//

/// The location of the op `op` in the single rule of `text`.
std::string opLoc(const std::string& text, const std::string& op) {
  ir::Rule r = parseOneRule(text);
  const ir::Expr* e = findOp(r.pattern, op);
  return e ? e->loc.str() : "<none>";
}

TEST(YamlLocations, SingleQuotedScalar) {
  EXPECT_EQ(
      opLoc("rules:\n  - rule: r\n    match: 'y = Relu(x)'\n    rewrite: 'y = Neg(x)'\n", "Relu"),
      "rules.yaml:3:17");
}

TEST(YamlLocations, DoubleQuotedScalarWithAnEscapedQuote) {
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n"
                  "    match: \"y = Pad(x, mode=\\\"edge\\\") | Relu(x)\"\n"
                  "    rewrite: 'y = Neg(x)'\n",
                  "Relu"),
            "rules.yaml:3:41");
}

TEST(YamlLocations, PlainScalar) {
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n    match: y = Relu(x)\n    rewrite: y = Neg(x)\n", "Relu"),
            "rules.yaml:3:16");
}

TEST(YamlLocations, LiteralBlockWithCommentHeaderAndBlankLines) {
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n    match: |-  # the pattern\n\n"
                  "        a = Neg(x)\n\n"
                  "        y = Relu(a)\n"
                  "    rewrite: 'y = Neg(x)'\n",
                  "Relu"),
            "rules.yaml:7:13");
}

TEST(YamlLocations, LiteralBlockWithMoreIndentedContinuation) {
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n    match: |\n      y = Add(\n          Relu(x),\n"
                  "          b)\n    rewrite: 'y = Neg(x)'\n",
                  "Relu"),
            "rules.yaml:5:11");
}

TEST(YamlLocations, TaggedAndAnchoredBlock) {
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n    match: !!str &m |\n      y = Relu(x)\n"
                  "    rewrite: 'y = Neg(x)'\n",
                  "Relu"),
            "rules.yaml:4:11");
}

TEST(YamlLocations, CrLfLineEnds) {
  EXPECT_EQ(opLoc("rules:\r\n  - rule: r\r\n    match: |\r\n      a = Neg(x)\r\n"
                  "      y = Relu(a)\r\n    rewrite: 'y = Neg(x)'\r\n",
                  "Relu"),
            "rules.yaml:5:11");
}

TEST(YamlLocations, MultiByteCharactersBeforeAStatementCountAsBytes) {
  // Columns are byte columns, as the diagnostics engine's caret expects.
  EXPECT_EQ(opLoc("rules:\n  - rule: r\n    doc: \"\xc3\xa9\"\n    match: 'y = Relu(x)'\n"
                  "    rewrite: 'y = Neg(x)'\n",
                  "Relu"),
            "rules.yaml:4:17");
}

TEST(YamlLocations, ErrorsInsideABlockScalarRenderWithTheFileLine) {
  YamlParse p = parseYaml(
      "rules:\n  - rule: r\n    match: |\n      y = Relu(x\n"
      "    rewrite: 'y = Neg(x)'\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.renderedText(),
            "rules.yaml:4:17: error: expected ')'\n"
            "      y = Relu(x\n"
            "                ^\n"
            "rules.yaml:4:15: note: to match this '('\n"
            "      y = Relu(x\n"
            "              ^\n");
}

//===----------------------------------------------------------------------===//
// Reporting several problems
//===----------------------------------------------------------------------===//

TEST(YamlErrors, ReportsEveryProblemOfEveryRule) {
  YamlParse p = parseYaml(
      "rules:\n"
      "  - rule: one\n"
      "    priorty: 1\n"
      "    match: 'y = Relu(x'\n"
      "    rewrite: 'y = Neg(x)'\n"
      "  - rule: two\n"
      "    match: 'y = Relu(x)'\n"
      "    where: { x: { rank: x } }\n"
      "    rewrite: 'y = Neg(x, alpha=valu(x))'\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.errors(),
            (std::vector<std::string>{
                "unknown key 'priorty' in a rule; did you mean 'priority'?", "expected ')'",
                "'rank' takes an integer or a list of integers, found 'x'",
                "unknown function 'valu' in a rewrite attribute; expected value(name), "
                "attr(name) or helper(name, ...); did you mean 'value'?"}))
      << p.renderedText();
}

TEST(YamlErrors, RulesWithErrorsAreLeftOutAndTheRestKept) {
  YamlParse p = parseYaml(
      "rules:\n"
      "  - { rule: good, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
      "  - { rule: bad, match: 'y = Relu(x', rewrite: 'y = Neg(x)' }\n");
  EXPECT_FALSE(p.ok);
  ASSERT_EQ(p.file.rules.size(), 1u);
  EXPECT_EQ(p.file.rules[0].name, "good");
}

TEST(YamlErrors, ADuplicateRuleNameNotesTheFirst) {
  YamlParse p = parseYaml(
      "rules:\n"
      "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
      "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n");
  EXPECT_EQ(p.renderedText(),
            "rules.yaml:3:13: error: duplicate rule name 'a'\n"
            "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
            "            ^\n"
            "rules.yaml:2:13: note: 'a' is first defined here\n"
            "  - { rule: a, match: 'y = Relu(x)', rewrite: 'y = Neg(x)' }\n"
            "            ^\n");
}

//===----------------------------------------------------------------------===//
// Inputs that are not rule files at all
//===----------------------------------------------------------------------===//

TEST(YamlRobustness, AnEmptyFileIsAnError) {
  YamlParse p = parseYaml("");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.renderedText(),
            "rules.yaml:1:1: error: the rule file is empty; expected a mapping with a 'rules:' "
            "list\n");
}

TEST(YamlRobustness, OnlyCommentsIsAnEmptyFile) {
  EXPECT_EQ(parseYaml("# nothing here\n").errors(),
            (std::vector<std::string>{
                "the rule file is empty; expected a mapping with a 'rules:' list"}));
}

TEST(YamlRobustness, AScalarInsteadOfAMapping) {
  EXPECT_EQ(
      parseYaml("hello\n").errors(),
      (std::vector<std::string>{"a rule file is a mapping with a 'rules:' list, found 'hello'"}));
}

TEST(YamlRobustness, AnEmptyRulesListIsFine) {
  YamlParse p = parseYaml("rules: []\n");
  EXPECT_TRUE(p.ok);
  EXPECT_TRUE(p.file.rules.empty());
}

TEST(YamlRobustness, ALoneCommaIsAnErrorNotAHang) {
  // yaml-cpp 0.7's LoadAll loops forever on this input; the front end must not.
  EXPECT_EQ(parseYaml(",\n").errors(),
            (std::vector<std::string>{"expected a mapping with a 'rules:' list"}));
}

TEST(YamlRobustness, TwoDocumentsAreAnError) {
  EXPECT_EQ(parseYaml("rules: []\n---\nrules: []\n").errors(),
            (std::vector<std::string>{
                "a rule file holds one YAML document; remove the '---' and what follows"}));
}

TEST(YamlRobustness, DeeplyNestedYamlIsAnErrorNotACrash) {
  YamlParse p = parseYaml("rules: " + std::string(20000, '[') + std::string(20000, ']') + "\n");
  EXPECT_FALSE(p.ok);
}

TEST(YamlRobustness, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 500; ++i) {
    std::string text(rng() % 200, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    YamlParse p = parseYaml(text);
    EXPECT_FALSE(p.ok);  // no random text is a rule file
    EXPECT_FALSE(p.errors().empty());
  }
}

TEST(YamlRobustness, MutatedRuleFilesNeverCrash) {
  // Deleting, duplicating or replacing characters of a real rule file covers the near-miss
  // inputs a fuzzer would find: unbalanced brackets, broken indentation, stray quotes.
  const std::string base = kLayerNorm;
  const std::string alphabet = "()[]{},:|@?=#'\"\n\t -_.0aZ";
  std::mt19937 rng(42);
  int parsed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string text = base;
    for (int edits = 1 + rng() % 4; edits > 0; --edits) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text.erase(at, 1 + rng() % 3);
          break;
        case 1:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          text[at] = alphabet[rng() % alphabet.size()];
      }
      if (text.empty()) text = "x";
    }
    YamlParse p = parseYaml(text);
    parsed += p.ok;
    // A failed parse always says why.
    if (!p.ok) {
      EXPECT_FALSE(p.errors().empty()) << text;
    }
  }
  EXPECT_GT(parsed, 0);
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

TEST(YamlFiles, ParseYamlRuleFileReadsFromDisk) {
  const std::string path = ::testing::TempDir() + "/dsl_yaml_layer_norm.yaml";
  {
    std::ofstream out(path, std::ios::binary);
    out << kLayerNorm;
  }
  ir::RuleFile file;
  DiagnosticEngine diag;
  EXPECT_TRUE(parseYamlRuleFile(path, file, diag));
  ASSERT_EQ(file.rules.size(), 1u);
  EXPECT_EQ(file.rules[0].loc.file, path);
}

TEST(YamlFiles, AMissingFileIsAnError) {
  ir::RuleFile file;
  std::vector<std::string> messages;
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic& d) { messages.push_back(d.loc.str() + ": " + d.message); });
  EXPECT_FALSE(parseYamlRuleFile("/nonexistent/rules.yaml", file, diag));
  EXPECT_EQ(messages, (std::vector<std::string>{"/nonexistent/rules.yaml: cannot read rule file"}));
}

}  // namespace
}  // namespace onnx_rewrite
