//===- RuleFileWireTest.cc - Rule IR through the parse process's pipe -----===//
//
// Every field the front end can set survives encode/decode, so what the child
// process built is what the caller gets; a cut stream is refused, not misread.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/RuleFileWire.h"

#include <gtest/gtest.h>

#include "compiler/ir/RulePrinter.h"
#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite::tablegen {
namespace {

/// A RuleFile with every field away from its default.
ir::RuleFile everyField() {
  ir::RuleFile f;
  ir::OpDecl op;
  op.domain = "com.microsoft";
  op.op = "SkipLayerNormalization";
  op.since_version = 3;
  op.inputs = {{"input", false, false}, {"beta", true, false}, {"rest", false, true}};
  op.outputs = {{"output", false, false}};
  op.attrs.push_back(
      {"epsilon", "float", true, ir::Literal{ir::Literal::Kind::kFloat, {}, {1e-12}, {}}});
  op.attrs.push_back({"mode", "string", false, std::nullopt});
  op.commutative = true;
  op.doc = "doc";
  op.loc = {"ops.td", 3, 4};
  f.ops.push_back(op);

  ir::Rule r;
  r.name = "r";
  r.priority = -7;
  r.tags = {"ort", "onnx"};
  r.doc = "A rule.";
  r.requires.push_back({"", 17, 20, {"r.td", 1, 2}});
  ir::Expr x;
  x.kind = ir::Expr::Kind::kCapture;
  x.name = "x";
  x.loc = {"r.td", 5, 6};
  ir::Expr c;
  c.kind = ir::Expr::Kind::kConstant;
  c.literal = {ir::Literal::Kind::kFloats, {}, {0.5, 2.0}, {}};
  c.tolerance = 0.25;
  ir::Expr op_expr;
  op_expr.kind = ir::Expr::Kind::kOp;
  op_expr.name = "y";
  op_expr.domain = "d";
  op_expr.op = "Split";
  op_expr.inputs = {0, 1};
  ir::AttrMatch a;
  a.name = "axis";
  a.kind = ir::AttrMatch::Kind::kRange;
  a.values = {{ir::Literal::Kind::kStrings, {}, {}, {"a", "b"}}};
  a.min = -1;
  a.max = 2.5;
  a.capture = "cap";
  a.default_value = ir::Literal{ir::Literal::Kind::kInt, {0}, {}, {}};
  a.older_defaults = {{12, ir::Literal{ir::Literal::Kind::kInt, {1}, {}, {}}}};
  a.loc = {"r.td", 7, 8};
  // Expansion's trail: used in `outer` at r.td:30:1, itself used at r.td:31:2.
  auto outer = std::make_shared<const ir::FragmentUse>(ir::FragmentUse{"outer", {"r.td", 31, 2}});
  ir::FragmentUse inner_use{"inner", {"r.td", 30, 1}};
  inner_use.at.via = outer;
  a.loc.via = std::make_shared<const ir::FragmentUse>(inner_use);
  ir::AttrMatch param;
  param.name = "perm";
  param.kind = ir::AttrMatch::Kind::kParam;
  param.capture = "p";
  op_expr.attrs = {a, param};
  op_expr.output = 2;
  op_expr.optional = true;
  op_expr.commutative = true;
  op_expr.other_outputs = {{1, "b"}, {3, "d"}};
  op_expr.rest = "more";
  op_expr.rest_loc = {"r.td", 17, 18};
  ir::Expr alt;
  alt.kind = ir::Expr::Kind::kAlternatives;
  alt.inputs = {2, 0};
  alt.tags = {"pow", ""};
  alt.group = 7;
  ir::Expr none;
  none.kind = ir::Expr::Kind::kNone;
  none.loc = {"r.td", 19, 20};
  op_expr.inputs.push_back(4);
  r.pattern.exprs = {x, c, op_expr, alt, none};
  r.pattern.root = 3;
  ir::Constraint k;
  k.kind = ir::Constraint::Kind::kNative;
  k.subject = "x";
  k.min = 1;
  k.max = 2;
  k.has_min = k.has_max = true;
  k.literal = {ir::Literal::Kind::kInts, {1, -2}, {}, {}};
  k.tolerance = 3;
  k.ints = {4};
  k.strings = {"float"};
  k.dims = {"_", "H", "7"};
  k.native = "pred";
  k.args = {"x", "y"};
  k.loc = {"r.td", 9, 10};
  ir::Constraint same;
  same.kind = ir::Constraint::Kind::kEquivalent;
  same.subject = "y";
  same.args = {"x"};
  r.pattern.constraints = {k, same};
  ir::Target t;
  ir::TargetExpr ref;
  ref.kind = ir::TargetExpr::Kind::kRef;
  ref.name = "x";
  ir::TargetExpr tensor;
  tensor.kind = ir::TargetExpr::Kind::kTensor;
  tensor.literal = {ir::Literal::Kind::kInts, {0, -1}, {}, {}};
  tensor.dims = {2};
  tensor.elem_type = "int64";
  tensor.helper = "h";
  tensor.args = {"x"};
  ir::TargetExpr node;
  node.kind = ir::TargetExpr::Kind::kOp;
  node.domain = "com.microsoft";
  node.op = "Gelu";
  node.inputs = {0, 1};
  node.attrs.push_back(
      {"epsilon", ir::TargetAttr::Kind::kHelper, {}, "nh", {"x", "y"}, {"r.td", 11, 12}});
  node.num_outputs = 4;
  node.output = 0;
  ir::TargetExpr rest;
  rest.kind = ir::TargetExpr::Kind::kRest;
  rest.name = "more";
  rest.loc = {"r.td", 21, 22};
  node.inputs.push_back(3);
  t.exprs = {ref, tensor, node, rest};
  t.replacements = {{"y", 2}};
  t.when = ir::Target::When{"com.microsoft", 1, 3, {"pow"}};
  t.loc = {"r.td", 13, 14};
  r.targets = {t, ir::Target{}};
  r.loc = {"r.td", 15, 16};
  f.rules.push_back(r);

  ir::Fragment match;
  match.name = "heads";
  match.params.push_back({"t", false, std::nullopt, {"f.td", 1, 2}});
  match.params.push_back(
      {"perm", true, ir::Literal{ir::Literal::Kind::kInts, {0, 2, 1, 3}, {}, {}}, {"f.td", 3, 4}});
  match.results = {"y", "b"};
  match.doc = "Heads.";
  match.is_match = true;
  match.match = r.pattern;
  match.result_exprs = {2, 3};
  match.loc = {"f.td", 5, 6};
  f.fragments.push_back(match);
  ir::Fragment rewrite;
  rewrite.name = "rms";
  rewrite.params.push_back({"eps", true, std::nullopt, {}});
  rewrite.results = {"y"};
  rewrite.is_match = false;
  ir::Target body = t;
  body.exprs[2].attrs.push_back(
      {"epsilon", ir::TargetAttr::Kind::kParam, {}, "eps", {}, {"f.td", 7, 8}});
  rewrite.rewrite = {body, ir::Target{}};
  f.fragments.push_back(rewrite);
  return f;
}

TEST(RuleFileWire, EveryFieldSurvivesARoundTrip) {
  ir::RuleFile before = everyField();
  std::string bytes;
  encodeRuleFile(before, bytes);
  std::string_view in(bytes);
  ir::RuleFile after;
  ASSERT_TRUE(decodeRuleFile(in, after));
  EXPECT_TRUE(in.empty());
  ir::PrintOptions locations{true};
  EXPECT_EQ(ir::printRuleFile(after, locations), ir::printRuleFile(before, locations));
  const ir::Expr& op = after.rules[0].pattern.exprs[2];
  EXPECT_EQ(op.attrs[0].default_value, before.rules[0].pattern.exprs[2].attrs[0].default_value);
  EXPECT_EQ(op.attrs[0].capture, "cap");
  EXPECT_EQ(op.rest, "more");
  EXPECT_EQ(op.rest_loc.str(), "r.td:17:18");
  EXPECT_EQ(after.rules[0].pattern.exprs[4].kind, ir::Expr::Kind::kNone);
  EXPECT_EQ(after.rules[0].pattern.constraints[1].kind, ir::Constraint::Kind::kEquivalent);
  EXPECT_EQ(after.rules[0].pattern.constraints[1].args, std::vector<std::string>{"x"});
  EXPECT_EQ(after.rules[0].targets[0].exprs[3].kind, ir::TargetExpr::Kind::kRest);
  EXPECT_EQ(after.rules[0].targets[0].exprs[3].name, "more");
  EXPECT_EQ(after.rules[0].pattern.exprs[1].tolerance, 0.25);
  EXPECT_EQ(after.rules[0].pattern.constraints[0].literal.ints, (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(after.rules[0].pattern.constraints[0].tolerance, 3);
  EXPECT_EQ(after.rules[0].targets[0].exprs[1].helper, "h");
  EXPECT_EQ(after.rules[0].targets[0].exprs[1].literal.ints, (std::vector<int64_t>{0, -1}));
  EXPECT_FALSE(after.rules[0].targets[1].when.has_value());
  EXPECT_FALSE(after.ops[0].attrs[1].default_value.has_value());
  EXPECT_TRUE(after.ops[0].attrs[0].required);
}

TEST(RuleFileWire, FragmentsTuplesParametersAndExpansionTrailsSurviveARoundTrip) {
  ir::RuleFile before = everyField();
  std::string bytes;
  encodeRuleFile(before, bytes);
  std::string_view in(bytes);
  ir::RuleFile after;
  ASSERT_TRUE(decodeRuleFile(in, after));
  ASSERT_EQ(after.fragments.size(), 2u);
  for (size_t i = 0; i < before.fragments.size(); ++i)
    EXPECT_EQ(testing::fragmentText(after.fragments[i]),
              testing::fragmentText(before.fragments[i]));
  const ir::Fragment& match = after.fragments[0];
  EXPECT_EQ(match.params[1].loc.str(), "f.td:3:4");
  EXPECT_EQ(match.result_exprs, (std::vector<ir::ExprId>{2, 3}));
  EXPECT_EQ(match.loc.str(), "f.td:5:6");
  EXPECT_FALSE(after.fragments[1].is_match);
  EXPECT_EQ(after.fragments[1].rewrite.size(), 2u);
  EXPECT_EQ(after.fragments[1].rewrite[0].exprs[2].attrs.back().kind, ir::TargetAttr::Kind::kParam);
  const ir::Expr& op = after.rules[0].pattern.exprs[2];
  EXPECT_EQ(after.rules[0].pattern.exprs[3].group, 7u);
  EXPECT_EQ(op.attrs[1].kind, ir::AttrMatch::Kind::kParam);
  EXPECT_EQ(op.attrs[1].capture, "p");
  ASSERT_EQ(op.attrs[0].older_defaults.size(), 1u);
  EXPECT_EQ(op.attrs[0].older_defaults[0].first, 12);
  EXPECT_EQ(op.attrs[0].loc.trace(), "r.td:7:8 (in inner at r.td:30:1) (in outer at r.td:31:2)");
}

TEST(RuleFileWire, ACutStreamIsRefused) {
  std::string bytes;
  encodeRuleFile(everyField(), bytes);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    std::string cut = bytes.substr(0, n);
    std::string_view in(cut);
    ir::RuleFile file;
    EXPECT_FALSE(decodeRuleFile(in, file)) << n;
  }
}

TEST(RuleFileWire, DiagnosticsSurviveARoundTrip) {
  Diagnostic d{Diagnostic::Severity::kWarning, {"a.td", 3, 9}, "a message"};
  std::string bytes;
  encodeDiagnostic(d, bytes);
  std::string_view in(bytes);
  Diagnostic out{};  // value-initialised: GCC -O3 warns on a default-constructed one
  ASSERT_TRUE(decodeDiagnostic(in, out));
  EXPECT_EQ(out.severity, d.severity);
  EXPECT_EQ(out.loc.str(), "a.td:3:9");
  EXPECT_EQ(out.message, "a message");
}

}  // namespace
}  // namespace onnx_rewrite::tablegen
