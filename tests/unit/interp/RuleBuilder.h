//===- RuleBuilder.h - Rule IR written out in C++ for the interpreter tests ---===//
//
// The interpreter tests build the Rule IR a front end would, without a front
// end. Every pattern expr gets a distinct location (line = the order it was
// made in, unless given), so failure reasons can be asserted exactly:
//
//   Rule r("fuse");                                  // test.yaml:1:1
//   ExprId x = r.cap("x");
//   ExprId y = r.op("Relu", {r.op("Neg", {x})});
//   r.root(y, "y");
//   Target t = r.rewrite();
//   t.replace("y", t.op("Sigmoid", {t.ref("x")}));
//   auto patterns = makeInterpretedRules(r.build());
//
// Ops that docs/dsl.md calls commutative are marked so, as the front ends do.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite::interp_test {

using ir::ExprId;

inline ir::SourceLoc at(uint32_t line, uint32_t col) {
  return ir::SourceLoc{"test.yaml", line, col};
}

// ---- Literals ------------------------------------------------------------------------------

inline ir::Literal I(int64_t v) { return ir::Literal{ir::Literal::Kind::kInt, {v}, {}, {}}; }
inline ir::Literal F(double v) { return ir::Literal{ir::Literal::Kind::kFloat, {}, {v}, {}}; }
inline ir::Literal S(std::string v) {
  return ir::Literal{ir::Literal::Kind::kString, {}, {}, {std::move(v)}};
}
inline ir::Literal Is(std::vector<int64_t> v) {
  return ir::Literal{ir::Literal::Kind::kInts, std::move(v), {}, {}};
}
inline ir::Literal Fs(std::vector<double> v) {
  return ir::Literal{ir::Literal::Kind::kFloats, {}, std::move(v), {}};
}
inline ir::Literal Ss(std::vector<std::string> v) {
  return ir::Literal{ir::Literal::Kind::kStrings, {}, {}, std::move(v)};
}

// ---- Attribute conditions --------------------------------------------------------------------

/// `name=value`, with the schema default an absent attribute has (if any).
inline ir::AttrMatch eq(std::string name, ir::Literal value,
                        std::optional<ir::Literal> default_value = std::nullopt,
                        ir::SourceLoc loc = {}) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kEquals;
  a.values = {std::move(value)};
  a.default_value = std::move(default_value);
  a.loc = std::move(loc);
  return a;
}

inline ir::AttrMatch oneOf(std::string name, std::vector<ir::Literal> values) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kOneOf;
  a.values = std::move(values);
  return a;
}

inline ir::AttrMatch range(std::string name, double lo, double hi,
                           std::optional<ir::Literal> default_value = std::nullopt) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kRange;
  a.min = lo;
  a.max = hi;
  a.default_value = std::move(default_value);
  return a;
}

inline ir::AttrMatch capture(std::string name, std::string as,
                             std::optional<ir::Literal> default_value = std::nullopt) {
  ir::AttrMatch a;
  a.name = std::move(name);
  a.kind = ir::AttrMatch::Kind::kCapture;
  a.capture = std::move(as);
  a.default_value = std::move(default_value);
  return a;
}

// ---- Target attributes -----------------------------------------------------------------------

inline ir::TargetAttr lit(std::string name, ir::Literal value) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kLiteral;
  a.literal = std::move(value);
  return a;
}
inline ir::TargetAttr attrOf(std::string name, std::string capture) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kCaptured;
  a.ref = std::move(capture);
  return a;
}
inline ir::TargetAttr valueOf(std::string name, std::string ref) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kValueOf;
  a.ref = std::move(ref);
  return a;
}
inline ir::TargetAttr helper(std::string name, std::string fn, std::vector<std::string> args) {
  ir::TargetAttr a;
  a.name = std::move(name);
  a.kind = ir::TargetAttr::Kind::kHelper;
  a.ref = std::move(fn);
  a.args = std::move(args);
  return a;
}

/// "com.microsoft.Gelu" -> ("com.microsoft", "Gelu"); "Add" -> ("", "Add").
inline std::pair<std::string, std::string> splitOp(const std::string& qualified) {
  const size_t dot = qualified.rfind('.');
  if (dot == std::string::npos) return {"", qualified};
  return {qualified.substr(0, dot), qualified.substr(dot + 1)};
}

// ---- Targets ---------------------------------------------------------------------------------

/// One rewrite variant of a rule under construction (by index: the rule's vector may grow).
class Target {
 public:
  Target(ir::Rule& rule, size_t index) : rule_(&rule), index_(index) {}

  ir::Target& get() { return rule_->targets[index_]; }

  uint32_t ref(std::string name) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRef;
    e.name = std::move(name);
    return add(std::move(e));
  }
  uint32_t none() {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kNone;
    return add(std::move(e));
  }
  /// `name...`: the inputs the match bound to rest `name`, spliced in place.
  uint32_t rest(std::string name) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRest;
    e.name = std::move(name);
    return add(std::move(e));
  }
  /// A new node; this value is its output 0.
  uint32_t op(const std::string& qualified, std::vector<uint32_t> inputs,
              std::vector<ir::TargetAttr> attrs = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    std::tie(e.domain, e.op) = splitOp(qualified);
    e.inputs = std::move(inputs);
    e.attrs = std::move(attrs);
    return add(std::move(e));
  }
  /// Output `k` of the node made by `node` (the front ends' convention).
  uint32_t out(uint32_t node, uint32_t k) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    e.output = k;
    e.inputs = {node};
    return add(std::move(e));
  }
  uint32_t tensor(std::string elem_type, ir::Literal value, std::vector<int64_t> dims = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.elem_type = std::move(elem_type);
    e.literal = std::move(value);
    e.dims = std::move(dims);
    return add(std::move(e));
  }
  /// tensor(like(name), value, dims): a float literal typed as `name` when the rule applies.
  uint32_t tensorLike(std::string name, ir::Literal value, std::vector<int64_t> dims = {}) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.like = std::move(name);
    e.literal = std::move(value);
    e.dims = std::move(dims);
    return add(std::move(e));
  }
  uint32_t tensorHelper(std::string fn, std::vector<std::string> args) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.helper = std::move(fn);
    e.args = std::move(args);
    return add(std::move(e));
  }
  Target& replace(std::string name, uint32_t id) {
    get().replacements.emplace_back(std::move(name), id);
    return *this;
  }
  Target& whenOpset(int64_t min_opset, int64_t max_opset = -1, std::string domain = "") {
    ensureWhen();
    get().when->domain = std::move(domain);
    get().when->min_opset = min_opset;
    get().when->max_opset = max_opset;
    return *this;
  }
  Target& whenTags(std::vector<std::string> tags) {
    ensureWhen();
    get().when->tags = std::move(tags);
    return *this;
  }

 private:
  void ensureWhen() {
    if (!get().when) get().when = ir::Target::When{};
  }
  uint32_t add(ir::TargetExpr e) {
    e.loc = ir::SourceLoc{"test.yaml", 100 + static_cast<uint32_t>(get().exprs.size()), 1};
    get().exprs.push_back(std::move(e));
    return static_cast<uint32_t>(get().exprs.size() - 1);
  }

  ir::Rule* rule_;
  size_t index_;
};

// ---- Rules -----------------------------------------------------------------------------------

class Rule {
 public:
  explicit Rule(std::string name, int priority = 0) {
    rule_.name = std::move(name);
    rule_.priority = priority;
    rule_.loc = at(1, 1);
  }

  ir::Rule& get() { return rule_; }
  ir::Expr& expr(ExprId id) { return rule_.pattern.exprs[id]; }

  ExprId cap(std::string name) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kCapture;
    e.name = std::move(name);
    return add(std::move(e));
  }
  ExprId op(const std::string& qualified, std::vector<ExprId> inputs,
            std::vector<ir::AttrMatch> attrs = {}) {
    static const std::set<std::string> kCommutative = {
        "Add", "Mul", "Max",   "Min",        "Sum",       "And",
        "Or",  "Xor", "Equal", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
    ir::Expr e;
    e.kind = ir::Expr::Kind::kOp;
    std::tie(e.domain, e.op) = splitOp(qualified);
    e.commutative = e.domain.empty() && inputs.size() == 2 && kCommutative.count(e.op) > 0;
    e.inputs = std::move(inputs);
    e.attrs = std::move(attrs);
    return add(std::move(e));
  }
  /// `none`: an omitted input.
  ExprId none() {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kNone;
    return add(std::move(e));
  }
  /// `Op(inputs..., rest...)`.
  ExprId opRest(const std::string& qualified, std::vector<ExprId> inputs, std::string rest,
                std::vector<ir::AttrMatch> attrs = {}) {
    ExprId id = op(qualified, std::move(inputs), std::move(attrs));
    expr(id).rest = std::move(rest);
    return id;
  }
  /// `Op?(...)`.
  ExprId opt(const std::string& qualified, std::vector<ExprId> inputs,
             std::vector<ir::AttrMatch> attrs = {}) {
    ExprId id = op(qualified, std::move(inputs), std::move(attrs));
    expr(id).optional = true;
    return id;
  }
  ExprId cst(ir::Literal value, double tolerance = 1e-6) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kConstant;
    e.literal = std::move(value);
    e.tolerance = tolerance;
    return add(std::move(e));
  }
  ExprId alt(std::vector<ExprId> alternatives, std::vector<std::string> tags = {}) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kAlternatives;
    e.inputs = std::move(alternatives);
    e.tags = std::move(tags);
    return add(std::move(e));
  }
  /// Binds `name` to the value of `id` (`name = ...` in a match).
  ExprId named(ExprId id, std::string name) {
    expr(id).name = std::move(name);
    return id;
  }
  Rule& root(ExprId id, std::string name = "") {
    if (!name.empty()) expr(id).name = std::move(name);
    rule_.pattern.root = id;
    return *this;
  }
  Rule& requires(std::string domain, int64_t min_opset, int64_t max_opset = -1) {
    rule_.requires.push_back(ir::Applicability{std::move(domain), min_opset, max_opset, {}});
    return *this;
  }
  Rule& tags(std::vector<std::string> tags) {
    rule_.tags = std::move(tags);
    return *this;
  }

  // Constraints; each returns the constraint for further tuning.
  ir::Constraint& where(ir::Constraint::Kind kind, std::string subject) {
    ir::Constraint c;
    c.kind = kind;
    c.subject = std::move(subject);
    c.loc =
        ir::SourceLoc{"test.yaml", 50 + static_cast<uint32_t>(rule_.pattern.constraints.size()), 5};
    rule_.pattern.constraints.push_back(std::move(c));
    return rule_.pattern.constraints.back();
  }
  ir::Constraint& constant(std::string s) {
    return where(ir::Constraint::Kind::kConstant, std::move(s));
  }
  ir::Constraint& scalar(std::string s) {
    return where(ir::Constraint::Kind::kScalar, std::move(s));
  }
  ir::Constraint& scalar(std::string s, double lo, double hi) {
    ir::Constraint& c = scalar(std::move(s));
    c.min = lo;
    c.max = hi;
    c.has_min = c.has_max = true;
    return c;
  }
  ir::Constraint& equals(std::string s, ir::Literal value, double tolerance = 1e-6) {
    ir::Constraint& c = where(ir::Constraint::Kind::kConstantEquals, std::move(s));
    c.literal = std::move(value);
    c.tolerance = tolerance;
    return c;
  }
  ir::Constraint& rank(std::string s, std::vector<int64_t> ranks) {
    ir::Constraint& c = where(ir::Constraint::Kind::kRank, std::move(s));
    c.ints = std::move(ranks);
    return c;
  }
  ir::Constraint& dtype(std::string s, std::vector<std::string> types) {
    ir::Constraint& c = where(ir::Constraint::Kind::kElemType, std::move(s));
    c.strings = std::move(types);
    return c;
  }
  ir::Constraint& shape(std::string s, std::vector<std::string> dims) {
    ir::Constraint& c = where(ir::Constraint::Kind::kShape, std::move(s));
    c.dims = std::move(dims);
    return c;
  }
  ir::Constraint& consumers(std::string s, int lo, int hi) {
    ir::Constraint& c = where(ir::Constraint::Kind::kConsumers, std::move(s));
    c.min = lo;
    c.max = hi;
    c.has_min = c.has_max = true;
    return c;
  }
  ir::Constraint& equivalent(std::string s, std::string other) {
    ir::Constraint& c = where(ir::Constraint::Kind::kEquivalent, std::move(s));
    c.args = {std::move(other)};
    return c;
  }
  ir::Constraint& native(std::string fn, std::vector<std::string> args) {
    ir::Constraint& c = where(ir::Constraint::Kind::kNative, "");
    c.native = std::move(fn);
    c.args = std::move(args);
    return c;
  }

  /// Adds a rewrite variant.
  Target rewrite() {
    rule_.targets.emplace_back();
    rule_.targets.back().loc = at(99, 3);
    return Target(rule_, rule_.targets.size() - 1);
  }

  std::shared_ptr<const ir::Rule> build() const { return std::make_shared<const ir::Rule>(rule_); }

 private:
  ExprId add(ir::Expr e) {
    const ExprId id = static_cast<ExprId>(rule_.pattern.exprs.size());
    e.loc = at(2 + id, 5);
    rule_.pattern.exprs.push_back(std::move(e));
    return id;
  }

  ir::Rule rule_;
};

}  // namespace onnx_rewrite::interp_test
