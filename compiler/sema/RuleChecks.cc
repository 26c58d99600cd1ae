//===- RuleChecks.cc - semantic checks on Rule IR, after either front end -===//
//
// One RuleChecker walks a rule set. Per rule: the requires ranges, the match
// (ops, attributes, arity, alternatives, names it binds), the constraints, each
// rewrite variant (reachability, ops at every opset of its range, names it
// reads, the root replaced, the endless-loop test), then the unused captures.
// Declarations are checked first and feed the catalog.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/RuleChecks.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "compiler/ir/RulePrinter.h"
#include "compiler/sema/EndlessRewrites.h"
#include "compiler/sema/OpCatalog.h"
#include "compiler/sema/RuleOverlaps.h"
#include "runtime/match/OpsetForms.h"

namespace onnx_rewrite {
namespace {

using ir::AttrMatch;
using ir::Expr;
using ir::ExprId;
using ir::Literal;
using ir::Rule;
using ir::SourceLoc;
using ir::Target;
using ir::TargetAttr;
using ir::TargetExpr;

// ---- Small helpers ---------------------------------------------------------------------

std::string quote(const std::string& s) { return "'" + s + "'"; }

const SourceLoc& locOr(const SourceLoc& loc, const SourceLoc& fallback) {
  return loc.known() ? loc : fallback;
}

std::string domainText(const std::string& normalized) {
  return normalized.empty() ? "ai.onnx" : normalized;
}

std::string kindName(const Literal& l) {
  switch (l.kind) {
    case Literal::Kind::kInt:
      return "int";
    case Literal::Kind::kFloat:
      return "float";
    case Literal::Kind::kString:
      return "string";
    case Literal::Kind::kInts:
      return "ints";
    case Literal::Kind::kFloats:
      return "floats";
    case Literal::Kind::kStrings:
      return "strings";
  }
  return "?";
}

bool isListType(const std::string& t) { return t == "ints" || t == "floats" || t == "strings"; }

/// True if literal `l` can be the value of an attribute of type `type`. An int literal
/// fits a float attribute (`alpha=1`), an empty list any list type.
bool literalFits(const Literal& l, const std::string& type) {
  switch (l.kind) {
    case Literal::Kind::kInt:
      return type == "int" || type == "float";
    case Literal::Kind::kFloat:
      return type == "float";
    case Literal::Kind::kString:
      return type == "string";
    case Literal::Kind::kInts:
      return type == "ints" || type == "floats" || (l.ints.empty() && isListType(type));
    case Literal::Kind::kFloats:
      return type == "floats" || (l.floats.empty() && isListType(type));
    case Literal::Kind::kStrings:
      return type == "strings" || (l.strings.empty() && isListType(type));
  }
  return false;
}

bool isKnownAttrType(const std::string& t) {
  static const std::set<std::string> kTypes = {
      "int",   "float",         "string",     "ints",    "floats", "strings",        "tensor",
      "graph", "sparse_tensor", "type_proto", "tensors", "graphs", "sparse_tensors", "type_protos"};
  return kTypes.count(t) != 0;
}

std::string countText(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

/// Opsets [lo, hi] of one domain; `explicit_` when a `requires` or `when` gave them.
struct Range {
  int64_t lo = 1, hi = 0;
  bool explicit_ = false;
  bool empty() const { return lo > hi; }
};

std::string rangeText(const std::string& domain, const Range& r) {
  std::string text = domainText(domain) + " " + std::to_string(r.lo);
  if (r.hi != r.lo) text += "-" + std::to_string(r.hi);
  return text;
}

std::string boundsText(int64_t min_opset, int64_t max_opset) {
  std::string s;
  if (min_opset >= 0) s += ">= " + std::to_string(min_opset);
  if (max_opset >= 0)
    s += std::string(s.empty() ? "" : " and ") + "<= " + std::to_string(max_opset);
  return s;
}

// ---- Declarations ----------------------------------------------------------------------

/// Validates `decls` and returns them without duplicates. A declaration with a problem is
/// still returned, so rules using its op are not reported again as using an unknown op.
std::vector<ir::OpDecl> checkDecls(const std::vector<const ir::OpDecl*>& decls,
                                   DiagnosticEngine& diag) {
  std::vector<ir::OpDecl> out;
  std::map<std::tuple<std::string, std::string, int64_t>, const ir::OpDecl*> seen;
  for (const ir::OpDecl* d : decls) {
    std::string domain = OpCatalog::normalizeDomain(d->domain);
    std::string name = quote(OpCatalog::displayName(domain, d->op));
    if (d->op.empty()) {
      diag.error(d->loc, "op declaration without an op name");
      continue;
    }
    if (d->since_version < 1)
      diag.error(d->loc, "op " + name + ": 'since' must be at least 1, not " +
                             std::to_string(d->since_version));
    auto checkParams = [&](const std::vector<ir::OpDecl::Param>& ps, const char* what) {
      for (size_t i = 0; i + 1 < ps.size(); ++i)
        if (ps[i].variadic)
          diag.error(d->loc, "op " + name + ": only the last " + what + " can be variadic");
    };
    checkParams(d->inputs, "input");
    checkParams(d->outputs, "output");
    std::set<std::string> attr_names;
    for (const ir::OpDecl::Attr& a : d->attrs) {
      if (!attr_names.insert(a.name).second)
        diag.error(d->loc, "op " + name + " declares attribute " + quote(a.name) + " twice");
      if (!isKnownAttrType(a.type))
        diag.error(d->loc, "attribute " + quote(a.name) + " of op " + name + " has unknown type " +
                               quote(a.type));
      else if (a.default_value && !literalFits(*a.default_value, a.type))
        diag.error(d->loc, "default of attribute " + quote(a.name) + " of op " + name + " is " +
                               kindName(*a.default_value) + ", but the attribute is " + a.type);
    }
    auto key = std::make_tuple(domain, d->op, d->since_version);
    auto it = seen.find(key);
    if (it != seen.end()) {
      if (ir::printOpDecl(*it->second) != ir::printOpDecl(*d)) {
        diag.error(d->loc, "op " + name + " (since " + std::to_string(d->since_version) +
                               ") is declared twice, with different signatures");
        diag.note(it->second->loc, "the other declaration is here");
      }
      continue;
    }
    seen.emplace(key, d);
    out.push_back(*d);
  }
  return out;
}

// ---- The checker -----------------------------------------------------------------------

/// What an attribute capture of the match captured, for attr(c) type checks.
struct AttrCapture {
  const AttrMatch* match = nullptr;
  std::string type;  ///< the captured attribute's type, "" if unknown
  std::string op;    ///< display name of the op it belongs to
};

class RuleChecker {
 public:
  RuleChecker(const OpCatalog& catalog, DiagnosticEngine& diag) : catalog_(catalog), diag_(diag) {}

  void checkFile(ir::RuleFile& file) {
    std::map<std::string, const Rule*> names;
    for (Rule& rule : file.rules) {
      if (!rule.name.empty()) {
        auto [it, inserted] = names.emplace(rule.name, &rule);
        if (!inserted) {
          diag_.error(rule.loc, "duplicate rule name " + quote(rule.name));
          diag_.note(it->second->loc, quote(rule.name) + " is first defined here");
        }
      } else {
        diag_.error(rule.loc, "rule without a name");
      }
      checkRule(rule);
    }
  }

 private:
  // ---- Per rule ------------------------------------------------------------------------

  void checkRule(Rule& rule) {
    rule_ = &rule;
    value_names_.clear();
    capture_refs_.clear();
    capture_first_.clear();
    attr_captures_.clear();
    alt_tags_.clear();
    used_.clear();
    used_attr_captures_.clear();
    reachable_.clear();
    rests_.clear();
    used_rests_.clear();

    if (rule.priority > kMaxRulePriority || rule.priority < -kMaxRulePriority)
      diag_.error(rule.loc, "priority " + std::to_string(rule.priority) + " is out of range [-" +
                                std::to_string(kMaxRulePriority) + ", " +
                                std::to_string(kMaxRulePriority) + "]");
    for (const std::string& tag : rule.tags) {
      const auto& known = knownRuleTags();
      if (std::find(known.begin(), known.end(), tag) == known.end())
        diag_.warning(rule.loc, "unknown tag " + quote(tag) + " (known: " + knownTagList() + ")");
    }
    checkRequires(rule);

    if (rule.pattern.root == ir::kNoExpr || rule.pattern.root >= rule.pattern.exprs.size()) {
      diag_.error(rule.loc, "rule " + quote(rule.name) + " has no match");
      return;
    }
    // Moved parameters written as constant inputs become attribute conditions first.
    bool moved = false;
    for (Expr& e : rule.pattern.exprs)
      if (e.kind == Expr::Kind::kOp) moved |= movedParamsToAttrs(e);
    if (moved) ir::compactPattern(rule.pattern);
    if (!collectPattern(rule.pattern)) return;
    for (ExprId id : reachable_) {
      Expr& e = rule.pattern.exprs[id];
      if (e.kind == Expr::Kind::kOp) checkPatternOp(e);
      if (e.kind == Expr::Kind::kAlternatives) checkAlternatives(rule.pattern, e);
    }
    checkConstraints(rule.pattern);

    if (rule.targets.empty()) diag_.error(rule.loc, "rule " + quote(rule.name) + " has no rewrite");
    const Expr& root = rule.pattern.exprs[rule.pattern.root];
    if (root.name.empty() && !rule.targets.empty())
      diag_.error(locOr(root.loc, rule.loc),
                  "the match root has no name, so the rewrite cannot replace it");
    for (size_t t = 0; t < rule.targets.size(); ++t) checkTarget(rule, t);
    reportUnused(rule.pattern);
  }

  void checkRequires(const Rule& rule) {
    for (const ir::Applicability& a : rule.requires) {
      const SourceLoc& loc = locOr(a.loc, rule.loc);
      if (a.min_opset >= 0 && a.max_opset >= 0 && a.min_opset > a.max_opset) {
        diag_.error(loc,
                    "empty opset range in 'requires': " + boundsText(a.min_opset, a.max_opset));
        continue;
      }
      int64_t newest = catalog_.newestOpset(a.domain);
      std::string d = OpCatalog::normalizeDomain(a.domain);
      if (newest >= 0 && a.min_opset > newest)
        diag_.warning(loc, "opset " + std::to_string(a.min_opset) + " of " + domainText(d) +
                               " is newer than the newest the checks know (" +
                               std::to_string(newest) + "); checking against " +
                               std::to_string(newest));
    }
  }

  /// The opsets of `domain` the rule runs at.
  Range ruleRange(const std::string& domain) const {
    int64_t newest = catalog_.newestOpset(domain);
    for (const ir::Applicability& a : rule_->requires) {
      if (OpCatalog::normalizeDomain(a.domain) != domain) continue;
      Range r;
      r.explicit_ = true;
      r.lo = std::min(std::max<int64_t>(a.min_opset, 1), newest);
      r.hi = std::min(a.max_opset >= 0 ? a.max_opset : newest, newest);
      if (r.lo > r.hi) r.hi = r.lo;  // reported by checkRequires
      return r;
    }
    Range r;
    r.lo = r.hi = newest;
    return r;
  }

  /// The opsets of `domain` rewrite variant `t` must be valid at.
  Range targetRange(const Target& t, const std::string& domain) const {
    Range base = ruleRange(domain);
    if (!t.when || OpCatalog::normalizeDomain(t.when->domain) != domain ||
        (t.when->min_opset < 0 && t.when->max_opset < 0))
      return base;
    int64_t newest = catalog_.newestOpset(domain);
    if (!base.explicit_) base = Range{1, newest, true};
    int64_t lo = std::min(std::max<int64_t>(t.when->min_opset, 1), newest);
    int64_t hi = std::min(t.when->max_opset >= 0 ? t.when->max_opset : newest, newest);
    return Range{std::max(base.lo, lo), std::min(base.hi, hi), true};
  }

  /// targetRange without the opsets an earlier variant of the rule takes whatever the match
  /// (a `when` of opsets only): a fallback after `when: {opset: ">=11"}` is only ever built
  /// below 11. Trimmed at either end; an earlier variant inside the range leaves it whole.
  Range uncoveredRange(const Target& t, const std::string& domain) const {
    Range r = targetRange(t, domain);
    if (!rule_) return r;
    for (const Target& earlier : rule_->targets) {
      if (&earlier == &t) break;
      if (!earlier.when || !earlier.when->tags.empty() ||
          OpCatalog::normalizeDomain(earlier.when->domain) != domain ||
          (earlier.when->min_opset < 0 && earlier.when->max_opset < 0))
        continue;
      const Range taken = targetRange(earlier, domain);
      if (taken.empty()) continue;
      if (taken.lo <= r.lo && taken.hi >= r.lo) r.lo = taken.hi + 1;
      if (taken.lo <= r.hi && taken.hi >= r.hi) r.hi = taken.lo - 1;
    }
    return r;
  }

  // ---- The match -----------------------------------------------------------------------

  /// Walks the DAG from the root: reachable exprs (in id order), bound names, capture
  /// reference counts, alternative tags. False if the IR is malformed.
  bool collectPattern(const ir::Pattern& p) {
    std::vector<bool> seen(p.exprs.size(), false);
    std::vector<ExprId> stack = {p.root};
    seen[p.root] = true;
    bool ok = true;
    if (p.exprs[p.root].kind == Expr::Kind::kCapture) countCapture(p, p.root);
    while (!stack.empty()) {
      ExprId id = stack.back();
      stack.pop_back();
      const Expr& e = p.exprs[id];
      for (ExprId in : e.inputs) {
        if (in >= p.exprs.size()) {
          diag_.error(locOr(e.loc, rule_->loc),
                      "malformed rule IR: operand " + std::to_string(in) + " does not exist");
          ok = false;
          continue;
        }
        if (p.exprs[in].kind == Expr::Kind::kCapture) countCapture(p, in);
        if (!seen[in]) {
          seen[in] = true;
          stack.push_back(in);
        }
      }
    }
    for (ExprId id = 0; id < p.exprs.size(); ++id) {
      if (!seen[id]) continue;
      reachable_.push_back(id);
      const Expr& e = p.exprs[id];
      if (!e.name.empty() && e.name != "_") value_names_.insert(e.name);
      for (const auto& [index, name] : e.other_outputs)
        if (name != "_") value_names_.insert(name);
      for (const std::string& tag : e.tags)
        if (!tag.empty()) alt_tags_.insert(tag);
    }
    for (ExprId id : reachable_) {
      const Expr& e = p.exprs[id];
      if (e.rest.empty() || e.rest == "_") continue;
      const SourceLoc& loc = locOr(e.rest_loc, locOr(e.loc, rule_->loc));
      auto [it, inserted] = rests_.emplace(e.rest, loc);
      if (!inserted) {
        diag_.error(loc, quote(e.rest) + " is bound twice");
        diag_.note(it->second, quote(e.rest) + " is first bound here");
        ok = false;
      } else if (value_names_.count(e.rest) || capture_refs_.count(e.rest)) {
        diag_.error(loc, quote(e.rest) + " names a rest of inputs ('" + e.rest +
                             "...') and a single value; use two names");
        ok = false;
      }
    }
    if (p.exprs[p.root].kind == Expr::Kind::kNone) {
      diag_.error(locOr(p.exprs[p.root].loc, rule_->loc), "the root of a match cannot be 'none'");
      ok = false;
    }
    return ok;
  }

  void countCapture(const ir::Pattern& p, ExprId id) {
    const Expr& e = p.exprs[id];
    if (e.name.empty() || e.name == "_") return;
    ++capture_refs_[e.name];
    capture_first_.emplace(e.name, id);
  }

  /// The distinct signatures of op (`domain`, `op`) at the opsets of `r`, oldest first.
  std::vector<const OpSignature*> signatures(const std::string& domain, const std::string& op,
                                             const Range& r) const {
    std::vector<const OpSignature*> out;
    for (int64_t v = r.lo; v <= r.hi; ++v) {
      const OpSignature* s = catalog_.find(domain, op, v);
      if (s && (out.empty() || out.back()->since_version != s->since_version ||
                out.back()->source != s->source))
        out.push_back(s);
    }
    return out;
  }

  std::string availabilityText(const std::string& domain, const std::string& op) const {
    auto range = catalog_.availability(domain, op);
    if (!range) return "";
    if (range->second == catalog_.newestOpset(domain))
      return "it exists from opset " + std::to_string(range->first);
    if (range->first == range->second) return "it exists at opset " + std::to_string(range->first);
    return "it exists at opsets " + std::to_string(range->first) + "-" +
           std::to_string(range->second);
  }

  /// Reports an unknown domain or op; true if the op is known.
  bool checkOpKnown(const std::string& raw_domain, const std::string& op, const SourceLoc& loc) {
    std::string domain = OpCatalog::normalizeDomain(raw_domain);
    std::string name = OpCatalog::displayName(domain, op);
    if (!catalog_.knowsDomain(domain)) {
      diag_.error(loc, "unknown domain " + quote(domain) + " of op " + quote(name) +
                           ": it is neither ONNX nor declared under 'ops:'");
      return false;
    }
    if (!catalog_.knowsOp(domain, op)) {
      std::string suggestion = catalog_.suggestOp(domain, op);
      diag_.error(loc, "unknown op " + quote(name) +
                           (suggestion.empty() ? "" : "; did you mean " + quote(suggestion) + "?"));
      return false;
    }
    return true;
  }

  /// The type of attribute `name`: from the newest signature that has it, else (a moved
  /// attribute) from the op's signature just before it moved. "" if unknown.
  std::string attrType(const std::vector<const OpSignature*>& sigs, const std::string& domain,
                       const std::string& op, const std::string& name) const {
    for (auto it = sigs.rbegin(); it != sigs.rend(); ++it)
      if (const OpAttr* a = (*it)->findAttr(name)) return a->type;
    if (const OpsetForm* form = findOpsetForm(domain, op, name)) {
      if (const OpSignature* before = catalog_.find(domain, op, form->since_version - 1))
        if (const OpAttr* a = before->findAttr(name)) return a->type;
    }
    return "";
  }

  std::vector<std::string> attrNames(const std::vector<const OpSignature*>& sigs) const {
    std::set<std::string> names;
    for (const OpSignature* s : sigs)
      for (const OpAttr& a : s->attrs) names.insert(a.name);
    return {names.begin(), names.end()};
  }

  std::string unknownAttrMessage(const std::string& op_name, const std::string& attr,
                                 const std::vector<const OpSignature*>& sigs) const {
    std::string suggestion = closestName(attr, attrNames(sigs));
    return "op " + quote(op_name) + " has no attribute " + quote(attr) +
           (suggestion.empty() ? "" : "; did you mean " + quote(suggestion) + "?");
  }

  /// `Unsqueeze(g, 1)`, `Slice(x, 0, 4, -1)`: moved parameters written as constant inputs
  /// become the attribute conditions they are (`axes=[1]`), which match both forms a node
  /// may have. Inputs that are names stay inputs: only nodes with them match.
  bool movedParamsToAttrs(Expr& e) {
    const ir::Pattern& p = rule_->pattern;
    size_t first = e.inputs.size();
    for (uint32_t k = 1; k < e.inputs.size(); ++k)
      if (findOpsetFormAtInput(e.domain, e.op, k)) {
        first = k;
        break;
      }
    if (first == e.inputs.size()) return false;
    for (size_t k = first; k < e.inputs.size(); ++k) {
      if (e.inputs[k] >= p.exprs.size()) return false;
      const Expr& in = p.exprs[e.inputs[k]];
      if (in.kind != Expr::Kind::kConstant || !findOpsetFormAtInput(e.domain, e.op, k))
        return false;
      if (in.literal.kind != Literal::Kind::kInt && in.literal.kind != Literal::Kind::kInts)
        return false;
    }
    for (size_t k = first; k < e.inputs.size(); ++k) {
      const Expr& in = p.exprs[e.inputs[k]];
      const OpsetForm* form = findOpsetFormAtInput(e.domain, e.op, static_cast<uint32_t>(k));
      AttrMatch m;
      m.name = std::string(form->attr);
      m.kind = AttrMatch::Kind::kEquals;
      Literal value;
      value.kind = Literal::Kind::kInts;
      value.ints = in.literal.ints;
      m.values = {value};
      m.loc = in.loc;
      e.attrs.push_back(std::move(m));
    }
    e.inputs.resize(first);
    return true;
  }

  void checkPatternOp(Expr& e) {
    const SourceLoc& loc = locOr(e.loc, rule_->loc);
    if (!checkOpKnown(e.domain, e.op, loc)) return;
    std::string domain = OpCatalog::normalizeDomain(e.domain);
    std::string name = OpCatalog::displayName(domain, e.op);
    Range r = ruleRange(domain);
    std::vector<const OpSignature*> sigs = signatures(domain, e.op, r);
    if (sigs.empty()) {
      diag_.error(loc, "op " + quote(name) + " does not exist at the opsets this rule covers (" +
                           rangeText(domain, r) +
                           (r.explicit_ ? "" : ", the newest: the rule has no 'requires'") + "); " +
                           availabilityText(domain, e.op));
      return;
    }
    e.commutative = catalog_.isCommutative(domain, e.op) && e.inputs.size() == 2;

    // Inputs: the match is fine if some opset in range accepts the count (or, with a rest,
    // the count plus some more).
    // A moved parameter written as an attribute counts as its input where it is one.
    int n = static_cast<int>(e.inputs.size());
    bool fits = false;
    int most = 0, least = INT_MAX;
    for (const OpSignature* s : sigs) {
      int count = n;
      for (const AttrMatch& a : e.attrs) {
        const OpsetForm* form = findOpsetForm(domain, e.op, a.name);
        if (form && s->since_version >= form->since_version)
          count = std::max(count, static_cast<int>(form->input_index) + 1);
      }
      fits |= (count >= s->min_inputs || !e.rest.empty()) && count <= s->max_inputs;
      most = std::max(most, s->max_inputs);
      least = std::min(least, s->min_inputs);
    }
    if (!e.rest.empty() && fits && n == most)
      diag_.warning(locOr(e.rest_loc, loc), quote(e.rest + "...") + " is always empty: op " +
                                                quote(name) + " takes at most " +
                                                countText(most, "input"));
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      const ExprId in = e.inputs[k];
      if (in >= rule_->pattern.exprs.size() || rule_->pattern.exprs[in].kind != Expr::Kind::kNone)
        continue;
      bool optional_somewhere = false;
      const OpParam* param = nullptr;
      for (const OpSignature* s : sigs) {
        param = s->inputAt(k);
        optional_somewhere |= !param || param->optional;
      }
      if (!optional_somewhere)
        diag_.error(locOr(rule_->pattern.exprs[in].loc, loc),
                    "input " + std::to_string(k) + (param ? " (" + quote(param->name) + ")" : "") +
                        " of op " + quote(name) + " is required; 'none' can never match it");
    }
    if (!fits) {
      if (n > most)
        diag_.error(loc, "too many inputs for op " + quote(name) + ": " + std::to_string(n) +
                             " given, it takes at most " + std::to_string(most));
      else if (n < least)
        diag_.error(loc, "too few inputs for op " + quote(name) + ": " + std::to_string(n) +
                             " given, it takes at least " + std::to_string(least));
      else
        diag_.error(loc,
                    "op " + quote(name) + " takes no opset of this rule " + countText(n, "input"));
    }

    // Outputs the match reads.
    int outputs = 0;
    for (const OpSignature* s : sigs) outputs = std::max(outputs, s->max_outputs);
    std::vector<uint32_t> read = {e.output};
    for (const auto& [index, bound] : e.other_outputs) read.push_back(index);
    for (uint32_t index : read)
      if (static_cast<int64_t>(index) >= outputs)
        diag_.error(loc, "op " + quote(name) + " has no output " + std::to_string(index) +
                             " (it has " + countText(outputs, "output") + ")");

    // Attributes.
    std::set<std::string> given;
    for (AttrMatch& a : e.attrs) {
      const SourceLoc& aloc = locOr(a.loc, loc);
      if (!given.insert(a.name).second) {
        diag_.error(aloc, "attribute " + quote(a.name) + " is given twice");
        continue;
      }
      bool known = false;
      for (const OpSignature* s : sigs) known |= s->findAttr(a.name) != nullptr;
      known |= findOpsetForm(domain, e.op, a.name) != nullptr;
      if (!known) {
        diag_.error(aloc, unknownAttrMessage(name, a.name, sigs));
        continue;
      }
      std::string type = attrType(sigs, domain, e.op, a.name);
      checkAttrMatchType(a, type, name, aloc);
      if (a.kind == AttrMatch::Kind::kCapture && !a.capture.empty() && a.capture != "_") {
        auto [it, inserted] = attr_captures_.emplace(a.capture, AttrCapture{&a, type, name});
        if (!inserted) it->second.type = "";  // captured twice: type unknown
      }
      for (auto it = sigs.rbegin(); it != sigs.rend(); ++it) {
        const OpAttr* attr = (*it)->findAttr(a.name);
        if (attr && attr->default_value) {
          a.default_value = attr->default_value;
          break;
        }
      }
      // An older signature of the range defaulting otherwise (Softmax's axis 1 up to 12)
      // is matched with its own default at those opsets.
      a.older_defaults.clear();
      for (size_t i = 0; i + 1 < sigs.size() && a.default_value; ++i) {
        const OpAttr* attr = sigs[i]->findAttr(a.name);
        if (attr && attr->default_value && !(*attr->default_value == *a.default_value))
          a.older_defaults.emplace_back(sigs[i + 1]->since_version - 1, *attr->default_value);
      }
    }
  }

  void checkAttrMatchType(const AttrMatch& a, const std::string& type, const std::string& op,
                          const SourceLoc& loc) {
    if (type.empty()) return;
    auto prefix = [&] {
      return "attribute " + quote(a.name) + " of op " + quote(op) + " expects " + type;
    };
    switch (a.kind) {
      case AttrMatch::Kind::kEquals:
      case AttrMatch::Kind::kOneOf:
        for (const Literal& v : a.values) {
          if (!literalFits(v, type)) {
            diag_.error(loc, prefix() + ", got " + kindName(v) + " " + v.str());
            return;
          }
        }
        return;
      case AttrMatch::Kind::kRange:
        if (type != "int" && type != "float")
          diag_.error(loc, prefix() + ", which a numeric range cannot match");
        return;
      case AttrMatch::Kind::kCapture:
      case AttrMatch::Kind::kParam:
        return;
    }
  }

  bool matchesAnything(const ir::Pattern& p, ExprId id, int depth = 0) const {
    if (id >= p.exprs.size() || depth > 64) return false;
    const Expr& e = p.exprs[id];
    if (e.kind == Expr::Kind::kCapture) return true;
    if (e.kind == Expr::Kind::kAlternatives)
      for (ExprId alt : e.inputs)
        if (matchesAnything(p, alt, depth + 1)) return true;
    return false;
  }

  static bool sameAttr(const AttrMatch& a, const AttrMatch& b) {
    return a.name == b.name && a.kind == b.kind && a.values == b.values && a.min == b.min &&
           a.max == b.max && a.capture == b.capture;
  }

  /// True if exprs `a` and `b` match exactly the same subgraphs (binding names aside).
  bool sameStructure(const ir::Pattern& p, ExprId a, ExprId b, int depth = 0) const {
    if (a == b) return true;
    if (a >= p.exprs.size() || b >= p.exprs.size() || depth > 64) return false;
    const Expr& x = p.exprs[a];
    const Expr& y = p.exprs[b];
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case Expr::Kind::kCapture:
        return x.name == y.name && x.name != "_";
      case Expr::Kind::kConstant:
        return x.literal == y.literal && x.tolerance == y.tolerance;
      case Expr::Kind::kNone:
        return true;
      case Expr::Kind::kAlternatives: {
        if (x.inputs.size() != y.inputs.size()) return false;
        for (size_t i = 0; i < x.inputs.size(); ++i)
          if (!sameStructure(p, x.inputs[i], y.inputs[i], depth + 1)) return false;
        return true;
      }
      case Expr::Kind::kOp: {
        if (OpCatalog::normalizeDomain(x.domain) != OpCatalog::normalizeDomain(y.domain) ||
            x.op != y.op || x.output != y.output || x.optional != y.optional ||
            x.inputs.size() != y.inputs.size() || x.attrs.size() != y.attrs.size() ||
            x.rest.empty() != y.rest.empty())
          return false;
        for (const AttrMatch& xa : x.attrs) {
          bool found = false;
          for (const AttrMatch& ya : y.attrs) found |= sameAttr(xa, ya);
          if (!found) return false;
        }
        bool in_order = true;
        for (size_t i = 0; i < x.inputs.size(); ++i)
          in_order &= sameStructure(p, x.inputs[i], y.inputs[i], depth + 1);
        if (in_order) return true;
        return x.inputs.size() == 2 && catalog_.isCommutative(x.domain, x.op) &&
               sameStructure(p, x.inputs[0], y.inputs[1], depth + 1) &&
               sameStructure(p, x.inputs[1], y.inputs[0], depth + 1);
      }
    }
    return false;
  }

  void checkAlternatives(const ir::Pattern& p, const Expr& e) {
    // A tuple's alternative is taken by all its members at once: it is shadowed only when it
    // is for every member. The first member reports it.
    std::vector<const Expr*> members = {&e};
    if (e.group != ir::kNoGroup) {
      members.clear();
      for (const Expr& other : p.exprs)
        if (other.kind == Expr::Kind::kAlternatives && other.group == e.group)
          members.push_back(&other);
      if (members.empty() || members[0] != &e) return;
    }
    auto shadowed = [&](size_t j, size_t i, bool anything) {
      for (const Expr* m : members) {
        if (j >= m->inputs.size() || i >= m->inputs.size()) return false;
        if (anything ? !matchesAnything(p, m->inputs[j])
                     : !sameStructure(p, m->inputs[j], m->inputs[i]))
          return false;
      }
      return true;
    };
    for (size_t i = 1; i < e.inputs.size(); ++i) {
      if (e.inputs[i] >= p.exprs.size()) continue;
      const SourceLoc& loc = locOr(p.exprs[e.inputs[i]].loc, locOr(e.loc, rule_->loc));
      for (size_t j = 0; j < i; ++j) {
        if (shadowed(j, i, true)) {
          diag_.error(loc, "alternative " + std::to_string(i + 1) +
                               " can never be reached: alternative " + std::to_string(j + 1) +
                               " matches any value");
          break;
        }
        if (shadowed(j, i, false)) {
          diag_.error(loc, "alternative " + std::to_string(i + 1) +
                               " can never be reached: it is the same as alternative " +
                               std::to_string(j + 1));
          break;
        }
      }
    }
  }

  void checkConstraints(const ir::Pattern& p) {
    std::vector<std::string> bound(value_names_.begin(), value_names_.end());
    auto unbound = [&](const std::string& what, const std::string& n, const SourceLoc& loc) {
      std::string suggestion = closestName(n, bound);
      diag_.error(loc, what + " " + quote(n) + ", which the match does not bind" +
                           (suggestion.empty() ? "" : "; did you mean " + quote(suggestion) + "?"));
    };
    for (const ir::Constraint& c : p.constraints) {
      const SourceLoc& loc = locOr(c.loc, rule_->loc);
      if (rests_.count(c.subject))
        diag_.error(loc, "constraint on " + quote(c.subject) +
                             ", a rest of inputs: constraints apply to single values");
      else if (value_names_.count(c.subject))
        used_.insert(c.subject);
      else
        unbound("constraint on", c.subject, loc);
      if (c.kind == ir::Constraint::Kind::kEquivalent) {
        const std::string& other = c.args.empty() ? std::string() : c.args[0];
        if (value_names_.count(other))
          used_.insert(other);
        else
          unbound("'equivalent' names", other, loc);
        if (other == c.subject)
          diag_.warning(loc, quote(c.subject) + " is always equivalent to itself");
      }
      if (c.kind == ir::Constraint::Kind::kNative) {
        for (const std::string& arg : c.args) {
          if (value_names_.count(arg))
            used_.insert(arg);
          else
            unbound("native predicate " + quote(c.native) + " reads", arg, loc);
        }
      }
    }
  }

  void reportUnused(const ir::Pattern& p) {
    for (const auto& [name, refs] : capture_refs_) {
      if (refs >= 2 || used_.count(name)) continue;
      bool bound_by_op = false;
      for (ExprId id : reachable_) {
        const Expr& e = p.exprs[id];
        bound_by_op |= e.kind != Expr::Kind::kCapture && e.name == name;
        // `a, b = Split(x)` binds b too: a later `Neg(b)` reads it, it is not a capture.
        for (const auto& [index, bound] : e.other_outputs) bound_by_op |= bound == name;
      }
      if (bound_by_op) continue;
      const Expr& e = p.exprs[capture_first_.at(name)];
      diag_.warning(locOr(e.loc, rule_->loc), "capture " + quote(name) +
                                                  " is never used; write '_' to match any "
                                                  "value without binding it");
    }
    for (const auto& [name, loc] : rests_)
      if (!used_rests_.count(name))
        diag_.warning(loc, "rest " + quote(name) +
                               " is never spliced: the rewrite drops those "
                               "inputs; write '_...' to match them unbound");
    for (const auto& [name, capture] : attr_captures_) {
      if (used_attr_captures_.count(name)) continue;
      diag_.warning(locOr(capture.match->loc, rule_->loc), "attribute capture " + quote(name) +
                                                               " is never used: no attr(" + name +
                                                               ") in the rewrite");
    }
  }

  // ---- The rewrite ---------------------------------------------------------------------

  void checkTarget(Rule& rule, size_t index) {
    Target& t = rule.targets[index];
    const SourceLoc& tloc = locOr(t.loc, rule.loc);
    std::string variant = "rewrite variant " + std::to_string(index + 1);
    for (size_t k = 0; k < index; ++k) {
      if (!rule.targets[k].when) {
        diag_.error(tloc, variant + " can never be chosen: variant " + std::to_string(k + 1) +
                              " has no 'when' and always applies");
        break;
      }
    }
    bool ranges_ok = true;
    if (t.when) {
      const Target::When& w = *t.when;
      if (w.min_opset >= 0 && w.max_opset >= 0 && w.min_opset > w.max_opset) {
        diag_.error(tloc, "empty opset range in 'when': " + boundsText(w.min_opset, w.max_opset));
        ranges_ok = false;
      } else if (w.min_opset >= 0 || w.max_opset >= 0) {
        std::string d = OpCatalog::normalizeDomain(w.domain);
        Range rule_range = ruleRange(d);
        Range r = targetRange(t, d);
        if (r.empty() && rule_range.explicit_) {
          Range when_range{std::max<int64_t>(w.min_opset, 1),
                           w.max_opset >= 0 ? w.max_opset : catalog_.newestOpset(d), true};
          diag_.error(tloc, variant + " can never be chosen: its opsets (" +
                                rangeText(d, when_range) + ") and the rule's (" +
                                rangeText(d, rule_range) + ") do not overlap");
          ranges_ok = false;
        }
      }
      for (const std::string& tag : w.tags)
        if (!alt_tags_.count(tag))
          diag_.error(tloc,
                      "'when' tag " + quote(tag) + " is not a tag of any alternative in the match");
    }

    // Names the rewrite defines: left-hand names the match does not bind.
    std::map<std::string, uint32_t> defined;
    for (const auto& [name, id] : t.replacements)
      if (!value_names_.count(name)) defined.emplace(name, id);

    // Walk the target DAG from every replacement.
    std::vector<bool> seen(t.exprs.size(), false);
    std::vector<uint32_t> order;
    std::vector<uint32_t> stack;
    for (const auto& [name, id] : t.replacements) {
      if (id >= t.exprs.size()) {
        diag_.error(tloc, "malformed rule IR: " + quote(name) + " is replaced by a missing value");
        continue;
      }
      if (!seen[id]) {
        seen[id] = true;
        stack.push_back(id);
      }
    }
    while (!stack.empty()) {
      uint32_t id = stack.back();
      stack.pop_back();
      for (uint32_t in : t.exprs[id].inputs) {
        if (in >= t.exprs.size()) {
          diag_.error(locOr(t.exprs[id].loc, tloc),
                      "malformed rule IR: operand " + std::to_string(in) + " does not exist");
          continue;
        }
        if (!seen[in]) {
          seen[in] = true;
          stack.push_back(in);
        }
      }
    }
    for (uint32_t id = 0; id < t.exprs.size(); ++id)
      if (seen[id]) order.push_back(id);

    for (uint32_t id : order) {
      TargetExpr& e = t.exprs[id];
      const SourceLoc& eloc = locOr(e.loc, tloc);
      switch (e.kind) {
        case TargetExpr::Kind::kRef:
          checkRef(t, e, defined, eloc);
          break;
        case TargetExpr::Kind::kTensor:
          for (const std::string& arg : e.args) checkHelperArg(arg, defined, eloc);
          if (!e.like.empty()) checkLike(e.like, eloc);
          break;
        case TargetExpr::Kind::kNone:
          break;
        case TargetExpr::Kind::kRest:
          if (rests_.count(e.name))
            used_rests_.insert(e.name);
          else
            diag_.error(eloc, quote(e.name + "...") +
                                  " splices a rest of inputs, but the match binds no rest " +
                                  quote(e.name));
          break;
        case TargetExpr::Kind::kOp:
          if (e.op.empty()) {
            checkSecondaryOutput(t, e, eloc);
            break;
          }
          if (ranges_ok) checkTargetOp(t, e, eloc);
          for (TargetAttr& a : e.attrs) checkTargetAttrRefs(a, defined, locOr(a.loc, eloc));
          break;
      }
    }

    // The root must be replaced.
    const Expr& root = rule.pattern.exprs[rule.pattern.root];
    if (!root.name.empty()) {
      const std::pair<std::string, uint32_t>* root_replacement = nullptr;
      for (const auto& r : t.replacements)
        if (r.first == root.name) root_replacement = &r;
      if (!root_replacement)
        diag_.error(tloc, "the rewrite does not replace the match root " + quote(root.name));
      else if (root_replacement->second < t.exprs.size())
        checkEndlessLoop(rule, t.exprs[root_replacement->second], tloc);
    }
  }

  /// Both front ends write output k > 0 of a new node as an op-less kOp expr whose only
  /// input is that node (`y, _, _, sum = SkipLayerNormalization(...)` binds sum to one).
  void checkSecondaryOutput(const Target& t, const TargetExpr& e, const SourceLoc& loc) {
    if (e.inputs.size() != 1 || e.inputs[0] >= t.exprs.size() ||
        t.exprs[e.inputs[0]].kind != TargetExpr::Kind::kOp || t.exprs[e.inputs[0]].op.empty()) {
      diag_.error(loc, "malformed rule IR: an op-less rewrite value must name one new node");
      return;
    }
    const TargetExpr& node = t.exprs[e.inputs[0]];
    if (e.output >= node.num_outputs)
      diag_.error(loc, "output " + std::to_string(e.output) + " of op " +
                           quote(OpCatalog::displayName(node.domain, node.op)) +
                           " is not among the " + countText(node.num_outputs, "output") +
                           " the rewrite declares");
  }

  void checkRef(const Target& t, const TargetExpr& e,
                const std::map<std::string, uint32_t>& defined, const SourceLoc& loc) {
    if (rests_.count(e.name)) {
      diag_.error(loc, quote(e.name) + " is a rest of inputs; write '" + e.name +
                           "...' to splice it into a node's inputs");
      return;
    }
    if (value_names_.count(e.name)) {
      used_.insert(e.name);
      return;
    }
    auto it = defined.find(e.name);
    if (it == defined.end()) {
      std::vector<std::string> bound(value_names_.begin(), value_names_.end());
      for (const auto& [name, id] : defined) bound.push_back(name);
      std::string suggestion = closestName(e.name, bound);
      diag_.error(loc, quote(e.name) +
                           " is not bound by the match or by an earlier rewrite statement" +
                           (suggestion.empty() ? "" : "; did you mean " + quote(suggestion) + "?"));
      return;
    }
    // A name the rewrite defines must not be read by its own definition.
    if (reaches(t, it->second, &e))
      diag_.error(loc, quote(e.name) + " is read before the rewrite defines it");
  }

  /// True if `target` is `from` or one of its operands, transitively.
  static bool reaches(const Target& t, uint32_t from, const TargetExpr* target) {
    std::vector<bool> seen(t.exprs.size(), false);
    std::vector<uint32_t> stack = {from};
    while (!stack.empty()) {
      uint32_t id = stack.back();
      stack.pop_back();
      if (id >= t.exprs.size() || seen[id]) continue;
      seen[id] = true;
      if (&t.exprs[id] == target) return true;
      for (uint32_t in : t.exprs[id].inputs) stack.push_back(in);
    }
    return false;
  }

  /// `tensor(like(x), ...)` takes x's element type when the rule applies: x must be a value
  /// the match binds (a new node's output has no type yet).
  void checkLike(const std::string& name, const SourceLoc& loc) {
    if (value_names_.count(name)) {
      used_.insert(name);
      return;
    }
    diag_.error(loc,
                "tensor(like(" + name + "), ...): " + quote(name) +
                    (rests_.count(name) ? " is a rest of inputs" : " is not bound by the match") +
                    "; like takes a matched value");
  }

  void checkHelperArg(const std::string& arg, const std::map<std::string, uint32_t>& defined,
                      const SourceLoc& loc) {
    if (rests_.count(arg)) {
      diag_.error(loc,
                  "helper argument " + quote(arg) + " is a rest of inputs; helpers take values");
      return;
    }
    if (value_names_.count(arg)) {
      used_.insert(arg);
      return;
    }
    if (!defined.count(arg))
      diag_.error(loc, "helper argument " + quote(arg) + " is not bound by the match");
  }

  void checkTargetAttrRefs(const TargetAttr& a, const std::map<std::string, uint32_t>& defined,
                           const SourceLoc& loc) {
    switch (a.kind) {
      case TargetAttr::Kind::kLiteral:
        return;
      case TargetAttr::Kind::kValueOf:
        if (value_names_.count(a.ref))
          used_.insert(a.ref);
        else
          diag_.error(loc, "value(" + a.ref + "): " + quote(a.ref) + " is not bound by the match");
        return;
      case TargetAttr::Kind::kCaptured:
        if (attr_captures_.count(a.ref))
          used_attr_captures_.insert(a.ref);
        else
          diag_.error(loc,
                      "attr(" + a.ref + "): the match captures no attribute as " + quote(a.ref));
        return;
      case TargetAttr::Kind::kHelper:
        for (const std::string& arg : a.args) checkHelperArg(arg, defined, loc);
        return;
      case TargetAttr::Kind::kParam:
        diag_.error(loc, "attribute parameter " + quote(a.ref) + " outside a fragment");
        return;
    }
  }

  void checkTargetOp(const Target& t, TargetExpr& e, const SourceLoc& loc) {
    if (!checkOpKnown(e.domain, e.op, loc)) return;
    std::string domain = OpCatalog::normalizeDomain(e.domain);
    std::string name = OpCatalog::displayName(domain, e.op);
    Range r = uncoveredRange(t, domain);
    if (r.empty()) return;
    std::vector<const OpSignature*> sigs;
    std::vector<int64_t> first_version;  // the first opset of the range each sig covers
    for (int64_t v = r.lo; v <= r.hi; ++v) {
      const OpSignature* s = catalog_.find(domain, e.op, v);
      if (!s) {
        diag_.error(loc, "op " + quote(name) + " does not exist at opset " + std::to_string(v) +
                             ", which this rewrite must support (" + rangeText(domain, r) +
                             (r.explicit_ ? "" : ", the newest: the rule has no 'requires'") +
                             "); " + availabilityText(domain, e.op));
        return;
      }
      if (sigs.empty() || sigs.back()->since_version != s->since_version ||
          sigs.back()->source != s->source) {
        sigs.push_back(s);
        first_version.push_back(v);
      }
    }
    auto at = [&](size_t i) {
      return sigs.size() > 1 ? " at opset " + std::to_string(first_version[i]) : std::string();
    };

    // Inputs, and 'none' only where an input is optional. A spliced rest counts as none:
    // the count is checked without it (its inputs are the matched node's own).
    const bool variadic = std::all_of(sigs.begin(), sigs.end(), [](const OpSignature* s) {
      return s->max_inputs == kUnboundedArity;
    });
    int n = 0;
    bool spliced = false;
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      const uint32_t in = e.inputs[k];
      if (in >= t.exprs.size() || t.exprs[in].kind != TargetExpr::Kind::kRest) {
        ++n;
        continue;
      }
      spliced = true;
      if (k + 1 < e.inputs.size() && !variadic)
        diag_.error(locOr(t.exprs[in].loc, loc),
                    "a rest spliced before other inputs of op " + quote(name) +
                        ", which is not variadic, moves them to other positions");
    }
    // A parameter later opsets moved to an input may be written either way; the node is
    // built in the form of the model's opset (runtime/driver/OpsetFormOfNode.h). At each
    // opset the inputs counted are the written ones, less those that are attributes there,
    // plus the attributes that are inputs there.
    auto inputsAt = [&](int64_t version) {
      int count = n;
      for (uint32_t k = 1; k < e.inputs.size(); ++k) {
        const OpsetForm* form = findOpsetFormAtInput(domain, e.op, k);
        if (form && version < form->since_version) count = std::min<int>(count, k);
      }
      for (const TargetAttr& a : e.attrs) {
        const OpsetForm* form = findOpsetForm(domain, e.op, a.name);
        if (form && version >= form->since_version)
          count = std::max<int>(count, static_cast<int>(form->input_index) + 1);
      }
      return count;
    };
    for (size_t i = 0; i < sigs.size(); ++i) {
      const OpSignature* s = sigs[i];
      const int count = inputsAt(first_version[i]);
      if (count > s->max_inputs) {
        diag_.error(loc, "too many inputs for op " + quote(name) + at(i) + ": " +
                             std::to_string(count) + " given, it takes at most " +
                             std::to_string(s->max_inputs));
        break;
      }
      if (count < s->min_inputs && !spliced) {
        diag_.error(loc, "too few inputs for op " + quote(name) + at(i) + ": " +
                             std::to_string(count) + " given, it takes at least " +
                             std::to_string(s->min_inputs));
        break;
      }
    }
    // An input written where some opset of the range takes an attribute must be a tensor
    // literal, which the node then carries as that attribute.
    for (uint32_t k = 1; k < e.inputs.size(); ++k) {
      const OpsetForm* form = findOpsetFormAtInput(domain, e.op, k);
      if (!form || r.lo >= form->since_version || e.inputs[k] >= t.exprs.size()) continue;
      const TargetExpr& in = t.exprs[e.inputs[k]];
      if (in.kind == TargetExpr::Kind::kNone) continue;
      const bool literal = in.kind == TargetExpr::Kind::kTensor && in.helper.empty() &&
                           (in.elem_type == "int64" || in.elem_type == "int32");
      if (!literal) {
        diag_.error(locOr(in.loc, loc), "input " + std::to_string(k) + " of op " + quote(name) +
                                            " is attribute " + quote(std::string(form->attr)) +
                                            " at opset " + std::to_string(r.lo) +
                                            ", which this rewrite must support; write it as " +
                                            "an integer tensor literal or as the attribute");
        continue;
      }
      const bool unit = std::all_of(in.literal.ints.begin(), in.literal.ints.end(),
                                    [](int64_t v) { return v == 1; });
      if (form->attr == "steps" && !unit)
        diag_.error(locOr(in.loc, loc),
                    "op " + quote(name) + " has no steps other than 1 at opset " +
                        std::to_string(r.lo) + ", which this rewrite must support");
    }
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      if (e.inputs[k] >= t.exprs.size() || t.exprs[e.inputs[k]].kind != TargetExpr::Kind::kNone)
        continue;
      for (const OpSignature* s : sigs) {
        const OpParam* param = s->inputAt(k);
        if (param && !param->optional) {
          diag_.error(locOr(t.exprs[e.inputs[k]].loc, loc),
                      "input " + std::to_string(k) + " (" + quote(param->name) + ") of op " +
                          quote(name) + " is required; 'none' cannot stand for it");
          break;
        }
      }
    }

    // Outputs.
    for (size_t i = 0; i < sigs.size(); ++i) {
      if (static_cast<int64_t>(e.num_outputs) > sigs[i]->max_outputs) {
        diag_.error(loc, "too many outputs for op " + quote(name) + at(i) + ": " +
                             std::to_string(e.num_outputs) + " declared, it has at most " +
                             std::to_string(sigs[i]->max_outputs));
        break;
      }
    }
    if (e.output >= e.num_outputs)
      diag_.error(loc, "output " + std::to_string(e.output) + " of op " + quote(name) +
                           " is not among the " + countText(e.num_outputs, "output") +
                           " the rewrite declares");
    // Outputs the op cannot be without (at every opset the rule covers) are written even
    // when nothing reads them: ONNX Runtime's inference of EmbedLayerNormalization fails
    // without its mask_index.
    int required = kUnboundedArity;
    for (const OpSignature* s : sigs) required = std::min(required, s->min_outputs);
    if (!sigs.empty() && required != kUnboundedArity && required > 1)
      e.required_outputs = static_cast<uint32_t>(required);

    // Attributes.
    std::set<std::string> given;
    for (TargetAttr& a : e.attrs) {
      const SourceLoc& aloc = locOr(a.loc, loc);
      if (!given.insert(a.name).second) {
        diag_.error(aloc, "attribute " + quote(a.name) + " is given twice");
        continue;
      }
      // A moved parameter is checked as an attribute where it is one; where it is an input,
      // the node gets it as one.
      const OpsetForm* form = findOpsetForm(domain, e.op, a.name);
      if (form && a.kind == TargetAttr::Kind::kLiteral &&
          a.literal.kind != ir::Literal::Kind::kInt && a.literal.kind != ir::Literal::Kind::kInts) {
        diag_.error(aloc,
                    "attribute " + quote(a.name) + " of op " + quote(name) + " takes integers");
        continue;
      }
      bool missing_everywhere = true;
      size_t missing_at = sigs.size();
      for (size_t i = 0; i < sigs.size(); ++i) {
        if (sigs[i]->findAttr(a.name) || (form && first_version[i] >= form->since_version))
          missing_everywhere = false;
        else if (missing_at == sigs.size())
          missing_at = i;
      }
      if (missing_everywhere) {
        diag_.error(aloc, unknownAttrMessage(name, a.name, sigs));
        continue;
      }
      if (missing_at != sigs.size()) {
        diag_.error(aloc, "op " + quote(name) + " has no attribute " + quote(a.name) +
                              " at opset " + std::to_string(first_version[missing_at]) +
                              ", which this rewrite must support");
        continue;
      }
      checkTargetAttrType(a, attrType(sigs, domain, e.op, a.name), name, aloc);
    }
    std::set<std::string> reported;
    for (const OpSignature* s : sigs)
      for (const OpAttr& attr : s->attrs) {
        // A moved parameter written as its input is the attribute where the opset wants one.
        const OpsetForm* form = findOpsetForm(domain, e.op, attr.name);
        if (form && e.inputs.size() > form->input_index) continue;
        if (attr.required && !given.count(attr.name) && reported.insert(attr.name).second)
          diag_.error(loc, "op " + quote(name) + " requires attribute " + quote(attr.name));
      }
  }

  void checkTargetAttrType(const TargetAttr& a, const std::string& type, const std::string& op,
                           const SourceLoc& loc) {
    if (type.empty()) return;
    std::string expects = "attribute " + quote(a.name) + " of op " + quote(op) + " expects " + type;
    switch (a.kind) {
      case TargetAttr::Kind::kLiteral:
        if (!literalFits(a.literal, type))
          diag_.error(loc, expects + ", got " + kindName(a.literal) + " " + a.literal.str());
        return;
      case TargetAttr::Kind::kValueOf:
        if (type != "int" && type != "float")
          diag_.error(loc, expects + ", but value(" + a.ref + ") gives a number");
        return;
      case TargetAttr::Kind::kCaptured: {
        auto it = attr_captures_.find(a.ref);
        if (it == attr_captures_.end() || it->second.type.empty()) return;
        const std::string& from = it->second.type;
        if (from != type && !(from == "int" && type == "float") &&
            !(from == "ints" && type == "floats"))
          diag_.error(loc, expects + ", but attr(" + a.ref + ") captures " + from + " attribute " +
                               quote(it->second.match->name) + " of op " + quote(it->second.op));
        return;
      }
      case TargetAttr::Kind::kHelper:
      case TargetAttr::Kind::kParam:
        return;
    }
  }

  /// Reports a rewrite that replaces the match root with itself (a match fitting what its
  /// rewrite creates is checkEndlessRewrites' finding).
  void checkEndlessLoop(const Rule& rule, const TargetExpr& produced, const SourceLoc& loc) {
    const ir::Pattern& p = rule.pattern;
    const Expr& root = p.exprs[p.root];
    if (produced.kind == TargetExpr::Kind::kRef && produced.name == root.name)
      diag_.error(loc, "the rewrite replaces the match root " + quote(root.name) + " with itself");
  }

  const OpCatalog& catalog_;
  DiagnosticEngine& diag_;

  // State of the rule being checked.
  const Rule* rule_ = nullptr;
  std::vector<ExprId> reachable_;                // pattern exprs reachable from the root
  std::set<std::string> value_names_;            // names the match binds to values
  std::map<std::string, SourceLoc> rests_;       // `rest...` names -> where bound
  std::set<std::string> used_rests_;             // rests the rewrites splice
  std::map<std::string, int> capture_refs_;      // capture name -> operand slots reading it
  std::map<std::string, ExprId> capture_first_;  // capture name -> its first expr
  std::map<std::string, AttrCapture> attr_captures_;
  std::set<std::string> alt_tags_;
  std::set<std::string> used_;  // value names read outside the match
  std::set<std::string> used_attr_captures_;
};

}  // namespace

std::string knownTagList() {
  std::string out;
  for (const std::string& t : knownRuleTags()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

const std::vector<std::string>& knownRuleTags() {
  // opt_in: off unless --enable selects the rule (runtime/driver/RuleSet.h); approximation:
  // what such a rule gives up (exactness), for --enable approximation.
  static const std::vector<std::string> kTags = {"ort",  "onnx",   "cpu",          "cuda",
                                                 "test", "opt_in", "approximation"};
  return kTags;
}

bool checkRules(ir::RuleFile& file, const OpCatalog& catalog, DiagnosticEngine& diag) {
  unsigned errors = diag.errorCount();
  RuleChecker(catalog, diag).checkFile(file);
  // On rules that check clean (commutativity and attribute defaults filled in).
  if (diag.errorCount() == errors) checkEndlessRewrites(file, diag);
  if (diag.errorCount() == errors) checkRuleOverlaps(file, diag);
  return diag.errorCount() == errors;
}

bool checkRules(ir::RuleFile& file, const std::vector<ir::OpDecl>& extra_decls,
                DiagnosticEngine& diag) {
  unsigned errors = diag.errorCount();
  // The extra declarations first, so a file's conflicting declaration is the one reported.
  std::vector<const ir::OpDecl*> all;
  for (const ir::OpDecl& d : extra_decls) all.push_back(&d);
  for (const ir::OpDecl& d : file.ops) all.push_back(&d);
  OpCatalog catalog(checkDecls(all, diag));
  RuleChecker(catalog, diag).checkFile(file);
  if (diag.errorCount() == errors) checkEndlessRewrites(file, diag);
  if (diag.errorCount() == errors) checkRuleOverlaps(file, diag);
  return diag.errorCount() == errors;
}

}  // namespace onnx_rewrite
