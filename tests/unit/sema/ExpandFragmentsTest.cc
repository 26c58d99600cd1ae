//===- ExpandFragmentsTest.cc - fragments copied into the rules that use them ===//
//
// Rule files in YAML, expanded, printed as canonical IR: a rule written with
// fragments reads exactly like the rule written out by hand, names inside a
// fragment never collide with the rule's, attribute parameters and defaults
// land where the body writes them, a rewrite fragment's variants multiply with
// the rule's, and every misuse is an error at the use.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/ExpandFragments.h"

#include <gtest/gtest.h>

#include "compiler/ir/RulePrinter.h"
#include "dsl/yaml/YamlFrontEnd.h"

namespace onnx_rewrite {
namespace {

struct Expanded {
  bool ok = false;
  ir::RuleFile file;
  std::vector<std::string> errors;  ///< "line:col: message"
};

Expanded expand(const std::string& text) {
  Expanded out;
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic& d) {
    if (d.severity == Diagnostic::Severity::kError)
      out.errors.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                           d.message);
  });
  const bool parsed = parseYamlRules("f.yaml", text, out.file, diag);
  EXPECT_TRUE(parsed) << (out.errors.empty() ? "" : out.errors[0]);
  out.ok = parsed && expandFragments(out.file, diag);
  return out;
}

std::string ruleText(const Expanded& e, size_t i = 0) {
  return i < e.file.rules.size() ? ir::printRule(e.file.rules[i]) : "<no rule>";
}

std::string parsedRule(const std::string& text) {
  Expanded e = expand(text);
  EXPECT_TRUE(e.ok);
  return ruleText(e);
}

// ---- Match fragments --------------------------------------------------------------------

const char* const kCentered = R"(fragments:
  - fragment: centered(x)
    match: |
      mean = ReduceMean(x, axes=[-1], keepdims=1)
      d    = Sub(x, mean)
)";

TEST(MatchFragment, ReadsLikeTheRuleWrittenOut) {
  std::string with = parsedRule(std::string(kCentered) + R"(rules:
  - rule: r
    match: |
      d = centered(x)
      y = Div(d, Sqrt(ReduceMean(Mul(d, d), axes=[-1])))
    rewrite: |
      y = Relu(x)
)");
  const std::string without = parsedRule(R"(rules:
  - rule: r
    match: |
      mean = ReduceMean(x, axes=[-1], keepdims=1)
      d = Sub(x, mean)
      y = Div(d, Sqrt(ReduceMean(Mul(d, d), axes=[-1])))
    rewrite: |
      y = Relu(x)
)");
  // The fragment's own name for the mean is its name in this use.
  const std::string local = "centered.1.mean";
  ASSERT_NE(with.find(local), std::string::npos) << with;
  with.replace(with.find(local), local.size(), "mean");
  EXPECT_EQ(with, without);
}

TEST(MatchFragment, EachUseHasNamesOfItsOwn) {
  Expanded e = expand(std::string(kCentered) + R"(rules:
  - rule: r
    match: |
      y = Add(centered(a), centered(b))
    rewrite: |
      y = Relu(a)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("-> centered.1.mean"), std::string::npos) << text;
  EXPECT_NE(text.find("-> centered.2.mean"), std::string::npos) << text;
  EXPECT_NE(text.find("-> centered.1.d"), std::string::npos) << text;
  EXPECT_NE(text.find("-> centered.2.d"), std::string::npos) << text;
}

TEST(MatchFragment, FreeNamesAreCapturesOfEachUse) {
  // `fill` is not a parameter: each use captures its own.
  Expanded e = expand(R"(fragments:
  - fragment: masked(s)
    match: |
      m = Where(c, fill, s)
rules:
  - rule: r
    match: |
      y = Add(masked(a), masked(b))
    rewrite: |
      y = Relu(a)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("capture masked.1.fill"), std::string::npos) << text;
  EXPECT_NE(text.find("capture masked.2.fill"), std::string::npos) << text;
  EXPECT_NE(text.find("capture masked.1.c"), std::string::npos) << text;
}

TEST(MatchFragment, ConstraintsFollowTheNamesOfTheUse) {
  Expanded e = expand(R"(fragments:
  - fragment: scaled(t)
    match: |
      s = Mul(t, c)
    where:
      c: { scalar: true }
      t: { rank: 3 }
rules:
  - rule: r
    match: |
      y = Relu(scaled(Sigmoid(x)))
    rewrite: |
      y = Relu(x)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  // t is an unnamed argument: it gets a name for the constraint.
  EXPECT_NE(text.find("scaled.1.c: scalar"), std::string::npos) << text;
  EXPECT_NE(text.find("scaled.1.t: rank in [3]"), std::string::npos) << text;
  EXPECT_NE(text.find("op Sigmoid(%0) -> scaled.1.t"), std::string::npos) << text;
}

TEST(MatchFragment, ConstraintLocationsNameTheUse) {
  Expanded e = expand(R"(fragments:
  - fragment: scaled(t)
    match: |
      s = Mul(t, c)
    where:
      c: { scalar: true }
rules:
  - rule: r
    match: |
      y = Relu(scaled(x))
    rewrite: |
      y = Relu(x)
)");
  ASSERT_TRUE(e.ok);
  const ir::Constraint& c = e.file.rules[0].pattern.constraints.at(0);
  EXPECT_EQ(c.loc.trace(), "f.yaml:6:12 (in scaled at f.yaml:10:16)");
}

TEST(MatchFragment, AttributeParametersTakeTheUsesConditionOrTheDefault) {
  Expanded e = expand(R"(fragments:
  - fragment: soft(m, ax=-1, keep=_)
    match: |
      s = Softmax(ReduceMean(m, keepdims=keep), axis=ax)
rules:
  - rule: given
    match: |
      y = Relu(soft(x, ax=any(-1, 3), keep=0))
    rewrite: |
      y = Relu(x)
  - rule: defaults
    match: |
      y = Relu(soft(x))
    rewrite: |
      y = Relu(x)
)");
  ASSERT_TRUE(e.ok);
  EXPECT_NE(ruleText(e, 0).find("{axis in {-1, 3}}"), std::string::npos) << ruleText(e, 0);
  EXPECT_NE(ruleText(e, 0).find("{keepdims == 0}"), std::string::npos) << ruleText(e, 0);
  EXPECT_NE(ruleText(e, 1).find("{axis == -1}"), std::string::npos) << ruleText(e, 1);
  EXPECT_NE(ruleText(e, 1).find("op ReduceMean(%0)\n"), std::string::npos) << ruleText(e, 1);
  EXPECT_EQ(ruleText(e, 1).find("keepdims"), std::string::npos) << ruleText(e, 1);
}

TEST(MatchFragment, SeveralResultsBindSeveralNames) {
  Expanded e = expand(R"(fragments:
  - fragment: heads(t)
    returns: [r, h]
    match: |
      r = Reshape(t, s)
      h = Transpose(r, perm=[0, 2, 1, 3])
rules:
  - rule: r
    match: |
      qr, qh = heads(q)
      y = MatMul(qh, Relu(qr))
    where:
      qr: { rank: 4 }
    rewrite: |
      y = Relu(q)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("op Reshape(%0, %1) -> qr"), std::string::npos) << text;
  EXPECT_NE(text.find("op Transpose(%2) {perm == [0, 2, 1, 3]} -> qh"), std::string::npos) << text;
  EXPECT_EQ(text.find("capture qh"), std::string::npos) << text;
}

TEST(MatchFragment, TagsOfAFragmentSelectTheRulesVariants) {
  Expanded e = expand(R"(fragments:
  - fragment: mask(s)
    match: |
      m = Add(s, b) @additive | s @plain
rules:
  - rule: r
    match: |
      y = Softmax(mask(x))
    rewrite:
      - when: { tags: [additive] }
        do: y = Relu(x)
      - do: y = Neg(x)
)");
  ASSERT_TRUE(e.ok);
  EXPECT_NE(ruleText(e).find("@additive"), std::string::npos) << ruleText(e);
}

TEST(MatchFragment, FragmentsUseFragments) {
  Expanded e = expand(std::string(kCentered) + R"(  - fragment: var(x)
    match: |
      v = ReduceMean(Mul(centered(x), centered(x)), axes=[-1])
rules:
  - rule: r
    match: |
      y = Sqrt(var(z))
    rewrite: |
      y = Relu(z)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("-> centered.1.d"), std::string::npos) << text;
  EXPECT_NE(text.find("-> centered.2.d"), std::string::npos) << text;
  EXPECT_NE(text.find("op ReduceMean"), std::string::npos) << text;
}

// ---- Rewrite fragments ------------------------------------------------------------------

const char* const kRms = R"(fragments:
  - fragment: rms(x, w, eps=_)
    rewrite:
      - when: { opset: ">=23" }
        do: |
          y = RMSNormalization(x, w, axis=-1, epsilon=eps)
      - do: |
          y = SimplifiedLayerNormalization(x, w, axis=-1, epsilon=eps, stash_type=1)
)";

TEST(RewriteFragment, VariantsMultiplyWithTheRulesInOrder) {
  Expanded e = expand(std::string(kRms) + R"(rules:
  - rule: r
    match: |
      y = Mul(Div(x, Sqrt(v)), w) @div | Mul(x, w) @mul
    rewrite:
      - when: { tags: [div] }
        do: y = rms(x, w, eps=1e-6)
      - do: y = rms(x, w)
)");
  ASSERT_TRUE(e.ok);
  const ir::Rule& r = e.file.rules[0];
  ASSERT_EQ(r.targets.size(), 4u);
  EXPECT_EQ(r.targets[0].when->tags, std::vector<std::string>{"div"});
  EXPECT_EQ(r.targets[0].when->min_opset, 23);
  EXPECT_EQ(r.targets[1].when->tags, std::vector<std::string>{"div"});
  EXPECT_EQ(r.targets[1].when->min_opset, -1);
  EXPECT_EQ(r.targets[2].when->min_opset, 23);
  EXPECT_FALSE(r.targets[3].when.has_value());
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("op RMSNormalization(%0, %1) {axis = -1, epsilon = 1e-06}"),
            std::string::npos)
      << text;
  // Without eps the attribute is left out: the op's default holds.
  EXPECT_NE(text.find("op SimplifiedLayerNormalization(%0, %1) {axis = -1, stash_type = 1}"),
            std::string::npos)
      << text;
}

TEST(RewriteFragment, VariantsWhoseOpsetsCannotHoldTogetherAreDropped) {
  Expanded e = expand(std::string(kRms) + R"(rules:
  - rule: r
    match: |
      y = Mul(x, w)
    rewrite:
      - when: { opset: "<=22" }
        do: y = rms(x, w, eps=value(w))
      - do: y = Relu(x)
)");
  ASSERT_TRUE(e.ok);
  const ir::Rule& r = e.file.rules[0];
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[0].when->max_opset, 22);
  EXPECT_NE(ruleText(e).find("SimplifiedLayerNormalization"), std::string::npos);
  EXPECT_EQ(ruleText(e).find("RMSNormalization(%0"), std::string::npos) << ruleText(e);
}

// A fragment serves rules of many opsets: its variants for opsets a rule never runs at are
// left out of that rule (the rule's own such variant is an error of the checks).
TEST(RewriteFragment, VariantsOutsideTheRulesRequiredOpsetsAreDropped) {
  Expanded e = expand(std::string(kRms) + R"(rules:
  - rule: r
    requires: { opset: ">=13,<=22" }
    match: |
      y = Mul(x, w)
    rewrite: y = rms(x, w)
)");
  ASSERT_TRUE(e.ok);
  const ir::Rule& r = e.file.rules[0];
  ASSERT_EQ(r.targets.size(), 1u) << ruleText(e);
  EXPECT_FALSE(r.targets[0].when.has_value());
  EXPECT_EQ(ruleText(e).find("RMSNormalization(%0"), std::string::npos) << ruleText(e);

  Expanded newer = expand(std::string(kRms) + R"(rules:
  - rule: r
    requires: { opset: ">=23" }
    match: |
      y = Mul(x, w)
    rewrite: y = rms(x, w)
)");
  ASSERT_TRUE(newer.ok);
  EXPECT_EQ(newer.file.rules[0].targets.size(), 2u) << "both can hold at some opset >= 23";
}

// The first variant whose `when` holds is built: a fragment with variants by one tag, used
// twice, gives the combinations "tag, tag" and "neither"; "tag, none" and "none, tag" hold
// only when "tag, tag" does, and are left out.
TEST(RewriteFragment, CombinationsAnEarlierOneAlwaysWinsAreDropped) {
  Expanded e = expand(R"(fragments:
  - fragment: pick(a, b)
    rewrite:
      - when: { tags: [t] }
        do: y = Neg(b)
      - do: y = a
rules:
  - rule: r
    match: |
      y = Add(x, Relu(p) @t | z)
    rewrite: |
      y = Mul(pick(x, z), pick(z, x))
)");
  ASSERT_TRUE(e.ok) << (e.errors.empty() ? "" : e.errors[0]);
  const ir::Rule& r = e.file.rules[0];
  ASSERT_EQ(r.targets.size(), 2u) << ruleText(e);
  ASSERT_TRUE(r.targets[0].when.has_value());
  EXPECT_EQ(r.targets[0].when->tags, std::vector<std::string>{"t"});
  EXPECT_FALSE(r.targets[1].when.has_value());
}

// Only the expansions of one variant of the rule are compared: a variant of the rule itself
// that an earlier one shadows stays, for the checks to report as unreachable.
TEST(RewriteFragment, ARulesOwnShadowedVariantIsKeptForTheChecks) {
  Expanded e = expand(R"(fragments:
  - fragment: negated(a)
    rewrite: y = Neg(a)
rules:
  - rule: r
    match: |
      y = Relu(x)
    rewrite:
      - do: y = negated(x)
      - do: y = Abs(x)
)");
  ASSERT_TRUE(e.ok);
  EXPECT_EQ(e.file.rules[0].targets.size(), 2u) << ruleText(e);
}

TEST(RewriteFragment, LocalValuesAndSeveralResults) {
  Expanded e = expand(R"(fragments:
  - fragment: seq_len(q)
    rewrite: |
      one = tensor(int64, [1], [1])
      len = Slice(Shape(q), one, tensor(int64, [2], [1]))
  - fragment: skip(a, b, g)
    returns: [y, s]
    rewrite: |
      y, _, _, s = com.microsoft.SkipLayerNormalization(a, b, g)
rules:
  - rule: r
    match: |
      s = Add(a, b)
      y = LayerNormalization(s, g)
    rewrite: |
      y, s = skip(a, b, g)
      t = seq_len(a)
)");
  ASSERT_TRUE(e.ok) << (e.errors.empty() ? "" : e.errors[0]);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("op com.microsoft.SkipLayerNormalization(%0, %1, %2)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("replace s with"), std::string::npos) << text;
}

// ---- Let and keep -----------------------------------------------------------------------

TEST(Let, RunsBeforeEveryVariant) {
  Expanded e = expand(R"(rules:
  - rule: r
    match: |
      y = Add(x, b) @bias | Relu(x) @plain
    let: |
      one = tensor(int64, [1], [1])
    keep: [x]
    rewrite:
      - when: { tags: [bias] }
        do: y = Unsqueeze(b, one)
      - do: y = Unsqueeze(x, one)
)");
  ASSERT_TRUE(e.ok);
  const ir::Rule& r = e.file.rules[0];
  ASSERT_EQ(r.targets.size(), 2u);
  for (const ir::Target& t : r.targets) {
    ASSERT_FALSE(t.exprs.empty());
    EXPECT_EQ(t.exprs[0].kind, ir::TargetExpr::Kind::kTensor);
    bool kept = false;
    for (const auto& [name, id] : t.replacements) kept |= name == "x";
    EXPECT_TRUE(kept);
  }
}

// ---- Tuple alternatives -----------------------------------------------------------------

TEST(TupleAlternative, OneGroupPerStatementAndOutputsOfAnOpTakeTheirPlace) {
  Expanded e = expand(R"(rules:
  - rule: r
    match: |
      x1, x2 = Split(x, axis=-1) @split | (Slice(x, 0, h, -1), Slice(x, h, n, -1)) @slice
      y = Concat(Neg(x2), x1, axis=-1)
    rewrite: |
      y = Relu(x)
)");
  ASSERT_TRUE(e.ok);
  const std::string text = ruleText(e);
  EXPECT_NE(text.find("alt(%"), std::string::npos) << text;
  EXPECT_NE(text.find("tuple 0 -> x1"), std::string::npos) << text;
  EXPECT_NE(text.find("tuple 0 -> x2"), std::string::npos) << text;
  EXPECT_NE(text.find(".1 -> x2.0"), std::string::npos) << text;  // Split's output 1
  EXPECT_NE(text.find("@split"), std::string::npos) << text;
}

// ---- Errors -----------------------------------------------------------------------------

TEST(FragmentErrors, AreReportedAtTheUse) {
  Expanded e = expand(std::string(kCentered) + std::string(kRms).substr(11) + R"(rules:
  - rule: arity
    match: |
      y = Relu(centered(a, b))
    rewrite: |
      y = Relu(a)
  - rule: unknown_attr
    match: |
      y = Relu(centered(a, axis=1))
    rewrite: |
      y = Relu(a)
  - rule: rewrite_in_match
    match: |
      y = Relu(rms(a, b))
    rewrite: |
      y = Relu(a)
  - rule: match_in_rewrite
    match: |
      y = Relu(a)
    rewrite: |
      y = centered(a)
)");
  EXPECT_FALSE(e.ok);
  ASSERT_EQ(e.errors.size(), 4u);
  EXPECT_EQ(e.errors[0], "16:16: fragment 'centered' takes 1 value, 2 given: centered(x)");
  EXPECT_EQ(e.errors[1],
            "21:28: fragment 'centered' has no attribute parameter 'axis': centered(x)");
  EXPECT_EQ(e.errors[2],
            "26:16: fragment 'rms' is a piece of a rewrite; it cannot be used in a match");
  EXPECT_EQ(e.errors[3],
            "33:11: fragment 'centered' is a piece of a match; it cannot be used in a rewrite");
}

TEST(FragmentErrors, AFragmentUsingItselfStops) {
  Expanded e = expand(R"(fragments:
  - fragment: loop(x)
    match: |
      y = Relu(loop(x))
rules:
  - rule: r
    match: |
      y = Neg(loop(a))
    rewrite: |
      y = Relu(a)
)");
  EXPECT_FALSE(e.ok);
  ASSERT_FALSE(e.errors.empty());
  EXPECT_NE(e.errors[0].find("fragment 'loop' is used inside itself"), std::string::npos)
      << e.errors[0];
}

TEST(FragmentErrors, DefinedTwice) {
  Expanded e = expand(std::string(kCentered) + R"(  - fragment: centered(y)
    match: |
      d = Neg(y)
rules: []
)");
  EXPECT_FALSE(e.ok);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0], "6:15: fragment 'centered' is defined twice");
}

TEST(FragmentErrors, ARewriteFragmentReadsOnlyItsParameters) {
  Expanded e = expand(R"(fragments:
  - fragment: f(x)
    rewrite: |
      y = Add(x, z)
rules:
  - rule: r
    match: |
      y = Relu(a)
    rewrite: |
      y = f(a)
)");
  EXPECT_FALSE(e.ok);
  ASSERT_EQ(e.errors.size(), 1u);
  EXPECT_EQ(e.errors[0],
            "4:18: fragment 'f' reads 'z', which is neither its parameter nor defined in it");
}

}  // namespace
}  // namespace onnx_rewrite
