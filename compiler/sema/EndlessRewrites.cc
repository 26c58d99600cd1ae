//===- EndlessRewrites.cc - rewrites that would apply forever -------------===//
#include "compiler/sema/EndlessRewrites.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/sema/OpCatalog.h"

namespace onnx_rewrite {
namespace {

using ir::AttrMatch;
using ir::Expr;
using ir::ExprId;
using ir::Literal;
using ir::Pattern;
using ir::Rule;
using ir::Target;
using ir::TargetAttr;
using ir::TargetExpr;

bool isNumeric(const Literal& l) {
  return l.kind == Literal::Kind::kInt || l.kind == Literal::Kind::kFloat;
}

double numberOf(const Literal& l) {
  if (l.kind == Literal::Kind::kInt && !l.ints.empty()) return static_cast<double>(l.ints[0]);
  if (l.kind == Literal::Kind::kFloat && !l.floats.empty()) return l.floats[0];
  return 0;
}

/// Literal equality where an int and a float of the same value are equal.
bool sameValue(const Literal& a, const Literal& b) {
  if (isNumeric(a) && isNumeric(b)) return numberOf(a) == numberOf(b);
  return a == b;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

/// Matches one pattern against the values of one rewrite. Captures bind target values by
/// key; a capture used twice must see the same value both times.
class Fit {
 public:
  Fit(const Pattern& p, const Target& t) : p_(p), t_(t) {}

  bool value(ExprId pid, uint32_t tid) {
    if (pid >= p_.exprs.size() || tid >= t_.exprs.size()) return false;
    const Expr& pe = p_.exprs[pid];
    const TargetExpr& te = t_.exprs[tid];
    switch (pe.kind) {
      case Expr::Kind::kCapture: {
        if (te.kind == TargetExpr::Kind::kNone || te.kind == TargetExpr::Kind::kRest) return false;
        if (pe.name.empty() || pe.name == "_") return true;
        const std::string key = keyOf(tid);
        auto [it, fresh] = bound_.emplace(pe.name, key);
        return fresh || it->second == key;
      }
      case Expr::Kind::kNone:
        return te.kind == TargetExpr::Kind::kNone;
      case Expr::Kind::kConstant:
        return false;  // a literal's equality to a rewrite's tensor is not judged
      case Expr::Kind::kAlternatives:
        for (ExprId alt : pe.inputs)
          if (tryWith([&] { return value(alt, tid); })) return true;
        return false;
      case Expr::Kind::kOp:
        if (pe.optional && tryWith([&] { return !pe.inputs.empty() && value(pe.inputs[0], tid); }))
          return true;
        return op(pe, tid);
    }
    return false;
  }

 private:
  /// Runs `f`; keeps its bindings if it succeeds, else restores the ones before.
  template <typename F>
  bool tryWith(F&& f) {
    std::map<std::string, std::string> saved = bound_;
    if (f()) return true;
    bound_ = std::move(saved);
    return false;
  }

  std::string keyOf(uint32_t tid) const {
    const TargetExpr& te = t_.exprs[tid];
    if (te.kind == TargetExpr::Kind::kRef) return "ref " + te.name;
    if (te.kind == TargetExpr::Kind::kOp && te.op.empty() && !te.inputs.empty())
      return "node " + std::to_string(te.inputs[0]) + ":" + std::to_string(te.output);
    return "node " + std::to_string(tid) + ":" + std::to_string(te.output);
  }

  bool op(const Expr& pe, uint32_t tid) {
    const TargetExpr& read = t_.exprs[tid];
    if (read.kind != TargetExpr::Kind::kOp || !pe.other_outputs.empty()) return false;
    // A secondary output (`a, b = Op(..)` read as b) names its node by input 0.
    const uint32_t node_id =
        read.op.empty() ? (read.inputs.empty() ? UINT32_MAX : read.inputs[0]) : tid;
    if (node_id >= t_.exprs.size()) return false;
    const TargetExpr& node = t_.exprs[node_id];
    if (node.kind != TargetExpr::Kind::kOp || node.op.empty() || pe.output != read.output)
      return false;
    if (OpCatalog::normalizeDomain(pe.domain) != OpCatalog::normalizeDomain(node.domain) ||
        pe.op != node.op)
      return false;
    // Inputs as the created node has them: trailing omitted ones are not written.
    std::vector<uint32_t> inputs = node.inputs;
    while (!inputs.empty() && inputs.back() < t_.exprs.size() &&
           t_.exprs[inputs.back()].kind == TargetExpr::Kind::kNone)
      inputs.pop_back();
    // Spliced rests (`rest...`) at the end add inputs of unknown number: a match with a
    // rest of its own takes them, whatever their number; one without cannot be judged.
    bool spliced = false;
    while (!inputs.empty() && inputs.back() < t_.exprs.size() &&
           t_.exprs[inputs.back()].kind == TargetExpr::Kind::kRest) {
      inputs.pop_back();
      spliced = true;
    }
    for (uint32_t in : inputs)
      if (in >= t_.exprs.size() || t_.exprs[in].kind == TargetExpr::Kind::kRest) return false;
    if (spliced && pe.rest.empty()) return false;
    std::vector<ExprId> written = pe.inputs;
    while (!written.empty() && written.back() < p_.exprs.size() &&
           p_.exprs[written.back()].kind == Expr::Kind::kNone)
      written.pop_back();
    if (pe.rest.empty() ? inputs.size() != written.size() : inputs.size() < written.size())
      return false;
    if (!attrsHold(pe, node)) return false;
    auto inOrder = [&](bool swapped) {
      for (size_t i = 0; i < written.size(); ++i) {
        const size_t j = swapped && written.size() == 2 ? 1 - i : i;
        if (!value(written[i], inputs[j])) return false;
      }
      return true;
    };
    if (tryWith([&] { return inOrder(false); })) return true;
    return pe.commutative && written.size() == 2 && tryWith([&] { return inOrder(true); });
  }

  /// Every attribute condition of `pe` holds for the created `node`, as far as its
  /// literals and the schema defaults tell.
  bool attrsHold(const Expr& pe, const TargetExpr& node) const {
    for (const AttrMatch& m : pe.attrs) {
      if (m.kind == AttrMatch::Kind::kCapture || m.kind == AttrMatch::Kind::kParam) continue;
      const TargetAttr* given = nullptr;
      for (const TargetAttr& a : node.attrs)
        if (a.name == m.name) given = &a;
      if (given && given->kind != TargetAttr::Kind::kLiteral) return false;
      // An absent attribute whose default changed across opsets is not judged.
      if (!given && (!m.default_value || !m.older_defaults.empty())) return false;
      if (!attrMatchHolds(m, given ? given->literal : *m.default_value)) return false;
    }
    return true;
  }

  const Pattern& p_;
  const Target& t_;
  std::map<std::string, std::string> bound_;
};

/// The first value of `t` that a node of `t` creates and `rule`'s match fits, or -1.
int64_t fittingValue(const Rule& rule, const Target& t) {
  if (!rule.pattern.constraints.empty()) return -1;
  for (uint32_t i = 0; i < t.exprs.size(); ++i)
    if (t.exprs[i].kind == TargetExpr::Kind::kOp &&
        Fit(rule.pattern, t).value(rule.pattern.root, i))
      return i;
  return -1;
}

/// Where to report a created value: its op's text, else the variant's, else the rule's.
const ir::SourceLoc& where(const TargetExpr& e, const Target& t, const Rule& rule) {
  const TargetExpr& node =
      e.op.empty() && !e.inputs.empty() && e.inputs[0] < t.exprs.size() ? t.exprs[e.inputs[0]] : e;
  if (node.loc.known()) return node.loc;
  return t.loc.known() ? t.loc : rule.loc;
}

std::string opText(const TargetExpr& e, const Target& t) {
  const TargetExpr& node =
      e.op.empty() && !e.inputs.empty() && e.inputs[0] < t.exprs.size() ? t.exprs[e.inputs[0]] : e;
  return (node.domain.empty() ? "" : node.domain + ".") + node.op;
}

}  // namespace

bool attrMatchHolds(const AttrMatch& m, const Literal& v) {
  switch (m.kind) {
    case AttrMatch::Kind::kEquals:
      return !m.values.empty() && sameValue(m.values[0], v);
    case AttrMatch::Kind::kOneOf:
      for (const Literal& candidate : m.values)
        if (sameValue(candidate, v)) return true;
      return false;
    case AttrMatch::Kind::kRange:
      return isNumeric(v) && numberOf(v) >= m.min && numberOf(v) <= m.max;
    case AttrMatch::Kind::kCapture:
    case AttrMatch::Kind::kParam:  // only in fragments, expanded before the checks
      return true;
  }
  return false;
}

RuleOpsets ruleOpsets(const Rule& rule, const Target* variant) {
  RuleOpsets r;
  auto narrow = [&r](const std::string& domain, int64_t min_opset, int64_t max_opset) {
    if (OpCatalog::normalizeDomain(domain) != "") return;
    if (min_opset >= 0) r.lo = std::max(r.lo, min_opset);
    if (max_opset >= 0) r.hi = std::min(r.hi, max_opset);
  };
  for (const ir::Applicability& a : rule.requires) narrow(a.domain, a.min_opset, a.max_opset);
  if (variant && variant->when)
    narrow(variant->when->domain, variant->when->min_opset, variant->when->max_opset);
  return r;
}

bool matchFitsRewrite(const Pattern& pattern, const Target& t, uint32_t at) {
  return pattern.constraints.empty() && Fit(pattern, t).value(pattern.root, at);
}

void checkEndlessRewrites(const ir::RuleFile& file, DiagnosticEngine& diag) {
  const std::vector<Rule>& rules = file.rules;
  for (const Rule& rule : rules)
    for (const Target& t : rule.targets) {
      const int64_t at = fittingValue(rule, t);
      // The variant's opsets are the rule's narrowed by its `when`: none left, never built.
      if (at < 0 || ruleOpsets(rule, &t).empty()) continue;
      const TargetExpr& created = t.exprs[static_cast<size_t>(at)];
      diag.error(where(created, t, rule), "rule " + quote(rule.name) + " matches the " +
                                              opText(created, t) +
                                              " its own rewrite creates: it would apply to its "
                                              "own result forever");
    }
  // Pairs: a rewrite of each creates what the other matches, at opsets both run at.
  for (size_t a = 0; a < rules.size(); ++a)
    for (size_t b = a + 1; b < rules.size(); ++b) {
      // The value of a variant of `from` that `to`'s match fits, or null.
      auto feeds = [](const Rule& from, const Rule& to) -> std::pair<const Target*, int64_t> {
        for (const Target& t : from.targets) {
          const int64_t at = fittingValue(to, t);
          if (at >= 0 && ruleOpsets(from, &t).overlaps(ruleOpsets(to, nullptr))) return {&t, at};
        }
        return {nullptr, -1};
      };
      const auto [ta, at_a] = feeds(rules[a], rules[b]);
      const auto [tb, at_b] = feeds(rules[b], rules[a]);
      if (!ta || !tb) continue;
      const TargetExpr& by_b = tb->exprs[static_cast<size_t>(at_b)];
      const TargetExpr& by_a = ta->exprs[static_cast<size_t>(at_a)];
      diag.error(where(by_b, *tb, rules[b]),
                 "rules " + quote(rules[a].name) + " and " + quote(rules[b].name) +
                     " undo each other: " + quote(rules[a].name) + " matches this " +
                     opText(by_b, *tb) + ", and " + quote(rules[b].name) + " the " +
                     opText(by_a, *ta) + " " + quote(rules[a].name) +
                     " creates: they would apply forever");
      diag.note(where(by_a, *ta, rules[a]),
                quote(rules[a].name) + " creates the " + opText(by_a, *ta) + " here");
    }
}

}  // namespace onnx_rewrite
