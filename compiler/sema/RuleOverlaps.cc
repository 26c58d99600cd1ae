//===- RuleOverlaps.cc - rules that shadow or race each other -------------===//
#include "compiler/sema/RuleOverlaps.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/sema/EndlessRewrites.h"
#include "compiler/sema/OpCatalog.h"

namespace onnx_rewrite {
namespace {

using ir::AttrMatch;
using ir::Constraint;
using ir::Expr;
using ir::ExprId;
using ir::Literal;
using ir::Pattern;
using ir::Rule;

std::string quote(const std::string& s) { return "'" + s + "'"; }

bool sameOp(const Expr& a, const Expr& b) {
  return a.kind == Expr::Kind::kOp && b.kind == Expr::Kind::kOp && a.op == b.op &&
         a.output == b.output &&
         OpCatalog::normalizeDomain(a.domain) == OpCatalog::normalizeDomain(b.domain);
}

/// The inputs written, without trailing `none`s (an omitted input and an absent one are
/// the same to a match).
std::vector<ExprId> written(const Pattern& p, const Expr& e) {
  std::vector<ExprId> in = e.inputs;
  while (!in.empty() && in.back() < p.exprs.size() && p.exprs[in.back()].kind == Expr::Kind::kNone)
    in.pop_back();
  return in;
}

/// Every attribute value `narrow` accepts, `wide` accepts too.
bool attrImplied(const AttrMatch& wide, const AttrMatch& narrow) {
  if (wide.kind == AttrMatch::Kind::kCapture || wide.kind == AttrMatch::Kind::kParam) return true;
  switch (narrow.kind) {
    case AttrMatch::Kind::kEquals:
    case AttrMatch::Kind::kOneOf:
      if (narrow.values.empty()) return false;
      for (const Literal& v : narrow.values)
        if (!attrMatchHolds(wide, v)) return false;
      return true;
    case AttrMatch::Kind::kRange:
      return wide.kind == AttrMatch::Kind::kRange && wide.min <= narrow.min &&
             narrow.max <= wide.max;
    case AttrMatch::Kind::kCapture:
    case AttrMatch::Kind::kParam:
      return false;  // narrow takes any value; wide does not
  }
  return false;
}

/// Some attribute value both conditions accept.
bool attrsMeet(const AttrMatch& a, const AttrMatch& b) {
  const bool a_any = a.kind == AttrMatch::Kind::kCapture || a.kind == AttrMatch::Kind::kParam;
  const bool b_any = b.kind == AttrMatch::Kind::kCapture || b.kind == AttrMatch::Kind::kParam;
  if (a_any || b_any) return true;
  if (a.kind == AttrMatch::Kind::kRange && b.kind == AttrMatch::Kind::kRange)
    return std::max(a.min, b.min) <= std::min(a.max, b.max);
  const AttrMatch& listed = a.kind == AttrMatch::Kind::kRange ? b : a;
  const AttrMatch& other = a.kind == AttrMatch::Kind::kRange ? a : b;
  for (const Literal& v : listed.values)
    if (attrMatchHolds(other, v)) return true;
  return false;
}

const AttrMatch* attrNamed(const Expr& e, const std::string& name) {
  for (const AttrMatch& m : e.attrs)
    if (m.name == name) return &m;
  return nullptr;
}

/// Does `wide` (a pattern) cover every match of `narrow`? Values of `wide` are mapped to
/// the values of `narrow` they stand for; a value of wide met twice must stand for one
/// value of narrow.
class Subsumption {
 public:
  Subsumption(const Pattern& wide, const Pattern& narrow) : w_(wide), n_(narrow) {
    for (const Expr& e : w_.exprs) {
      if (e.kind == Expr::Kind::kCapture && !e.name.empty() && e.name != "_") ++uses_[e.name];
      // A value read twice (a shared node) must stand for one value of narrow too.
      for (ExprId in : e.inputs) ++uses_["#" + std::to_string(in)];
    }
    for (const Constraint& c : w_.constraints) {
      uses_[c.subject] += 2;  // constrained: its binding is needed
      for (const std::string& a : c.args) uses_[a] += 2;
    }
  }

  bool holds() { return value(w_.root, n_.root) && constraintsHold(); }

 private:
  std::string keyOf(ExprId nid) const {
    const Expr& e = n_.exprs[nid];
    return e.name.empty() || e.name == "_" ? "expr " + std::to_string(nid) : "name " + e.name;
  }

  template <typename F>
  bool tryWith(F&& f) {
    const auto saved = bound_;
    if (f()) return true;
    bound_ = saved;
    return false;
  }

  /// Binds wide's value named `name` to narrow's `nid`, consistently.
  bool bind(const std::string& name, ExprId nid) {
    if (name.empty() || name == "_" || uses_[name] < 2) return true;
    auto [it, fresh] = bound_.emplace(name, keyOf(nid));
    return fresh || it->second == keyOf(nid);
  }

  bool value(ExprId wid, ExprId nid) {
    if (wid >= w_.exprs.size() || nid >= n_.exprs.size()) return false;
    return covers(wid, nid) && bind("#" + std::to_string(wid), nid);
  }

  bool covers(ExprId wid, ExprId nid) {
    const Expr& w = w_.exprs[wid];
    const Expr& n = n_.exprs[nid];
    if (n.kind == Expr::Kind::kAlternatives) {
      // Each alternative of narrow must be covered, binding nothing new (wide's bindings
      // would then depend on which alternative the graph took).
      const auto saved = bound_;
      for (ExprId alt : n.inputs) {
        bound_ = saved;
        if (!value(wid, alt) || bound_ != saved) {
          bound_ = saved;
          return false;
        }
      }
      return true;
    }
    switch (w.kind) {
      case Expr::Kind::kCapture:
        return n.kind != Expr::Kind::kNone && bind(w.name, nid);
      case Expr::Kind::kNone:
        return n.kind == Expr::Kind::kNone;
      case Expr::Kind::kConstant:
        return n.kind == Expr::Kind::kConstant && n.literal == w.literal &&
               n.tolerance <= w.tolerance;
      case Expr::Kind::kAlternatives:
        for (ExprId alt : w.inputs)
          if (tryWith([&] { return value(alt, nid); })) return bind(w.name, nid);
        return false;
      case Expr::Kind::kOp:
        break;
    }
    if (n.kind != Expr::Kind::kOp || !w.other_outputs.empty()) return false;
    if (n.optional) {
      // narrow also matches its input alone: wide must be optional too and cover both.
      return w.optional && !w.inputs.empty() && !n.inputs.empty() &&
             tryWith([&] { return op(w, n) && value(w.inputs[0], n.inputs[0]); }) &&
             bind(w.name, nid);
    }
    if (tryWith([&] { return op(w, n); })) return bind(w.name, nid);
    return w.optional && !w.inputs.empty() && tryWith([&] { return value(w.inputs[0], nid); });
  }

  bool op(const Expr& w, const Expr& n) {
    if (!sameOp(w, n) || (n.commutative && !w.commutative)) return false;
    const std::vector<ExprId> wi = written(w_, w);
    const std::vector<ExprId> ni = written(n_, n);
    if (w.rest.empty() ? (!n.rest.empty() || wi.size() != ni.size()) : ni.size() < wi.size())
      return false;
    for (const AttrMatch& wm : w.attrs) {
      if (wm.kind == AttrMatch::Kind::kCapture || wm.kind == AttrMatch::Kind::kParam) continue;
      const AttrMatch* nm = attrNamed(n, wm.name);
      if (!nm || !attrImplied(wm, *nm)) return false;
    }
    auto inOrder = [&](bool swapped) {
      for (size_t i = 0; i < wi.size(); ++i) {
        const size_t j = swapped && wi.size() == 2 ? 1 - i : i;
        if (!value(wi[i], ni[j])) return false;
      }
      return true;
    };
    if (tryWith([&] { return inOrder(false); })) return true;
    return w.commutative && wi.size() == 2 && tryWith([&] { return inOrder(true); });
  }

  /// narrow's name for wide's bound `name`, or "".
  std::string narrowName(const std::string& name) const {
    auto it = bound_.find(name);
    if (it == bound_.end() || it->second.rfind("name ", 0) != 0) return "";
    return it->second.substr(5);
  }

  /// Every constraint of wide holds wherever narrow matched: narrow states the same
  /// constraint of the same values.
  bool constraintsHold() const {
    for (Constraint c : w_.constraints) {
      c.subject = narrowName(c.subject);
      if (c.subject.empty()) return false;
      for (std::string& a : c.args) {
        a = narrowName(a);
        if (a.empty()) return false;
      }
      auto same = [&](const Constraint& d) {
        return d.kind == c.kind && d.subject == c.subject && d.args == c.args &&
               d.native == c.native && d.ints == c.ints && d.strings == c.strings &&
               d.dims == c.dims && d.min == c.min && d.max == c.max && d.has_min == c.has_min &&
               d.has_max == c.has_max && d.literal == c.literal && d.tolerance == c.tolerance &&
               d.guard.empty() && c.guard.empty();
      };
      if (std::none_of(n_.constraints.begin(), n_.constraints.end(), same)) return false;
    }
    return true;
  }

  const Pattern& w_;
  const Pattern& n_;
  std::map<std::string, int> uses_;
  std::map<std::string, std::string> bound_;
};

/// Can one node match both patterns? A unification of the two: every value of either is a
/// class, a capture joins the class of whatever it meets (so a capture used twice must meet
/// values that can be one), two ops join when their ops, attributes and inputs can be the
/// same. Constraints are not read. Alternatives and commutative operands are tried in
/// turn; past a work budget the answer is "no" (no warning rather than a guess).
class Overlap {
 public:
  Overlap(const Pattern& a, const Pattern& b) : a_(a), b_(b) {
    // Captures constrained to be constants cannot be an op's output (but a Constant's).
    for (int side : {0, 1})
      for (const Constraint& c : (side == 0 ? a_ : b_).constraints)
        if (c.guard.empty() &&
            (c.kind == Constraint::Kind::kConstant || c.kind == Constraint::Kind::kScalar ||
             c.kind == Constraint::Kind::kConstantEquals))
          constants_.insert(std::to_string(side) + " $" + c.subject);
  }

  bool holds() { return unify(node(0, a_.root), node(1, b_.root)); }

 private:
  /// A value of side 0 (a) or 1 (b): captures by name (one class per name), others by id.
  std::string node(int side, ExprId id) const {
    const Expr& e = exprOf(side, id);
    if (e.kind == Expr::Kind::kCapture && !e.name.empty() && e.name != "_")
      return std::to_string(side) + " $" + e.name;
    return std::to_string(side) + " #" + std::to_string(id);
  }

  const Expr& exprOf(int side, ExprId id) const { return (side == 0 ? a_ : b_).exprs[id]; }

  std::string find(const std::string& n) const {
    std::string r = n;
    for (auto it = parent_.find(r); it != parent_.end(); it = parent_.find(r)) r = it->second;
    return r;
  }

  static int sideOf(const std::string& n) { return n[0] - '0'; }
  ExprId idOf(const std::string& n) const {
    if (n[2] == '#') return static_cast<ExprId>(std::stoul(n.substr(3)));
    // A named capture: any of its exprs stands for it.
    const Pattern& p = sideOf(n) == 0 ? a_ : b_;
    for (ExprId i = 0; i < p.exprs.size(); ++i)
      if (p.exprs[i].kind == Expr::Kind::kCapture && p.exprs[i].name == n.substr(3)) return i;
    return ir::kNoExpr;
  }

  template <typename F>
  bool tryWith(F&& f) {
    const auto saved = parent_;
    if (f()) return true;
    parent_ = saved;
    return false;
  }

  bool unify(const std::string& x, const std::string& y) {
    if (++steps_ > kBudget) return false;
    const std::string rx = find(x), ry = find(y);
    if (rx == ry) return true;
    const ExprId ix = idOf(rx), iy = idOf(ry);
    if (ix == ir::kNoExpr || iy == ir::kNoExpr) return false;
    const Expr& ex = exprOf(sideOf(rx), ix);
    const Expr& ey = exprOf(sideOf(ry), iy);
    if (ex.kind == Expr::Kind::kAlternatives || ey.kind == Expr::Kind::kAlternatives) {
      const bool on_x = ex.kind == Expr::Kind::kAlternatives;
      const Expr& alts = on_x ? ex : ey;
      for (ExprId alt : alts.inputs)
        if (tryWith([&] {
              const std::string n = node(sideOf(on_x ? rx : ry), alt);
              return on_x ? unify(n, ry) : unify(rx, n);
            }))
          return true;
      return false;
    }
    if (ex.kind == Expr::Kind::kNone || ey.kind == Expr::Kind::kNone) return ex.kind == ey.kind;
    if (ex.kind == Expr::Kind::kCapture || ey.kind == Expr::Kind::kCapture) {
      const bool x_var = ex.kind == Expr::Kind::kCapture && !constants_.count(rx);
      const bool y_var = ey.kind == Expr::Kind::kCapture && !constants_.count(ry);
      if (!x_var && !y_var) {
        // A constant on one side: the other must be a constant (or a Constant node) too.
        const Expr& other = ex.kind == Expr::Kind::kCapture ? ey : ex;
        if (other.kind == Expr::Kind::kOp && other.op != "Constant") return false;
        parent_[rx] = ry;
        return true;
      }
      const std::string var = x_var ? rx : ry, term = x_var ? ry : rx;
      if (occurs(var, term)) return false;  // x = f(.. x ..) has no finite solution
      parent_[var] = term;
      return true;
    }
    if (ex.kind == Expr::Kind::kConstant || ey.kind == Expr::Kind::kConstant) {
      if (ex.kind == ey.kind) return ex.literal == ey.literal;
      const Expr& o = ex.kind == Expr::Kind::kOp ? ex : ey;
      return o.op == "Constant";
    }
    // Optional ops may stand for their first input.
    if (ex.optional && !ex.inputs.empty() &&
        tryWith([&] { return unify(node(sideOf(rx), ex.inputs[0]), ry); }))
      return true;
    if (ey.optional && !ey.inputs.empty() &&
        tryWith([&] { return unify(rx, node(sideOf(ry), ey.inputs[0])); }))
      return true;
    if (!sameOp(ex, ey)) return false;
    const std::vector<ExprId> xi = written(sideOf(rx) == 0 ? a_ : b_, ex);
    const std::vector<ExprId> yi = written(sideOf(ry) == 0 ? a_ : b_, ey);
    if ((ex.rest.empty() && yi.size() > xi.size()) || (ey.rest.empty() && xi.size() > yi.size()))
      return false;
    for (const AttrMatch& m : ex.attrs)
      if (const AttrMatch* o = attrNamed(ey, m.name); o && !attrsMeet(m, *o)) return false;
    parent_[rx] = ry;
    const size_t common = std::min(xi.size(), yi.size());
    auto inOrder = [&](bool swapped) {
      for (size_t i = 0; i < common; ++i) {
        const size_t j = swapped && common == 2 ? 1 - i : i;
        if (!unify(node(sideOf(rx), xi[i]), node(sideOf(ry), yi[j]))) return false;
      }
      return true;
    };
    return tryWith([&] { return inOrder(false); }) ||
           (ex.commutative && common == 2 && tryWith([&] { return inOrder(true); }));
  }

  /// Whether class `var` occurs inside the value `term` stands for.
  bool occurs(const std::string& var, const std::string& term) {
    std::set<std::string> seen;
    std::vector<std::string> todo = {term};
    while (!todo.empty()) {
      const std::string n = find(todo.back());
      todo.pop_back();
      if (n == var) return true;
      if (!seen.insert(n).second || ++steps_ > kBudget) continue;
      const ExprId id = idOf(n);
      if (id == ir::kNoExpr) continue;
      for (ExprId in : exprOf(sideOf(n), id).inputs) todo.push_back(node(sideOf(n), in));
    }
    return false;
  }

  static constexpr size_t kBudget = 200000;
  std::set<std::string> constants_;
  const Pattern& a_;
  const Pattern& b_;
  std::map<std::string, std::string> parent_;
  size_t steps_ = 0;
};

bool optIn(const Rule& r) {
  return std::find(r.tags.begin(), r.tags.end(), "opt_in") != r.tags.end();
}

std::string rootOp(const Rule& r) {
  const Pattern& p = r.pattern;
  if (p.root >= p.exprs.size()) return "root";
  const Expr& e = p.exprs[p.root];
  return e.kind == Expr::Kind::kOp ? (e.domain.empty() ? "" : e.domain + ".") + e.op : "root";
}

}  // namespace

bool patternSubsumes(const Pattern& wide, const Pattern& narrow) {
  return Subsumption(wide, narrow).holds();
}

bool patternsOverlap(const Pattern& a, const Pattern& b) { return Overlap(a, b).holds(); }

void checkRuleOverlaps(const ir::RuleFile& file, DiagnosticEngine& diag) {
  const std::vector<Rule>& rules = file.rules;
  std::set<std::pair<size_t, size_t>> shadowing;
  for (size_t n = 0; n < rules.size(); ++n)
    for (size_t w = 0; w < rules.size(); ++w) {
      const Rule& wide = rules[w];
      const Rule& narrow = rules[n];
      // The later of two equal rules is the one that never applies.
      if (w == n || wide.priority < narrow.priority ||
          (wide.priority == narrow.priority && w > n) || (optIn(wide) && !optIn(narrow)))
        continue;
      if (!ruleOpsets(wide).covers(ruleOpsets(narrow)) ||
          !patternSubsumes(wide.pattern, narrow.pattern))
        continue;
      shadowing.insert({std::min(w, n), std::max(w, n)});
      diag.warning(narrow.loc, "rule " + quote(narrow.name) + " never applies: rule " +
                                   quote(wide.name) + " (priority " +
                                   std::to_string(wide.priority) +
                                   ") matches everything it matches and goes first");
      diag.note(wide.loc, quote(wide.name) + " is here");
    }
  for (size_t a = 0; a < rules.size(); ++a)
    for (size_t b = a + 1; b < rules.size(); ++b) {
      const Rule& first = rules[a];
      const Rule& second = rules[b];
      if (first.priority != second.priority || shadowing.count({a, b})) continue;
      if (!ruleOpsets(first).overlaps(ruleOpsets(second)) ||
          !patternsOverlap(first.pattern, second.pattern))
        continue;
      diag.warning(second.loc, "rules " + quote(first.name) + " and " + quote(second.name) +
                                   " have the same priority (" + std::to_string(first.priority) +
                                   ") and can match the same " + rootOp(second) +
                                   ": which applies depends on the order they are loaded in; "
                                   "give the one that should go first a higher priority");
      diag.note(first.loc, quote(first.name) + " is here");
    }
}

}  // namespace onnx_rewrite
