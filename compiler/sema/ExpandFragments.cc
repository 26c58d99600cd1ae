//===- ExpandFragments.cc - fragments copied into the rules that use them --===//
#include "compiler/sema/ExpandFragments.h"

#include "compiler/sema/OpCatalog.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace onnx_rewrite {
namespace {

using ir::Expr;
using ir::ExprId;
using ir::kNoExpr;
using ir::SourceLoc;

/// Fragments used inside fragments deeper than this are taken for a fragment using itself.
constexpr int kMaxDepth = 32;

std::string quote(const std::string& s) { return "'" + s + "'"; }

bool isUse(const std::string& domain, const std::string& op,
           const std::map<std::string, const ir::Fragment*>& fragments) {
  return (domain.empty() || domain == "ai.onnx") && fragments.count(op);
}

SourceLoc via(SourceLoc loc, const std::shared_ptr<const ir::FragmentUse>& use) {
  if (!loc.via) loc.via = use;
  return loc;
}

const ir::Fragment::Param* findParam(const ir::Fragment& f, const std::string& name) {
  for (const ir::Fragment::Param& p : f.params)
    if (p.name == name) return &p;
  return nullptr;
}

/// The value parameters, in order.
std::vector<const ir::Fragment::Param*> valueParams(const ir::Fragment& f) {
  std::vector<const ir::Fragment::Param*> out;
  for (const ir::Fragment::Param& p : f.params)
    if (!p.attribute) out.push_back(&p);
  return out;
}

std::string paramsText(const ir::Fragment& f) {
  std::string s = f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ir::Fragment::Param& p = f.params[i];
    s += (i ? ", " : "") + p.name;
    if (p.attribute) s += "=" + (p.default_value ? p.default_value->str() : std::string("_"));
  }
  return s + ")";
}

/// The `when` of a rule variant using a fragment variant: both must hold. False if they
/// cannot be combined (opsets of two domains); `empty` if no opset satisfies both.
bool combineWhen(const std::optional<ir::Target::When>& a, const std::optional<ir::Target::When>& b,
                 std::optional<ir::Target::When>& out, bool& empty) {
  empty = false;
  if (!a || !b) {
    out = a ? a : b;
    return true;
  }
  out = *a;
  for (const std::string& t : b->tags)
    if (std::find(out->tags.begin(), out->tags.end(), t) == out->tags.end()) out->tags.push_back(t);
  const bool a_opset = a->min_opset >= 0 || a->max_opset >= 0;
  const bool b_opset = b->min_opset >= 0 || b->max_opset >= 0;
  if (!b_opset) return true;
  if (!a_opset) {
    out->domain = b->domain;
    out->min_opset = b->min_opset;
    out->max_opset = b->max_opset;
    return true;
  }
  if (OpCatalog::normalizeDomain(a->domain) != OpCatalog::normalizeDomain(b->domain)) return false;
  out->min_opset = std::max(a->min_opset, b->min_opset);
  if (a->max_opset < 0 || b->max_opset < 0)
    out->max_opset = std::max(a->max_opset, b->max_opset);
  else
    out->max_opset = std::min(a->max_opset, b->max_opset);
  empty = out->max_opset >= 0 && out->min_opset > out->max_opset;
  return true;
}

//===----------------------------------------------------------------------===//
// Match side
//===----------------------------------------------------------------------===//

class PatternExpander {
 public:
  PatternExpander(const std::map<std::string, const ir::Fragment*>& fragments,
                  DiagnosticEngine& diag, ir::Pattern& p)
      : fragments_(fragments), diag_(diag), p_(p) {}

  bool run() {
    depth_.assign(p_.exprs.size(), 0);
    for (const Expr& e : p_.exprs)
      if (e.group != ir::kNoGroup) next_group_ = std::max(next_group_, e.group + 1);
    bool ok = true;
    for (ExprId id = 0; id < p_.exprs.size(); ++id) {
      // The copy of a result may itself be a use (a fragment ending in another fragment).
      while (p_.exprs[id].kind == Expr::Kind::kOp &&
             isUse(p_.exprs[id].domain, p_.exprs[id].op, fragments_)) {
        if (!expand(id)) {
          ok = false;
          break;
        }
      }
    }
    if (ok) ir::compactPattern(p_);
    return ok;
  }

 private:
  bool fail(const SourceLoc& loc, const std::string& message) {
    diag_.error(loc, message);
    return false;
  }

  /// Replaces every reference to `from` by `to`.
  void redirect(ExprId from, ExprId to) {
    for (Expr& e : p_.exprs)
      for (ExprId& in : e.inputs)
        if (in == from) in = to;
    if (p_.root == from) p_.root = to;
  }

  bool expand(ExprId at) {
    const Expr call = p_.exprs[at];
    const ir::Fragment& f = *fragments_.at(call.op);
    const int depth = depth_[at];
    if (depth >= kMaxDepth)
      return fail(call.loc, "fragment " + quote(f.name) +
                                " is used inside itself (fragments nest deeper than " +
                                std::to_string(kMaxDepth) + " here)");
    if (!f.is_match)
      return fail(call.loc, "fragment " + quote(f.name) +
                                " is a piece of a rewrite; it cannot be used in a match");
    if (call.optional) return fail(call.loc, "a fragment cannot be optional ('" + f.name + "?')");
    if (!call.rest.empty())
      return fail(call.rest_loc, "a fragment takes its parameters, not a rest of inputs");
    const std::vector<const ir::Fragment::Param*> params = valueParams(f);
    if (call.inputs.size() != params.size())
      return fail(call.loc, "fragment " + quote(f.name) + " takes " +
                                std::to_string(params.size()) + " value" +
                                (params.size() == 1 ? "" : "s") + ", " +
                                std::to_string(call.inputs.size()) + " given: " + paramsText(f));
    for (ExprId in : call.inputs)
      if (p_.exprs[in].kind == Expr::Kind::kNone)
        return fail(p_.exprs[in].loc, "'none' cannot be passed to a fragment");
    for (const ir::AttrMatch& a : call.attrs) {
      const ir::Fragment::Param* p = findParam(f, a.name);
      if (!p || !p->attribute)
        return fail(a.loc, "fragment " + quote(f.name) + " has no attribute parameter " +
                               quote(a.name) + ": " + paramsText(f));
    }
    for (const auto& [index, name] : call.other_outputs)
      if (index >= f.results.size())
        return fail(call.loc, "fragment " + quote(f.name) + " has " +
                                  std::to_string(f.results.size()) + " result" +
                                  (f.results.size() == 1 ? "" : "s") + ", but " +
                                  std::to_string(index + 1) + " names are bound");

    const int n = ++uses_[f.name];
    const std::string prefix = f.name + "." + std::to_string(n) + ".";
    auto use = std::make_shared<const ir::FragmentUse>(ir::FragmentUse{f.name, call.loc});

    // The name each result is bound to at the use ("" when the use binds none).
    std::map<std::string, std::string> result_names;
    result_names[f.results[0]] = call.name == "_" ? "" : call.name;
    for (const auto& [index, name] : call.other_outputs)
      result_names[f.results[index]] = name == "_" ? "" : name;
    auto rename = [&](const std::string& local) {
      if (local.empty() || local == "_") return local;
      auto r = result_names.find(local);
      if (r != result_names.end() && !r->second.empty()) return r->second;
      return prefix + local;
    };

    // Where each expr of the body goes: a parameter is the use's argument, result 0 takes
    // the use's place, the others are appended.
    const std::vector<Expr>& body = f.match.exprs;
    std::vector<ExprId> remap(body.size(), kNoExpr);
    std::map<std::string, ExprId> args;
    for (size_t i = 0; i < params.size(); ++i) args[params[i]->name] = call.inputs[i];
    for (ExprId j = 0; j < body.size(); ++j)
      if (body[j].kind == Expr::Kind::kCapture && args.count(body[j].name))
        remap[j] = args.at(body[j].name);
    for (size_t k = 0; k < f.result_exprs.size(); ++k) {
      if (remap[f.result_exprs[k]] != kNoExpr && (k == 0 || result_names.count(f.results[k])))
        return fail(call.loc, "fragment " + quote(f.name) + " returns its parameter " +
                                  quote(f.results[k]) + " unchanged; use the argument itself");
    }
    remap[f.result_exprs[0]] = at;
    for (ExprId j = 0; j < body.size(); ++j) {
      if (remap[j] != kNoExpr) continue;
      remap[j] = static_cast<ExprId>(p_.exprs.size());
      p_.exprs.emplace_back();
      depth_.push_back(depth + 1);
    }
    depth_[at] = depth + 1;

    std::map<uint32_t, uint32_t> groups;
    for (ExprId j = 0; j < body.size(); ++j) {
      if (body[j].kind == Expr::Kind::kCapture && args.count(body[j].name)) continue;
      Expr e = body[j];
      for (ExprId& in : e.inputs) in = remap[in];
      e.loc = via(e.loc, use);
      e.rest_loc = via(e.rest_loc, use);
      e.name = rename(e.name);
      for (auto& [index, name] : e.other_outputs) name = rename(name);
      if (!e.rest.empty()) e.rest = rename(e.rest);
      if (e.group != ir::kNoGroup) {
        auto [it, added] = groups.emplace(e.group, next_group_);
        if (added) ++next_group_;
        e.group = it->second;
      }
      std::vector<ir::AttrMatch> attrs;
      for (ir::AttrMatch m : e.attrs) {
        m.loc = via(m.loc, use);
        if (m.kind == ir::AttrMatch::Kind::kCapture && m.capture != "_") {
          m.capture = prefix + m.capture;
        } else if (m.kind == ir::AttrMatch::Kind::kParam) {
          const std::string param = m.capture;
          auto given = std::find_if(call.attrs.begin(), call.attrs.end(),
                                    [&](const ir::AttrMatch& a) { return a.name == param; });
          if (given != call.attrs.end()) {
            const std::string attr_name = m.name;
            m = *given;
            m.name = attr_name;
          } else {
            const ir::Fragment::Param* p = findParam(f, param);
            if (!p || !p->default_value) continue;  // no condition
            m.kind = ir::AttrMatch::Kind::kEquals;
            m.values = {*p->default_value};
            m.capture.clear();
          }
        }
        attrs.push_back(std::move(m));
      }
      e.attrs = std::move(attrs);
      p_.exprs[remap[j]] = std::move(e);
    }

    // Further results read elsewhere as captures of their names (as secondary outputs of
    // an op are) are the copied values themselves.
    for (const auto& [index, name] : call.other_outputs) {
      if (name == "_") continue;
      const ExprId result = remap[f.result_exprs[index]];
      for (ExprId id = 0; id < p_.exprs.size(); ++id)
        if (id != result && p_.exprs[id].kind == Expr::Kind::kCapture && p_.exprs[id].name == name)
          redirect(id, result);
    }

    // The fragment's constraints, on the names of this copy.
    auto final_name = [&](const std::string& local, const SourceLoc& loc,
                          std::string& out) -> bool {
      auto arg = args.find(local);
      if (arg != args.end()) {
        Expr& a = p_.exprs[arg->second];
        if (a.kind == Expr::Kind::kConstant)
          return fail(via(loc, use), "fragment " + quote(f.name) + " constrains its parameter " +
                                         quote(local) +
                                         "; pass a name bound to the constant, not a number");
        if (a.name.empty() || a.name == "_") a.name = prefix + local;
        out = a.name;
        return true;
      }
      out = rename(local);
      return true;
    };
    // Checked only where this use matched (it may sit in one alternative of several).
    Expr& result = p_.exprs[at];
    if (result.name.empty() || result.name == "_") result.name = prefix + f.results[0];
    const std::string guard = result.name;
    for (ir::Constraint c : f.match.constraints) {
      c.loc = via(c.loc, use);
      if (c.guard.empty()) c.guard = guard;
      if (!final_name(c.subject, c.loc, c.subject)) return false;
      for (std::string& a : c.args)
        if (!final_name(a, c.loc, a)) return false;
      p_.constraints.push_back(std::move(c));
    }
    return true;
  }

  const std::map<std::string, const ir::Fragment*>& fragments_;
  DiagnosticEngine& diag_;
  ir::Pattern& p_;
  std::vector<int> depth_;  ///< per expr: how many fragment uses it was expanded through
  std::map<std::string, int> uses_;
  uint32_t next_group_ = 0;
};

//===----------------------------------------------------------------------===//
// Rewrite side
//===----------------------------------------------------------------------===//

class TargetExpander {
 public:
  /// `tags`: the alternative tags of the rule's match; `requires`: the rule's opset
  /// requirements. A fragment variant testing a tag the match does not have, or opsets the
  /// rule never runs at, can never be chosen in this rule and is left out (a fragment serves
  /// rules of many opsets; a rule's own unreachable variant is still an error, in the checks).
  TargetExpander(const std::map<std::string, const ir::Fragment*>& fragments,
                 DiagnosticEngine& diag, std::set<std::string> tags,
                 const std::vector<ir::Applicability>& requires)
      : fragments_(fragments), diag_(diag), tags_(std::move(tags)), requires_(requires) {}

  /// Appends `t` with its fragment uses expanded (several variants when a fragment has
  /// several) to `out`.
  bool expand(const ir::Target& t, std::vector<ir::Target>& out, int depth = 0) {
    uint32_t at = 0;
    while (at < t.exprs.size() && !(t.exprs[at].kind == ir::TargetExpr::Kind::kOp &&
                                    isUse(t.exprs[at].domain, t.exprs[at].op, fragments_)))
      ++at;
    if (at == t.exprs.size()) {
      out.push_back(t);
      return true;
    }
    const ir::TargetExpr& call = t.exprs[at];
    const ir::Fragment& f = *fragments_.at(call.op);
    if (depth >= kMaxDepth)
      return fail(call.loc, "fragment " + quote(f.name) +
                                " is used inside itself (fragments nest deeper than " +
                                std::to_string(kMaxDepth) + " here)");
    if (f.is_match)
      return fail(call.loc, "fragment " + quote(f.name) +
                                " is a piece of a match; it cannot be used in a rewrite");
    bool ok = true;
    for (size_t v = 0; v < f.rewrite.size(); ++v) {
      if (f.rewrite[v].when &&
          std::any_of(f.rewrite[v].when->tags.begin(), f.rewrite[v].when->tags.end(),
                      [&](const std::string& tag) { return !tags_.count(tag); }))
        continue;
      std::optional<ir::Target::When> when;
      bool empty = false;
      if (!combineWhen(t.when, f.rewrite[v].when, when, empty))
        return fail(call.loc, "the opsets of variant " + std::to_string(v + 1) + " of fragment " +
                                  quote(f.name) + " and of this rewrite are of two domains");
      if (empty || outsideRequires(f.rewrite[v].when)) continue;
      ir::Target copy = t;
      if (!substitute(copy, at, f, v)) return false;
      copy.when = when;
      ok &= expand(copy, out, depth + 1);
    }
    return ok;
  }

 private:
  bool fail(const SourceLoc& loc, const std::string& message) {
    diag_.error(loc, message);
    return false;
  }

  /// Whether `when`'s opsets and the rule's requirement on the same domain do not overlap.
  bool outsideRequires(const std::optional<ir::Target::When>& when) const {
    if (!when || (when->min_opset < 0 && when->max_opset < 0)) return false;
    for (const ir::Applicability& r : requires_) {
      if (OpCatalog::normalizeDomain(r.domain) != OpCatalog::normalizeDomain(when->domain))
        continue;
      const bool below = r.max_opset >= 0 && when->min_opset > r.max_opset;
      const bool above = when->max_opset >= 0 && r.min_opset > when->max_opset;
      if (below || above) return true;
    }
    return false;
  }

  static void redirect(ir::Target& t, uint32_t from, uint32_t to) {
    for (ir::TargetExpr& e : t.exprs)
      for (uint32_t& in : e.inputs)
        if (in == from) in = to;
    for (auto& [name, id] : t.replacements)
      if (id == from) id = to;
  }

  /// Replaces use `at` in `t` by a copy of variant `v` of `f`.
  bool substitute(ir::Target& t, uint32_t at, const ir::Fragment& f, size_t v) {
    const ir::TargetExpr call = t.exprs[at];
    const ir::Target& body = f.rewrite[v];
    const std::vector<const ir::Fragment::Param*> params = valueParams(f);
    if (call.inputs.size() != params.size())
      return fail(call.loc, "fragment " + quote(f.name) + " takes " +
                                std::to_string(params.size()) + " value" +
                                (params.size() == 1 ? "" : "s") + ", " +
                                std::to_string(call.inputs.size()) + " given: " + paramsText(f));
    for (uint32_t in : call.inputs)
      if (t.exprs[in].kind == ir::TargetExpr::Kind::kRest)
        return fail(t.exprs[in].loc, "a fragment takes its parameters, not a rest of inputs");
    for (const ir::TargetAttr& a : call.attrs) {
      const ir::Fragment::Param* p = findParam(f, a.name);
      if (!p || !p->attribute)
        return fail(a.loc, "fragment " + quote(f.name) + " has no attribute parameter " +
                               quote(a.name) + ": " + paramsText(f));
    }
    if (call.num_outputs > f.results.size())
      return fail(call.loc, "fragment " + quote(f.name) + " has " +
                                std::to_string(f.results.size()) + " result" +
                                (f.results.size() == 1 ? "" : "s") + ", but " +
                                std::to_string(call.num_outputs) + " names are bound");
    auto use = std::make_shared<const ir::FragmentUse>(ir::FragmentUse{f.name, call.loc});
    const std::string variant =
        f.rewrite.size() > 1 ? "variant " + std::to_string(v + 1) + " of fragment " : "fragment ";

    // The body's value of each result.
    std::vector<uint32_t> results;
    for (uint32_t k = 0; k < std::max<uint32_t>(call.num_outputs, 1); ++k) {
      auto r = std::find_if(body.replacements.begin(), body.replacements.end(),
                            [&](const auto& rep) { return rep.first == f.results[k]; });
      if (r == body.replacements.end())
        return fail(via(body.loc, use),
                    variant + quote(f.name) + " does not define its result " + quote(f.results[k]));
      results.push_back(r->second);
    }

    std::map<std::string, uint32_t> args;
    for (size_t i = 0; i < params.size(); ++i) args[params[i]->name] = call.inputs[i];
    // value(p), helper(h, p), tensor(helper, h, p) and tensor(like(p), v) read matched values
    // by name: a parameter there is the name of the matched value the use passes.
    auto matched_name = [&](std::string& name, const SourceLoc& loc) {
      auto a = args.find(name);
      if (a == args.end()) return true;
      const ir::TargetExpr& arg = t.exprs[a->second];
      if (arg.kind != ir::TargetExpr::Kind::kRef)
        return fail(via(loc, use), variant + quote(f.name) + " reads its parameter " + quote(name) +
                                       " as a matched value; pass a name the "
                                       "match binds");
      name = arg.name;
      return true;
    };
    std::vector<uint32_t> remap(body.exprs.size(), UINT32_MAX);
    for (uint32_t j = 0; j < body.exprs.size(); ++j) {
      const ir::TargetExpr& e = body.exprs[j];
      if (e.kind == ir::TargetExpr::Kind::kRef) {
        auto a = args.find(e.name);
        if (a == args.end())
          return fail(via(e.loc, use), variant + quote(f.name) + " reads " + quote(e.name) +
                                           ", which is neither its parameter nor defined in it");
        remap[j] = a->second;
      } else if (e.kind == ir::TargetExpr::Kind::kRest) {
        return fail(via(e.loc, use), "a fragment cannot splice a rest of inputs");
      }
    }
    // A result that is a parameter (`b = causal`) is that argument: readers of the use read
    // it. Otherwise the result's copy takes the use's place.
    const bool returns_param = remap[results[0]] != UINT32_MAX;
    const uint32_t param_result = remap[results[0]];
    if (!returns_param) remap[results[0]] = at;
    for (uint32_t j = 0; j < body.exprs.size(); ++j) {
      if (remap[j] != UINT32_MAX) continue;
      remap[j] = static_cast<uint32_t>(t.exprs.size());
      t.exprs.emplace_back();
    }
    for (uint32_t j = 0; j < body.exprs.size(); ++j) {
      if (body.exprs[j].kind == ir::TargetExpr::Kind::kRef) continue;
      ir::TargetExpr e = body.exprs[j];
      for (uint32_t& in : e.inputs) in = remap[in];
      e.loc = via(e.loc, use);
      for (std::string& arg : e.args)
        if (!matched_name(arg, e.loc)) return false;
      if (!e.like.empty() && !matched_name(e.like, e.loc)) return false;
      std::vector<ir::TargetAttr> attrs;
      for (ir::TargetAttr a : e.attrs) {
        a.loc = via(a.loc, use);
        if (a.kind == ir::TargetAttr::Kind::kValueOf && !matched_name(a.ref, a.loc)) return false;
        if (a.kind == ir::TargetAttr::Kind::kHelper)
          for (std::string& arg : a.args)
            if (!matched_name(arg, a.loc)) return false;
        if (a.kind == ir::TargetAttr::Kind::kParam) {
          const std::string param = a.ref;
          auto given = std::find_if(call.attrs.begin(), call.attrs.end(),
                                    [&](const ir::TargetAttr& c) { return c.name == param; });
          if (given != call.attrs.end()) {
            const std::string attr_name = a.name;
            a = *given;
            a.name = attr_name;
          } else {
            const ir::Fragment::Param* p = findParam(f, param);
            if (!p || !p->default_value) continue;  // the op's default
            a.kind = ir::TargetAttr::Kind::kLiteral;
            a.literal = *p->default_value;
            a.ref.clear();
          }
        }
        attrs.push_back(std::move(a));
      }
      e.attrs = std::move(attrs);
      t.exprs[remap[j]] = std::move(e);
    }

    // Further results: the use's secondary outputs (op-less exprs naming the use) are the
    // copied values.
    for (uint32_t id = 0; id < t.exprs.size(); ++id) {
      const ir::TargetExpr& e = t.exprs[id];
      if (e.kind != ir::TargetExpr::Kind::kOp || !e.op.empty() || e.inputs.size() != 1 ||
          e.inputs[0] != at || id == at)
        continue;
      if (e.output >= results.size() || remap[results[e.output]] == UINT32_MAX) continue;
      redirect(t, id, remap[results[e.output]]);
    }
    if (returns_param) {
      redirect(t, at, param_result);
      t.exprs[at] = ir::TargetExpr{};  // no longer read; not a use any more
      t.exprs[at].kind = ir::TargetExpr::Kind::kNone;
    }
    return true;
  }

  const std::map<std::string, const ir::Fragment*>& fragments_;
  DiagnosticEngine& diag_;
  std::set<std::string> tags_;
  const std::vector<ir::Applicability>& requires_;
};

/// Whether `b` holds whenever `a` does (a implies b): b's tags are among a's, and b's
/// opsets, if it has any, contain a's.
bool whenImplies(const std::optional<ir::Target::When>& a,
                 const std::optional<ir::Target::When>& b) {
  if (!b) return true;
  const bool b_opset = b->min_opset >= 0 || b->max_opset >= 0;
  for (const std::string& tag : b->tags)
    if (!a || std::find(a->tags.begin(), a->tags.end(), tag) == a->tags.end()) return false;
  if (!b_opset) return true;
  if (!a || (a->min_opset < 0 && a->max_opset < 0)) return false;
  if (OpCatalog::normalizeDomain(a->domain) != OpCatalog::normalizeDomain(b->domain)) return false;
  const bool above_min = b->min_opset < 0 || (a->min_opset >= 0 && a->min_opset >= b->min_opset);
  const bool below_max = b->max_opset < 0 || (a->max_opset >= 0 && a->max_opset <= b->max_opset);
  return above_min && below_max;
}

/// The first variant whose `when` holds is built, so an expansion whose `when` implies an
/// earlier one's is never built: a fragment used twice with variants by one tag (normed_3d
/// for Q and for K) expands to four combinations of which two mix "tag" and "no tag". Only
/// expansions of one rule variant are compared, so a rule's own unreachable variant is
/// still reported by the checks.
void dropShadowedExpansions(std::vector<ir::Target>& expanded) {
  std::vector<ir::Target> kept;
  for (ir::Target& t : expanded) {
    const bool shadowed = std::any_of(kept.begin(), kept.end(), [&](const ir::Target& earlier) {
      return whenImplies(t.when, earlier.when);
    });
    if (!shadowed) kept.push_back(std::move(t));
  }
  expanded = std::move(kept);
}

}  // namespace

bool expandFragments(ir::RuleFile& file, DiagnosticEngine& diag) {
  const unsigned errors = diag.errorCount();
  std::map<std::string, const ir::Fragment*> fragments;
  for (const ir::Fragment& f : file.fragments) {
    auto [it, added] = fragments.emplace(f.name, &f);
    if (!added) {
      diag.error(f.loc, "fragment " + quote(f.name) + " is defined twice");
      diag.note(it->second->loc, quote(f.name) + " is first defined here");
    }
    if (f.results.empty() || (f.is_match && f.result_exprs.size() != f.results.size()))
      diag.error(f.loc, "malformed fragment " + quote(f.name) + ": its results are unknown");
  }
  if (diag.errorCount() != errors) return false;
  if (fragments.empty()) return true;
  for (ir::Rule& rule : file.rules) {
    if (!PatternExpander(fragments, diag, rule.pattern).run()) continue;
    std::vector<ir::Target> targets;
    std::set<std::string> tags;
    for (const ir::Expr& e : rule.pattern.exprs)
      for (const std::string& tag : e.tags)
        if (!tag.empty()) tags.insert(tag);
    TargetExpander expander(fragments, diag, std::move(tags), rule.requires);
    bool ok = true;
    for (const ir::Target& t : rule.targets) {
      std::vector<ir::Target> expanded;
      ok &= expander.expand(t, expanded);
      dropShadowedExpansions(expanded);
      for (ir::Target& e : expanded) targets.push_back(std::move(e));
    }
    if (ok) rule.targets = std::move(targets);
  }
  return diag.errorCount() == errors;
}

}  // namespace onnx_rewrite
