//===- RulePlan.cc - the one match-and-rewrite plan of a rule -------------===//
//
// PlanBuilder walks the rule once: pattern exprs (slots, captures, labels,
// attribute conditions), roots, constraints (symbols, element types), then each
// rewrite variant (references, helpers, tensor literals, build order). Numbering
// is by first appearance, so a plan is a pure function of the Rule IR.
//
//===----------------------------------------------------------------------===//
#include "compiler/plan/RulePlan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace onnx_rewrite::plan {
namespace {

using ir::ExprId;
using ir::kNoExpr;

bool binds(const std::string& name) { return !name.empty() && name != "_"; }

/// A scalar literal has exactly one value.
bool wellFormed(const ir::Literal& lit) {
  switch (lit.kind) {
    case ir::Literal::Kind::kInt:
      return lit.ints.size() == 1;
    case ir::Literal::Kind::kFloat:
      return lit.floats.size() == 1;
    case ir::Literal::Kind::kString:
      return lit.strings.size() == 1;
    default:
      return true;
  }
}

bool isNumeric(const ir::Literal& lit) {
  return lit.kind != ir::Literal::Kind::kString && lit.kind != ir::Literal::Kind::kStrings;
}

bool isIntLiteral(const ir::Literal& lit) {
  return lit.kind == ir::Literal::Kind::kInt || lit.kind == ir::Literal::Kind::kInts;
}

/// "Name" for the ONNX domain, else "domain.Name" (as rule files write ops).
std::string opLabel(const std::string& domain, const std::string& op) {
  return isOnnxDomain(domain) ? op : domain + "." + op;
}

/// Builds a RulePlan, validating what both back ends rely on.
class PlanBuilder {
 public:
  explicit PlanBuilder(const ir::Rule& rule) : rule_(rule) { plan_.rule = &rule; }

  RulePlan build() {
    const ir::Pattern& p = rule_.pattern;
    if (p.root >= p.exprs.size()) error(rule_.loc, "the pattern has no root");
    if (rule_.targets.empty()) error(rule_.loc, "the rule has no rewrite");
    gen::RuleSpec& spec = plan_.spec;
    spec.name = rule_.name;
    spec.loc = rule_.loc.str();
    spec.root = p.root;
    for (ExprId id = 0; id < p.exprs.size(); ++id) planExpr(id);
    collectRoots(p.root);
    for (const ir::Constraint& c : p.constraints) planConstraint(c);
    for (const ir::Target& t : rule_.targets) planTarget(t);
    spec.slot_names = slot_names_;
    spec.num_captures = captures_.size();
    spec.num_symbols = symbols_.size();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void error(const ir::SourceLoc& loc, const std::string& what) const {
    const ir::SourceLoc& at = loc.known() || !loc.file.empty() ? loc : rule_.loc;
    throw PlanError(at, rule_.name, what);
  }

  std::string loc(const ir::SourceLoc& l) const { return locOf(rule_, l); }
  std::string loc(const ir::SourceLoc& l, const ir::SourceLoc& fallback) const {
    return locOf(rule_, l.known() ? l : fallback);
  }

  uint32_t slotFor(const std::string& name) {
    auto [it, added] = slots_.emplace(name, static_cast<uint32_t>(slot_names_.size()));
    if (added) slot_names_.push_back(name);
    return it->second;
  }

  uint32_t boundSlot(const std::string& name, const ir::SourceLoc& at, const char* who) const {
    auto it = slots_.find(name);
    if (it == slots_.end())
      error(at, std::string(who) + " '" + name + "', which the match never binds");
    return it->second;
  }

  // ---- Pattern ----------------------------------------------------------------------------

  /// Expr `id`'s slot, label and checks. Slots are numbered in expr order: an expr's own
  /// name, then an op's other outputs.
  void planExpr(ExprId id) {
    const ir::Pattern& p = rule_.pattern;
    const ir::Expr& e = p.exprs[id];
    gen::ExprSpec& x = plan_.spec.exprs.emplace_back();
    plan_.commutative.push_back(e.kind == ir::Expr::Kind::kOp && e.commutative &&
                                e.inputs.size() == 2);
    for (ExprId in : e.inputs)
      if (in >= p.exprs.size())
        error(e.loc, "expr input " + std::to_string(in) + " does not exist");
    x.loc = loc(e.loc);
    if (binds(e.name)) x.slot = slotFor(e.name);
    x.literal = specLiteral(e.literal);
    x.tolerance = e.tolerance;
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        x.label = e.name.empty() ? "_" : e.name;
        break;
      case ir::Expr::Kind::kConstant:
        if (!wellFormed(e.literal) || !isNumeric(e.literal))
          error(e.loc, "constant " + e.literal.str() + " is not a number or list of numbers");
        x.label = "constant " + e.literal.str();
        break;
      case ir::Expr::Kind::kAlternatives:
        if (e.inputs.empty()) error(e.loc, "alternatives without any alternative");
        if (!e.tags.empty() && e.tags.size() != e.inputs.size())
          error(e.loc, "alternatives have " + std::to_string(e.inputs.size()) + " entries but " +
                           std::to_string(e.tags.size()) + " tags");
        x.label = e.name.empty() ? "alternatives" : e.name;
        if (e.group != ir::kNoGroup)
          for (ExprId peer = 0; peer < p.exprs.size(); ++peer)
            if (peer != id && p.exprs[peer].kind == ir::Expr::Kind::kAlternatives &&
                p.exprs[peer].group == e.group)
              x.peers.push_back(peer);
        break;
      case ir::Expr::Kind::kNone:
        if (binds(e.name)) error(e.loc, "'none' cannot be bound to a name");
        x.label = "none";
        break;
      case ir::Expr::Kind::kOp:
        if (e.op.empty()) error(e.loc, "an op pattern without an op name");
        if (e.optional && e.inputs.empty()) error(e.loc, "optional " + e.op + " has no input");
        x.label = opLabel(e.domain, e.op);
        x.output = e.output;
        x.num_inputs = static_cast<uint32_t>(e.inputs.size());
        x.variadic = !e.rest.empty();
        for (uint32_t i = 0; i < e.inputs.size(); ++i)
          if (p.exprs[e.inputs[i]].kind == ir::Expr::Kind::kNone) x.none_inputs.push_back(i);
        for (const auto& [output, name] : e.other_outputs)
          x.other_outputs.push_back({output, binds(name) ? slotFor(name) : kNoSlot, name});
        for (const ir::AttrMatch& m : e.attrs) x.attrs.push_back(planAttr(m, e));
        break;
    }
  }

  gen::AttrSpec planAttr(const ir::AttrMatch& m, const ir::Expr& e) {
    const ir::SourceLoc& at = m.loc.known() ? m.loc : e.loc;
    for (const ir::Literal& v : m.values)
      if (!wellFormed(v)) error(at, "attribute " + m.name + " has a malformed literal");
    if (m.default_value && !wellFormed(*m.default_value))
      error(at, "attribute " + m.name + " has a malformed default");
    if ((m.kind == ir::AttrMatch::Kind::kEquals && m.values.size() != 1) ||
        (m.kind == ir::AttrMatch::Kind::kOneOf && m.values.empty()))
      error(at, "attribute " + m.name + " needs a value to compare with");
    if (m.kind == ir::AttrMatch::Kind::kParam)
      error(at, "attribute parameter " + m.capture + " outside a fragment");
    gen::AttrSpec a;
    a.name = m.name;
    a.loc = loc(at);
    a.kind = static_cast<gen::AttrSpec::Kind>(m.kind);
    for (const ir::Literal& v : m.values) a.values.push_back(specLiteral(v));
    a.axes = m.name == "axes" || m.name == "axis";
    if (m.default_value) a.default_value = specLiteral(*m.default_value);
    for (const auto& [until, value] : m.older_defaults)
      a.older_defaults.emplace_back(until, specLiteral(value));
    a.min = m.min;
    a.max = m.max;
    a.capture_name = m.capture;
    // One slot per name: captured twice (say, in two alternatives), it is one value.
    if (m.kind == ir::AttrMatch::Kind::kCapture && binds(m.capture))
      a.capture =
          captures_.emplace(m.capture, static_cast<uint32_t>(captures_.size())).first->second;
    return a;
  }

  void collectRoots(ExprId id) {
    const ir::Expr& e = rule_.pattern.exprs[id];
    if (e.kind == ir::Expr::Kind::kAlternatives) {
      for (ExprId alt : e.inputs) collectRoots(alt);
      return;
    }
    if (e.kind != ir::Expr::Kind::kOp)
      error(e.loc, "the root of a pattern must be an op or alternatives of ops");
    if (e.optional) error(e.loc, "the root of a pattern cannot be optional");
    const OpName op{e.domain, e.op};
    for (const Root& r : plan_.roots)
      if (sameOp(r.op, op)) return;
    plan_.roots.push_back({op, e.output});
  }

  void planConstraint(const ir::Constraint& c) {
    using K = ir::Constraint::Kind;
    gen::ConstraintSpec& x = plan_.spec.constraints.emplace_back();
    x.kind = static_cast<gen::ConstraintSpec::Kind>(c.kind);
    x.loc = loc(c.loc);
    if (!c.guard.empty()) x.guard_slot = boundSlot(c.guard, c.loc, "a fragment's constraint");
    x.subject = c.subject;
    x.has_min = c.has_min;
    x.has_max = c.has_max;
    x.min = c.min;
    x.max = c.max;
    x.ints = c.ints;
    x.strings = c.strings;
    x.dims = c.dims;
    x.native = c.native;
    x.args = c.args;
    x.literal = specLiteral(c.literal);
    x.tolerance = c.tolerance;
    if (c.kind == K::kNative) {
      for (const std::string& a : c.args)
        x.arg_slots.push_back(boundSlot(a, c.loc, "native reads"));
      return;
    }
    if (c.kind == K::kEquivalent) {
      if (c.args.size() != 1) error(c.loc, "equivalent names one other value");
      x.arg_slots.push_back(boundSlot(c.args[0], c.loc, "equivalent names"));
    }
    x.slot = boundSlot(c.subject, c.loc, "where names");
    switch (c.kind) {
      case K::kConstantEquals:
        if (!wellFormed(c.literal) || !isNumeric(c.literal))
          error(c.loc, "equals needs a number or list of numbers");
        break;
      case K::kElemType:
        for (const std::string& name : c.strings) {
          const int32_t t = elemTypeOf(name);
          if (t == 0) error(c.loc, "unknown element type '" + name + "'");
          x.elem_types.push_back(t);
        }
        break;
      case K::kShape:
        for (const std::string& d : c.dims) x.dim_plans.push_back(planDim(d, c));
        break;
      default:
        break;
    }
  }

  /// A dim of a `shape:` constraint: "_" (any), an integer, or a symbol (numbered in order).
  gen::ConstraintSpec::Dim planDim(const std::string& d, const ir::Constraint& c) {
    using Kind = gen::ConstraintSpec::Dim::Kind;
    if (d == "_") return {Kind::kAny, 0, 0};
    if (!d.empty() &&
        (std::isdigit(static_cast<unsigned char>(d[0])) || (d[0] == '-' && d.size() > 1))) {
      size_t used = 0;
      int64_t value = 0;
      try {
        value = std::stoll(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != d.size()) error(c.loc, "bad dim '" + d + "'");
      return {Kind::kStatic, value, 0};
    }
    auto it = std::find(symbols_.begin(), symbols_.end(), d);
    const auto symbol = static_cast<uint32_t>(it - symbols_.begin());
    if (it == symbols_.end()) symbols_.push_back(d);
    return {Kind::kSymbol, 0, symbol};
  }

  // ---- Rewrite variants ---------------------------------------------------------------------

  void planTarget(const ir::Target& t) {
    TargetPlan& tp = plan_.targets.emplace_back();
    tp.target = &t;
    tp.loc = loc(t.loc);
    tp.exprs.resize(t.exprs.size());
    for (uint32_t i = 0; i < t.exprs.size(); ++i) planTargetExpr(t, i, tp.exprs[i]);
    std::set<std::string> replaced;
    for (const auto& [name, index] : t.replacements) {
      if (index >= t.exprs.size()) error(t.loc, "replacement of '" + name + "' has no target expr");
      const ir::TargetExpr& te = t.exprs[index];
      if (te.kind == ir::TargetExpr::Kind::kNone || te.kind == ir::TargetExpr::Kind::kRest)
        error(te.loc, "'" + name + "' cannot be replaced by " +
                          (te.kind == ir::TargetExpr::Kind::kNone ? "none" : "a rest of inputs"));
      if (!replaced.insert(name).second) error(t.loc, "'" + name + "' is replaced twice");
      tp.replacements.push_back(
          {boundSlot(name, t.loc, "the rewrite replaces"), index, loc(te.loc, t.loc)});
    }
    orderTarget(t, tp);
    spec_variant(t);
  }

  void planTargetExpr(const ir::Target& t, uint32_t i, TargetExprPlan& xp) {
    const ir::TargetExpr& te = t.exprs[i];
    xp.loc = loc(te.loc);
    for (uint32_t in : te.inputs)
      if (in >= t.exprs.size())
        error(te.loc, "target input " + std::to_string(in) + " does not exist");
    switch (te.kind) {
      case ir::TargetExpr::Kind::kRef:
        xp.slot = boundSlot(te.name, te.loc, "the rewrite reads");
        break;
      case ir::TargetExpr::Kind::kNone:
        break;
      case ir::TargetExpr::Kind::kRest: {
        const auto& exprs = rule_.pattern.exprs;
        for (ExprId id = 0; id < exprs.size() && xp.rest == kNoExpr; ++id)
          if (exprs[id].kind == ir::Expr::Kind::kOp && exprs[id].rest == te.name) xp.rest = id;
        if (xp.rest == kNoExpr || te.name == "_")
          error(te.loc, "'" + te.name + "...' splices no rest of the match");
        break;
      }
      case ir::TargetExpr::Kind::kTensor:
        if (te.helper.empty()) {
          planTensorLiteral(te, xp);
        } else {
          for (const std::string& a : te.args)
            xp.args.push_back(boundSlot(a, te.loc, "helper reads"));
        }
        break;
      case ir::TargetExpr::Kind::kOp:
        if (te.op.empty()) {
          if (te.inputs.size() != 1 || t.exprs[te.inputs[0]].kind != ir::TargetExpr::Kind::kOp ||
              t.exprs[te.inputs[0]].op.empty())
            error(te.loc, "a secondary output must refer to exactly one new node");
          break;
        }
        for (const ir::TargetAttr& a : te.attrs) xp.attrs.push_back(planTargetAttr(a, te));
        break;
    }
  }

  TargetAttrPlan planTargetAttr(const ir::TargetAttr& a, const ir::TargetExpr& te) {
    TargetAttrPlan ap;
    const ir::SourceLoc& at = a.loc.known() ? a.loc : te.loc;
    ap.loc = loc(at);
    switch (a.kind) {
      case ir::TargetAttr::Kind::kLiteral:
        if (!wellFormed(a.literal)) error(at, "attribute " + a.name + " has a malformed literal");
        break;
      case ir::TargetAttr::Kind::kCaptured: {
        auto it = captures_.find(a.ref);
        if (it == captures_.end())
          error(at, "attr(" + a.ref + ") names no attribute capture of the match");
        ap.slot = it->second;
        break;
      }
      case ir::TargetAttr::Kind::kValueOf:
        ap.slot = boundSlot(a.ref, at, "value() reads");
        break;
      case ir::TargetAttr::Kind::kHelper:
        for (const std::string& arg : a.args) ap.args.push_back(boundSlot(arg, at, "helper reads"));
        break;
      case ir::TargetAttr::Kind::kParam:
        error(at, "attribute parameter " + a.ref + " outside a fragment");
    }
    return ap;
  }

  /// A tensor literal is int64 or float unless a type is given; a list without dims is 1-D.
  void planTensorLiteral(const ir::TargetExpr& te, TargetExprPlan& xp) {
    const ir::Literal& lit = te.literal;
    if (!wellFormed(lit) || !isNumeric(lit))
      error(te.loc, "a tensor literal must be a number or a list of numbers");
    if (!te.like.empty()) {
      // Typed when the rule applies, as the value in this slot.
      xp.slot = boundSlot(te.like, te.loc, "tensor(like(...)) reads");
      xp.elem_type = 0;
    } else {
      xp.elem_type = te.elem_type.empty() ? (isIntLiteral(lit) ? 7 : 1) : elemTypeOf(te.elem_type);
      if (xp.elem_type == 0) error(te.loc, "unknown element type '" + te.elem_type + "'");
    }
    const size_t values = isIntLiteral(lit) ? lit.ints.size() : lit.floats.size();
    xp.dims = te.dims;
    int64_t count = 1;
    for (int64_t d : xp.dims) {
      if (d < 0) error(te.loc, "a tensor literal has a negative dim");
      count *= d;
    }
    if (xp.dims.empty() && lit.isList()) {
      xp.dims.push_back(static_cast<int64_t>(values));
      count = static_cast<int64_t>(values);
    }
    if (count != static_cast<int64_t>(values))
      error(te.loc, "a tensor literal has " + std::to_string(values) + " values for " +
                        std::to_string(count) + " elements");
  }

  /// Orders the exprs the replacements reach (inputs first), works out which outputs of
  /// each new node are used, and adds the ops it creates to the rule's.
  void orderTarget(const ir::Target& t, TargetPlan& tp) {
    enum State : uint8_t { kUnseen, kOpen, kDone };
    std::vector<State> state(t.exprs.size(), kUnseen);
    std::vector<std::set<uint32_t>> used(t.exprs.size());
    // `as_value`: the expr is read as a value (not as the node a secondary output names).
    auto visit = [&](auto&& self, uint32_t i, bool as_value) -> void {
      const ir::TargetExpr& te = t.exprs[i];
      const bool secondary = te.kind == ir::TargetExpr::Kind::kOp && te.op.empty();
      if (as_value && te.kind == ir::TargetExpr::Kind::kOp)
        used[secondary ? te.inputs[0] : i].insert(te.output);
      if (state[i] == kDone) return;
      if (state[i] == kOpen) error(te.loc, "the rewrite is cyclic");
      state[i] = kOpen;
      for (uint32_t in : te.inputs) self(self, in, !secondary);
      state[i] = kDone;
      tp.order.push_back(i);
    };
    for (const ReplacementPlan& r : tp.replacements) visit(visit, r.expr, true);
    for (uint32_t i = 0; i < t.exprs.size(); ++i) {
      const ir::TargetExpr& te = t.exprs[i];
      if (state[i] != kDone || te.kind != ir::TargetExpr::Kind::kOp || te.op.empty()) continue;
      TargetExprPlan& xp = tp.exprs[i];
      // Outputs the op requires are named even when nothing of the rewrite reads them.
      for (uint32_t o = 1; o < t.exprs[i].required_outputs; ++o) used[i].insert(o);
      xp.num_outputs = used[i].empty() ? 1 : *used[i].rbegin() + 1;
      for (uint32_t o = 0; o < xp.num_outputs; ++o)
        if (!used[i].count(o)) xp.omitted.push_back(o);
      const OpName op{te.domain, te.op};
      if (std::none_of(plan_.creates.begin(), plan_.creates.end(),
                       [&](const OpName& c) { return sameOp(c, op); }))
        plan_.creates.push_back(op);
    }
  }

  /// The variant's `when` as the shared checks test it.
  void spec_variant(const ir::Target& t) {
    gen::VariantSpec& v = plan_.spec.variants.emplace_back();
    if (!t.when) return;
    v.has_when = true;
    v.domain = t.when->domain;
    v.min_opset = t.when->min_opset;
    v.max_opset = t.when->max_opset;
    const auto& exprs = rule_.pattern.exprs;
    for (const std::string& tag : t.when->tags) {
      std::vector<std::pair<ExprId, uint32_t>>& carriers = v.tags.emplace_back();
      for (ExprId id = 0; id < exprs.size(); ++id)
        for (uint32_t i = 0; i < exprs[id].tags.size(); ++i)
          if (exprs[id].kind == ir::Expr::Kind::kAlternatives && exprs[id].tags[i] == tag)
            carriers.emplace_back(id, i);
    }
  }

  const ir::Rule& rule_;
  RulePlan plan_;
  std::map<std::string, uint32_t> slots_;
  std::vector<std::string> slot_names_;
  std::map<std::string, uint32_t> captures_;
  std::vector<std::string> symbols_;
};

}  // namespace

RulePlan planRule(const ir::Rule& rule) { return PlanBuilder(rule).build(); }

gen::Literal specLiteral(const ir::Literal& l) {
  gen::Literal out;
  out.kind = static_cast<gen::Literal::Kind>(l.kind);
  out.ints = l.ints;
  out.floats = l.floats;
  out.strings = l.strings;
  return out;
}

std::string locOf(const ir::Rule& rule, const ir::SourceLoc& loc) {
  return (loc.known() || !loc.file.empty() ? loc : rule.loc).trace();
}

bool isOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool sameOp(const OpName& a, const OpName& b) {
  const bool onnx = isOnnxDomain(a.domain);
  return a.op == b.op && onnx == isOnnxDomain(b.domain) && (onnx || a.domain == b.domain);
}

int32_t elemTypeOf(const std::string& name) {
  // ONNX's TensorProto::DataType numbering (onnx.proto), under ONNX's lowercase names.
  static const std::map<std::string, int32_t> kTypes = {
      {"float", 1},         {"uint8", 2},           {"int8", 3},        {"uint16", 4},
      {"int16", 5},         {"int32", 6},           {"int64", 7},       {"string", 8},
      {"bool", 9},          {"float16", 10},        {"double", 11},     {"uint32", 12},
      {"uint64", 13},       {"complex64", 14},      {"complex128", 15}, {"bfloat16", 16},
      {"float8e4m3fn", 17}, {"float8e4m3fnuz", 18}, {"float8e5m2", 19}, {"float8e5m2fnuz", 20}};
  auto it = kTypes.find(name);
  return it == kTypes.end() ? 0 : it->second;
}

}  // namespace onnx_rewrite::plan
