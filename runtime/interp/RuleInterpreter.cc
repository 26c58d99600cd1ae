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
//   L: pred(a, b): does not hold                      (native predicate)
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
//===----------------------------------------------------------------------===//
#include "runtime/interp/RuleInterpreter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "runtime/driver/Rewriter.h"
#include "runtime/interp/RulePlan.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeHelpers.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

using namespace interp;

// ---- Small formatting helpers ------------------------------------------------------------

std::string formatDouble(double v) {
  ir::Literal l;
  l.kind = ir::Literal::Kind::kFloat;
  l.floats = {v};
  return l.str();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string joinLiterals(const std::vector<ir::Literal>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].str();
  return out + "]";
}

/// Numbers read from a tensor, as the literal they would be written as.
std::string formatNumbers(const std::vector<double>& values, bool as_float, bool list) {
  ir::Literal l;
  if (as_float) {
    l.kind = list ? ir::Literal::Kind::kFloats : ir::Literal::Kind::kFloat;
    l.floats = values;
  } else {
    l.kind = list ? ir::Literal::Kind::kInts : ir::Literal::Kind::kInt;
    for (double v : values) l.ints.push_back(static_cast<int64_t>(v));
  }
  return l.str();
}

std::string elemTypeName(int32_t t) {
  if (!onnx::TensorProto_DataType_IsValid(t)) return "type " + std::to_string(t);
  return lowercase(onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t)));
}

template <typename F>
bool reject(std::string* why, F&& text) {
  if (why) *why = text();
  return false;
}

// ---- Matching ----------------------------------------------------------------------------

struct Goal {
  ExprId expr = kNoExpr;
  ValueId value = kNoId;
};

struct AttrCapture {
  NodeId node = kNoId;
  const ir::AttrMatch* match = nullptr;
};

/// A shape symbol's first sighting: a static dim or a dim_param.
struct Symbol {
  bool bound = false;
  bool is_static = false;
  int64_t value = 0;
  const std::string* param = nullptr;
  ValueId v = kNoId;
  uint32_t dim = 0;
};

enum class TrailKind : uint8_t { kExprValue, kExprNode, kSlot, kAlt, kCapture };
struct TrailEntry {
  TrailKind kind;
  uint32_t index;
};

struct Failure {
  enum class Kind {
    kNone,
    kRootOmitted,
    kNoProducer,
    kWrongOp,
    kWrongOutput,
    kOmittedInput,
    kExtraInput,
    kAttr,
    kOtherOutputOmitted,
    kConstant,
    kNameConflict,
    kExprConflict,
    kCaptureConflict,
    kConstraint,
    kNoVariant,
  };
  Kind kind = Kind::kNone;
  uint32_t progress = 0;
  ExprId expr = kNoExpr;
  ValueId value = kNoId;
  ValueId other = kNoId;
  NodeId node = kNoId;
  uint32_t index = 0;
};

/// Buffers reused by every attempt of one pattern.
struct Scratch {
  std::vector<Goal> goals;
  std::vector<ValueId> expr_value;
  std::vector<NodeId> expr_node;
  std::vector<int32_t> alt;
  std::vector<ValueId> slots;
  std::vector<AttrCapture> captures;
  std::vector<Symbol> symbols;
  std::vector<TrailEntry> trail;
  uint32_t assigned = 0;
  const TargetPlan* chosen = nullptr;
  Failure best;
  std::vector<ValueId> best_slots;
  // Attribute and constant reading.
  std::vector<int64_t> ints_a, ints_b, ints_c;
  std::vector<double> doubles;
  std::vector<ValueId> args;
  // Rewriting.
  std::vector<NodeId> matched;
  std::vector<ValueId> provided;
  std::vector<ValueId> tvalues;
  std::vector<NodeId> tnodes;
  std::vector<std::vector<onnx::AttributeProto>> tattrs;
  std::vector<onnx::TensorProto> ttensors;
  std::vector<std::pair<ValueId, ValueId>> replacements;
};

/// An attribute's value as read from a node, an input or a default, for comparison.
struct Actual {
  enum class Type { kNumber, kNumbers, kString, kStrings, kOther };
  Type type = Type::kOther;
  bool is_float = false;  ///< numbers are in Scratch::doubles (else Scratch::ints_a)
  const std::string* str = nullptr;
  const google::protobuf::RepeatedPtrField<std::string>* attr_strs = nullptr;
  const std::vector<std::string>* lit_strs = nullptr;
  int attr_type = 0;  ///< kOther: the AttributeProto type

  size_t stringCount() const {
    return attr_strs ? static_cast<size_t>(attr_strs->size()) : lit_strs ? lit_strs->size() : 0;
  }
  const std::string& stringAt(size_t i) const {
    return attr_strs ? (*attr_strs)[static_cast<int>(i)] : (*lit_strs)[i];
  }
};

bool closeFloats(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

class Matcher {
 public:
  Matcher(const Plan& plan, Scratch& s, Model& model, Graph& graph)
      : plan_(plan), s_(s), model_(model), g_(graph) {}

  /// Searches for a match whose root expr is `root_value`.
  bool run(ValueId root_value) {
    reset();
    if (root_value == kNoId) return fail(Failure::Kind::kRootOmitted, plan_.rule->pattern.root);
    s_.goals.push_back({plan_.rule->pattern.root, root_value});
    return solve();
  }

  /// Why run() failed (the failure that got furthest).
  std::string describe() {
    const Failure& f = s_.best;
    const ir::Rule& rule = *plan_.rule;
    const ExprPlan* ep = f.expr < plan_.exprs.size() ? &plan_.exprs[f.expr] : nullptr;
    const std::string loc = ep ? locOf(ep->expr->loc) : locOf(rule.loc);
    const std::string label = ep ? ep->label : rule.name;
    auto name = [&](ValueId v) {
      return v == kNoId ? std::string("<none>") : quoted(g_.value(v).name());
    };
    const std::string head = loc + ": " + label + ": ";
    using K = Failure::Kind;
    switch (f.kind) {
      case K::kNone:
        return locOf(rule.loc) + ": " + rule.name + ": no match";
      case K::kRootOmitted:
        return head + "the root node has no output " + std::to_string(ep->expr->output);
      case K::kNoProducer: {
        const Value& v = g_.value(f.value);
        const char* what = v.isOuter()        ? "is defined in an enclosing graph"
                           : v.initializer()  ? "is an initializer"
                           : v.isGraphInput() ? "is a graph input"
                                              : "has no producer";
        return head + name(f.value) + " " + what + ", not an output of " + label;
      }
      case K::kWrongOp: {
        const Node& n = g_.node(f.node);
        return head + name(f.value) + " is computed by " + opLabel(n.domain(), n.opType()) +
               ", not " + label;
      }
      case K::kWrongOutput:
        return head + name(f.value) + " is output " +
               std::to_string(g_.value(f.value).producerOutput()) + " of " + label +
               ", expected output " + std::to_string(ep->expr->output);
      case K::kOmittedInput: {
        const Node& n = g_.node(f.node);
        if (f.index >= n.inputs().size())
          return head + "has " + std::to_string(n.inputs().size()) +
                 " inputs, the pattern expects " + std::to_string(ep->expr->inputs.size());
        return head + "input " + std::to_string(f.index) + " is omitted";
      }
      case K::kExtraInput:
        return head + "has " + std::to_string(g_.node(f.node).inputs().size()) +
               " inputs, the pattern expects " + std::to_string(ep->expr->inputs.size());
      case K::kAttr: {
        const AttrPlan& ap = ep->attrs[f.index];
        std::string why;
        matchAttr(ap, f.node, &why);
        return locOf(ap.match->loc, ep->expr->loc) + ": " + label + ": " + why;
      }
      case K::kOtherOutputOmitted: {
        std::string bound;
        for (const auto& [output, nm] : ep->expr->other_outputs)
          if (output == f.index) bound = nm;
        return head + "output " + std::to_string(f.index) + " (bound to " + bound + ") is omitted";
      }
      case K::kConstant: {
        std::string why;
        constantMatches(ep->expr->literal, ep->expr->tolerance, f.value, &why);
        return loc + ": " + label + ": " + why;
      }
      case K::kNameConflict:
        return loc + ": " + plan_.slot_names[f.index] + ": is " + name(f.value) + " here but " +
               name(f.other) + " earlier";
      case K::kExprConflict:
        return head + "is " + name(f.value) + " here but " + name(f.other) + " earlier";
      case K::kCaptureConflict: {
        const AttrPlan& ap = ep->attrs[f.index];
        return locOf(ap.match->loc, ep->expr->loc) + ": " + label + ": attribute " +
               ap.match->name + " differs from the one captured as " + ap.match->capture +
               " earlier";
      }
      case K::kConstraint: {
        // Replay the constraints up to the failing one with the bindings it saw.
        s_.slots = s_.best_slots;
        resetSymbols();
        for (uint32_t i = 0; i < f.index; ++i) checkConstraint(i, nullptr);
        std::string why;
        checkConstraint(f.index, &why);
        const ir::Constraint& c = *plan_.constraints[f.index].c;
        return locOf(c.loc) + ": " + why;
      }
      case K::kNoVariant:
        return locOf(rule.loc) + ": " + rule.name + ": no rewrite variant applies";
    }
    return head + "no match";
  }

  /// After run() succeeded: computes target values, runs the escape check and rewrites.
  bool rewrite(Rewriter& rw) {
    const TargetPlan& t = *s_.chosen;
    const std::string& rule = plan_.rule->name;
    const MatchContext ctx{model_, g_};
    const size_t n = t.exprs.size();
    s_.tvalues.assign(n, kNoId);
    s_.tnodes.assign(n, kNoId);
    if (s_.tattrs.size() < n) s_.tattrs.resize(n);
    if (s_.ttensors.size() < n) s_.ttensors.resize(n);

    // 1. Everything that can still fail, before the graph changes.
    for (uint32_t i : t.order) {
      const TargetExprPlan& xp = t.exprs[i];
      const ir::TargetExpr& te = *xp.expr;
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          if (s_.slots[xp.slot] == kNoId) return unbound(rw, te.loc, te.name);
          break;
        case ir::TargetExpr::Kind::kNone:
          break;
        case ir::TargetExpr::Kind::kTensor:
          if (xp.helper) {
            if (!gatherArgs(xp.args, te.args, rw, te.loc)) return false;
            std::optional<onnx::TensorProto> made = xp.helper->fn(ctx, ValueArgs(s_.args));
            if (!made)
              return rw.notifyMatchFailure([&] {
                return locOf(te.loc) + ": tensor helper " + te.helper + ": gave no value";
              });
            s_.ttensors[i] = std::move(*made);
          } else {
            s_.ttensors[i] = xp.tensor;
          }
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) break;
          std::vector<onnx::AttributeProto>& attrs = s_.tattrs[i];
          attrs.clear();
          for (const TargetAttrPlan& ap : xp.attrs) {
            std::optional<onnx::AttributeProto> a = targetAttribute(ap, te, rw);
            if (!a) return false;
            attrs.push_back(std::move(*a));
          }
          break;
        }
      }
    }
    s_.matched.clear();
    for (NodeId node : s_.expr_node)
      if (node != kNoId &&
          std::find(s_.matched.begin(), s_.matched.end(), node) == s_.matched.end())
        s_.matched.push_back(node);
    s_.provided.clear();
    for (const auto& replacement : t.replacements) {
      const uint32_t slot = replacement.first;
      const uint32_t index = replacement.second;
      const ValueId from = s_.slots[slot];
      if (from == kNoId) return unbound(rw, t.target->loc, plan_.slot_names[slot]);
      // Only what the match computes may be replaced: replacing an input would also rewire
      // the readers outside the match, and the new nodes themselves.
      const NodeId producer = g_.value(from).producer();
      if (std::find(s_.matched.begin(), s_.matched.end(), producer) == s_.matched.end() ||
          producer == kNoId)
        return rw.notifyMatchFailure([&, from] {
          return locOf(t.target->loc) + ": " + plan_.slot_names[slot] + ": " +
                 quoted(g_.value(from).name()) +
                 " is not computed by the match, so it cannot be replaced";
        });
      s_.provided.push_back(from);
      // A value that keeps its name cannot hand it to an input or initializer.
      const ir::TargetExpr& te = t.target->exprs[index];
      const bool to_constant =
          te.kind == ir::TargetExpr::Kind::kTensor && g_.kind() != Graph::Kind::kFunction;
      const ValueId to =
          te.kind == ir::TargetExpr::Kind::kRef ? s_.slots[t.exprs[index].slot] : kNoId;
      const bool to_pinned =
          to != kNoId && (g_.value(to).isNamePinned() || g_.value(to).isGraphInput() ||
                          g_.value(to).initializer());
      if (g_.value(from).isNamePinned() && (to_constant || to_pinned))
        return rw.notifyMatchFailure([&, from, to] {
          return locOf(te.loc, t.target->loc) + ": " + plan_.slot_names[slot] +
                 ": cannot replace " + quoted(g_.value(from).name()) + " by " +
                 (to == kNoId ? std::string("a new initializer") : quoted(g_.value(to).name())) +
                 ": both names must be kept";
        });
    }

    // 2. The escape check.
    if (!rw.checkReplaceable(s_.matched, s_.provided)) return false;

    // 3. Build.
    for (uint32_t i : t.order) {
      const TargetExprPlan& xp = t.exprs[i];
      const ir::TargetExpr& te = *xp.expr;
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          s_.tvalues[i] = s_.slots[xp.slot];
          break;
        case ir::TargetExpr::Kind::kNone:
          break;
        case ir::TargetExpr::Kind::kTensor:
          s_.tvalues[i] = rw.addInitializer(std::move(s_.ttensors[i]), rule);
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) {
            s_.tvalues[i] = g_.node(s_.tnodes[te.inputs[0]]).output(te.output);
            break;
          }
          NodeSpec spec;
          spec.op = xp.op;
          spec.inputs.reserve(te.inputs.size());
          for (uint32_t in : te.inputs) spec.inputs.push_back(s_.tvalues[in]);
          spec.num_outputs = xp.num_outputs;
          spec.omitted_outputs = xp.omitted;
          spec.attributes = std::move(s_.tattrs[i]);
          spec.created_by = rule;
          const NodeId node = rw.createNode(std::move(spec));
          s_.tnodes[i] = node;
          s_.tvalues[i] = g_.node(node).output(te.output);
          break;
        }
      }
    }
    s_.replacements.clear();
    for (size_t k = 0; k < t.replacements.size(); ++k)
      s_.replacements.emplace_back(s_.provided[k], s_.tvalues[t.replacements[k].second]);
    return rw.replaceMatch(s_.matched, s_.replacements);
  }

 private:
  // ---- Bookkeeping ----------------------------------------------------------------------

  void reset() {
    const size_t n = plan_.exprs.size();
    s_.goals.clear();
    s_.trail.clear();
    s_.expr_value.assign(n, kNoId);
    s_.expr_node.assign(n, kNoId);
    s_.alt.assign(n, -1);
    s_.slots.assign(plan_.slot_names.size(), kNoId);
    s_.captures.assign(plan_.capture_names.size(), AttrCapture{});
    s_.assigned = 0;
    s_.chosen = nullptr;
    s_.best = Failure{};
  }

  void resetSymbols() { s_.symbols.assign(plan_.symbols.size(), Symbol{}); }

  void undo(size_t mark) {
    while (s_.trail.size() > mark) {
      const TrailEntry e = s_.trail.back();
      s_.trail.pop_back();
      switch (e.kind) {
        case TrailKind::kExprValue:
          s_.expr_value[e.index] = kNoId;
          --s_.assigned;
          break;
        case TrailKind::kExprNode:
          s_.expr_node[e.index] = kNoId;
          break;
        case TrailKind::kSlot:
          s_.slots[e.index] = kNoId;
          break;
        case TrailKind::kAlt:
          s_.alt[e.index] = -1;
          break;
        case TrailKind::kCapture:
          s_.captures[e.index] = AttrCapture{};
          break;
      }
    }
  }

  /// Records a failure if it got further than the best so far; returns false.
  bool fail(Failure::Kind kind, ExprId expr, ValueId value = kNoId, ValueId other = kNoId,
            NodeId node = kNoId, uint32_t index = 0, uint32_t progress = UINT32_MAX) {
    const uint32_t p = progress == UINT32_MAX ? s_.assigned : progress;
    if (s_.best.kind == Failure::Kind::kNone || p > s_.best.progress) {
      s_.best = Failure{kind, p, expr, value, other, node, index};
      s_.best_slots = s_.slots;
    }
    return false;
  }

  std::string locOf(const ir::SourceLoc& loc) const {
    return (loc.known() || !loc.file.empty() ? loc : plan_.rule->loc).str();
  }
  std::string locOf(const ir::SourceLoc& loc, const ir::SourceLoc& fallback) const {
    return locOf(loc.known() ? loc : fallback);
  }

  // ---- The search -----------------------------------------------------------------------

  bool solve() {
    if (s_.goals.empty()) return accept();
    const Goal goal = s_.goals.back();
    s_.goals.pop_back();
    const size_t goals_mark = s_.goals.size();
    const size_t trail_mark = s_.trail.size();
    if (matchGoal(goal)) return true;
    s_.goals.resize(goals_mark);
    undo(trail_mark);
    s_.goals.push_back(goal);
    return false;
  }

  bool bindSlot(uint32_t slot, ValueId v, ExprId at) {
    ValueId& bound = s_.slots[slot];
    if (bound == v) return true;
    if (bound != kNoId) return fail(Failure::Kind::kNameConflict, at, v, bound, kNoId, slot);
    bound = v;
    s_.trail.push_back({TrailKind::kSlot, slot});
    return true;
  }

  bool matchGoal(Goal goal) {
    const ExprId id = goal.expr;
    const ValueId v = goal.value;
    const ExprPlan& p = plan_.exprs[id];
    const ir::Expr& e = *p.expr;
    if (s_.expr_value[id] != kNoId) {
      if (s_.expr_value[id] == v) return solve();
      if (p.slot != kNoSlot)
        return fail(Failure::Kind::kNameConflict, id, v, s_.expr_value[id], kNoId, p.slot);
      return fail(Failure::Kind::kExprConflict, id, v, s_.expr_value[id]);
    }
    s_.expr_value[id] = v;
    ++s_.assigned;
    s_.trail.push_back({TrailKind::kExprValue, id});
    if (p.slot != kNoSlot && !bindSlot(p.slot, v, id)) return false;
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        return solve();
      case ir::Expr::Kind::kConstant:
        if (!constantMatches(e.literal, e.tolerance, v, nullptr))
          return fail(Failure::Kind::kConstant, id, v);
        return solve();
      case ir::Expr::Kind::kAlternatives: {
        const size_t goals_mark = s_.goals.size();
        const size_t trail_mark = s_.trail.size();
        for (uint32_t i = 0; i < e.inputs.size(); ++i) {
          s_.alt[id] = static_cast<int32_t>(i);
          s_.trail.push_back({TrailKind::kAlt, id});
          s_.goals.push_back({e.inputs[i], v});
          if (solve()) return true;
          s_.goals.resize(goals_mark);
          undo(trail_mark);
        }
        return false;
      }
      case ir::Expr::Kind::kOp: {
        if (!e.optional) return matchNode(id, v);
        const size_t goals_mark = s_.goals.size();
        const size_t trail_mark = s_.trail.size();
        if (matchNode(id, v)) return true;
        s_.goals.resize(goals_mark);
        undo(trail_mark);
        s_.goals.push_back({e.inputs[0], v});  // absent: stands for its first input
        return solve();
      }
    }
    return false;
  }

  bool matchNode(ExprId id, ValueId v) {
    const ExprPlan& p = plan_.exprs[id];
    const ir::Expr& e = *p.expr;
    const Value& value = g_.value(v);
    const NodeId n = value.producer();
    if (n == kNoId) return fail(Failure::Kind::kNoProducer, id, v);
    const Node& node = g_.node(n);
    if (!node.live() || node.op() != p.op) return fail(Failure::Kind::kWrongOp, id, v, kNoId, n);
    if (value.producerOutput() != e.output)
      return fail(Failure::Kind::kWrongOutput, id, v, kNoId, n);
    const size_t want = e.inputs.size();
    const size_t have = node.inputs().size();
    for (uint32_t i = 0; i < want; ++i)
      if (node.input(i) == kNoId) return fail(Failure::Kind::kOmittedInput, id, v, kNoId, n, i);
    for (uint32_t i = static_cast<uint32_t>(want); i < have; ++i)
      if (node.input(i) != kNoId &&
          !isParamInput(node.domain(), node.opType(), i, g_.opsetVersion(node.domain())))
        return fail(Failure::Kind::kExtraInput, id, v, kNoId, n, i);
    for (uint32_t k = 0; k < p.attrs.size(); ++k) {
      const AttrPlan& ap = p.attrs[k];
      if (!matchAttr(ap, n, nullptr)) return fail(Failure::Kind::kAttr, id, v, kNoId, n, k);
      if (ap.capture != kNoSlot) {
        AttrCapture& c = s_.captures[ap.capture];
        if (c.node != kNoId) {
          // Captured earlier in this match: the two must be one value.
          if (!sameCapture(c, AttrCapture{n, ap.match}))
            return fail(Failure::Kind::kCaptureConflict, id, v, kNoId, n, k);
          continue;
        }
        c = AttrCapture{n, ap.match};
        s_.trail.push_back({TrailKind::kCapture, ap.capture});
      }
    }
    s_.expr_node[id] = n;
    s_.trail.push_back({TrailKind::kExprNode, id});
    for (const auto& [output, slot] : p.other_outputs) {
      const ValueId o = node.output(output);
      if (o == kNoId) return fail(Failure::Kind::kOtherOutputOmitted, id, v, kNoId, n, output);
      if (!bindSlot(slot, o, id)) return false;
    }
    if (want == 0) return solve();
    const size_t goals_mark = s_.goals.size();
    const size_t trail_mark = s_.trail.size();
    for (size_t i = want; i-- > 0;) s_.goals.push_back({e.inputs[i], node.input(i)});
    if (solve()) return true;
    if (!p.commutative || node.input(0) == node.input(1)) return false;
    s_.goals.resize(goals_mark);
    undo(trail_mark);
    s_.goals.push_back({e.inputs[1], node.input(0)});
    s_.goals.push_back({e.inputs[0], node.input(1)});
    return solve();
  }

  /// Every constraint, then a variant: the last steps of a candidate match.
  bool accept() {
    const uint32_t base = static_cast<uint32_t>(plan_.exprs.size()) + 1;
    resetSymbols();
    for (uint32_t i = 0; i < plan_.constraints.size(); ++i)
      if (!checkConstraint(i, nullptr))
        return fail(Failure::Kind::kConstraint, kNoExpr, kNoId, kNoId, kNoId, i, base + i);
    for (const TargetPlan& t : plan_.targets)
      if (whenHolds(t)) {
        s_.chosen = &t;
        return true;
      }
    return fail(Failure::Kind::kNoVariant, kNoExpr, kNoId, kNoId, kNoId, 0,
                base + static_cast<uint32_t>(plan_.constraints.size()));
  }

  bool whenHolds(const TargetPlan& t) const {
    if (!t.target->when) return true;
    const ir::Target::When& w = *t.target->when;
    if (w.min_opset >= 0 || w.max_opset >= 0) {
      const int64_t version = g_.opsetVersion(w.domain);
      if (version < 0 || (w.min_opset >= 0 && version < w.min_opset) ||
          (w.max_opset >= 0 && version > w.max_opset))
        return false;
    }
    for (const auto& carriers : t.tags) {
      bool taken = false;
      for (const auto& [alt, index] : carriers)
        taken = taken || s_.alt[alt] == static_cast<int32_t>(index);
      if (!taken) return false;
    }
    return true;
  }

  // ---- Attributes -----------------------------------------------------------------------

  void loadLiteral(Actual& a, const ir::Literal& lit) {
    switch (lit.kind) {
      case ir::Literal::Kind::kInt:
      case ir::Literal::Kind::kInts:
        a.type = lit.isList() ? Actual::Type::kNumbers : Actual::Type::kNumber;
        s_.ints_a.assign(lit.ints.begin(), lit.ints.end());
        break;
      case ir::Literal::Kind::kFloat:
      case ir::Literal::Kind::kFloats:
        a.type = lit.isList() ? Actual::Type::kNumbers : Actual::Type::kNumber;
        a.is_float = true;
        s_.doubles.assign(lit.floats.begin(), lit.floats.end());
        break;
      case ir::Literal::Kind::kString:
        a.type = Actual::Type::kString;
        a.str = &lit.strings[0];
        break;
      case ir::Literal::Kind::kStrings:
        a.type = Actual::Type::kStrings;
        a.lit_strs = &lit.strings;
        break;
    }
  }

  void loadAttribute(Actual& a, const onnx::AttributeProto& attr) {
    switch (attr.type()) {
      case onnx::AttributeProto::INT:
        a.type = Actual::Type::kNumber;
        s_.ints_a.assign(1, attr.i());
        break;
      case onnx::AttributeProto::INTS:
        a.type = Actual::Type::kNumbers;
        s_.ints_a.assign(attr.ints().begin(), attr.ints().end());
        break;
      case onnx::AttributeProto::FLOAT:
        a.type = Actual::Type::kNumber;
        a.is_float = true;
        s_.doubles.assign(1, attr.f());
        break;
      case onnx::AttributeProto::FLOATS:
        a.type = Actual::Type::kNumbers;
        a.is_float = true;
        s_.doubles.assign(attr.floats().begin(), attr.floats().end());
        break;
      case onnx::AttributeProto::STRING:
        a.type = Actual::Type::kString;
        a.str = &attr.s();
        break;
      case onnx::AttributeProto::STRINGS:
        a.type = Actual::Type::kStrings;
        a.attr_strs = &attr.strings();
        break;
      default:
        a.type = Actual::Type::kOther;
        a.attr_type = attr.type();
        break;
    }
  }

  /// The actual value, printed like a literal.
  std::string actualText(const Actual& a) const {
    ir::Literal l;
    switch (a.type) {
      case Actual::Type::kNumber:
      case Actual::Type::kNumbers: {
        const bool list = a.type == Actual::Type::kNumbers;
        if (a.is_float) {
          l.kind = list ? ir::Literal::Kind::kFloats : ir::Literal::Kind::kFloat;
          l.floats = s_.doubles;
        } else {
          l.kind = list ? ir::Literal::Kind::kInts : ir::Literal::Kind::kInt;
          l.ints = s_.ints_a;
        }
        return l.str();
      }
      case Actual::Type::kString:
        l.kind = ir::Literal::Kind::kString;
        l.strings = {*a.str};
        return l.str();
      case Actual::Type::kStrings:
        l.kind = ir::Literal::Kind::kStrings;
        for (size_t i = 0; i < a.stringCount(); ++i) l.strings.push_back(a.stringAt(i));
        return l.str();
      case Actual::Type::kOther:
        return "a " +
               lowercase(onnx::AttributeProto_AttributeType_Name(
                   static_cast<onnx::AttributeProto_AttributeType>(a.attr_type))) +
               " attribute";
    }
    return "?";
  }

  /// Whether the loaded actual equals `lit`; a `rank` >= 0 normalises axes.
  bool equalsLiteral(const Actual& a, const ir::Literal& lit, bool axes, int64_t rank) {
    switch (a.type) {
      case Actual::Type::kNumber:
      case Actual::Type::kNumbers: {
        if (!isNumeric(lit) || lit.isList() != (a.type == Actual::Type::kNumbers)) return false;
        const size_t count = a.is_float ? s_.doubles.size() : s_.ints_a.size();
        if (count != (isIntLiteral(lit) ? lit.ints.size() : lit.floats.size())) return false;
        if (!a.is_float && isIntLiteral(lit)) {
          if (axes && rank >= 0) {
            s_.ints_b = s_.ints_a;
            s_.ints_c.assign(lit.ints.begin(), lit.ints.end());
            if (!normalizeAxes(s_.ints_b, rank) || !normalizeAxes(s_.ints_c, rank)) return false;
            return s_.ints_b == s_.ints_c;
          }
          return std::equal(s_.ints_a.begin(), s_.ints_a.end(), lit.ints.begin());
        }
        for (size_t i = 0; i < count; ++i) {
          const double x = a.is_float ? s_.doubles[i] : static_cast<double>(s_.ints_a[i]);
          const double y = isIntLiteral(lit) ? static_cast<double>(lit.ints[i]) : lit.floats[i];
          if (!closeFloats(x, y)) return false;
        }
        return true;
      }
      case Actual::Type::kString:
        return lit.kind == ir::Literal::Kind::kString && lit.strings[0] == *a.str;
      case Actual::Type::kStrings:
        if (lit.kind != ir::Literal::Kind::kStrings || lit.strings.size() != a.stringCount())
          return false;
        for (size_t i = 0; i < lit.strings.size(); ++i)
          if (lit.strings[i] != a.stringAt(i)) return false;
        return true;
      case Actual::Type::kOther:
        return false;
    }
    return false;
  }

  bool matchAttr(const AttrPlan& ap, NodeId n, std::string* why) {
    const ir::AttrMatch& m = *ap.match;
    const ParamRef ref = findParam(g_, n, m.name);
    Actual a;
    switch (ref.kind) {
      case ParamRef::Kind::kAbsent:
        if (!m.default_value)
          return reject(why,
                        [&] { return "attribute " + m.name + " is absent and has no default"; });
        loadLiteral(a, *m.default_value);
        break;
      case ParamRef::Kind::kAttribute:
        loadAttribute(a, *ref.attribute);
        break;
      case ParamRef::Kind::kInput:
        if (!readConstantInts(model_, g_, ref.input, s_.ints_a, 64))
          return reject(why, [&] {
            return m.name + " (input " + std::to_string(ref.input_index) + ")" +
                   (constantTensor(g_, ref.input) ? " is not a small integer constant"
                                                  : " is not a constant");
          });
        a.type = Actual::Type::kNumbers;
        break;
    }
    if (m.kind == ir::AttrMatch::Kind::kCapture) return true;
    const bool axes = ap.axes && !a.is_float &&
                      (a.type == Actual::Type::kNumber || a.type == Actual::Type::kNumbers);
    // -1: unknown (or not an axes attribute), so axes are compared as written.
    const int64_t rank = axes ? axesRank(g_, n).value_or(-1) : -1;
    bool ok = false;
    switch (m.kind) {
      case ir::AttrMatch::Kind::kEquals:
        ok = equalsLiteral(a, m.values[0], axes, rank);
        break;
      case ir::AttrMatch::Kind::kOneOf:
        for (const ir::Literal& lit : m.values) ok = ok || equalsLiteral(a, lit, axes, rank);
        break;
      case ir::AttrMatch::Kind::kRange:
        if (a.type == Actual::Type::kNumber) {
          const double x = a.is_float ? s_.doubles[0] : static_cast<double>(s_.ints_a[0]);
          ok = x >= m.min && x <= m.max;
        }
        break;
      case ir::AttrMatch::Kind::kCapture:
        break;
    }
    if (ok) return true;
    return reject(why, [&] {
      std::string subject;
      switch (ref.kind) {
        case ParamRef::Kind::kAbsent:
          subject = "attribute " + m.name + " is " + actualText(a) + " (default)";
          break;
        case ParamRef::Kind::kAttribute:
          subject = "attribute " + m.name + " is " + actualText(a);
          break;
        case ParamRef::Kind::kInput:
          subject = m.name + " (input " + std::to_string(ref.input_index) + ") is " + actualText(a);
          break;
      }
      std::string expected;
      switch (m.kind) {
        case ir::AttrMatch::Kind::kEquals:
          expected = m.values[0].str();
          break;
        case ir::AttrMatch::Kind::kOneOf:
          expected = "one of " + joinLiterals(m.values);
          break;
        default:
          expected = "in [" + formatDouble(m.min) + ", " + formatDouble(m.max) + "]";
          break;
      }
      std::string suffix;
      if (axes) suffix = rank >= 0 ? " (rank " + std::to_string(rank) + ")" : " (rank unknown)";
      return subject + ", expected " + expected + suffix;
    });
  }

  // ---- Constants and constraints --------------------------------------------------------

  /// `v` is a constant equal to the numeric literal `lit` (ints exactly, floats within
  /// `tolerance`), element by element.
  bool constantMatches(const ir::Literal& lit, double tolerance, ValueId v, std::string* why) {
    const onnx::TensorProto* t = constantTensor(g_, v);
    auto vname = [&] { return quoted(g_.value(v).name()); };
    if (!t) return reject(why, [&] { return vname() + " is not a constant"; });
    const size_t want = isIntLiteral(lit) ? lit.ints.size() : lit.floats.size();
    const int64_t count = tensorElementCount(*t);
    if (count != static_cast<int64_t>(want))
      return reject(why, [&] {
        return vname() + " has " + std::to_string(count) + " elements, expected " +
               std::to_string(want);
      });
    if (!readConstantDoubles(model_, g_, v, s_.doubles, want))
      return reject(why, [&] { return vname() + " cannot be read"; });
    for (size_t i = 0; i < want; ++i) {
      const bool ok = isIntLiteral(lit) ? s_.doubles[i] == static_cast<double>(lit.ints[i])
                                        : std::fabs(s_.doubles[i] - lit.floats[i]) <= tolerance;
      if (!ok)
        return reject(why, [&] {
          return vname() + " is " +
                 formatNumbers(s_.doubles, isFloatingType(t->data_type()), lit.isList()) +
                 ", expected " + lit.str();
        });
    }
    return true;
  }

  static std::string rangeText(const ir::Constraint& c, bool ints) {
    auto num = [&](double x) {
      return ints ? std::to_string(static_cast<int64_t>(x)) : formatDouble(x);
    };
    if (c.has_min && c.has_max)
      return c.min == c.max && ints ? num(c.min) : "in [" + num(c.min) + ", " + num(c.max) + "]";
    if (c.has_min) return ">= " + num(c.min);
    if (c.has_max) return "<= " + num(c.max);
    return "any";
  }

  bool checkConstraint(uint32_t index, std::string* why) {
    const ConstraintPlan& cp = plan_.constraints[index];
    const ir::Constraint& c = *cp.c;
    using K = ir::Constraint::Kind;
    if (c.kind == K::kNative) {
      s_.args.clear();
      for (uint32_t slot : cp.args) {
        if (s_.slots[slot] == kNoId) return true;  // an argument of an alternative not taken
        s_.args.push_back(s_.slots[slot]);
      }
      if (cp.native->fn(MatchContext{model_, g_}, ValueArgs(s_.args))) return true;
      return reject(why, [&] {
        std::string args;
        for (size_t i = 0; i < c.args.size(); ++i) args += (i ? ", " : "") + c.args[i];
        return c.native + "(" + args + "): does not hold";
      });
    }
    const ValueId v = s_.slots[cp.slot];
    if (v == kNoId) return true;  // bound only in an alternative not taken
    const std::string& subject = c.subject;
    auto vname = [&] { return quoted(g_.value(v).name()); };
    auto no = [&](auto&& text) { return reject(why, [&] { return subject + ": " + text(); }); };
    switch (c.kind) {
      case K::kConstant:
        if (constantTensor(g_, v)) return true;
        return no([&] { return vname() + " is not a constant"; });
      case K::kScalar: {
        const onnx::TensorProto* t = constantTensor(g_, v);
        if (!t) return no([&] { return vname() + " is not a constant"; });
        const int64_t count = tensorElementCount(*t);
        if (count != 1)
          return no(
              [&] { return vname() + " has " + std::to_string(count) + " elements, expected 1"; });
        if (!c.has_min && !c.has_max) return true;
        if (!readConstantDoubles(model_, g_, v, s_.doubles, 1))
          return no([&] { return vname() + " cannot be read"; });
        const double x = s_.doubles[0];
        if ((!c.has_min || x >= c.min) && (!c.has_max || x <= c.max)) return true;
        return no([&] {
          return vname() + " is " +
                 formatNumbers(s_.doubles, isFloatingType(t->data_type()), false) +
                 ", expected a scalar " + rangeText(c, false);
        });
      }
      case K::kConstantEquals:
        if (constantMatches(c.literal, c.tolerance, v, why)) return true;
        if (why) *why = subject + ": " + *why;
        return false;
      case K::kRank: {
        const std::optional<int64_t> rank = valueRank(g_, v);
        if (!rank) return no([&] { return "the rank of " + vname() + " is unknown"; });
        if (std::find(c.ints.begin(), c.ints.end(), *rank) != c.ints.end()) return true;
        return no([&] {
          std::string expected;
          if (c.ints.size() == 1) {
            expected = std::to_string(c.ints[0]);
          } else {
            ir::Literal l;
            l.kind = ir::Literal::Kind::kInts;
            l.ints = c.ints;
            expected = "one of " + l.str();
          }
          return vname() + " has rank " + std::to_string(*rank) + ", expected " + expected;
        });
      }
      case K::kElemType: {
        const int32_t t = valueElemType(g_, v);
        if (t == 0) return no([&] { return "the element type of " + vname() + " is unknown"; });
        if (std::find(cp.elem_types.begin(), cp.elem_types.end(), t) != cp.elem_types.end())
          return true;
        return no([&] {
          std::string expected = c.strings.size() == 1 ? c.strings[0] : "one of [";
          if (c.strings.size() != 1) {
            for (size_t i = 0; i < c.strings.size(); ++i)
              expected += (i ? ", " : "") + c.strings[i];
            expected += "]";
          }
          return vname() + " has element type " + elemTypeName(t) + ", expected " + expected;
        });
      }
      case K::kShape:
        return checkShape(cp, v, why);
      case K::kConsumers: {
        const size_t count = consumerCount(g_, v);
        if ((!c.has_min || static_cast<double>(count) >= c.min) &&
            (!c.has_max || static_cast<double>(count) <= c.max))
          return true;
        return no([&] {
          return vname() + " has " + std::to_string(count) + " consumers, expected " +
                 rangeText(c, true);
        });
      }
      case K::kNative:
        break;
    }
    return true;
  }

  bool checkShape(const ConstraintPlan& cp, ValueId v, std::string* why) {
    const ir::Constraint& c = *cp.c;
    auto vname = [&] { return quoted(g_.value(v).name()); };
    auto no = [&](auto&& text) { return reject(why, [&] { return c.subject + ": " + text(); }); };
    const onnx::TensorProto* constant = constantTensor(g_, v);
    const onnx::TensorShapeProto* shape = constant ? nullptr : valueShape(g_, v);
    if (!constant && !shape) return no([&] { return "the shape of " + vname() + " is unknown"; });
    const int rank = constant ? constant->dims_size() : shape->dim_size();
    if (static_cast<size_t>(rank) != cp.dims.size())
      return no([&] {
        return vname() + " has rank " + std::to_string(rank) + ", expected " +
               std::to_string(cp.dims.size());
      });
    for (int i = 0; i < rank; ++i) {
      const DimPlan& want = cp.dims[i];
      if (want.kind == DimPlan::Kind::kAny) continue;
      // The dim: static, symbolic (dim_param) or unknown.
      bool is_static = true;
      int64_t value = 0;
      const std::string* param = nullptr;
      if (constant) {
        value = constant->dims(i);
      } else if (shape->dim(i).has_dim_value()) {
        value = shape->dim(i).dim_value();
      } else {
        is_static = false;
        if (shape->dim(i).has_dim_param() && !shape->dim(i).dim_param().empty())
          param = &shape->dim(i).dim_param();
      }
      auto dimText = [&] { return is_static ? std::to_string(value) : param ? *param : "unknown"; };
      const std::string& wanted = c.dims[i];
      if (!is_static && !param)
        return no([&] {
          return "dim " + std::to_string(i) + " of " + vname() + " is unknown, expected " + wanted;
        });
      if (want.kind == DimPlan::Kind::kStatic) {
        if (is_static && value == want.value) continue;
        return no([&] {
          return "dim " + std::to_string(i) + " of " + vname() + " is " + dimText() +
                 ", expected " + wanted;
        });
      }
      Symbol& sym = s_.symbols[want.symbol];
      if (!sym.bound) {
        sym = Symbol{true, is_static, value, param, v, static_cast<uint32_t>(i)};
        continue;
      }
      if (sym.is_static == is_static && (is_static ? sym.value == value : *sym.param == *param))
        continue;
      return no([&] {
        return "dim " + std::to_string(i) + " of " + vname() + " is " + dimText() + ", but " +
               wanted + " is " + (sym.is_static ? std::to_string(sym.value) : *sym.param) +
               " (dim " + std::to_string(sym.dim) + " of " + quoted(g_.value(sym.v).name()) + ")";
      });
    }
    return true;
  }

  // ---- Target values --------------------------------------------------------------------

  bool unbound(Rewriter& rw, const ir::SourceLoc& loc, const std::string& name) {
    return rw.notifyMatchFailure([&] {
      return locOf(loc) + ": " + name + ": not bound by this match, but the rewrite reads it";
    });
  }

  bool gatherArgs(const std::vector<uint32_t>& slots, const std::vector<std::string>& names,
                  Rewriter& rw, const ir::SourceLoc& loc) {
    s_.args.clear();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (s_.slots[slots[i]] == kNoId) return unbound(rw, loc, names[i]);
      s_.args.push_back(s_.slots[slots[i]]);
    }
    return true;
  }

  /// Whether two captures hold the same value (rare: a name captured twice in one match).
  bool sameCapture(const AttrCapture& a, const AttrCapture& b) {
    std::optional<onnx::AttributeProto> x = materialize(a);
    std::optional<onnx::AttributeProto> y = materialize(b);
    if (!x || !y) return false;
    x->clear_name();
    y->clear_name();
    return x->SerializeAsString() == y->SerializeAsString();
  }

  /// A captured attribute as an AttributeProto, whichever form the node had.
  std::optional<onnx::AttributeProto> materialize(const AttrCapture& c) {
    const ParamRef ref = findParam(g_, c.node, c.match->name);
    switch (ref.kind) {
      case ParamRef::Kind::kAttribute:
        return *ref.attribute;
      case ParamRef::Kind::kInput: {
        if (!readConstantInts(model_, g_, ref.input, s_.ints_a, 1 << 16)) return std::nullopt;
        onnx::AttributeProto a;
        a.set_type(onnx::AttributeProto::INTS);
        for (int64_t x : s_.ints_a) a.add_ints(x);
        return a;
      }
      case ParamRef::Kind::kAbsent:
        if (!c.match->default_value) return std::nullopt;
        return literalAttribute(*c.match->default_value, c.match->name);
    }
    return std::nullopt;
  }

  std::optional<onnx::AttributeProto> targetAttribute(const TargetAttrPlan& ap,
                                                      const ir::TargetExpr& te, Rewriter& rw) {
    const ir::TargetAttr& a = *ap.attr;
    const std::string loc = locOf(a.loc, te.loc);
    std::optional<onnx::AttributeProto> out;
    switch (a.kind) {
      case ir::TargetAttr::Kind::kLiteral:
        return ap.literal;
      case ir::TargetAttr::Kind::kCaptured: {
        const AttrCapture& c = s_.captures[ap.slot];
        if (c.node == kNoId) {
          unbound(rw, a.loc.known() ? a.loc : te.loc, a.ref);
          return std::nullopt;
        }
        out = materialize(c);
        if (!out) {
          rw.notifyMatchFailure([&] {
            return loc + ": " + a.name + "=attr(" + a.ref +
                   "): the captured attribute cannot be read";
          });
          return std::nullopt;
        }
        break;
      }
      case ir::TargetAttr::Kind::kValueOf: {
        const ValueId v = s_.slots[ap.slot];
        if (v == kNoId) {
          unbound(rw, a.loc.known() ? a.loc : te.loc, a.ref);
          return std::nullopt;
        }
        const onnx::TensorProto* t = constantTensor(g_, v);
        if (!t || tensorElementCount(*t) != 1 ||
            !readConstantDoubles(model_, g_, v, s_.doubles, 1)) {
          rw.notifyMatchFailure([&] {
            return loc + ": " + a.name + "=value(" + a.ref + "): " + quoted(g_.value(v).name()) +
                   " is not a one-element numeric constant";
          });
          return std::nullopt;
        }
        onnx::AttributeProto attr;
        if (isFloatingType(t->data_type())) {
          attr.set_type(onnx::AttributeProto::FLOAT);
          attr.set_f(static_cast<float>(s_.doubles[0]));
        } else {
          attr.set_type(onnx::AttributeProto::INT);
          attr.set_i(static_cast<int64_t>(s_.doubles[0]));
        }
        out = std::move(attr);
        break;
      }
      case ir::TargetAttr::Kind::kHelper:
        if (!gatherArgs(ap.args, a.args, rw, a.loc.known() ? a.loc : te.loc)) return std::nullopt;
        out = ap.helper->fn(MatchContext{model_, g_}, ValueArgs(s_.args));
        if (!out) {
          rw.notifyMatchFailure(
              [&] { return loc + ": " + a.name + "=helper(" + a.ref + "): gave no value"; });
          return std::nullopt;
        }
        break;
    }
    out->set_name(a.name);
    return out;
  }

  const Plan& plan_;
  Scratch& s_;
  Model& model_;
  Graph& g_;
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
    Graph& g = rw.graph();
    Matcher matcher(*plan_, scratch_, rw.model(), g);
    if (!matcher.run(g.node(root).output(root_output_)))
      return rw.notifyMatchFailure([&] { return matcher.describe(); });
    return matcher.rewrite(rw);
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
