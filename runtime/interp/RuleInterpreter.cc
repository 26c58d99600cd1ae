//===- RuleInterpreter.cc - running Rule IR without compiling it ----------===//
//
// Matching runs over the rule's plan (compiler/plan/RulePlan.h, the one rulec
// prints as C++), bound to the program (BoundRule.h), with a per-pattern Scratch
// whose buffers are reused from one attempt to the next, so a failed attempt
// allocates nothing once the buffers have grown.
//
// The search keeps an explicit stack of goals (expr, value) and a trail of the
// bindings it made; solve() pops a goal, tries each choice for it, recurses on
// the rest, and on failure restores both. The state at the first success is
// the match.
//
// Failure reasons, built only when a listener asks (L is the location of the
// piece, falling back to its expr's and then the rule's; Op is "Name" or
// "domain.Name"; 'v' a value name):
//
//   L: Op: 'v' is a graph input, not an output of Op
//   L: Op: 'v' is an initializer, not an output of Op
//   L: Op: 'v' is defined in an enclosing graph, not an output of Op
//   L: Op: 'v' has no producer, not an output of Op
//   L: Op: 'v' is computed by Other, not Op
//   L: Op: 'v' is output K of Op, expected output J
//   L: Op: input I is omitted
//   L: Op: has N inputs, the pattern expects M
//   L: Op: attribute A is X, expected Y           Y: a literal, "one of [..]", "in [lo, hi]"
//   L: Op: attribute A is X (default), expected Y      (absent, schema default X)
//   L: Op: A (input K) is X, expected Y                 (the opset form with an input)
//        ... + " (rank R)" / " (rank unknown)" for axes/axis
//   L: Op: attribute A is absent and has no default
//   L: Op: A (input K) is not a constant | is not a small integer constant
//   L: Op: output K (bound to name) is omitted
//   L: constant C: 'v' is not a constant | has N elements, expected M | is X, expected C
//                   | cannot be read
//   L: name: is 'v' here but 'w' earlier             (a name or shared expr, two values)
//   L: Op: attribute A differs from the one captured as c earlier
//   L: subject: <constraint detail>                   (see checkConstraint)
//   L: pred(a, b): does not hold (its doc line)       (native predicate)
//   L: rule: no rewrite variant applies
//   L: name: not bound by this match, but the rewrite reads it
//   L: attr=value(c): 'v' is not a one-element numeric constant
//   L: attr=attr(c): the captured attribute cannot be read
//   L: attr=helper(h): gave no value
//   L: tensor helper h: gave no value
//   L: name: cannot replace 'v' by 'w': both names must be kept
//   L: name: 'v' is not computed by the match, so it cannot be replaced
//
// The escape check's reason is the Rewriter's own (findEscapingValue).
//
// The search (the goal stack) is the interpreter's own; every check it makes,
// the search state it keeps and every reason above come from gen::Matcher
// (runtime/match/GeneratedSupport.h), which rulec's generated matchers call
// too, over the plan's gen::RuleSpec.
//
//===----------------------------------------------------------------------===//
#include "runtime/interp/RuleInterpreter.h"

#include <stdexcept>

#include "runtime/driver/Rewriter.h"
#include "runtime/interp/BoundRule.h"
#include "runtime/match/GeneratedSupport.h"

namespace onnx_rewrite {
namespace {

using interp::BoundAttr;
using interp::BoundRule;
using interp::BoundTargetExpr;
using ir::ExprId;
using ir::kNoExpr;

struct Goal {
  ExprId expr = kNoExpr;
  ValueId value = kNoId;
};

/// Buffers reused by every attempt of one pattern: the shared search state, the goal
/// stack and the target's buffers.
struct Scratch : gen::Scratch {
  std::vector<Goal> goals;
  std::vector<ValueId> tvalues;
  std::vector<NodeId> tnodes;
  std::vector<std::vector<onnx::AttributeProto>> tattrs;
  std::vector<onnx::TensorProto> ttensors;
  std::vector<std::pair<ValueId, ValueId>> replacements;
};

template <typename T>
gen::ListRef<T> list(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

class Matcher : public gen::Matcher {
 public:
  Matcher(const BoundRule& rule, Scratch& s, Rewriter& rw)
      : gen::Matcher(rule.plan.spec, s, rw), rule_(rule), is_(s) {}

  /// Searches for a match whose root expr is `root_value`.
  bool run(ValueId root_value) {
    reset();
    is_.goals.clear();
    if (root_value == kNoId) return rootOmitted();
    is_.goals.push_back({rule_.rule->pattern.root, root_value});
    return solve();
  }

  /// After run() succeeded: computes target values, runs the escape check and rewrites.
  bool rewrite() {
    const plan::TargetPlan& t = rule_.plan.targets[chosen()];
    const std::vector<BoundTargetExpr>& bound = rule_.targets[chosen()];
    const std::string& rule = ruleName();
    const size_t n = t.exprs.size();
    is_.tvalues.assign(n, kNoId);
    is_.tnodes.assign(n, kNoId);
    if (is_.tattrs.size() < n) is_.tattrs.resize(n);
    if (is_.ttensors.size() < n) is_.ttensors.resize(n);

    // 1. Everything that can still fail, before the graph changes.
    for (uint32_t i : t.order) {
      const plan::TargetExprPlan& xp = t.exprs[i];
      const BoundTargetExpr& bx = bound[i];
      const ir::TargetExpr& te = t.target->exprs[i];
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          if (!requireBound(xp.slot, xp.loc.c_str(), te.name.c_str())) return false;
          break;
        case ir::TargetExpr::Kind::kNone:
        case ir::TargetExpr::Kind::kRest:
          break;
        case ir::TargetExpr::Kind::kTensor:
          if (bx.helper) {
            std::optional<onnx::TensorProto> made =
                helperTensorArgs(bx.helper, list(xp.args), list(bx.arg_names), xp.loc.c_str());
            if (!made) return false;
            is_.ttensors[i] = std::move(*made);
          } else if (!te.like.empty()) {
            std::optional<onnx::TensorProto> made =
                likeTensor(bx.like_values, xp.slot, xp.dims, xp.loc.c_str(), te.like.c_str());
            if (!made) return false;
            is_.ttensors[i] = std::move(*made);
          } else {
            is_.ttensors[i] = bx.tensor;
          }
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) break;
          std::vector<onnx::AttributeProto>& attrs = is_.tattrs[i];
          attrs.clear();
          for (size_t k = 0; k < te.attrs.size(); ++k) {
            std::optional<onnx::AttributeProto> a =
                targetAttribute(te.attrs[k], xp.attrs[k], bx.attrs[k]);
            if (!a) return false;
            attrs.push_back(std::move(*a));
          }
          break;
        }
      }
    }
    collectMatched();
    for (const plan::ReplacementPlan& r : t.replacements) {
      const ir::TargetExpr::Kind kind = t.target->exprs[r.expr].kind;
      const To to = kind == ir::TargetExpr::Kind::kRef      ? To::kRef
                    : kind == ir::TargetExpr::Kind::kTensor ? To::kTensor
                                                            : To::kOp;
      if (!replaceable(r.slot, to, t.exprs[r.expr].slot, t.loc.c_str(), r.expr_loc.c_str()))
        return false;
    }

    // 2. The escape check.
    if (!rw_.checkReplaceable(s_.matched, s_.provided)) return false;

    // 3. Build.
    for (uint32_t i : t.order) {
      const plan::TargetExprPlan& xp = t.exprs[i];
      const ir::TargetExpr& te = t.target->exprs[i];
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          is_.tvalues[i] = s_.slots[xp.slot];
          break;
        case ir::TargetExpr::Kind::kNone:
        case ir::TargetExpr::Kind::kRest:
          break;
        case ir::TargetExpr::Kind::kTensor:
          is_.tvalues[i] = rw_.addInitializer(std::move(is_.ttensors[i]), rule);
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) {
            is_.tvalues[i] = g_.node(is_.tnodes[te.inputs[0]]).output(te.output);
            break;
          }
          NodeSpec spec;
          spec.op = bound[i].op;
          spec.inputs.reserve(te.inputs.size());
          for (uint32_t in : te.inputs) {
            if (t.exprs[in].rest == kNoExpr) {
              spec.inputs.push_back(is_.tvalues[in]);
              continue;
            }
            const gen::ListRef<ValueId> spliced = rest(t.exprs[in].rest);
            spec.inputs.insert(spec.inputs.end(), spliced.begin(), spliced.end());
          }
          spec.num_outputs = xp.num_outputs;
          spec.omitted_outputs = xp.omitted;
          spec.attributes = std::move(is_.tattrs[i]);
          spec.created_by = rule;
          const NodeId node = rw_.createNode(std::move(spec));
          is_.tnodes[i] = node;
          is_.tvalues[i] = g_.node(node).output(te.output);
          break;
        }
      }
    }
    is_.replacements.clear();
    for (size_t k = 0; k < t.replacements.size(); ++k)
      is_.replacements.emplace_back(s_.provided[k], is_.tvalues[t.replacements[k].expr]);
    return rw_.replaceMatch(s_.matched, is_.replacements);
  }

 private:
  // ---- The search -----------------------------------------------------------------------

  bool solve() {
    if (is_.goals.empty()) return accept();
    const Goal goal = is_.goals.back();
    is_.goals.pop_back();
    const size_t goals_mark = is_.goals.size();
    const uint32_t trail_mark = mark();
    if (matchGoal(goal)) return true;
    is_.goals.resize(goals_mark);
    undo(trail_mark);
    is_.goals.push_back(goal);
    return false;
  }

  bool matchGoal(Goal goal) {
    const ExprId id = goal.expr;
    const ValueId v = goal.value;
    const ir::Expr& e = rule_.rule->pattern.exprs[id];
    if (e.kind == ir::Expr::Kind::kNone) return none(id, v) && solve();
    if (seen(id)) return same(id, v) && solve();
    if (!bind(id, v)) return false;
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        return solve();
      case ir::Expr::Kind::kConstant:
        return constant(id, v) && solve();
      case ir::Expr::Kind::kNone:
        return false;  // handled above
      case ir::Expr::Kind::kAlternatives: {
        const size_t goals_mark = is_.goals.size();
        const uint32_t trail_mark = mark();
        for (uint32_t i = 0; i < e.inputs.size(); ++i) {
          if (!choose(id, i)) continue;
          is_.goals.push_back({e.inputs[i], v});
          if (solve()) return true;
          is_.goals.resize(goals_mark);
          undo(trail_mark);
        }
        return false;
      }
      case ir::Expr::Kind::kOp: {
        if (!e.optional) return matchNode(id, v);
        const size_t goals_mark = is_.goals.size();
        const uint32_t trail_mark = mark();
        if (matchNode(id, v)) return true;
        is_.goals.resize(goals_mark);
        undo(trail_mark);
        is_.goals.push_back({e.inputs[0], v});  // absent: stands for its first input
        return solve();
      }
    }
    return false;
  }

  bool matchNode(ExprId id, ValueId v) {
    const ir::Expr& e = rule_.rule->pattern.exprs[id];
    const NodeId n = node(id, v, rule_.ops[id]);
    if (n == kNoId || !attrs(id, n, v)) return false;
    const Node& nd = g_.node(n);
    const size_t want = e.inputs.size();
    if (want == 0) return solve();
    const size_t goals_mark = is_.goals.size();
    const uint32_t trail_mark = mark();
    for (size_t i = want; i-- > 0;) is_.goals.push_back({e.inputs[i], nd.input(i)});
    if (solve()) return true;
    if (!rule_.plan.commutative[id] || nd.input(0) == nd.input(1)) return false;
    is_.goals.resize(goals_mark);
    undo(trail_mark);
    is_.goals.push_back({e.inputs[1], nd.input(0)});
    is_.goals.push_back({e.inputs[0], nd.input(1)});
    return solve();
  }

  // ---- Target attributes ----------------------------------------------------------------

  std::optional<onnx::AttributeProto> targetAttribute(const ir::TargetAttr& a,
                                                      const plan::TargetAttrPlan& ap,
                                                      const BoundAttr& ba) {
    const char* loc = ap.loc.c_str();
    switch (a.kind) {
      case ir::TargetAttr::Kind::kLiteral:
        return ba.literal;
      case ir::TargetAttr::Kind::kCaptured:
        return captured(ap.slot, a.name.c_str(), a.ref.c_str(), loc, loc);
      case ir::TargetAttr::Kind::kValueOf:
        return valueOf(ap.slot, a.name.c_str(), a.ref.c_str(), loc, loc);
      case ir::TargetAttr::Kind::kHelper:
        return attrHelperArgs(ba.helper, list(ap.args), list(ba.arg_names), a.name.c_str(), loc,
                              loc);
      case ir::TargetAttr::Kind::kParam:  // expanded before plans are built
        break;
    }
    return std::nullopt;
  }

  const BoundRule& rule_;
  Scratch& is_;
};

// ---- The pattern -------------------------------------------------------------------------

class InterpretedRule : public RewritePattern {
 public:
  InterpretedRule(RuleInfo info, std::shared_ptr<const BoundRule> rule, uint32_t root_output)
      : RewritePattern(std::move(info)), rule_(std::move(rule)), root_output_(root_output) {}

  bool appliesTo(const Graph& graph) const override {
    for (const ir::Applicability& a : rule_->rule->requires) {
      const int64_t version = graph.opsetVersion(a.domain);
      if (version < 0 || (a.min_opset >= 0 && version < a.min_opset) ||
          (a.max_opset >= 0 && version > a.max_opset))
        return false;
    }
    return true;
  }

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Matcher matcher(*rule_, scratch_, rw);
    if (!matcher.run(rw.graph().node(root).output(root_output_)))
      return rw.notifyMatchFailure([&] { return matcher.describe(); });
    return matcher.rewrite();
  }

 private:
  std::shared_ptr<const BoundRule> rule_;
  uint32_t root_output_;
  mutable Scratch scratch_;  // one attempt at a time: patterns are used by one thread
};

}  // namespace

std::vector<std::unique_ptr<RewritePattern>> makeInterpretedRules(
    std::shared_ptr<const ir::Rule> rule) {
  if (!rule) throw std::invalid_argument("makeInterpretedRules: no rule");
  auto bound = std::make_shared<const BoundRule>(interp::bindRule(rule));
  std::vector<std::unique_ptr<RewritePattern>> patterns;
  for (const auto& [op, output] : bound->roots) {
    RuleInfo info;
    info.name = bound->roots.size() == 1 ? rule->name : rule->name + "/" + op.str();
    info.root = op;
    info.priority = rule->priority;
    info.tags = rule->tags;
    info.source = rule->loc.str();
    info.creates = bound->creates;
    patterns.push_back(std::make_unique<InterpretedRule>(std::move(info), bound, output));
  }
  return patterns;
}

std::unique_ptr<RewritePattern> makeInterpretedRule(std::shared_ptr<const ir::Rule> rule) {
  auto patterns = makeInterpretedRules(rule);
  if (patterns.size() != 1)
    throw std::invalid_argument(rule->loc.str() + ": " + rule->name + ": the root has " +
                                std::to_string(patterns.size()) +
                                " ops; use makeInterpretedRules for one pattern per op");
  return std::move(patterns[0]);
}

std::vector<std::unique_ptr<RewritePattern>> makeInterpretedRules(const ir::RuleFile& file) {
  std::vector<std::unique_ptr<RewritePattern>> patterns;
  for (const ir::Rule& rule : file.rules) {
    auto made = makeInterpretedRules(std::make_shared<const ir::Rule>(rule));
    for (auto& p : made) patterns.push_back(std::move(p));
  }
  return patterns;
}

RuleSet interpretRules(const ir::RuleFile& file) {
  RuleSet set;
  for (auto& p : makeInterpretedRules(file)) set.add(std::move(p));
  return set;
}

}  // namespace onnx_rewrite
