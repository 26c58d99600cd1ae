//===- CppEmitter.cc - rules as C++ matchers ------------------------------===//
//
// One RuleEmitter per rule writes, in this order: the RuleSpec (static data the
// shared checks read), the `<Name>Match` class (emitMatch: one function per
// pattern expr; emitRewrite: one function per rewrite variant) and the
// `<Name>Rule` pattern class. Slot, capture and symbol numbering follow
// runtime/interp/RulePlan.cc exactly, so progress counts and failure texts agree
// with the interpreter.
//
//===----------------------------------------------------------------------===//
#include "compiler/emit/CppEmitter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace onnx_rewrite {
namespace {

using ir::ExprId;

// ---- Text utilities -----------------------------------------------------------------------

bool binds(const std::string& name) { return !name.empty() && name != "_"; }

bool isOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string opLabel(const std::string& domain, const std::string& op) {
  return isOnnxDomain(domain) ? op : domain + "." + op;
}

/// OpId::str(): "op" or "domain::op".
std::string opIdStr(const std::string& domain, const std::string& op) {
  return isOnnxDomain(domain) ? op : domain + "::" + op;
}

/// A C++ string literal.
std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// A C++ double literal that reads back exactly.
std::string num(double v) {
  // A range bound may be infinite (`scalar: [-inf, -1e4]`); C++ has no literal for it.
  if (std::isinf(v)) return v < 0 ? "-gen::kInfinity" : "gen::kInfinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Prefer the shortest form that reads back exactly (1e-05, not 1.0000000000000001e-05).
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string joinStrings(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

std::string literalExpr(const ir::Literal& lit) {
  std::vector<std::string> items;
  switch (lit.kind) {
    case ir::Literal::Kind::kInt:
      return "gen::intLiteral(" + std::to_string(lit.ints.at(0)) + ")";
    case ir::Literal::Kind::kFloat:
      return "gen::floatLiteral(" + num(lit.floats.at(0)) + ")";
    case ir::Literal::Kind::kString:
      return "gen::stringLiteral(" + str(lit.strings.at(0)) + ")";
    case ir::Literal::Kind::kInts:
      for (int64_t v : lit.ints) items.push_back(std::to_string(v));
      return "gen::intsLiteral({" + joinStrings(items) + "})";
    case ir::Literal::Kind::kFloats:
      for (double v : lit.floats) items.push_back(num(v));
      return "gen::floatsLiteral({" + joinStrings(items) + "})";
    case ir::Literal::Kind::kStrings:
      for (const std::string& v : lit.strings) items.push_back(str(v));
      return "gen::stringsLiteral({" + joinStrings(items) + "})";
  }
  return "";
}

/// ONNX's TensorProto::DataType for a lowercase name, or 0.
int32_t elemType(const std::string& name) {
  static const std::map<std::string, int32_t> kTypes = {
      {"float", 1},         {"uint8", 2},           {"int8", 3},        {"uint16", 4},
      {"int16", 5},         {"int32", 6},           {"int64", 7},       {"string", 8},
      {"bool", 9},          {"float16", 10},        {"double", 11},     {"uint32", 12},
      {"uint64", 13},       {"complex64", 14},      {"complex128", 15}, {"bfloat16", 16},
      {"float8e4m3fn", 17}, {"float8e4m3fnuz", 18}, {"float8e5m2", 19}, {"float8e5m2fnuz", 20}};
  auto it = kTypes.find(name);
  return it == kTypes.end() ? 0 : it->second;
}

/// The TableGen-style banner line: `//===- name - what ---...---===//`, 80 columns.
std::string banner(const std::string& text) {
  std::string line = "//===- " + text + " ";
  while (line.size() < 74) line += '-';
  return line + "===//\n";
}

const char* kRule =
    "//===----------------------------------------------------------------------===//\n";

// ---- One rule -----------------------------------------------------------------------------

class RuleEmitter {
 public:
  RuleEmitter(const ir::Rule& rule, std::map<std::string, std::string>& ops)
      : rule_(rule), p_(rule.pattern), ops_(ops) {}

  /// Plans the rule; after this the match functions' texts can be compared across rules.
  void prepare() { plan(); }

  // ---- What the family emitter compares to share match functions between rules

  size_t numExprs() const { return p_.exprs.size(); }
  const std::string& ruleName() const { return rule_.name; }
  std::string matchFnName(ExprId id) const { return matchFn(id); }
  /// The match function of `id` (signature and body, no comment), with its expr constants
  /// qualified by `prefix` ("" in the rule's own class, "Ids::" in a shared template).
  std::string matchFnText(ExprId id, const std::string& prefix = "") const {
    std::ostringstream os;
    emitExprMatchFn(os, id, prefix);
    return os.str();
  }
  /// The comment line of `id`'s match function, without the location.
  std::string matchFnDoc(ExprId id) const {
    const ir::Expr& e = p_.exprs[id];
    return (binds(e.name) && e.kind != ir::Expr::Kind::kCapture ? e.name + " = " : "") + show(id);
  }
  std::string matchFnLoc(ExprId id) const { return locOf(p_.exprs[id].loc); }
  /// The exprs whose match functions `id`'s calls.
  const std::vector<ExprId>& callees(ExprId id) const { return p_.exprs[id].inputs; }
  /// The class name of the rule's expr ids (when it shares functions).
  std::string idsName() const { return name_ + "Ids"; }

  /// Match functions this rule takes from the family's shared class `base` instead of
  /// writing its own (shared[id]).
  void useShared(std::vector<bool> shared, std::string base) {
    shared_ = std::move(shared);
    shared_base_ = std::move(base);
  }

  std::string run() {
    std::ostringstream os;
    emitHeaderComment(os);
    emitSpec(os);
    emitMatch(os);
    emitPattern(os);
    return os.str();
  }

  /// `std::make_unique<...>(...)` calls adding this rule's patterns (one per root op).
  std::vector<std::string> patternsToAdd() const {
    std::vector<std::string> out;
    for (const auto& [domain, op, output] : roots_) {
      const std::string name =
          roots_.size() == 1 ? rule_.name : rule_.name + "/" + opIdStr(domain, op);
      out.push_back("std::make_unique<" + name_ + "Rule>(" + str(name) + ", " +
                    opConst(domain, op) + ", " + std::to_string(output) + ")");
    }
    return out;
  }

 private:
  [[noreturn]] void error(const ir::SourceLoc& loc, const std::string& what) const {
    const ir::SourceLoc& at = loc.known() || !loc.file.empty() ? loc : rule_.loc;
    throw CppEmitError(at.str() + ": " + rule_.name + ": " + what);
  }

  /// RuleInterpreter's locOf: the location, or the rule's when unknown.
  std::string locOf(const ir::SourceLoc& loc) const {
    return (loc.known() || !loc.file.empty() ? loc : rule_.loc).trace();
  }
  std::string locOf(const ir::SourceLoc& loc, const ir::SourceLoc& fallback) const {
    return locOf(loc.known() ? loc : fallback);
  }

  std::string opConst(const std::string& domain, const std::string& op) const {
    std::string name = "k" + (isOnnxDomain(domain) ? "" : CppEmitter::pascal(domain)) + op;
    ops_[name] = "OpId::get(" + str(isOnnxDomain(domain) ? "" : domain) + ", " + str(op) + ")";
    return "op::" + name;
  }

  // ---- Planning (as RulePlan.cc) -----------------------------------------------------------

  uint32_t slotFor(const std::string& name) {
    auto [it, added] = slots_.emplace(name, static_cast<uint32_t>(slot_names_.size()));
    if (added) slot_names_.push_back(name);
    return it->second;
  }

  uint32_t boundSlot(const std::string& name, const ir::SourceLoc& loc, const char* who) const {
    auto it = slots_.find(name);
    if (it == slots_.end())
      error(loc, std::string(who) + " '" + name + "', which the match never binds");
    return it->second;
  }

  void plan() {
    name_ = CppEmitter::pascal(rule_.name);
    if (p_.root >= p_.exprs.size()) error(rule_.loc, "the pattern has no root");
    if (rule_.targets.empty()) error(rule_.loc, "the rule has no rewrite");
    expr_slot_.assign(p_.exprs.size(), UINT32_MAX);
    for (ExprId id = 0; id < p_.exprs.size(); ++id) {
      const ir::Expr& e = p_.exprs[id];
      for (ExprId in : e.inputs)
        if (in >= p_.exprs.size())
          error(e.loc, "expr input " + std::to_string(in) + " does not exist");
      if (binds(e.name)) expr_slot_[id] = slotFor(e.name);
      if (e.kind == ir::Expr::Kind::kOp) {
        if (e.optional && e.inputs.empty()) error(e.loc, "optional " + e.op + " has no input");
        for (const auto& [output, name] : e.other_outputs)
          if (binds(name)) slotFor(name);
        for (const ir::AttrMatch& m : e.attrs)
          if (m.kind == ir::AttrMatch::Kind::kCapture && binds(m.capture))
            if (captures_.emplace(m.capture, static_cast<uint32_t>(captures_.size())).second)
              capture_names_.push_back(m.capture);
      }
      if (e.kind == ir::Expr::Kind::kAlternatives && e.inputs.empty())
        error(e.loc, "alternatives without any alternative");
    }
    collectRoots(p_.root);
    // Identifiers: the bound name, else the op; numbered when several share one.
    std::map<std::string, int> uses;
    std::vector<std::string> base(p_.exprs.size());
    for (ExprId id = 0; id < p_.exprs.size(); ++id) {
      const ir::Expr& e = p_.exprs[id];
      std::string b;
      switch (e.kind) {
        case ir::Expr::Kind::kCapture:
          b = binds(e.name) ? e.name : "any";
          break;
        case ir::Expr::Kind::kConstant:
          b = "constant";
          break;
        case ir::Expr::Kind::kNone:
          b = "none";
          break;
        case ir::Expr::Kind::kAlternatives:
          b = binds(e.name) ? e.name : "any_of";
          break;
        case ir::Expr::Kind::kOp:
          b = binds(e.name) ? e.name : e.op;
          break;
      }
      base[id] = CppEmitter::pascal(b);
      ++uses[base[id]];
    }
    ident_.resize(p_.exprs.size());
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      ident_[id] = uses[base[id]] > 1 ? base[id] + std::to_string(id) : base[id];
    for (const ir::Target& t : rule_.targets) planTarget(t);
  }

  void collectRoots(ExprId id) {
    const ir::Expr& e = p_.exprs[id];
    if (e.kind == ir::Expr::Kind::kAlternatives) {
      for (ExprId alt : e.inputs) collectRoots(alt);
      return;
    }
    if (e.kind != ir::Expr::Kind::kOp)
      error(e.loc, "the root of a pattern must be an op or alternatives of ops");
    if (e.optional) error(e.loc, "the root of a pattern cannot be optional");
    for (const auto& r : roots_)
      if (isOnnxDomain(std::get<0>(r)) == isOnnxDomain(e.domain) &&
          (isOnnxDomain(e.domain) || std::get<0>(r) == e.domain) && std::get<1>(r) == e.op)
        return;
    roots_.emplace_back(e.domain, e.op, e.output);
  }

  struct TargetOrder {
    std::vector<uint32_t> order;
    std::vector<uint32_t> num_outputs;
    std::vector<std::vector<uint32_t>> omitted;
  };

  void planTarget(const ir::Target& t) {
    TargetOrder to;
    enum State : uint8_t { kUnseen, kOpen, kDone };
    std::vector<State> state(t.exprs.size(), kUnseen);
    std::vector<std::set<uint32_t>> used(t.exprs.size());
    auto visit = [&](auto&& self, uint32_t i, bool as_value) -> void {
      const ir::TargetExpr& te = t.exprs[i];
      const bool secondary = te.kind == ir::TargetExpr::Kind::kOp && te.op.empty();
      if (as_value && te.kind == ir::TargetExpr::Kind::kOp)
        used[secondary ? te.inputs[0] : i].insert(te.output);
      if (state[i] == kDone) return;
      if (state[i] == kOpen) error(te.loc, "the rewrite is cyclic");
      state[i] = kOpen;
      for (uint32_t in : te.inputs) {
        if (in >= t.exprs.size()) error(te.loc, "target input does not exist");
        self(self, in, !secondary);
      }
      state[i] = kDone;
      to.order.push_back(i);
    };
    for (const auto& [name, index] : t.replacements) {
      if (index >= t.exprs.size()) error(t.loc, "replacement of '" + name + "' has no target expr");
      boundSlot(name, t.loc, "the rewrite replaces");
    }
    for (const auto& [name, index] : t.replacements) visit(visit, index, true);
    to.num_outputs.assign(t.exprs.size(), 1);
    to.omitted.resize(t.exprs.size());
    for (uint32_t i = 0; i < t.exprs.size(); ++i) {
      const ir::TargetExpr& te = t.exprs[i];
      if (state[i] != kDone || te.kind != ir::TargetExpr::Kind::kOp || te.op.empty()) continue;
      // As the interpreter's plan (runtime/interp/RulePlan.cc): required outputs are named.
      for (uint32_t o = 1; o < te.required_outputs; ++o) used[i].insert(o);
      to.num_outputs[i] = used[i].empty() ? 1 : *used[i].rbegin() + 1;
      for (uint32_t o = 0; o < to.num_outputs[i]; ++o)
        if (!used[i].count(o)) to.omitted[i].push_back(o);
      const std::string c = opConst(te.domain, te.op);
      if (std::find(creates_.begin(), creates_.end(), c) == creates_.end()) creates_.push_back(c);
    }
    targets_.push_back(std::move(to));
  }

  // ---- Output -------------------------------------------------------------------------------

  /// A short text of expr `id` for comments: `Sub(x, mean)`.
  std::string show(ExprId id, int depth = 0) const {
    const ir::Expr& e = p_.exprs[id];
    if (depth > 0 && binds(e.name)) return e.name;
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        return binds(e.name) ? e.name : "_";
      case ir::Expr::Kind::kConstant:
        return e.literal.str();
      case ir::Expr::Kind::kNone:
        return "none";
      case ir::Expr::Kind::kAlternatives: {
        std::string out;
        for (size_t i = 0; i < e.inputs.size(); ++i)
          out += (i ? " | " : "") + show(e.inputs[i], depth + 1);
        return depth > 0 ? "(" + out + ")" : out;
      }
      case ir::Expr::Kind::kOp: {
        if (depth > 2) return opLabel(e.domain, e.op) + "(...)";
        std::vector<std::string> args;
        for (ExprId in : e.inputs) args.push_back(show(in, depth + 1));
        if (!e.rest.empty()) args.push_back(e.rest + "...");
        for (const ir::AttrMatch& m : e.attrs)
          args.push_back(m.name + "=" +
                         (m.kind == ir::AttrMatch::Kind::kCapture ? "capture(" + m.capture + ")"
                          : m.values.empty()                      ? std::string("?")
                                                                  : m.values[0].str()));
        return opLabel(e.domain, e.op) + (e.optional ? "?" : "") + "(" + joinStrings(args) + ")";
      }
    }
    return "?";
  }

  std::string exprConst(ExprId id) const { return "k" + ident_[id]; }
  std::string matchFn(ExprId id) const { return "match" + ident_[id]; }
  std::string slotConst(uint32_t slot) const {
    return "kSlot" + CppEmitter::pascal(slot_names_[slot]);
  }

  void emitHeaderComment(std::ostream& os) const {
    os << "\n" << kRule;
    os << "// Generated from: " << rule_.loc.file << ":" << rule_.loc.line << "\n";
    os << "// " << rule_.name << " (priority " << rule_.priority << ")";
    if (!rule_.doc.empty()) os << ": " << rule_.doc;
    os << "\n" << kRule << "\n";
  }

  std::string label(const ir::Expr& e) const {
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        return e.name.empty() ? "_" : e.name;
      case ir::Expr::Kind::kConstant:
        return "constant " + e.literal.str();
      case ir::Expr::Kind::kNone:
        return "none";
      case ir::Expr::Kind::kAlternatives:
        return e.name.empty() ? "alternatives" : e.name;
      case ir::Expr::Kind::kOp:
        return opLabel(e.domain, e.op);
    }
    return "";
  }

  /// The RuleSpec: everything the shared checks and failure messages read.
  void emitSpec(std::ostream& os) {
    const std::string fn = "spec" + name_;
    os << "/// Static data of rule " << rule_.name << " for the shared checks and messages.\n";
    os << "const gen::RuleSpec& " << fn << "() {\n";
    os << "  static const gen::RuleSpec spec = [] {\n";
    os << "    gen::RuleSpec s;\n";
    os << "    s.name = " << str(rule_.name) << ";\n";
    os << "    s.loc = " << str(rule_.loc.str()) << ";\n";
    os << "    s.root = " << p_.root << ";\n";
    std::vector<std::string> names;
    for (const std::string& n : slot_names_) names.push_back(str(n));
    os << "    s.slot_names = {" << joinStrings(names) << "};\n";
    os << "    s.num_captures = " << capture_names_.size() << ";\n";
    os << "    s.exprs.resize(" << p_.exprs.size() << ");\n";
    for (ExprId id = 0; id < p_.exprs.size(); ++id) emitExprSpec(os, id);
    std::vector<std::string> symbols;
    for (const ir::Constraint& c : p_.constraints) emitConstraintSpec(os, c, symbols);
    os << "    s.num_symbols = " << symbols.size() << ";\n";
    for (const ir::Target& t : rule_.targets) emitVariantSpec(os, t);
    os << "    return s;\n";
    os << "  }();\n";
    os << "  return spec;\n";
    os << "}\n\n";
  }

  void emitExprSpec(std::ostream& os, ExprId id) const {
    const ir::Expr& e = p_.exprs[id];
    os << "    {  // " << id << ": " << show(id) << "\n";
    os << "      gen::ExprSpec& e = s.exprs[" << id << "];\n";
    os << "      e.label = " << str(label(e)) << ";\n";
    os << "      e.loc = " << str(locOf(e.loc)) << ";\n";
    if (expr_slot_[id] != UINT32_MAX) os << "      e.slot = " << expr_slot_[id] << ";\n";
    if (e.kind == ir::Expr::Kind::kConstant) {
      if (!e.literal.isList() && e.literal.kind != ir::Literal::Kind::kInt &&
          e.literal.kind != ir::Literal::Kind::kFloat)
        error(e.loc, "constant " + e.literal.str() + " is not a number or list of numbers");
      os << "      e.literal = " << literalExpr(e.literal) << ";\n";
      os << "      e.tolerance = " << num(e.tolerance) << ";\n";
    }
    if (e.kind == ir::Expr::Kind::kOp) {
      if (e.output != 0) os << "      e.output = " << e.output << ";\n";
      os << "      e.num_inputs = " << e.inputs.size() << ";\n";
      if (!e.rest.empty()) os << "      e.variadic = true;  // " << e.rest << "...\n";
      std::vector<std::string> none_inputs;
      for (size_t i = 0; i < e.inputs.size(); ++i)
        if (p_.exprs[e.inputs[i]].kind == ir::Expr::Kind::kNone)
          none_inputs.push_back(std::to_string(i));
      if (!none_inputs.empty())
        os << "      e.none_inputs = {" << joinStrings(none_inputs) << "};\n";
    }
    if (e.kind == ir::Expr::Kind::kAlternatives && e.group != ir::kNoGroup) {
      std::vector<std::string> peers;
      for (ExprId peer = 0; peer < p_.exprs.size(); ++peer)
        if (peer != id && p_.exprs[peer].kind == ir::Expr::Kind::kAlternatives &&
            p_.exprs[peer].group == e.group)
          peers.push_back(std::to_string(peer));
      os << "      e.peers = {" << joinStrings(peers) << "};  // one tuple\n";
    }
    if (e.kind == ir::Expr::Kind::kOp) {
      for (const auto& [output, name] : e.other_outputs)
        os << "      e.other_outputs.push_back({" << output << ", "
           << (binds(name) ? std::to_string(slots_.at(name)) : "gen::kNoSlot") << ", " << str(name)
           << "});\n";
      for (const ir::AttrMatch& m : e.attrs) {
        os << "      {\n";
        os << "        gen::AttrSpec& a = e.attrs.emplace_back();\n";
        os << "        a.name = " << str(m.name) << ";\n";
        switch (m.kind) {
          case ir::AttrMatch::Kind::kEquals:
            if (m.values.size() != 1) error(m.loc, "attribute " + m.name + " needs a value");
            break;
          case ir::AttrMatch::Kind::kOneOf:
            os << "        a.kind = gen::AttrSpec::Kind::kOneOf;\n";
            break;
          case ir::AttrMatch::Kind::kRange:
            os << "        a.kind = gen::AttrSpec::Kind::kRange;\n";
            os << "        a.min = " << num(m.min) << ";\n";
            os << "        a.max = " << num(m.max) << ";\n";
            break;
          case ir::AttrMatch::Kind::kCapture:
            os << "        a.kind = gen::AttrSpec::Kind::kCapture;\n";
            if (binds(m.capture)) os << "        a.capture = " << captures_.at(m.capture) << ";\n";
            os << "        a.capture_name = " << str(m.capture) << ";\n";
            break;
          case ir::AttrMatch::Kind::kParam:
            error(m.loc, "attribute parameter " + m.capture + " outside a fragment");
            break;
        }
        for (const ir::Literal& v : m.values)
          os << "        a.values.push_back(" << literalExpr(v) << ");\n";
        if (m.default_value)
          os << "        a.default_value = " << literalExpr(*m.default_value) << ";\n";
        for (const auto& [until, value] : m.older_defaults)
          os << "        a.older_defaults.emplace_back(" << until << ", " << literalExpr(value)
             << ");  // up to opset " << until << "\n";
        if (m.name == "axes" || m.name == "axis") os << "        a.axes = true;\n";
        os << "        a.loc = " << str(locOf(m.loc, e.loc)) << ";\n";
        os << "      }\n";
      }
    }
    os << "    }\n";
  }

  void emitConstraintSpec(std::ostream& os, const ir::Constraint& c,
                          std::vector<std::string>& symbols) const {
    using K = ir::Constraint::Kind;
    static const char* const kKinds[] = {"kConstant",  "kScalar",   "kConstantEquals",
                                         "kRank",      "kElemType", "kShape",
                                         "kConsumers", "kNative",   "kEquivalent"};
    os << "    {\n";
    os << "      gen::ConstraintSpec& c = s.constraints.emplace_back();\n";
    os << "      c.kind = gen::ConstraintSpec::Kind::" << kKinds[static_cast<int>(c.kind)] << ";\n";
    os << "      c.loc = " << str(locOf(c.loc)) << ";\n";
    if (!c.guard.empty())
      os << "      c.guard_slot = " << boundSlot(c.guard, c.loc, "a fragment's constraint")
         << ";  // " << c.guard << "\n";
    if (c.kind == K::kNative) {
      os << "      c.native = " << str(c.native) << ";\n";
      os << "      c.predicate = gen::nativePredicate(" << str(c.native) << ");\n";
      std::vector<std::string> args, arg_slots;
      for (const std::string& a : c.args) {
        args.push_back(str(a));
        arg_slots.push_back(std::to_string(boundSlot(a, c.loc, "native reads")));
      }
      os << "      c.args = {" << joinStrings(args) << "};\n";
      os << "      c.arg_slots = {" << joinStrings(arg_slots) << "};\n";
      os << "    }\n";
      return;
    }
    os << "      c.subject = " << str(c.subject) << ";\n";
    os << "      c.slot = " << boundSlot(c.subject, c.loc, "where names") << ";\n";
    if (c.has_min) os << "      c.has_min = true;\n      c.min = " << num(c.min) << ";\n";
    if (c.has_max) os << "      c.has_max = true;\n      c.max = " << num(c.max) << ";\n";
    switch (c.kind) {
      case K::kEquivalent:
        if (c.args.size() != 1) error(c.loc, "equivalent names one other value");
        os << "      c.args = {" << str(c.args[0]) << "};\n";
        os << "      c.arg_slots = {" << boundSlot(c.args[0], c.loc, "equivalent names") << "};\n";
        break;
      case K::kConstantEquals:
        os << "      c.literal = " << literalExpr(c.literal) << ";\n";
        os << "      c.tolerance = " << num(c.tolerance) << ";\n";
        break;
      case K::kRank: {
        std::vector<std::string> ints;
        for (int64_t v : c.ints) ints.push_back(std::to_string(v));
        os << "      c.ints = {" << joinStrings(ints) << "};\n";
        break;
      }
      case K::kElemType: {
        std::vector<std::string> names, types;
        for (const std::string& n : c.strings) {
          const int32_t t = elemType(n);
          if (t == 0) error(c.loc, "unknown element type '" + n + "'");
          names.push_back(str(n));
          types.push_back(std::to_string(t));
        }
        os << "      c.strings = {" << joinStrings(names) << "};\n";
        os << "      c.elem_types = {" << joinStrings(types) << "};\n";
        break;
      }
      case K::kShape: {
        std::vector<std::string> dims;
        for (const std::string& d : c.dims) dims.push_back(str(d));
        os << "      c.dims = {" << joinStrings(dims) << "};\n";
        for (const std::string& d : c.dims) {
          if (d == "_") {
            os << "      c.dim_plans.push_back({gen::ConstraintSpec::Dim::Kind::kAny, 0, 0});\n";
          } else if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) ||
                                    (d[0] == '-' && d.size() > 1))) {
            size_t used = 0;
            int64_t value = 0;
            try {
              value = std::stoll(d, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used != d.size()) error(c.loc, "bad dim '" + d + "'");
            os << "      c.dim_plans.push_back({gen::ConstraintSpec::Dim::Kind::kStatic, " << value
               << ", 0});\n";
          } else {
            auto it = std::find(symbols.begin(), symbols.end(), d);
            const size_t symbol = it - symbols.begin();
            if (it == symbols.end()) symbols.push_back(d);
            os << "      c.dim_plans.push_back({gen::ConstraintSpec::Dim::Kind::kSymbol, 0, "
               << symbol << "});\n";
          }
        }
        break;
      }
      default:
        break;
    }
    os << "    }\n";
  }

  void emitVariantSpec(std::ostream& os, const ir::Target& t) const {
    if (!t.when) {
      os << "    s.variants.emplace_back();  // always\n";
      return;
    }
    os << "    {\n";
    os << "      gen::VariantSpec& v = s.variants.emplace_back();\n";
    {
      const ir::Target::When& w = *t.when;
      os << "      v.has_when = true;\n";
      if (!w.domain.empty()) os << "      v.domain = " << str(w.domain) << ";\n";
      if (w.min_opset >= 0) os << "      v.min_opset = " << w.min_opset << ";\n";
      if (w.max_opset >= 0) os << "      v.max_opset = " << w.max_opset << ";\n";
      for (const std::string& tag : w.tags) {
        std::vector<std::string> carriers;
        for (ExprId id = 0; id < p_.exprs.size(); ++id)
          for (uint32_t i = 0; i < p_.exprs[id].tags.size(); ++i)
            if (p_.exprs[id].kind == ir::Expr::Kind::kAlternatives && p_.exprs[id].tags[i] == tag)
              carriers.push_back("{" + std::to_string(id) + ", " + std::to_string(i) + "}");
        os << "      v.tags.push_back({" << joinStrings(carriers) << "});  // @" << tag << "\n";
      }
    }
    os << "    }\n";
  }

  // ---- The matcher ----------------------------------------------------------------------

  void emitMatch(std::ostream& os) {
    os << "/// The search of rule " << rule_.name
       << ": one function per pattern expr, each matching its\n"
          "/// value and then the rest of the search (`k`); choice points try their options in\n"
          "/// order and undo what a failed option bound.\n";
    const bool shares = std::find(shared_.begin(), shared_.end(), true) != shared_.end();
    const std::string base = shares ? shared_base_ + "<" + idsName() + ">" : "gen::Matcher";
    if (shares) emitIds(os);
    os << "class " << name_ << "Match : public " << base << " {\n";
    os << " public:\n";
    os << "  " << name_ << "Match(gen::Scratch& scratch, Rewriter& rw)\n";
    os << "      : " << base << "(spec" << name_ << "(), scratch, rw) {}\n\n";
    os << "  /// Searches for a match whose root is `root`.\n";
    os << "  bool run(ValueId root) {\n";
    os << "    reset();\n";
    os << "    if (root == kNoId) return rootOmitted();\n";
    os << "    return " << matchFn(p_.root) << "(root, [&] { return accept(); });\n";
    os << "  }\n\n";
    emitRewriteDispatch(os);
    os << " private:\n";
    if (!shares) {
      os << "  enum : gen::ExprId {\n";
      for (ExprId id = 0; id < p_.exprs.size(); ++id)
        os << "    " << exprConst(id) << " = " << id << ",\n";
      os << "  };\n";
    }
    os << "  enum : uint32_t {\n";
    for (uint32_t s = 0; s < slot_names_.size(); ++s)
      os << "    " << slotConst(s) << " = " << s << ",\n";
    os << "  };\n\n";
    os << "  // ---- Match\n\n";
    if (shares) {
      std::vector<std::string> names;
      for (ExprId id = 0; id < p_.exprs.size(); ++id)
        if (shared_[id]) names.push_back(matchFn(id));
      os << "  // From " << shared_base_
         << " (the same in other rules of this file): " << joinStrings(names) << ".\n\n";
    }
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      if (!shares || !shared_[id]) emitExprMatch(os, id);
    os << "  // ---- Rewrite\n";
    for (size_t i = 0; i < rule_.targets.size(); ++i) emitRewrite(os, i);
    os << "};\n\n";
  }

  /// The rule's expr ids, which the family's shared match functions are instantiated with.
  void emitIds(std::ostream& os) const {
    os << "/// Expr ids of rule " << rule_.name << " (indices into its RuleSpec's exprs).\n";
    os << "struct " << idsName() << " {\n";
    os << "  enum : gen::ExprId {\n";
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      os << "    " << exprConst(id) << " = " << id << ",\n";
    os << "  };\n";
    os << "};\n\n";
  }

  void emitExprMatch(std::ostream& os, ExprId id) const {
    os << "  /// " << matchFnDoc(id) << "  (" << matchFnLoc(id) << ")\n";
    emitExprMatchFn(os, id, "");
  }

  void emitExprMatchFn(std::ostream& os, ExprId id, const std::string& prefix) const {
    const ir::Expr& e = p_.exprs[id];
    const std::string c = prefix + exprConst(id);
    os << "  bool " << matchFn(id) << "(ValueId v, gen::Next k) {\n";
    if (e.kind == ir::Expr::Kind::kNone) {
      os << "    return none(" << c << ", v) && k();\n";
      os << "  }\n\n";
      return;
    }
    os << "    if (seen(" << c << ")) return same(" << c << ", v) && k();\n";
    switch (e.kind) {
      case ir::Expr::Kind::kNone:
        break;
      case ir::Expr::Kind::kCapture:
        os << "    return bind(" << c << ", v) && k();\n";
        break;
      case ir::Expr::Kind::kConstant:
        os << "    return bind(" << c << ", v) && constant(" << c << ", v) && k();\n";
        break;
      case ir::Expr::Kind::kAlternatives: {
        os << "    if (!bind(" << c << ", v)) return false;\n";
        os << "    const uint32_t m = mark();\n";
        for (uint32_t i = 0; i < e.inputs.size(); ++i) {
          os << "    if (choose(" << c << ", " << i << ") && " << matchFn(e.inputs[i])
             << "(v, k)) return true;";
          if (i < e.tags.size() && !e.tags[i].empty()) os << "  // @" << e.tags[i];
          os << "\n";
          os << "    undo(m);\n";
        }
        os << "    return false;\n";
        break;
      }
      case ir::Expr::Kind::kOp: {
        os << "    if (!bind(" << c << ", v)) return false;\n";
        if (!e.optional) {
          emitNodeMatch(os, id, "    ", prefix);
        } else {
          os << "    auto present = [&] {\n";
          emitNodeMatch(os, id, "      ", prefix);
          os << "    };\n";
          os << "    const uint32_t m = mark();\n";
          os << "    if (present()) return true;\n";
          os << "    undo(m);\n";
          os << "    return " << matchFn(e.inputs[0])
             << "(v, k);  // absent: " << opLabel(e.domain, e.op) << " stands for its input\n";
        }
        break;
      }
    }
    os << "  }\n\n";
  }

  void emitNodeMatch(std::ostream& os, ExprId id, const std::string& in,
                     const std::string& prefix) const {
    const ir::Expr& e = p_.exprs[id];
    const std::string c = prefix + exprConst(id);
    os << in << "const NodeId n = node(" << c << ", v, " << opConst(e.domain, e.op) << ");\n";
    os << in << "if (n == kNoId || !attrs(" << c << ", n, v)) return false;\n";
    const size_t count = e.inputs.size();
    if (count == 0) {
      os << in << "return k();\n";
      return;
    }
    const bool commutative = e.commutative && count == 2;
    if (!commutative) {
      // match(in0, [&] { return match(in1, [&] { return match(in2, k); }); })
      std::string call =
          matchFn(e.inputs[count - 1]) + "(input(n, " + std::to_string(count - 1) + "), k)";
      for (size_t i = count - 1; i-- > 0;)
        call = matchFn(e.inputs[i]) + "(input(n, " + std::to_string(i) + "), [&] { return " + call +
               "; })";
      os << in << "return " << call << ";\n";
      return;
    }
    const std::string a = matchFn(e.inputs[0]), b = matchFn(e.inputs[1]);
    os << in << "const ValueId in0 = input(n, 0), in1 = input(n, 1);\n";
    os << in << "const uint32_t m = mark();\n";
    os << in << "if (" << a << "(in0, [&] { return " << b << "(in1, k); })) return true;\n";
    os << in << "if (in0 == in1) return false;\n";
    os << in << "undo(m);  // commutative: the other operand order\n";
    os << in << "return " << a << "(in1, [&] { return " << b << "(in0, k); });\n";
  }

  // ---- The rewrite ----------------------------------------------------------------------

  void emitRewriteDispatch(std::ostream& os) const {
    os << "  /// After run() succeeded: builds the chosen rewrite variant.\n";
    os << "  bool rewrite() {\n";
    if (rule_.targets.size() == 1) {
      os << "    return rewrite0();\n";
    } else {
      os << "    switch (chosen()) {\n";
      for (size_t i = 0; i < rule_.targets.size(); ++i)
        os << "      case " << i << ":\n        return rewrite" << i << "();\n";
      os << "    }\n";
      os << "    return false;\n";
    }
    os << "  }\n\n";
  }

  std::string targetText(const ir::Target& t, uint32_t i) const {
    const ir::TargetExpr& te = t.exprs[i];
    switch (te.kind) {
      case ir::TargetExpr::Kind::kRef:
        return te.name;
      case ir::TargetExpr::Kind::kNone:
        return "none";
      case ir::TargetExpr::Kind::kRest:
        return te.name + "...";
      case ir::TargetExpr::Kind::kTensor:
        return te.helper.empty() ? "tensor(" + te.literal.str() + ")"
                                 : "tensor(helper, " + te.helper + ")";
      case ir::TargetExpr::Kind::kOp: {
        if (te.op.empty()) return "output " + std::to_string(te.output);
        std::vector<std::string> args;
        for (uint32_t in : te.inputs) args.push_back(targetText(t, in));
        for (const ir::TargetAttr& a : te.attrs) {
          switch (a.kind) {
            case ir::TargetAttr::Kind::kLiteral:
              args.push_back(a.name + "=" + a.literal.str());
              break;
            case ir::TargetAttr::Kind::kCaptured:
              args.push_back(a.name + "=attr(" + a.ref + ")");
              break;
            case ir::TargetAttr::Kind::kValueOf:
              args.push_back(a.name + "=value(" + a.ref + ")");
              break;
            case ir::TargetAttr::Kind::kHelper:
              args.push_back(a.name + "=helper(" + a.ref + ")");
              break;
            case ir::TargetAttr::Kind::kParam:
              args.push_back(a.name + "=" + a.ref);
              break;
          }
        }
        return opLabel(te.domain, te.op) + "(" + joinStrings(args) + ")";
      }
    }
    return "?";
  }

  std::string literalAttr(const ir::TargetAttr& a) const {
    const ir::Literal& l = a.literal;
    std::vector<std::string> items;
    switch (l.kind) {
      case ir::Literal::Kind::kInt:
        return "gen::intAttribute(" + str(a.name) + ", " + std::to_string(l.ints.at(0)) + ")";
      case ir::Literal::Kind::kFloat:
        return "gen::floatAttribute(" + str(a.name) + ", " + num(l.floats.at(0)) + ")";
      case ir::Literal::Kind::kString:
        return "gen::stringAttribute(" + str(a.name) + ", " + str(l.strings.at(0)) + ")";
      case ir::Literal::Kind::kInts:
        for (int64_t v : l.ints) items.push_back(std::to_string(v));
        return "gen::intsAttribute(" + str(a.name) + ", {" + joinStrings(items) + "})";
      case ir::Literal::Kind::kFloats:
        for (double v : l.floats) items.push_back(num(v));
        return "gen::floatsAttribute(" + str(a.name) + ", {" + joinStrings(items) + "})";
      case ir::Literal::Kind::kStrings:
        for (const std::string& v : l.strings) items.push_back(str(v));
        return "gen::stringsAttribute(" + str(a.name) + ", {" + joinStrings(items) + "})";
    }
    return "";
  }

  /// `t<i>`, the constant of tensor literal `te` (as the interpreter's plan builds it: int64
  /// or float unless a type is given; a list without dims is 1-D).
  void emitTensorLiteral(std::ostream& os, const ir::TargetExpr& te, uint32_t i) {
    const ir::Literal& lit = te.literal;
    const bool ints = lit.kind == ir::Literal::Kind::kInt || lit.kind == ir::Literal::Kind::kInts;
    const bool numeric =
        ints || lit.kind == ir::Literal::Kind::kFloat || lit.kind == ir::Literal::Kind::kFloats;
    if (!numeric) error(te.loc, "a tensor literal must be a number or a list of numbers");
    const int32_t type = te.elem_type.empty() ? (ints ? 7 : 1) : elemType(te.elem_type);
    if (type == 0) error(te.loc, "unknown element type '" + te.elem_type + "'");
    const size_t values = ints ? lit.ints.size() : lit.floats.size();
    std::vector<int64_t> dims = te.dims;
    if (dims.empty() &&
        (lit.kind == ir::Literal::Kind::kInts || lit.kind == ir::Literal::Kind::kFloats))
      dims.push_back(static_cast<int64_t>(values));
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0) error(te.loc, "a tensor literal has a negative dim");
      count *= d;
    }
    if (count != static_cast<int64_t>(values))
      error(te.loc, "a tensor literal has " + std::to_string(values) + " values for " +
                        std::to_string(count) + " elements");
    std::vector<std::string> dim_text;
    for (int64_t d : dims) dim_text.push_back(std::to_string(d));
    os << "    std::optional<onnx::TensorProto> t" << i << " = gen::literalTensor("
       << literalExpr(lit) << ", " << type << ", {" << joinStrings(dim_text) << "});\n";
    os << "    if (!t" << i << ") return false;\n";
  }

  /// `spec.inputs = {...}`, splicing each `rest...` as the matched node's further inputs.
  void emitInputs(std::ostream& os, const ir::Target& t, const ir::TargetExpr& te,
                  const std::string& spec) const {
    std::vector<std::string> ins;
    size_t i = 0;
    for (; i < te.inputs.size() && t.exprs[te.inputs[i]].kind != ir::TargetExpr::Kind::kRest; ++i)
      ins.push_back("v" + std::to_string(te.inputs[i]));
    os << "    " << spec << ".inputs = {" << joinStrings(ins) << "};\n";
    for (; i < te.inputs.size(); ++i) {
      const ir::TargetExpr& in = t.exprs[te.inputs[i]];
      if (in.kind != ir::TargetExpr::Kind::kRest) {
        os << "    " << spec << ".inputs.push_back(v" << te.inputs[i] << ");\n";
        continue;
      }
      ExprId rest = ir::kNoExpr;
      for (ExprId id = 0; id < p_.exprs.size() && rest == ir::kNoExpr; ++id)
        if (p_.exprs[id].kind == ir::Expr::Kind::kOp && p_.exprs[id].rest == in.name) rest = id;
      if (rest == ir::kNoExpr || in.name == "_")
        error(in.loc, "'" + in.name + "...' splices no rest of the match");
      os << "    for (const ValueId in : rest(" << exprConst(rest) << ")) " << spec
         << ".inputs.push_back(in);  // " << in.name << "...\n";
    }
  }

  void emitRewrite(std::ostream& os, size_t index) {
    const ir::Target& t = rule_.targets[index];
    const TargetOrder& to = targets_[index];
    os << "\n  /// Variant " << index;
    if (t.when) {
      os << " (when";
      if (t.when->min_opset >= 0 || t.when->max_opset >= 0)
        os << " opset " << (t.when->domain.empty() ? "" : t.when->domain + " ") << "in ["
           << t.when->min_opset << ", "
           << (t.when->max_opset < 0 ? std::string("-") : std::to_string(t.when->max_opset)) << "]";
      for (const std::string& tag : t.when->tags) os << " @" << tag;
      os << ")";
    }
    os << ", " << locOf(t.loc) << ":\n";
    for (const auto& [name, i] : t.replacements)
      os << "  ///   " << name << " = " << targetText(t, i) << "\n";
    os << "  bool rewrite" << index << "() {\n";
    os << "    // Everything that can still fail, before the graph changes.\n";
    for (uint32_t i : to.order) {
      const ir::TargetExpr& te = t.exprs[i];
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          os << "    if (!requireBound("
             << slotConst(boundSlot(te.name, te.loc, "the rewrite reads")) << ", "
             << str(locOf(te.loc)) << ", " << str(te.name) << ")) return false;\n";
          break;
        case ir::TargetExpr::Kind::kNone:
        case ir::TargetExpr::Kind::kRest:
          break;
        case ir::TargetExpr::Kind::kTensor: {
          if (te.helper.empty()) {
            emitTensorLiteral(os, te, i);
            break;
          }
          std::vector<std::string> slots, names;
          for (const std::string& a : te.args) {
            slots.push_back(slotConst(boundSlot(a, te.loc, "helper reads")));
            names.push_back(str(a));
          }
          os << "    std::optional<onnx::TensorProto> t" << i
             << " = helperTensor(gen::tensorHelper(" << str(te.helper) << "), {"
             << joinStrings(slots) << "}, {" << joinStrings(names) << "}, " << str(locOf(te.loc))
             << ");\n";
          os << "    if (!t" << i << ") return false;\n";
          break;
        }
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) break;
          os << "    std::vector<onnx::AttributeProto> attrs" << i << ";\n";
          for (size_t k = 0; k < te.attrs.size(); ++k) {
            const ir::TargetAttr& a = te.attrs[k];
            const std::string loc = str(locOf(a.loc, te.loc));
            const std::string unbound = str(locOf(a.loc.known() ? a.loc : te.loc));
            const std::string var = "a" + std::to_string(i) + "_" + std::to_string(k);
            switch (a.kind) {
              case ir::TargetAttr::Kind::kLiteral:
                os << "    attrs" << i << ".push_back(" << literalAttr(a) << ");\n";
                continue;
              case ir::TargetAttr::Kind::kCaptured: {
                auto it = captures_.find(a.ref);
                if (it == captures_.end())
                  error(a.loc, "attr(" + a.ref + ") names no attribute capture of the match");
                os << "    std::optional<onnx::AttributeProto> " << var << " = captured("
                   << it->second << ", " << str(a.name) << ", " << str(a.ref) << ", " << loc << ", "
                   << unbound << ");\n";
                break;
              }
              case ir::TargetAttr::Kind::kValueOf:
                os << "    std::optional<onnx::AttributeProto> " << var << " = valueOf("
                   << slotConst(boundSlot(a.ref, a.loc, "value() reads")) << ", " << str(a.name)
                   << ", " << str(a.ref) << ", " << loc << ", " << unbound << ");\n";
                break;
              case ir::TargetAttr::Kind::kHelper: {
                std::vector<std::string> slots, names;
                for (const std::string& arg : a.args) {
                  slots.push_back(slotConst(boundSlot(arg, a.loc, "helper reads")));
                  names.push_back(str(arg));
                }
                os << "    std::optional<onnx::AttributeProto> " << var
                   << " = attrHelper(gen::attributeHelper(" << str(a.ref) << "), {"
                   << joinStrings(slots) << "}, {" << joinStrings(names) << "}, " << str(a.name)
                   << ", " << loc << ", " << unbound << ");\n";
                break;
              }
              case ir::TargetAttr::Kind::kParam:
                error(a.loc, "attribute parameter " + a.ref + " outside a fragment");
                continue;
            }
            os << "    if (!" << var << ") return false;\n";
            os << "    attrs" << i << ".push_back(std::move(*" << var << "));\n";
          }
          break;
        }
      }
    }
    os << "    collectMatched();\n";
    for (const auto& [name, i] : t.replacements) {
      const ir::TargetExpr& te = t.exprs[i];
      if (te.kind == ir::TargetExpr::Kind::kNone)
        error(te.loc, "'" + name + "' cannot be replaced by none");
      const char* kind = te.kind == ir::TargetExpr::Kind::kRef      ? "kRef"
                         : te.kind == ir::TargetExpr::Kind::kTensor ? "kTensor"
                                                                    : "kOp";
      const std::string to_slot = te.kind == ir::TargetExpr::Kind::kRef
                                      ? slotConst(boundSlot(te.name, te.loc, "the rewrite reads"))
                                      : "gen::kNoSlot";
      os << "    if (!replaceable(" << slotConst(slots_.at(name)) << ", To::" << kind << ", "
         << to_slot << ", " << str(locOf(t.loc)) << ", " << str(locOf(te.loc, t.loc))
         << ")) return false;\n";
    }
    os << "    if (!rw_.checkReplaceable(s_.matched, s_.provided)) return false;\n\n";
    os << "    // Build.\n";
    for (uint32_t i : to.order) {
      const ir::TargetExpr& te = t.exprs[i];
      const std::string v = "v" + std::to_string(i);
      switch (te.kind) {
        case ir::TargetExpr::Kind::kRef:
          os << "    const ValueId " << v << " = slot(" << slotConst(slots_.at(te.name)) << ");\n";
          break;
        case ir::TargetExpr::Kind::kNone:
          os << "    const ValueId " << v << " = kNoId;\n";
          break;
        case ir::TargetExpr::Kind::kRest:
          break;  // spliced into the inputs of the node that reads it
        case ir::TargetExpr::Kind::kTensor:
          os << "    const ValueId " << v << " = rw_.addInitializer(std::move(*t" << i
             << "), ruleName());\n";
          break;
        case ir::TargetExpr::Kind::kOp: {
          if (te.op.empty()) {
            os << "    const ValueId " << v << " = g_.node(n" << te.inputs[0] << ").output("
               << te.output << ");\n";
            break;
          }
          const std::string spec = "spec" + std::to_string(i);
          os << "    NodeSpec " << spec << ";\n";
          os << "    " << spec << ".op = " << opConst(te.domain, te.op) << ";\n";
          emitInputs(os, t, te, spec);
          if (to.num_outputs[i] != 1)
            os << "    " << spec << ".num_outputs = " << to.num_outputs[i] << ";\n";
          if (!to.omitted[i].empty()) {
            std::vector<std::string> om;
            for (uint32_t o : to.omitted[i]) om.push_back(std::to_string(o));
            os << "    " << spec << ".omitted_outputs = {" << joinStrings(om) << "};\n";
          }
          os << "    " << spec << ".attributes = std::move(attrs" << i << ");\n";
          os << "    " << spec << ".created_by = ruleName();\n";
          os << "    const NodeId n" << i << " = rw_.createNode(std::move(" << spec << "));\n";
          os << "    const ValueId " << v << " = g_.node(n" << i << ").output(" << te.output
             << ");\n";
          break;
        }
      }
    }
    std::vector<std::string> pairs;
    for (size_t k = 0; k < t.replacements.size(); ++k)
      pairs.push_back("{s_.provided[" + std::to_string(k) + "], v" +
                      std::to_string(t.replacements[k].second) + "}");
    os << "    return rw_.replaceMatch(s_.matched, {" << joinStrings(pairs) << "});\n";
    os << "  }\n";
  }

  // ---- The pattern class ------------------------------------------------------------------

  void emitPattern(std::ostream& os) const {
    std::vector<std::string> tags;
    for (const std::string& t : rule_.tags) tags.push_back(str(t));
    os << "/// " << rule_.name << " as a RewritePattern"
       << (roots_.size() > 1 ? " (one per root op)" : "") << ".\n";
    os << "class " << name_ << "Rule : public RewritePattern {\n";
    os << " public:\n";
    os << "  " << name_ << "Rule(std::string name, OpId root, uint32_t root_output)\n";
    os << "      : RewritePattern(RuleInfo{std::move(name), root, " << rule_.priority << ", {"
       << joinStrings(tags) << "}, " << str(rule_.loc.str()) << ", {" << joinStrings(creates_)
       << "}}),\n";
    os << "        root_output_(root_output) {}\n\n";
    os << "  bool appliesTo(const Graph& graph) const override {\n";
    if (rule_.requires.empty()) os << "    (void)graph;\n";
    for (const ir::Applicability& a : rule_.requires)
      os << "    if (!gen::opsetIn(graph, " << str(a.domain) << ", " << a.min_opset << ", "
         << a.max_opset << ")) return false;\n";
    os << "    return true;\n";
    os << "  }\n\n";
    os << "  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {\n";
    os << "    " << name_ << "Match m(scratch_, rw);\n";
    os << "    if (!m.run(rw.graph().node(root).output(root_output_)))\n";
    os << "      return rw.notifyMatchFailure([&] { return m.describe(); });\n";
    os << "    return m.rewrite();\n";
    os << "  }\n\n";
    os << " private:\n";
    os << "  uint32_t root_output_;\n";
    os << "  mutable gen::Scratch scratch_;  // one attempt at a time\n";
    os << "};\n";
  }

  const ir::Rule& rule_;
  const ir::Pattern& p_;
  std::map<std::string, std::string>& ops_;
  std::string name_;
  std::map<std::string, uint32_t> slots_;
  std::vector<std::string> slot_names_;
  std::vector<uint32_t> expr_slot_;
  std::map<std::string, uint32_t> captures_;
  std::vector<std::string> capture_names_;
  std::vector<std::string> ident_;
  std::vector<std::tuple<std::string, std::string, uint32_t>> roots_;
  std::vector<std::string> creates_;
  std::vector<TargetOrder> targets_;
  std::vector<bool> shared_;  ///< match functions taken from shared_base_
  std::string shared_base_;
};

// ---- Match functions shared by several rules of a file ---------------------------------------

/// Rules of one file often repeat a sub-pattern (LayerNorm's mean/variance/std in every
/// LayerNorm form). A match function whose text, and the text of every function it calls,
/// is the same in several rules is written once, in a class template over the rule's expr
/// ids (`<Family>SharedMatch<Ids>`) that those rules' matchers derive from.
class SharedMatchPlanner {
 public:
  explicit SharedMatchPlanner(std::vector<RuleEmitter>& rules) : rules_(rules) {}

  /// Decides what is shared and tells each rule; returns the shared class template's text
  /// (empty when nothing is shared).
  std::string plan(const std::string& class_name, const std::string& file) {
    const size_t n = rules_.size();
    keys_.resize(n);
    for (size_t r = 0; r < n; ++r) {
      keys_[r].assign(rules_[r].numExprs(), "");
      for (ExprId id = 0; id < rules_[r].numExprs(); ++id) closureKey(r, id);
    }
    // How many rules have each (function, closure) pair; the most common closure of a
    // function name is the one that may be shared.
    std::map<std::string, std::map<std::string, std::set<size_t>>> users;
    for (size_t r = 0; r < n; ++r)
      for (ExprId id = 0; id < rules_[r].numExprs(); ++id)
        users[rules_[r].matchFnName(id)][keys_[r][id]].insert(r);
    for (const auto& [fn, by_key] : users) {
      const std::string* best = nullptr;
      size_t count = 1;
      for (const auto& [key, rules] : by_key)
        if (rules.size() > count) best = &key, count = rules.size();
      if (best) chosen_[fn] = *best;
    }
    shared_.resize(n);
    std::vector<std::vector<int8_t>> memo(n);
    for (size_t r = 0; r < n; ++r) {
      memo[r].assign(rules_[r].numExprs(), -1);
      for (ExprId id = 0; id < rules_[r].numExprs(); ++id) sharedIn(r, id, memo[r]);
      shared_[r].assign(rules_[r].numExprs(), false);
      for (ExprId id = 0; id < rules_[r].numExprs(); ++id) shared_[r][id] = memo[r][id] == 1;
    }
    // The template: each shared function once, in the order of the first rule using it.
    std::ostringstream body;
    std::set<std::string> written;
    for (size_t r = 0; r < n; ++r)
      for (ExprId id = 0; id < rules_[r].numExprs(); ++id) {
        const std::string fn = rules_[r].matchFnName(id);
        if (!shared_[r][id] || !written.insert(fn).second) continue;
        // Where it stands, "rule line:col" (all in the one file this family is from).
        std::vector<std::string> where;
        for (size_t o = 0; o < n; ++o)
          for (ExprId j = 0; j < rules_[o].numExprs(); ++j)
            if (shared_[o][j] && rules_[o].matchFnName(j) == fn) {
              std::string loc = rules_[o].matchFnLoc(j);
              if (loc.compare(0, file.size() + 1, file + ":") == 0) loc.erase(0, file.size() + 1);
              where.push_back(rules_[o].ruleName() + " " + loc);
            }
        body << "  /// " << rules_[r].matchFnDoc(id) << "\n";
        body << "  /// (" << file << ": " << joinStrings(where) << ")\n";
        body << rules_[r].matchFnText(id, "Ids::") << "\n";
      }
    for (size_t r = 0; r < n; ++r) rules_[r].useShared(shared_[r], class_name);
    if (written.empty()) return "";
    std::ostringstream os;
    os << "\n" << kRule;
    os << "// Match functions that several rules of this file share, written once. `Ids` is\n";
    os << "// the rule's expr ids: the same function names the same exprs in each rule.\n";
    os << kRule << "\n";
    os << "template <typename Ids>\n";
    os << "class " << class_name << " : public gen::Matcher, protected Ids {\n";
    os << " protected:\n";
    os << "  using gen::Matcher::Matcher;\n\n";
    os << body.str();
    os << "};\n";
    return os.str();
  }

 private:
  /// The text of `id`'s function and of every function it reaches, by name.
  const std::string& closureKey(size_t r, ExprId id) {
    std::string& key = keys_[r][id];
    if (!key.empty()) return key;
    std::map<std::string, std::string> reached;
    collect(r, id, reached);
    for (const auto& [fn, text] : reached) key += text;
    return key;
  }

  void collect(size_t r, ExprId id, std::map<std::string, std::string>& reached) {
    if (!reached.emplace(rules_[r].matchFnName(id), rules_[r].matchFnText(id)).second) return;
    for (ExprId in : rules_[r].callees(id)) collect(r, in, reached);
  }

  /// Shared: the chosen closure of its name (common to two rules or more), and every
  /// callee shared too (so the template's calls reach the same functions).
  bool sharedIn(size_t r, ExprId id, std::vector<int8_t>& memo) {
    if (memo[id] >= 0) return memo[id] == 1;
    auto it = chosen_.find(rules_[r].matchFnName(id));
    bool shared = it != chosen_.end() && it->second == keys_[r][id];
    for (ExprId in : rules_[r].callees(id)) shared = sharedIn(r, in, memo) && shared;
    memo[id] = shared ? 1 : 0;
    return shared;
  }

  std::vector<RuleEmitter>& rules_;
  std::vector<std::vector<std::string>> keys_;
  std::map<std::string, std::string> chosen_;
  std::vector<std::vector<bool>> shared_;
};

}  // namespace

// ---- Files ----------------------------------------------------------------------------------

std::string CppEmitter::stem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find('.'));
}

std::string CppEmitter::pascal(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "R" + out;
  return out;
}

std::vector<const ir::Rule*> CppEmitter::rulesOf(const std::string& input) const {
  std::vector<const ir::Rule*> out;
  for (const ir::Rule& r : file_.rules)
    if (r.loc.file == input) out.push_back(&r);
  return out;
}

std::vector<std::string> CppEmitter::familyInputs() const {
  std::vector<std::string> out;
  for (const std::string& in : inputs_)
    if (!rulesOf(in).empty()) out.push_back(in);
  return out;
}

std::vector<std::pair<std::string, std::string>> CppEmitter::run() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ir::Rule& r : file_.rules)
    if (std::find(inputs_.begin(), inputs_.end(), r.loc.file) == inputs_.end())
      throw CppEmitError(r.loc.str() + ": " + r.name + ": not from one of the input files");
  for (const std::string& in : familyInputs())
    out.emplace_back(stem(in) + ".gen.cc", emitFamily(in));
  out.emplace_back("registry.gen.h", emitRegistryHeader());
  out.emplace_back("registry.gen.cc", emitRegistrySource());
  return out;
}

std::string CppEmitter::emitFamily(const std::string& input) const {
  const std::vector<const ir::Rule*> rules = rulesOf(input);
  if (rules.empty()) return "";
  std::map<std::string, std::string> ops;
  std::ostringstream body;
  std::vector<std::string> adds;
  std::vector<RuleEmitter> emitters;
  emitters.reserve(rules.size());
  for (const ir::Rule* r : rules) {
    emitters.emplace_back(*r, ops);
    emitters.back().prepare();
  }
  body << SharedMatchPlanner(emitters).plan(pascal(stem(input)) + "SharedMatch", input);
  for (RuleEmitter& emitter : emitters) {
    body << emitter.run();
    for (const std::string& a : emitter.patternsToAdd()) adds.push_back(a);
  }
  std::ostringstream os;
  os << banner(stem(input) + ".gen.cc - " + input + " compiled by rulec");
  os << "//\n";
  os << "// Automatically generated by rulec, do not edit!\n";
  os << "//\n";
  os << "// Generated from: " << input << "\n";
  os << "// Regenerate with: " << command_ << "\n";
  os << "//\n";
  os << kRule;
  os << "#include <cstdint>\n#include <memory>\n#include <optional>\n#include <string>\n"
        "#include <utility>\n#include <vector>\n\n";
  os << "#include \"generated/registry.gen.h\"\n";
  os << "#include \"runtime/driver/RewritePattern.h\"\n";
  os << "#include \"runtime/driver/Rewriter.h\"\n";
  os << "#include \"runtime/match/GeneratedSupport.h\"\n\n";
  os << "namespace onnx_rewrite {\nnamespace {\n\n";
  os << "using To = gen::Matcher::To;\n\n";
  os << "// Ops the rules match or create, interned once.\n";
  os << "namespace op {\n";
  for (const auto& [name, init] : ops) os << "const OpId " << name << " = " << init << ";\n";
  os << "}  // namespace op\n";
  os << body.str();
  os << "\n}  // namespace\n\n";
  os << "void populate" << pascal(stem(input)) << "(RuleSet& rules) {\n";
  for (const std::string& a : adds) os << "  rules.add(" << a << ");\n";
  os << "}\n\n";
  os << "}  // namespace onnx_rewrite\n";
  return os.str();
}

std::string CppEmitter::emitRegistryHeader() const {
  std::ostringstream os;
  os << banner("registry.gen.h - the rules rulec compiled");
  os << "//\n// Automatically generated by rulec, do not edit!\n//\n";
  for (const std::string& in : inputs_) os << "// Generated from: " << in << "\n";
  os << "// Regenerate with: " << command_ << "\n";
  os << "//\n" << kRule;
  os << "#pragma once\n\n#include \"runtime/driver/RuleSet.h\"\n\n";
  os << "namespace onnx_rewrite {\n\n";
  os << "/// Adds every generated rule, in the order the interpreter would: files as given to\n"
        "/// rulec, then rules in file order.\n";
  os << "void populateGeneratedRules(RuleSet& rules);\n\n";
  for (const std::string& in : familyInputs())
    os << "/// The rules of " << in << ".\nvoid populate" << pascal(stem(in))
       << "(RuleSet& rules);\n";
  os << "\n}  // namespace onnx_rewrite\n";
  return os.str();
}

std::string CppEmitter::emitRegistrySource() const {
  std::ostringstream os;
  os << banner("registry.gen.cc - the rules rulec compiled");
  os << "//\n// Automatically generated by rulec, do not edit!\n//\n";
  for (const std::string& in : inputs_) os << "// Generated from: " << in << "\n";
  os << "// Regenerate with: " << command_ << "\n";
  os << "//\n" << kRule;
  os << "#include \"generated/registry.gen.h\"\n\n";
  os << "namespace onnx_rewrite {\n\n";
  os << "void populateGeneratedRules(RuleSet& rules) {\n";
  for (const std::string& in : familyInputs())
    os << "  populate" << pascal(stem(in)) << "(rules);\n";
  os << "}\n\n";
  os << "}  // namespace onnx_rewrite\n";
  return os.str();
}

}  // namespace onnx_rewrite
