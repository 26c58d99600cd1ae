//===- RuleBuilder.h - Rule IR written out in C++ for the sema tests ------===//
//
// The front ends are not needed to test the checks: a test builds the Rule IR a
// front end would, with a location on every piece, and asserts on the exact
// diagnostics. RuleBuilder keeps that short:
//
//   RuleBuilder b("quick_gelu");               // rule.yaml:1:3
//   ExprId x = b.capture("x", at(4, 13));
//   ExprId y = b.op("Mul", {x, b.op("Sigmoid", {x})}, {}, at(4, 11));
//   b.root(y, "y").requiresOpset("", 13);
//   auto t = b.target(at(6, 5));
//   t.replace("y", t.op("com.microsoft.QuickGelu", {t.ref("x")}));
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite::test {

/// A location in the test's imaginary rule file.
inline ir::SourceLoc at(uint32_t line, uint32_t col) {
  return ir::SourceLoc{"rule.yaml", line, col};
}

inline ir::Literal lint(int64_t v) { return ir::Literal{ir::Literal::Kind::kInt, {v}, {}, {}}; }
inline ir::Literal lfloat(double v) { return ir::Literal{ir::Literal::Kind::kFloat, {}, {v}, {}}; }
inline ir::Literal lstr(std::string v) {
  return ir::Literal{ir::Literal::Kind::kString, {}, {}, {std::move(v)}};
}
inline ir::Literal lints(std::vector<int64_t> v) {
  return ir::Literal{ir::Literal::Kind::kInts, std::move(v), {}, {}};
}

/// `name=value` in a match.
inline ir::AttrMatch equals(std::string name, ir::Literal value, ir::SourceLoc loc = {}) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kEquals;
  a.values = {std::move(value)};
  a.loc = std::move(loc);
  return a;
}

/// `name=range(lo, hi)` in a match.
inline ir::AttrMatch inRange(std::string name, double lo, double hi, ir::SourceLoc loc = {}) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kRange;
  a.min = lo;
  a.max = hi;
  a.loc = std::move(loc);
  return a;
}

/// `name=capture(c)` in a match.
inline ir::AttrMatch captureAttr(std::string name, std::string capture, ir::SourceLoc loc = {}) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kCapture;
  a.capture = std::move(capture);
  a.loc = std::move(loc);
  return a;
}

/// `name=literal` in a rewrite.
inline ir::TargetAttr tlit(std::string name, ir::Literal value, ir::SourceLoc loc = {}) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kLiteral;
  a.literal = std::move(value);
  a.loc = std::move(loc);
  return a;
}

/// `name=value(ref)` in a rewrite.
inline ir::TargetAttr tvalue(std::string name, std::string ref, ir::SourceLoc loc = {}) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kValueOf;
  a.ref = std::move(ref);
  a.loc = std::move(loc);
  return a;
}

/// `name=attr(ref)` in a rewrite.
inline ir::TargetAttr tattr(std::string name, std::string ref, ir::SourceLoc loc = {}) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kCaptured;
  a.ref = std::move(ref);
  a.loc = std::move(loc);
  return a;
}

/// `name=helper(fn, args...)` in a rewrite.
inline ir::TargetAttr thelper(std::string name, std::string fn, std::vector<std::string> args,
                              ir::SourceLoc loc = {}) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kHelper;
  a.ref = std::move(fn);
  a.args = std::move(args);
  a.loc = std::move(loc);
  return a;
}

/// "com.microsoft.Gelu" -> ("com.microsoft", "Gelu"); "Add" -> ("", "Add").
inline std::pair<std::string, std::string> splitOp(const std::string& qualified) {
  size_t dot = qualified.rfind('.');
  if (dot == std::string::npos) return {"", qualified};
  return {qualified.substr(0, dot), qualified.substr(dot + 1)};
}

/// Adds exprs and replacements to one rewrite variant of a rule.
class TargetBuilder {
 public:
  TargetBuilder(ir::Rule& rule, size_t index) : rule_(rule), index_(index) {}

  ir::Target& target() { return rule_.targets[index_]; }

  uint32_t ref(std::string name, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRef;
    e.name = std::move(name);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  uint32_t none(ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kNone;
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  /// `name...`: the inputs a match bound to rest `name`, spliced in place.
  uint32_t rest(std::string name, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRest;
    e.name = std::move(name);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  /// `tensor(type, literal)`: a new constant.
  uint32_t tensor(std::string elem_type, ir::Literal literal, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.elem_type = std::move(elem_type);
    e.literal = std::move(literal);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  uint32_t tensorLike(std::string name, ir::Literal literal, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.like = std::move(name);
    e.literal = std::move(literal);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  uint32_t tensorHelper(std::string helper, std::vector<std::string> args, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.helper = std::move(helper);
    e.args = std::move(args);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  /// A new node of `qualified_op`, value = its output `output` of `num_outputs`.
  uint32_t op(const std::string& qualified_op, std::vector<uint32_t> inputs,
              std::vector<ir::TargetAttr> attrs = {}, ir::SourceLoc loc = {},
              uint32_t num_outputs = 1, uint32_t output = 0) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    std::tie(e.domain, e.op) = splitOp(qualified_op);
    e.inputs = std::move(inputs);
    e.attrs = std::move(attrs);
    e.loc = std::move(loc);
    e.num_outputs = num_outputs;
    e.output = output;
    return add(std::move(e));
  }
  /// Output `output` of new node `node`, the way both front ends write it: an op-less kOp
  /// expr whose only input is the node.
  uint32_t output(uint32_t node, uint32_t output, ir::SourceLoc loc = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    e.inputs = {node};
    e.output = output;
    e.num_outputs = target().exprs[node].num_outputs;
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  TargetBuilder& replace(std::string name, uint32_t id) {
    target().replacements.emplace_back(std::move(name), id);
    return *this;
  }
  TargetBuilder& when(std::string domain, int64_t min_opset, int64_t max_opset = -1,
                      std::vector<std::string> tags = {}) {
    target().when = ir::Target::When{std::move(domain), min_opset, max_opset, std::move(tags)};
    return *this;
  }

 private:
  uint32_t add(ir::TargetExpr e) {
    target().exprs.push_back(std::move(e));
    return static_cast<uint32_t>(target().exprs.size() - 1);
  }

  ir::Rule& rule_;
  size_t index_;
};

/// Builds one rule: pattern exprs, root, requires, constraints, rewrite variants.
class RuleBuilder {
 public:
  explicit RuleBuilder(std::string name, ir::SourceLoc loc = at(1, 3)) {
    rule_.name = std::move(name);
    rule_.loc = std::move(loc);
  }

  ir::ExprId capture(std::string name, ir::SourceLoc loc = {}) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kCapture;
    e.name = std::move(name);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  ir::ExprId op(const std::string& qualified_op, std::vector<ir::ExprId> inputs,
                std::vector<ir::AttrMatch> attrs = {}, ir::SourceLoc loc = {},
                std::string name = "") {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kOp;
    std::tie(e.domain, e.op) = splitOp(qualified_op);
    e.inputs = std::move(inputs);
    e.attrs = std::move(attrs);
    e.loc = std::move(loc);
    e.name = std::move(name);
    return add(std::move(e));
  }
  ir::ExprId constant(double value, ir::SourceLoc loc = {}) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kConstant;
    e.literal = lfloat(value);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  ir::ExprId alternatives(std::vector<ir::ExprId> alts, ir::SourceLoc loc = {},
                          std::vector<std::string> tags = {}) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kAlternatives;
    e.inputs = std::move(alts);
    e.tags = std::move(tags);
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  /// `none`: an omitted input.
  ir::ExprId none(ir::SourceLoc loc = {}) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kNone;
    e.loc = std::move(loc);
    return add(std::move(e));
  }
  /// Op expr `id` takes `name...`: its node's further inputs.
  ir::ExprId withRest(ir::ExprId id, std::string name, ir::SourceLoc loc = {}) {
    expr(id).rest = std::move(name);
    expr(id).rest_loc = std::move(loc);
    return id;
  }
  ir::Expr& expr(ir::ExprId id) { return rule_.pattern.exprs[id]; }

  /// Makes `id` the root, bound to `name`.
  RuleBuilder& root(ir::ExprId id, std::string name) {
    rule_.pattern.root = id;
    expr(id).name = std::move(name);
    return *this;
  }
  RuleBuilder& requiresOpset(std::string domain, int64_t min_opset, int64_t max_opset = -1,
                             ir::SourceLoc loc = {}) {
    rule_.requires.push_back(
        ir::Applicability{std::move(domain), min_opset, max_opset, std::move(loc)});
    return *this;
  }
  RuleBuilder& priority(int p) {
    rule_.priority = p;
    return *this;
  }
  RuleBuilder& tags(std::vector<std::string> t) {
    rule_.tags = std::move(t);
    return *this;
  }
  /// A constraint of `kind` on `subject`; the returned reference stays valid until the
  /// next constraint is added.
  ir::Constraint& constraint(ir::Constraint::Kind kind, std::string subject,
                             ir::SourceLoc loc = {}) {
    ir::Constraint c;
    c.kind = kind;
    c.subject = std::move(subject);
    c.loc = std::move(loc);
    rule_.pattern.constraints.push_back(std::move(c));
    return rule_.pattern.constraints.back();
  }
  /// A new rewrite variant.
  TargetBuilder target(ir::SourceLoc loc = {}) {
    ir::Target t;
    t.loc = std::move(loc);
    rule_.targets.push_back(std::move(t));
    return TargetBuilder(rule_, rule_.targets.size() - 1);
  }

  ir::Rule& rule() { return rule_; }

 private:
  ir::ExprId add(ir::Expr e) {
    rule_.pattern.exprs.push_back(std::move(e));
    return static_cast<ir::ExprId>(rule_.pattern.exprs.size() - 1);
  }

  ir::Rule rule_;
};

/// What a check run reported, each diagnostic as "file:line:col: severity: message", and
/// the rules as the checks left them.
struct CheckResult {
  bool ok = false;
  std::vector<std::string> diagnostics;
  ir::RuleFile file;
};

inline std::string diagnosticText(const Diagnostic& d) {
  const char* severity = d.severity == Diagnostic::Severity::kError     ? "error"
                         : d.severity == Diagnostic::Severity::kWarning ? "warning"
                                                                        : "note";
  return d.loc.str() + ": " + severity + ": " + d.message;
}

}  // namespace onnx_rewrite::test
