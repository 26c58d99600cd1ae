//===- RuleExprParserTest.cc - match/rewrite statements to Rule IR --------===//
//
// The statement language on its own, outside YAML: each test parses a few
// statements and checks the printed IR (ir::printRule's canonical numbering) or
// the exact "line:col: message" of the diagnostics. Binding rules first, then
// attributes, then rewrites, then mistakes.
//
//===----------------------------------------------------------------------===//
#include "dsl/yaml/RuleExprParser.h"

#include <gtest/gtest.h>

#include "compiler/ir/RulePrinter.h"

namespace onnx_rewrite::yaml {
namespace {

/// What parsing one block gave: ok, the printed IR and "line:col: message" per error.
struct Parsed {
  bool ok = false;
  ir::Pattern pattern;
  ir::Target target;
  std::string ir;
  std::vector<std::string> errors;
};

/// The part of a printed rule after `marker`.
std::string after(const std::string& printed, const std::string& marker) {
  const size_t at = printed.find(marker);
  return at == std::string::npos ? printed : printed.substr(at + marker.size());
}

DiagnosticEngine collecting(std::vector<std::string>& errors) {
  DiagnosticEngine diag;
  diag.setHandler([&errors](const Diagnostic& d) {
    if (d.severity == Diagnostic::Severity::kError)
      errors.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                       d.message);
  });
  return diag;
}

Parsed match(const std::string& text, const DeclaredOutputs& declared = {}) {
  Parsed p;
  DiagnosticEngine diag = collecting(p.errors);
  p.ok = parseMatch(text, TextLocator::forText("m", text), diag, p.pattern, declared);
  ir::Rule r;
  r.pattern = p.pattern;
  p.ir = after(ir::printRule(r), "  match\n");
  return p;
}

Parsed rewrite(const std::string& text, const std::set<std::string>& match_names = {},
               const DeclaredOutputs& declared = {}) {
  Parsed p;
  DiagnosticEngine diag = collecting(p.errors);
  p.ok = parseRewrite(text, TextLocator::forText("r", text), match_names, diag, p.target, declared);
  ir::Rule r;
  r.targets.push_back(p.target);
  p.ir = after(ir::printRule(r), "  rewrite\n");
  return p;
}

//===----------------------------------------------------------------------===//
// Match: names and values
//===----------------------------------------------------------------------===//

TEST(MatchStatements, ANameOnTheLeftNamesTheStatementsOp) {
  Parsed p = match("y = Relu(x)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = capture x\n    %1 = op Relu(%0) -> y\n    root %1\n");
}

TEST(MatchStatements, LaterUsesOfABoundNameAreTheSameExpr) {
  Parsed p = match("d = Sub(x, m)\ny = Mul(d, d)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = capture m\n    %2 = op Sub(%0, %1) -> d\n"
            "    %3 = op Mul(%2, %2) -> y\n    root %3\n");
  EXPECT_EQ(p.pattern.exprs.size(), 4u);
}

TEST(MatchStatements, NamesNeverBoundAreCapturesSharedByEveryUse) {
  Parsed p = match("y = Sub(x, ReduceMean(x))");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = op ReduceMean(%0)\n    %2 = op Sub(%0, %1) -> y\n"
            "    root %2\n");
}

TEST(MatchStatements, EachUnderscoreIsAFreshAnonymousCapture) {
  Parsed p = match("y = Add(_, _)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture _\n    %1 = capture _\n    %2 = op Add(%0, %1) -> y\n"
            "    root %2\n");
}

TEST(MatchStatements, TheRootIsTheLastStatementsValue) {
  Parsed p = match("a = Relu(x)\nb = Neg(a)");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.pattern.exprs[p.pattern.root].name, "b");
}

TEST(MatchStatements, NumbersAreConstantInputs) {
  Parsed p = match("y = Clip(x, -1, 6.0)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = const -1\n    %2 = const 6.0\n"
            "    %3 = op Clip(%0, %1, %2) -> y\n    root %3\n");
  EXPECT_EQ(p.pattern.exprs[1].literal.kind, ir::Literal::Kind::kInt);
  EXPECT_EQ(p.pattern.exprs[2].literal.kind, ir::Literal::Kind::kFloat);
  EXPECT_DOUBLE_EQ(p.pattern.exprs[2].tolerance, 1e-6);
}

TEST(MatchStatements, ExponentAndLeadingDotFloatsAreFloats) {
  Parsed p = match("y = Add(x, 1e-3) | Add(x, .5)");
  EXPECT_TRUE(p.ok);
  EXPECT_NE(p.ir.find("const 0.001"), std::string::npos);
  EXPECT_NE(p.ir.find("const 0.5"), std::string::npos);
}

TEST(MatchStatements, AlternativesKeepTheOrderWrittenAndTheName) {
  Parsed p = match("v = Pow(d, 2.0) | Mul(d, d)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture d\n    %1 = const 2.0\n    %2 = op Pow(%0, %1)\n"
            "    %3 = op Mul(%0, %0)\n    %4 = alt(%2 | %3) -> v\n    root %4\n");
}

TEST(MatchStatements, TagsLabelAlternatives) {
  Parsed p = match("v = Pow(d, 2.0) @pow | Mul(d, d) @mul | Square(d)");
  EXPECT_TRUE(p.ok);
  const ir::Expr& alt = p.pattern.exprs[p.pattern.root];
  EXPECT_EQ(alt.tags, (std::vector<std::string>{"pow", "mul", ""}));
  EXPECT_NE(p.ir.find("alt(%2 @pow | %3 @mul | %4) -> v"), std::string::npos);
}

TEST(MatchStatements, AParenthesizedAlternativeMayCarryItsTag) {
  Parsed p = match("v = (Pow(d, 2.0) @pow) | (Mul(d, d)) @mul");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.pattern.exprs[p.pattern.root].tags, (std::vector<std::string>{"pow", "mul"}));
}

TEST(MatchStatements, AlternativesNestInsideCalls) {
  Parsed p = match("y = Sqrt(Add(v, e) | Add(e, v))");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture v\n    %1 = capture e\n    %2 = op Add(%0, %1)\n"
            "    %3 = op Add(%1, %0)\n    %4 = alt(%2 | %3)\n    %5 = op Sqrt(%4) -> y\n"
            "    root %5\n");
}

TEST(MatchStatements, AQuestionMarkMakesAnOpOptional) {
  Parsed p = match("y = Relu(Cast?(x, to=1))");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = optional op Cast(%0) {to == 1}\n"
            "    %2 = op Relu(%1) -> y\n    root %2\n");
}

TEST(MatchStatements, NoneMatchesAnOmittedInput) {
  Parsed p = match("y = Clip(x, none, m)");
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = none\n    %2 = capture m\n"
            "    %3 = op Clip(%0, %1, %2) -> y\n    root %3\n");
}

TEST(MatchStatements, ANameWithAnEllipsisIsTheRestOfTheInputs) {
  Parsed p = match("y = Concat(a, b, rest..., axis=-1)");
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.ir,
            "    %0 = capture a\n    %1 = capture b\n"
            "    %2 = op Concat(%0, %1, rest...) {axis == -1} -> y\n    root %2\n");
  EXPECT_EQ(p.pattern.exprs[2].rest, "rest");
  EXPECT_EQ(p.pattern.exprs[2].rest_loc.col, 18u);
  EXPECT_EQ(match("y = Concat(_..., axis=0)").pattern.exprs[0].rest, "_");
}

TEST(MatchStatements, ADottedOpNameIsDomainAndOp) {
  Parsed p = match("y = com.microsoft.Gelu(x)");
  ASSERT_TRUE(p.ok);
  const ir::Expr& e = p.pattern.exprs[p.pattern.root];
  EXPECT_EQ(e.domain, "com.microsoft");
  EXPECT_EQ(e.op, "Gelu");
  EXPECT_NE(p.ir.find("op com.microsoft.Gelu(%0) -> y"), std::string::npos);
}

TEST(MatchStatements, SeveralNamesBindTheOutputsOfOneNode) {
  Parsed p = match("a, b = Split(x)\ny = Add(a, b)");
  EXPECT_TRUE(p.ok);
  // `b` is a capture bound when the Split node is matched (its output 1).
  EXPECT_EQ(p.ir,
            "    %0 = capture x\n    %1 = op Split(%0) -> a, .1 -> b\n"
            "    %2 = capture b\n    %3 = op Add(%1, %2) -> y\n    root %3\n");
}

TEST(MatchStatements, UnderscoreSkipsAnOutput) {
  Parsed p = match("_, b, _, d = Split(x)");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = capture x\n    %1 = op Split(%0), .1 -> b, .3 -> d\n    root %1\n");
}

TEST(MatchStatements, AStatementContinuesInsideParentheses) {
  Parsed p = match("y = Add(\n  Mul(a,\n      b),\n  c,\n)\nz = Neg(y)");
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_NE(p.ir.find("op Add(%2, %3) -> y"), std::string::npos);
  EXPECT_EQ(p.pattern.exprs[p.pattern.root].name, "z");
}

TEST(MatchStatements, CommentsAndBlankLinesAreIgnored) {
  Parsed p = match("# the mean\n\nm = ReduceMean(x)  # keepdims default\n\n# done\n");
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = capture x\n    %1 = op ReduceMean(%0) -> m\n    root %1\n");
}

TEST(MatchStatements, ExprsRecordLineAndColumn) {
  Parsed p = match("a = Relu(x)\n  b = Add(a,  7)");
  ASSERT_TRUE(p.ok);
  std::vector<std::string> locs;
  for (const ir::Expr& e : p.pattern.exprs) locs.push_back(e.loc.str());
  EXPECT_EQ(locs, (std::vector<std::string>{"m:1:10", "m:1:5", "m:2:15", "m:2:7"}));
}

//===----------------------------------------------------------------------===//
// Match: attributes
//===----------------------------------------------------------------------===//

TEST(MatchAttributes, ALiteralMustBeEqual) {
  Parsed p =
      match("y = Pad(x, mode='constant', axes=[0, -1], scales=[1, 2.5], names=['a', \"b\"])");
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_NE(p.ir.find("{mode == 'constant', axes == [0, -1], scales == [1.0, 2.5], "
                      "names == ['a', 'b']}"),
            std::string::npos)
      << p.ir;
}

TEST(MatchAttributes, AnyRangeAndCaptureAreConditions) {
  Parsed p = match("y = Op(x, to=any(1, 10), alpha=range(0, 1e-2), perm=capture(p))");
  EXPECT_TRUE(p.ok);
  EXPECT_NE(p.ir.find("{to in {1, 10}, alpha in [0.0, 0.01], perm -> capture p}"),
            std::string::npos)
      << p.ir;
}

TEST(MatchAttributes, AnEmptyListIsAnIntList) {
  Parsed p = match("y = Transpose(x, perm=[])");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.pattern.exprs[p.pattern.root].attrs[0].values[0].kind, ir::Literal::Kind::kInts);
}

//===----------------------------------------------------------------------===//
// Match: mistakes
//===----------------------------------------------------------------------===//

TEST(MatchMistakes, UsingANameBeforeItsStatementIsAnError) {
  EXPECT_EQ(match("y = Relu(d)\nd = Neg(x)").errors,
            (std::vector<std::string>{"1:10: 'd' is used before the statement that binds it"}));
}

TEST(MatchMistakes, UsingANameInItsOwnStatementIsAnError) {
  EXPECT_EQ(match("d = Neg(d)").errors,
            (std::vector<std::string>{"1:9: 'd' is used in the statement that binds it"}));
}

TEST(MatchMistakes, BindingANameTwiceIsAnError) {
  EXPECT_EQ(match("d = Neg(x)\nd = Relu(d)").errors,
            (std::vector<std::string>{"2:1: 'd' is bound twice"}));
}

TEST(MatchMistakes, BindingANameToANameIsAnError) {
  EXPECT_EQ(match("y = x").errors,
            (std::vector<std::string>{
                "1:1: 'y = x' only renames 'x'; bind names to op calls or alternatives"}));
}

TEST(MatchMistakes, ATagOutsideAlternativesIsAnError) {
  EXPECT_EQ(match("y = Relu(x) @r").errors,
            (std::vector<std::string>{"1:13: a tag ('@r') labels an alternative of '|'"}));
}

TEST(MatchMistakes, AnOptionalOpNeedsAnInput) {
  EXPECT_EQ(
      match("y = Relu(Cast?())").errors,
      (std::vector<std::string>{"1:10: an optional op ('Cast?') needs an input to stand for"}));
}

TEST(MatchMistakes, NoneIsOnlyAnInputOfAnOp) {
  EXPECT_EQ(
      match("y = Relu(x) | none").errors,
      (std::vector<std::string>{"1:15: 'none' (an omitted input) can only be an input of an op"}));
  EXPECT_EQ(match("y = Neg(Cast?(none, to=1))").errors,
            (std::vector<std::string>{"1:15: an optional op ('Cast?') stands for its first input, "
                                      "which cannot be 'none'"}));
}

TEST(MatchMistakes, ARestIsTheLastInputOfAPlainOp) {
  EXPECT_EQ(match("y = Concat(a, r..., b, axis=0)").errors,
            (std::vector<std::string>{"1:16: 'r...' must be the last input: it stands for every "
                                      "input after the ones written"}));
  EXPECT_EQ(match("y = Neg(Concat?(a, r..., axis=0))").errors,
            (std::vector<std::string>{"1:21: an optional op ('Concat?') cannot take 'r...'"}));
  EXPECT_EQ(match("y = Concat(Neg(a)..., axis=0)").errors,
            (std::vector<std::string>{
                "1:18: '...' follows a name: 'rest...' is the rest of the inputs"}));
}

TEST(MatchMistakes, EachBadStatementIsReportedOnce) {
  EXPECT_EQ(match("a = Relu(x))\nc = Neg(b) d\ne = Add(c, c)").errors,
            (std::vector<std::string>{"1:12: unbalanced ')'",
                                      "2:12: unexpected 'd' after the end of the statement"}));
}

TEST(MatchMistakes, AnUnclosedParenthesisIsReportedWhereTheArgumentsEnd) {
  // The rest of the block is skipped: it would only repeat the same mistake.
  EXPECT_EQ(match("a = Relu(x\nb = Neg(a)\nc = Neg(b) d").errors,
            (std::vector<std::string>{"1:11: expected ')'"}));
}

TEST(MatchMistakes, AStatementTheRootDoesNotReadIsAnError) {
  EXPECT_EQ(match("m = ReduceMean(x)\ny = Relu(x)").errors,
            (std::vector<std::string>{"1:1: this statement's value is not read by the root of the "
                                      "match (the last statement), so it would never be matched"}));
}

TEST(MatchMistakes, ReadingOnlyASecondaryOutputDoesNotConnectANode) {
  Parsed p = match("_, b = Split(x)\ny = Relu(b)");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.errors.size(), 1u);
}

TEST(MatchMistakes, DeepNestingIsReportedNotRecursed) {
  std::string text = "y = " + std::string(5000, '(') + "x" + std::string(5000, ')');
  Parsed p = match(text);
  EXPECT_FALSE(p.ok);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].find("expression is nested too deeply"), std::string::npos);
}

TEST(MatchMistakes, AnEmptyMatchIsAnError) {
  EXPECT_EQ(match("# nothing\n").errors,
            (std::vector<std::string>{"1:1: the match has no statements"}));
}

TEST(MatchMistakes, MoreNamesThanADeclaredOpHasOutputsIsAnError) {
  DeclaredOutputs declared = {{"com.microsoft.FastGelu", 1}};
  EXPECT_EQ(match("y, z = com.microsoft.FastGelu(x)", declared).errors,
            (std::vector<std::string>{
                "1:4: 'com.microsoft.FastGelu' declares 1 output, but 2 names are bound"}));
}

//===----------------------------------------------------------------------===//
// Rewrites
//===----------------------------------------------------------------------===//

TEST(RewriteStatements, AMatchNameOnTheLeftIsReplaced) {
  Parsed p = rewrite("y = Relu(x)", {"x", "y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = ref x\n    %1 = op Relu(%0)\n    replace y with %1\n");
}

TEST(RewriteStatements, NewNamesAreTargetLocalAndReadLater) {
  Parsed p = rewrite("t = Mul(x, x)\ny = Add(t, t)", {"x", "y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = ref x\n    %1 = op Mul(%0, %0)\n    %2 = op Add(%1, %1)\n"
            "    replace y with %2\n");
  ASSERT_EQ(p.target.replacements.size(), 1u);
}

TEST(RewriteStatements, LaterStatementsReadTheNewValueOfAReplacedName) {
  Parsed p = rewrite("s = Add(a, b)\ny = Relu(s)", {"a", "b", "s", "y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = ref a\n    %1 = ref b\n    %2 = op Add(%0, %1)\n    replace s with %2\n"
            "    %3 = op Relu(%2)\n    replace y with %3\n");
}

TEST(RewriteStatements, NamesBoundNowhereStayReferences) {
  Parsed p = rewrite("y = Relu(q)", {"y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = ref q\n    %1 = op Relu(%0)\n    replace y with %1\n");
}

TEST(RewriteStatements, SecondaryOutputsReferToTheirNodeWithAnEmptyOp) {
  Parsed p = rewrite("y, _, _, sum = com.microsoft.SkipLayerNormalization(a, b, g)",
                     {"a", "b", "g", "y", "sum"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = ref a\n    %1 = ref b\n    %2 = ref g\n"
            "    %3 = op com.microsoft.SkipLayerNormalization(%0, %1, %2).0 of 4\n"
            "    replace y with %3\n    %4 = op (%3).3 of 4\n    replace sum with %4\n");
  const ir::TargetExpr& sum = p.target.exprs[p.target.replacements[1].second];
  EXPECT_EQ(sum.op, "");
  EXPECT_EQ(sum.output, 3u);
  EXPECT_EQ(sum.inputs, (std::vector<uint32_t>{p.target.replacements[0].second}));
}

TEST(RewriteStatements, AttributesTakeLiteralsValuesCapturesAndHelpers) {
  Parsed p = rewrite(
      "y = Op(x, axis=-1, epsilon=value(eps), perm=attr(p), heads=helper(num_heads, shape), "
      "mode='same')",
      {"x", "y"});
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_NE(p.ir.find("{axis = -1, epsilon = value(eps), perm = attr(p), "
                      "heads = helper num_heads(shape), mode = 'same'}"),
            std::string::npos)
      << p.ir;
}

TEST(RewriteStatements, NoneLeavesAnOptionalInputEmpty) {
  Parsed p = rewrite("y = Clip(x, none, m)", {"x", "m", "y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir,
            "    %0 = ref x\n    %1 = none\n    %2 = ref m\n    %3 = op Clip(%0, %1, %2)\n"
            "    replace y with %3\n");
}

TEST(RewriteStatements, ARestIsSplicedWhereItIsWritten) {
  Parsed p = rewrite("y = Concat(m, rest..., x, axis=-1)", {"x", "m", "y"});
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.ir,
            "    %0 = ref m\n    %1 = rest rest...\n    %2 = ref x\n"
            "    %3 = op Concat(%0, %1, %2) {axis = -1}\n    replace y with %3\n");
  EXPECT_EQ(rewrite("y = Neg(tensor(helper, h, r...))", {"y"}).errors,
            (std::vector<std::string>{"1:28: tensor(...) cannot take a rest of inputs"}));
}

TEST(RewriteStatements, TensorsAreNewConstants) {
  Parsed p = rewrite(
      "s = tensor(int64, [0, 0, -1], [3])\nh = tensor(float, 2)\nk = tensor(helper, heads, q)\n"
      "y = Reshape(x, s, h, k)",
      {"x", "y"});
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.ir,
            "    %0 = ref x\n    %1 = tensor int64 [0, 0, -1] dims [3]\n"
            "    %2 = tensor float 2.0\n    %3 = tensor helper heads(q)\n"
            "    %4 = op Reshape(%0, %1, %2, %3)\n    replace y with %4\n");
}

TEST(RewriteStatements, ATensorLikeAValueTakesItsTypeWhenTheRuleApplies) {
  Parsed p =
      rewrite("y = Where(c, tensor(like(f), 0), f)\nz = Add(x, tensor(like(x), [1, 2.5], [2]))",
              {"c", "f", "x", "y", "z"});
  EXPECT_TRUE(p.ok) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.ir,
            "    %0 = ref c\n    %1 = tensor like(f) 0.0\n    %2 = ref f\n"
            "    %3 = op Where(%0, %1, %2)\n    replace y with %3\n    %4 = ref x\n"
            "    %5 = tensor like(x) [1.0, 2.5] dims [2]\n    %6 = op Add(%4, %5)\n"
            "    replace z with %6\n");
  EXPECT_EQ(rewrite("y = Neg(tensor(like(a, b), 0.0))", {"y"}).errors,
            (std::vector<std::string>{"1:16: like takes one bound name: tensor(like(x), 0.0)"}));
  EXPECT_EQ(rewrite("y = Neg(tensor(like(a), 'x'))", {"y"}).errors,
            (std::vector<std::string>{
                "1:25: tensor(like(x), value) takes numbers: tensor(like(x), 0.0)"}));
}

TEST(RewriteStatements, ASourceNameHasOneReference) {
  Parsed p = rewrite("a = Relu(x)\ny = Add(a, x)", {"x", "y"});
  ASSERT_TRUE(p.ok);
  int refs = 0;
  for (const ir::TargetExpr& e : p.target.exprs) refs += e.kind == ir::TargetExpr::Kind::kRef;
  EXPECT_EQ(refs, 1);
}

TEST(RewriteStatements, ARenameForwardsAValue) {
  Parsed p = rewrite("y = x", {"x", "y"});
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.ir, "    %0 = ref x\n    replace y with %0\n");
}

TEST(RewriteMistakes, MatchOnlyFormsAreRejected) {
  EXPECT_EQ(rewrite("y = Relu(x) | Neg(x)").errors,
            (std::vector<std::string>{"1:13: alternatives ('|') are only allowed in a match"}));
  EXPECT_EQ(rewrite("y = Cast?(x)").errors,
            (std::vector<std::string>{"1:5: optional ops ('Cast?') are only allowed in a match"}));
  EXPECT_EQ(rewrite("y = Op(x, a=range(0, 1))").errors,
            (std::vector<std::string>{"1:13: 'range(...)' is only allowed in a match"}));
}

TEST(RewriteMistakes, ANumberIsNotAValue) {
  EXPECT_EQ(
      rewrite("y = Add(x, 1.0)").errors,
      (std::vector<std::string>{"1:12: a number is not a value in a rewrite; write a constant as "
                                "tensor(float, 1.0)"}));
}

TEST(RewriteMistakes, UnderscoreCannotBeRead) {
  EXPECT_EQ(rewrite("y = Relu(_)").errors,
            (std::vector<std::string>{
                "1:10: '_' cannot be read; it skips an output on the left of '='"}));
}

TEST(RewriteMistakes, ALocalNameIsReadOnlyAfterItsStatement) {
  EXPECT_EQ(rewrite("y = Relu(t)\nt = Neg(x)", {"y"}).errors,
            (std::vector<std::string>{"1:10: 't' is used before the statement that defines it"}));
}

TEST(RewriteMistakes, ATensorNeedsAKnownTypeAndFittingValues) {
  EXPECT_EQ(
      rewrite("y = tensor(flaot, 1.0)").errors,
      (std::vector<std::string>{"1:12: unknown element type 'flaot'; did you mean 'float'?"}));
  EXPECT_EQ(rewrite("y = tensor(int64, [1.5])").errors,
            (std::vector<std::string>{"1:19: a int64 tensor needs integer values"}));
}

//===----------------------------------------------------------------------===//
// native: calls
//===----------------------------------------------------------------------===//

TEST(NativeCall, ParsesANameAndArguments) {
  std::vector<std::string> errors;
  DiagnosticEngine diag = collecting(errors);
  std::string name;
  std::vector<std::string> args;
  EXPECT_TRUE(
      parseNativeCall("is_causal(mask, q)", TextLocator::forText("n", "x"), diag, name, args));
  EXPECT_EQ(name, "is_causal");
  EXPECT_EQ(args, (std::vector<std::string>{"mask", "q"}));
}

TEST(NativeCall, RejectsAnythingElse) {
  std::vector<std::string> errors;
  DiagnosticEngine diag = collecting(errors);
  std::string name;
  std::vector<std::string> args;
  const std::string text = "is_causal(mask, 1)";
  EXPECT_FALSE(parseNativeCall(text, TextLocator::forText("n", text), diag, name, args));
  EXPECT_EQ(errors,
            (std::vector<std::string>{"1:17: expected a name as an argument of 'is_causal'"}));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

TEST(DidYouMean, SuggestsOnlyCloseSpellings) {
  EXPECT_EQ(didYouMean("priorty", {"rule", "priority"}), "; did you mean 'priority'?");
  EXPECT_EQ(didYouMean("zzz", {"rule", "priority"}), "");
}

}  // namespace
}  // namespace onnx_rewrite::yaml
