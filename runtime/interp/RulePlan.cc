//===- RulePlan.cc - a rule compiled for the interpreter ------------------===//
#include "runtime/interp/RulePlan.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace onnx_rewrite::interp {
namespace {

/// The numbers of a numeric literal, as doubles.
std::vector<double> literalNumbers(const ir::Literal& lit) {
  if (isIntLiteral(lit)) return std::vector<double>(lit.ints.begin(), lit.ints.end());
  return lit.floats;
}

/// Parses an element type name ("float", "int64", "bfloat16": ONNX's names, lowercase).
int32_t parseElemType(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  onnx::TensorProto_DataType t;
  if (name.empty() || name != lowercase(name) || !onnx::TensorProto_DataType_Parse(upper, &t) ||
      t == onnx::TensorProto::UNDEFINED)
    return 0;
  return t;
}

/// Compiles an ir::Rule into a Plan, validating what the interpreter relies on.
class PlanBuilder {
 public:
  explicit PlanBuilder(std::shared_ptr<const ir::Rule> rule) { plan_.rule = std::move(rule); }

  Plan build() {
    const ir::Rule& r = *plan_.rule;
    const ir::Pattern& p = r.pattern;
    if (p.root >= p.exprs.size()) error(r.loc, "the pattern has no root");
    buildExprs();
    collectRoots(p.root);
    for (const ir::Constraint& c : p.constraints) plan_.constraints.push_back(buildConstraint(c));
    if (r.targets.empty()) error(r.loc, "the rule has no rewrite");
    for (const ir::Target& t : r.targets) plan_.targets.push_back(buildTarget(t));
    buildSpec();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void error(const ir::SourceLoc& loc, const std::string& what) const {
    const ir::SourceLoc& at = loc.known() || !loc.file.empty() ? loc : plan_.rule->loc;
    throw std::invalid_argument(at.str() + ": " + plan_.rule->name + ": " + what);
  }

  static bool binds(const std::string& name) { return !name.empty() && name != "_"; }

  uint32_t slotFor(const std::string& name) {
    auto [it, added] = slots_.emplace(name, static_cast<uint32_t>(plan_.slot_names.size()));
    if (added) plan_.slot_names.push_back(name);
    return it->second;
  }

  uint32_t boundSlot(const std::string& name, const ir::SourceLoc& loc, const char* who) const {
    auto it = slots_.find(name);
    if (it == slots_.end())
      error(loc, std::string(who) + " '" + name + "', which the match never binds");
    return it->second;
  }

  void buildExprs() {
    const ir::Pattern& p = plan_.rule->pattern;
    plan_.exprs.resize(p.exprs.size());
    for (ExprId id = 0; id < p.exprs.size(); ++id) {
      const ir::Expr& e = p.exprs[id];
      ExprPlan& ep = plan_.exprs[id];
      ep.expr = &e;
      for (ExprId in : e.inputs)
        if (in >= p.exprs.size())
          error(e.loc, "expr input " + std::to_string(in) + " does not exist");
      if (binds(e.name)) ep.slot = slotFor(e.name);
      switch (e.kind) {
        case ir::Expr::Kind::kCapture:
          ep.label = e.name.empty() ? "_" : e.name;
          break;
        case ir::Expr::Kind::kConstant:
          if (!wellFormed(e.literal) || !isNumeric(e.literal))
            error(e.loc, "constant " + e.literal.str() + " is not a number or list of numbers");
          ep.label = "constant " + e.literal.str();
          break;
        case ir::Expr::Kind::kAlternatives:
          if (e.inputs.empty()) error(e.loc, "alternatives without any alternative");
          if (!e.tags.empty() && e.tags.size() != e.inputs.size())
            error(e.loc, "alternatives have " + std::to_string(e.inputs.size()) + " entries but " +
                             std::to_string(e.tags.size()) + " tags");
          ep.label = e.name.empty() ? "alternatives" : e.name;
          break;
        case ir::Expr::Kind::kNone:
          if (binds(e.name)) error(e.loc, "'none' cannot be bound to a name");
          ep.label = "none";
          break;
        case ir::Expr::Kind::kOp: {
          if (e.op.empty()) error(e.loc, "an op pattern without an op name");
          if (e.optional && e.inputs.empty()) error(e.loc, "optional " + e.op + " has no input");
          ep.op = OpId::get(e.domain, e.op);
          ep.label = opLabel(e.domain, e.op);
          ep.commutative = e.commutative && e.inputs.size() == 2;
          for (const auto& [output, name] : e.other_outputs)
            if (binds(name)) ep.other_outputs.emplace_back(output, slotFor(name));
          for (const ir::AttrMatch& m : e.attrs) {
            AttrPlan ap;
            ap.match = &m;
            ap.axes = m.name == "axes" || m.name == "axis";
            const ir::SourceLoc& loc = m.loc.known() ? m.loc : e.loc;
            for (const ir::Literal& v : m.values)
              if (!wellFormed(v)) error(loc, "attribute " + m.name + " has a malformed literal");
            if (m.default_value && !wellFormed(*m.default_value))
              error(loc, "attribute " + m.name + " has a malformed default");
            if ((m.kind == ir::AttrMatch::Kind::kEquals && m.values.size() != 1) ||
                (m.kind == ir::AttrMatch::Kind::kOneOf && m.values.empty()))
              error(loc, "attribute " + m.name + " needs a value to compare with");
            if (m.kind == ir::AttrMatch::Kind::kCapture && binds(m.capture)) {
              // One slot per name: captured twice (say, in two alternatives), it is one value.
              auto [it, added] =
                  captures_.emplace(m.capture, static_cast<uint32_t>(plan_.capture_names.size()));
              if (added) plan_.capture_names.push_back(m.capture);
              ap.capture = it->second;
            }
            ep.attrs.push_back(ap);
          }
          break;
        }
      }
    }
  }

  void collectRoots(ExprId id) {
    const ir::Expr& e = plan_.rule->pattern.exprs[id];
    if (e.kind == ir::Expr::Kind::kAlternatives) {
      for (ExprId alt : e.inputs) collectRoots(alt);
      return;
    }
    if (e.kind != ir::Expr::Kind::kOp)
      error(e.loc, "the root of a pattern must be an op or alternatives of ops");
    if (e.optional) error(e.loc, "the root of a pattern cannot be optional");
    const OpId op = plan_.exprs[id].op;
    for (const auto& root : plan_.roots)
      if (root.first == op) return;
    plan_.roots.emplace_back(op, e.output);
  }

  ConstraintPlan buildConstraint(const ir::Constraint& c) {
    ConstraintPlan cp;
    cp.c = &c;
    if (!c.guard.empty()) cp.guard = boundSlot(c.guard, c.loc, "a fragment's constraint");
    using K = ir::Constraint::Kind;
    if (c.kind == K::kNative) {
      cp.native = findNativePredicate(c.native);
      if (!cp.native) error(c.loc, "no native predicate named '" + c.native + "'");
      if (!cp.native->accepts(c.args.size()))
        error(c.loc, "native predicate " + c.native + " takes " + std::to_string(cp.native->arity) +
                         " arguments, not " + std::to_string(c.args.size()));
      for (const std::string& a : c.args) cp.args.push_back(boundSlot(a, c.loc, "native reads"));
      return cp;
    }
    if (c.kind == K::kEquivalent) {
      if (c.args.size() != 1) error(c.loc, "equivalent names one other value");
      cp.args.push_back(boundSlot(c.args[0], c.loc, "equivalent names"));
    }
    cp.slot = boundSlot(c.subject, c.loc, "where names");
    switch (c.kind) {
      case K::kConstantEquals:
        if (!wellFormed(c.literal) || !isNumeric(c.literal))
          error(c.loc, "equals needs a number or list of numbers");
        break;
      case K::kElemType:
        for (const std::string& name : c.strings) {
          int32_t t = parseElemType(name);
          if (t == 0) error(c.loc, "unknown element type '" + name + "'");
          cp.elem_types.push_back(t);
        }
        break;
      case K::kShape:
        for (const std::string& d : c.dims) {
          DimPlan dp;
          if (d == "_") {
            dp.kind = DimPlan::Kind::kAny;
          } else if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) ||
                                    (d[0] == '-' && d.size() > 1))) {
            dp.kind = DimPlan::Kind::kStatic;
            try {
              size_t used = 0;
              dp.value = std::stoll(d, &used);
              if (used != d.size()) throw std::invalid_argument(d);
            } catch (const std::exception&) {
              error(c.loc, "bad dim '" + d + "'");
            }
          } else {
            dp.kind = DimPlan::Kind::kSymbol;
            auto it = std::find(plan_.symbols.begin(), plan_.symbols.end(), d);
            dp.symbol = static_cast<uint32_t>(it - plan_.symbols.begin());
            if (it == plan_.symbols.end()) plan_.symbols.push_back(d);
          }
          cp.dims.push_back(dp);
        }
        break;
      default:
        break;
    }
    return cp;
  }

  TargetPlan buildTarget(const ir::Target& t) {
    TargetPlan tp;
    tp.target = &t;
    tp.exprs.resize(t.exprs.size());
    for (uint32_t i = 0; i < t.exprs.size(); ++i) {
      const ir::TargetExpr& te = t.exprs[i];
      TargetExprPlan& xp = tp.exprs[i];
      xp.expr = &te;
      xp.loc = locOf(*plan_.rule, te.loc);
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
          const auto& exprs = plan_.rule->pattern.exprs;
          for (ExprId id = 0; id < exprs.size() && xp.rest == kNoExpr; ++id)
            if (exprs[id].kind == ir::Expr::Kind::kOp && exprs[id].rest == te.name) xp.rest = id;
          if (xp.rest == kNoExpr || te.name == "_")
            error(te.loc, "'" + te.name + "...' splices no rest of the match");
          break;
        }
        case ir::TargetExpr::Kind::kTensor:
          if (!te.helper.empty()) {
            xp.helper = findTensorHelper(te.helper);
            if (!xp.helper) error(te.loc, "no tensor helper named '" + te.helper + "'");
            if (!xp.helper->accepts(te.args.size()))
              error(te.loc, "tensor helper " + te.helper + " takes " +
                                std::to_string(xp.helper->arity) + " arguments, not " +
                                std::to_string(te.args.size()));
            for (const std::string& a : te.args) {
              xp.args.push_back(boundSlot(a, te.loc, "helper reads"));
              xp.arg_names.push_back(a.c_str());
            }
          } else {
            xp.tensor = literalTensor(te);
          }
          break;
        case ir::TargetExpr::Kind::kOp:
          if (te.op.empty()) {
            if (te.inputs.size() != 1 || t.exprs[te.inputs[0]].kind != ir::TargetExpr::Kind::kOp ||
                t.exprs[te.inputs[0]].op.empty())
              error(te.loc, "a secondary output must refer to exactly one new node");
            break;
          }
          xp.op = OpId::get(te.domain, te.op);
          for (const ir::TargetAttr& a : te.attrs) xp.attrs.push_back(buildTargetAttr(a, te));
          break;
      }
    }
    std::set<std::string> replaced;
    for (const auto& [name, index] : t.replacements) {
      if (index >= t.exprs.size()) error(t.loc, "replacement of '" + name + "' has no target expr");
      if (t.exprs[index].kind == ir::TargetExpr::Kind::kNone ||
          t.exprs[index].kind == ir::TargetExpr::Kind::kRest)
        error(
            t.exprs[index].loc,
            "'" + name + "' cannot be replaced by " +
                (t.exprs[index].kind == ir::TargetExpr::Kind::kNone ? "none" : "a rest of inputs"));
      if (!replaced.insert(name).second) error(t.loc, "'" + name + "' is replaced twice");
      tp.replacements.emplace_back(boundSlot(name, t.loc, "the rewrite replaces"), index);
    }
    orderTarget(t, tp);
    if (t.when)
      for (const std::string& tag : t.when->tags) {
        std::vector<std::pair<ExprId, uint32_t>> carriers;
        const auto& exprs = plan_.rule->pattern.exprs;
        for (ExprId id = 0; id < exprs.size(); ++id)
          for (uint32_t i = 0; i < exprs[id].tags.size(); ++i)
            if (exprs[id].kind == ir::Expr::Kind::kAlternatives && exprs[id].tags[i] == tag)
              carriers.emplace_back(id, i);
        tp.tags.push_back(std::move(carriers));
      }
    return tp;
  }

  TargetAttrPlan buildTargetAttr(const ir::TargetAttr& a, const ir::TargetExpr& te) {
    TargetAttrPlan ap;
    ap.attr = &a;
    const ir::SourceLoc& loc = a.loc.known() ? a.loc : te.loc;
    ap.loc = locOf(*plan_.rule, loc);
    switch (a.kind) {
      case ir::TargetAttr::Kind::kLiteral:
        if (!wellFormed(a.literal)) error(loc, "attribute " + a.name + " has a malformed literal");
        ap.literal = literalAttribute(a.literal, a.name);
        break;
      case ir::TargetAttr::Kind::kCaptured: {
        auto it = captures_.find(a.ref);
        if (it == captures_.end())
          error(loc, "attr(" + a.ref + ") names no attribute capture of the match");
        ap.slot = it->second;
        break;
      }
      case ir::TargetAttr::Kind::kValueOf:
        ap.slot = boundSlot(a.ref, loc, "value() reads");
        break;
      case ir::TargetAttr::Kind::kHelper:
        ap.helper = findAttributeHelper(a.ref);
        if (!ap.helper) error(loc, "no attribute helper named '" + a.ref + "'");
        if (!ap.helper->accepts(a.args.size()))
          error(loc, "attribute helper " + a.ref + " takes " + std::to_string(ap.helper->arity) +
                         " arguments, not " + std::to_string(a.args.size()));
        for (const std::string& arg : a.args) {
          ap.args.push_back(boundSlot(arg, loc, "helper reads"));
          ap.arg_names.push_back(arg.c_str());
        }
        break;
      case ir::TargetAttr::Kind::kParam:
        error(loc, "attribute parameter " + a.ref + " outside a fragment");
        break;
    }
    return ap;
  }

  onnx::TensorProto literalTensor(const ir::TargetExpr& te) {
    const ir::Literal& lit = te.literal;
    if (!wellFormed(lit) || !isNumeric(lit))
      error(te.loc, "a tensor literal must be a number or a list of numbers");
    int32_t type = te.elem_type.empty()
                       ? (isIntLiteral(lit) ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT)
                       : parseElemType(te.elem_type);
    if (type == 0) error(te.loc, "unknown element type '" + te.elem_type + "'");
    const size_t values = literalNumbers(lit).size();
    std::vector<int64_t> dims = te.dims;
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0) error(te.loc, "a tensor literal has a negative dim");
      count *= d;
    }
    if (dims.empty() && lit.isList()) {
      dims.push_back(static_cast<int64_t>(values));
      count = static_cast<int64_t>(values);
    }
    if (count != static_cast<int64_t>(values))
      error(te.loc, "a tensor literal has " + std::to_string(values) + " values for " +
                        std::to_string(count) + " elements");
    // One implementation with the generated rules (gen::literalTensor).
    std::optional<onnx::TensorProto> t = gen::literalTensor(genLiteral(lit), type, dims);
    if (!t) error(te.loc, "tensor literals of element type " + te.elem_type + " are not supported");
    return std::move(*t);
  }

  /// Orders the exprs the replacements reach (inputs first) and works out which outputs of
  /// each new node are used.
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
    for (const auto& [slot, index] : tp.replacements) visit(visit, index, true);
    for (uint32_t i = 0; i < t.exprs.size(); ++i) {
      if (state[i] != kDone || t.exprs[i].kind != ir::TargetExpr::Kind::kOp ||
          t.exprs[i].op.empty())
        continue;
      TargetExprPlan& xp = tp.exprs[i];
      for (uint32_t o = 1; o < t.exprs[i].required_outputs; ++o) used[i].insert(o);
      xp.num_outputs = used[i].empty() ? 1 : *used[i].rbegin() + 1;
      for (uint32_t o = 0; o < xp.num_outputs; ++o)
        if (!used[i].count(o)) xp.omitted.push_back(o);
      if (std::find(plan_.creates.begin(), plan_.creates.end(), xp.op) == plan_.creates.end())
        plan_.creates.push_back(xp.op);
    }
  }

  /// The rule as the shared checks see it (what rulec's C++ emitter writes out).
  void buildSpec() {
    const ir::Rule& r = *plan_.rule;
    gen::RuleSpec& spec = plan_.spec;
    spec.name = r.name;
    spec.loc = r.loc.str();
    spec.root = r.pattern.root;
    spec.slot_names = plan_.slot_names;
    spec.num_captures = plan_.capture_names.size();
    spec.num_symbols = plan_.symbols.size();
    for (const ExprPlan& ep : plan_.exprs) {
      const ir::Expr& e = *ep.expr;
      gen::ExprSpec& x = spec.exprs.emplace_back();
      x.label = ep.label;
      x.loc = locOf(r, e.loc);
      x.slot = ep.slot;
      x.output = e.output;
      x.num_inputs = static_cast<uint32_t>(e.inputs.size());
      x.variadic = !e.rest.empty();
      for (uint32_t i = 0; i < e.inputs.size(); ++i)
        if (r.pattern.exprs[e.inputs[i]].kind == ir::Expr::Kind::kNone) x.none_inputs.push_back(i);
      for (const AttrPlan& ap : ep.attrs) {
        const ir::AttrMatch& m = *ap.match;
        gen::AttrSpec& a = x.attrs.emplace_back();
        a.name = m.name;
        a.kind = static_cast<gen::AttrSpec::Kind>(m.kind);
        for (const ir::Literal& v : m.values) a.values.push_back(genLiteral(v));
        a.min = m.min;
        a.max = m.max;
        if (m.default_value) a.default_value = genLiteral(*m.default_value);
        for (const auto& [until, value] : m.older_defaults)
          a.older_defaults.emplace_back(until, genLiteral(value));
        a.axes = ap.axes;
        a.capture = ap.capture;
        a.capture_name = m.capture;
        a.loc = locOf(r, m.loc.known() ? m.loc : e.loc);
      }
      if (e.kind == ir::Expr::Kind::kOp)
        for (const auto& [output, name] : e.other_outputs)
          x.other_outputs.push_back({output, binds(name) ? slots_.at(name) : gen::kNoSlot, name});
      x.literal = genLiteral(e.literal);
      x.tolerance = e.tolerance;
      if (e.kind == ir::Expr::Kind::kAlternatives && e.group != ir::kNoGroup)
        for (ExprId peer = 0; peer < r.pattern.exprs.size(); ++peer)
          if (peer != static_cast<ExprId>(spec.exprs.size() - 1) &&
              r.pattern.exprs[peer].kind == ir::Expr::Kind::kAlternatives &&
              r.pattern.exprs[peer].group == e.group)
            x.peers.push_back(peer);
    }
    for (const ConstraintPlan& cp : plan_.constraints) {
      const ir::Constraint& c = *cp.c;
      gen::ConstraintSpec& x = spec.constraints.emplace_back();
      x.kind = static_cast<gen::ConstraintSpec::Kind>(c.kind);
      x.subject = c.subject;
      x.slot = cp.slot;
      x.min = c.min;
      x.max = c.max;
      x.has_min = c.has_min;
      x.has_max = c.has_max;
      x.literal = genLiteral(c.literal);
      x.tolerance = c.tolerance;
      x.ints = c.ints;
      x.strings = c.strings;
      x.elem_types = cp.elem_types;
      x.dims = c.dims;
      for (const DimPlan& d : cp.dims)
        x.dim_plans.push_back(
            {static_cast<gen::ConstraintSpec::Dim::Kind>(d.kind), d.value, d.symbol});
      x.native = c.native;
      x.args = c.args;
      x.arg_slots = cp.args;
      x.predicate = cp.native;
      x.guard_slot = cp.guard;
      x.loc = locOf(r, c.loc);
    }
    for (const TargetPlan& tp : plan_.targets) {
      gen::VariantSpec& v = spec.variants.emplace_back();
      v.has_when = tp.target->when.has_value();
      if (v.has_when) {
        v.domain = tp.target->when->domain;
        v.min_opset = tp.target->when->min_opset;
        v.max_opset = tp.target->when->max_opset;
      }
      v.tags = tp.tags;
    }
  }

  Plan plan_;
  std::map<std::string, uint32_t> slots_;
  std::map<std::string, uint32_t> captures_;
};

}  // namespace

Plan buildPlan(std::shared_ptr<const ir::Rule> rule) {
  return PlanBuilder(std::move(rule)).build();
}

std::string locOf(const ir::Rule& rule, const ir::SourceLoc& loc) {
  return (loc.known() || !loc.file.empty() ? loc : rule.loc).trace();
}

gen::Literal genLiteral(const ir::Literal& l) {
  gen::Literal out;
  out.kind = static_cast<gen::Literal::Kind>(l.kind);
  out.ints = l.ints;
  out.floats = l.floats;
  out.strings = l.strings;
  return out;
}

onnx::AttributeProto literalAttribute(const ir::Literal& lit, const std::string& name) {
  return gen::literalAttribute(genLiteral(lit), name);
}

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
  return lit.kind == ir::Literal::Kind::kInt || lit.kind == ir::Literal::Kind::kFloat ||
         lit.kind == ir::Literal::Kind::kInts || lit.kind == ir::Literal::Kind::kFloats;
}

bool isIntLiteral(const ir::Literal& lit) {
  return lit.kind == ir::Literal::Kind::kInt || lit.kind == ir::Literal::Kind::kInts;
}

}  // namespace onnx_rewrite::interp
