//===- RuleInterpreter.cc - running Rule IR without compiling it ----------===//
//
// Matching runs over the rule's Plan (RulePlan.h) with a per-pattern Scratch
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
// too, over the Plan's gen::RuleSpec.
//
//===----------------------------------------------------------------------===//
#include "runtime/interp/RuleInterpreter.h"

#include <stdexcept>

#include "runtime/driver/Rewriter.h"
#include "runtime/interp/RulePlan.h"
#include "runtime/match/GeneratedSupport.h"

namespace onnx_rewrite {
namespace {

using namespace interp;

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
  Matcher(const Plan& plan, Scratch& s, Rewriter& rw)
      : gen::Matcher(plan.spec, s, rw), plan_(plan), is_(s) {}

  /// Searches for a match whose root expr is `root_value`.
  bool run(ValueId root_value) {
    reset();
    is_.goals.clear();
    if (root_value == kNoId) return rootOmitted();
    is_.goals.push_back({plan_.rule->pattern.root, root_value});
    return solve();
  }

  /// After run() succeeded: computes target values, runs the escape check and rewrites.
  bool rewrite() {
    const TargetPlan& t = plan_.targets[chosen()];
    const std::string& rule = ruleName();
    const size_t n = t.exprs.size();
    is_.tvalues.assign(n, kNoId);
    is_.tnodes.assign(n, kNoId);
    if (is_.tattrs.size() < n) is_.tattrs.resize(n);
    if (is_.ttensors.size() < n) is_.ttensors.resize(n);

    // 1. Everything that can still fail, before the graph changes.
    for (uint32_t i : t.order) {
      const TargetExprPlan& xp = t.exprs[i];
      const ir::TargetExpr& te = *xp.expr;
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          if (!requireBound(xp.slot, xp.loc.c_str(), te.name.c_str())) return false;
          break;
        case ir::TargetExpr::Kind::kNone:
        case ir::TargetExpr::Kind::kRest:
          break;
        case ir::TargetExpr::Kind::kTensor:
          if (xp.helper) {
            std::optional<onnx::TensorProto> made =
                helperTensorArgs(xp.helper, list(xp.args), list(xp.arg_names), xp.loc.c_str());
            if (!made) return false;
            is_.ttensors[i] = std::move(*made);
          } else {
            is_.ttensors[i] = xp.tensor;
          }
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) break;
          std::vector<onnx::AttributeProto>& attrs = is_.tattrs[i];
          attrs.clear();
          for (const TargetAttrPlan& ap : xp.attrs) {
            std::optional<onnx::AttributeProto> a = targetAttribute(ap);
            if (!a) return false;
            attrs.push_back(std::move(*a));
          }
          break;
        }
      }
    }
    collectMatched();
    const std::string target_loc = locOf(*plan_.rule, t.target->loc);
    for (const auto& [slot, index] : t.replacements) {
      const ir::TargetExpr& te = t.target->exprs[index];
      const To to = te.kind == ir::TargetExpr::Kind::kRef      ? To::kRef
                    : te.kind == ir::TargetExpr::Kind::kTensor ? To::kTensor
                                                               : To::kOp;
      const std::string expr_loc = locOf(*plan_.rule, te.loc.known() ? te.loc : t.target->loc);
      if (!replaceable(slot, to, t.exprs[index].slot, target_loc.c_str(), expr_loc.c_str()))
        return false;
    }

    // 2. The escape check.
    if (!rw_.checkReplaceable(s_.matched, s_.provided)) return false;

    // 3. Build.
    for (uint32_t i : t.order) {
      const TargetExprPlan& xp = t.exprs[i];
      const ir::TargetExpr& te = *xp.expr;
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
          spec.op = xp.op;
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
      is_.replacements.emplace_back(s_.provided[k], is_.tvalues[t.replacements[k].second]);
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
    const ir::Expr& e = *plan_.exprs[id].expr;
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
    const ExprPlan& p = plan_.exprs[id];
    const ir::Expr& e = *p.expr;
    const NodeId n = node(id, v, p.op);
    if (n == kNoId || !attrs(id, n, v)) return false;
    const Node& nd = g_.node(n);
    const size_t want = e.inputs.size();
    if (want == 0) return solve();
    const size_t goals_mark = is_.goals.size();
    const uint32_t trail_mark = mark();
    for (size_t i = want; i-- > 0;) is_.goals.push_back({e.inputs[i], nd.input(i)});
    if (solve()) return true;
    if (!p.commutative || nd.input(0) == nd.input(1)) return false;
    is_.goals.resize(goals_mark);
    undo(trail_mark);
    is_.goals.push_back({e.inputs[1], nd.input(0)});
    is_.goals.push_back({e.inputs[0], nd.input(1)});
    return solve();
  }

  // ---- Target attributes ----------------------------------------------------------------

  std::optional<onnx::AttributeProto> targetAttribute(const TargetAttrPlan& ap) {
    const ir::TargetAttr& a = *ap.attr;
    const char* loc = ap.loc.c_str();
    switch (a.kind) {
      case ir::TargetAttr::Kind::kLiteral:
        return ap.literal;
      case ir::TargetAttr::Kind::kCaptured:
        return captured(ap.slot, a.name.c_str(), a.ref.c_str(), loc, loc);
      case ir::TargetAttr::Kind::kValueOf:
        return valueOf(ap.slot, a.name.c_str(), a.ref.c_str(), loc, loc);
      case ir::TargetAttr::Kind::kHelper:
        return attrHelperArgs(ap.helper, list(ap.args), list(ap.arg_names), a.name.c_str(), loc,
                              loc);
      case ir::TargetAttr::Kind::kParam:  // expanded before plans are built
        break;
    }
    return std::nullopt;
  }

  const Plan& plan_;
  Scratch& is_;
};

// ---- The pattern -------------------------------------------------------------------------

class InterpretedRule : public RewritePattern {
 public:
  InterpretedRule(RuleInfo info, std::shared_ptr<const Plan> plan, uint32_t root_output)
      : RewritePattern(std::move(info)), plan_(std::move(plan)), root_output_(root_output) {}

  bool appliesTo(const Graph& graph) const override {
    for (const ir::Applicability& a : plan_->rule->requires) {
      const int64_t version = graph.opsetVersion(a.domain);
      if (version < 0 || (a.min_opset >= 0 && version < a.min_opset) ||
          (a.max_opset >= 0 && version > a.max_opset))
        return false;
    }
    return true;
  }

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Matcher matcher(*plan_, scratch_, rw);
    if (!matcher.run(rw.graph().node(root).output(root_output_)))
      return rw.notifyMatchFailure([&] { return matcher.describe(); });
    return matcher.rewrite();
  }

 private:
  std::shared_ptr<const Plan> plan_;
  uint32_t root_output_;
  mutable Scratch scratch_;  // one attempt at a time: patterns are used by one thread
};

}  // namespace

std::vector<std::unique_ptr<RewritePattern>> makeInterpretedRules(
    std::shared_ptr<const ir::Rule> rule) {
  if (!rule) throw std::invalid_argument("makeInterpretedRules: no rule");
  auto plan = std::make_shared<const Plan>(buildPlan(rule));
  std::vector<std::unique_ptr<RewritePattern>> patterns;
  for (const auto& [op, output] : plan->roots) {
    RuleInfo info;
    info.name = plan->roots.size() == 1 ? rule->name : rule->name + "/" + op.str();
    info.root = op;
    info.priority = rule->priority;
    info.tags = rule->tags;
    info.source = rule->loc.str();
    info.creates = plan->creates;
    patterns.push_back(std::make_unique<InterpretedRule>(std::move(info), plan, output));
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
