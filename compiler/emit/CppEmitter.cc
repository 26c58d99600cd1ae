//===- CppEmitter.cc - rules as C++ matchers ------------------------------===//
//
// The emitter prints the one plan of each rule (compiler/plan/RulePlan.h), the
// plan the interpreter runs; it decides nothing about matching itself. One
// RuleEmitter per rule writes, in this order: the RuleSpec as a constant table
// (emitSpec, via SpecTable.h), the `<Name>Match` class (emitMatch: one function
// per pattern expr, in the interpreter's search order; emitRewrite: one function
// per rewrite variant, walking the plan's build order) and the `<Name>Rule`
// pattern class. SharedMatchPlanner writes match functions that several rules
// of a file have verbatim once. The layout is the emitter's own (CppText.h): no
// formatter runs over the output.
//
//===----------------------------------------------------------------------===//
#include "compiler/emit/CppEmitter.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "compiler/emit/CppText.h"
#include "compiler/emit/SpecTable.h"
#include "compiler/plan/RulePlan.h"

namespace onnx_rewrite {
namespace {

using cpp::call;
using cpp::joinStrings;
using cpp::kRuleLine;
using cpp::num;
using cpp::str;
using ir::ExprId;

bool binds(const std::string& name) { return !name.empty() && name != "_"; }

std::string opLabel(const std::string& domain, const std::string& op) {
  return plan::isOnnxDomain(domain) ? op : domain + "." + op;
}

/// `text` as comment lines (`prefix` each) of at most kColumns, broken at spaces.
std::string wrappedComment(const std::string& text, const std::string& prefix = "//") {
  std::string out, line = prefix;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() > prefix.size() && line.size() + 1 + word.size() > cpp::kColumns) {
      out += line + "\n";
      line = prefix;
    }
    line += " " + word;
    start = end + 1;
  }
  return out + line + "\n";
}

/// Why generated files carry `clang-format off`.
const char* const kLayoutNote =
    "// Laid out by rulec itself, so the text does not depend on any formatter's version;\n"
    "// formatters are told to leave it alone.\n";

/// OpId::str(): "op" or "domain::op".
std::string opIdStr(const plan::OpName& op) {
  return plan::isOnnxDomain(op.domain) ? op.op : op.domain + "::" + op.op;
}

// ---- One rule -----------------------------------------------------------------------------

class RuleEmitter {
 public:
  /// Plans `rule` (throws CppEmitError for a rule no back end can run).
  RuleEmitter(const ir::Rule& rule, std::map<std::string, std::string>& ops)
      : rule_(rule), p_(rule.pattern), plan_(planOrThrow(rule)), ops_(ops) {
    name_ = CppEmitter::pascal(rule_.name);
    nameExprs();
  }

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
  const std::string& matchFnLoc(ExprId id) const { return plan_.spec.exprs[id].loc; }
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

  std::string run() const {
    std::ostringstream os;
    emitHeaderComment(os);
    emitSpec(os);
    emitMatch(os);
    emitPattern(os);
    return os.str();
  }

  /// The statements adding this rule's patterns (one per root op) to `rules`.
  std::vector<std::string> patternsToAdd() const {
    std::vector<std::string> out;
    for (const plan::Root& root : plan_.roots) {
      const std::string name =
          plan_.roots.size() == 1 ? rule_.name : rule_.name + "/" + opIdStr(root.op);
      out.push_back(call(2, "rules.add(std::make_unique<" + name_ + "Rule>",
                         {str(name), opConst(root.op), std::to_string(root.output)}, ");"));
    }
    return out;
  }

 private:
  static plan::RulePlan planOrThrow(const ir::Rule& rule) {
    try {
      return plan::planRule(rule);
    } catch (const plan::PlanError& e) {
      throw CppEmitError(e.what());
    }
  }

  std::string opConst(const plan::OpName& op) const {
    const bool onnx = plan::isOnnxDomain(op.domain);
    std::string name = "k" + (onnx ? "" : CppEmitter::pascal(op.domain)) + op.op;
    ops_[name] = call(0, "const OpId " + name + " = OpId::get",
                      {str(onnx ? "" : op.domain), str(op.op)}, ";");
    return "op::" + name;
  }
  std::string opConst(const ir::Expr& e) const { return opConst({e.domain, e.op}); }

  /// Identifiers: the bound name, else the op; numbered when several share one.
  void nameExprs() {
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
    return "kSlot" + CppEmitter::pascal(plan_.spec.slot_names[slot]);
  }

  void emitHeaderComment(std::ostream& os) const {
    os << "\n" << kRuleLine;
    os << "// Generated from: " << rule_.loc.file << ":" << rule_.loc.line << "\n";
    os << "// " << rule_.name << " (priority " << rule_.priority << ")";
    if (!rule_.doc.empty()) os << ": " << rule_.doc;
    os << "\n" << kRuleLine << "\n";
  }

  /// The plan's RuleSpec: everything the shared checks and failure messages read.
  void emitSpec(std::ostream& os) const {
    std::vector<std::string> notes;
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      notes.push_back(std::to_string(id) + ": " + show(id));
    os << "/// Static data of rule " << rule_.name << " for the shared checks and messages.\n";
    os << "const gen::RuleSpec& spec" << name_ << "() {\n";
    os << "  static const gen::RuleSpec spec = "
       << cpp::layout(cpp::specTable(plan_.spec, notes), 2, 1) << ";\n";
    os << "  return spec;\n";
    os << "}\n\n";
  }

  // ---- The matcher ----------------------------------------------------------------------

  void emitMatch(std::ostream& os) const {
    const bool shares = std::find(shared_.begin(), shared_.end(), true) != shared_.end();
    const std::string base = shares ? shared_base_ + "<" + idsName() + ">" : "gen::Matcher";
    if (shares) emitIds(os);
    os << "/// The search of rule " << rule_.name
       << ": one function per pattern expr, each matching its\n"
          "/// value and then the rest of the search (`k`); choice points try their options in\n"
          "/// order and undo what a failed option bound.\n";
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
    if (!shares) emitExprIds(os, "  ");
    os << "  enum : uint32_t {\n";
    for (uint32_t s = 0; s < plan_.spec.slot_names.size(); ++s)
      os << "    " << slotConst(s) << " = " << s << ",\n";
    os << "  };\n\n";
    os << "  // ---- Match\n\n";
    if (shares) {
      std::vector<std::string> names;
      for (ExprId id = 0; id < p_.exprs.size(); ++id)
        if (shared_[id]) names.push_back(matchFn(id));
      os << "  // From " << shared_base_ << " (the same in other rules of this file):\n";
      std::string line = "  //";
      for (size_t i = 0; i < names.size(); ++i) {
        const std::string item = " " + names[i] + (i + 1 < names.size() ? "," : ".");
        if (line.size() + item.size() > cpp::kColumns) {
          os << line << "\n";
          line = "  //";
        }
        line += item;
      }
      os << line << "\n\n";
    }
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      if (!shares || !shared_[id]) emitExprMatch(os, id);
    os << "  // ---- Rewrite\n";
    for (size_t i = 0; i < plan_.targets.size(); ++i) emitRewrite(os, i);
    os << "};\n\n";
  }

  void emitExprIds(std::ostream& os, const std::string& in) const {
    os << in << "enum : gen::ExprId {\n";
    for (ExprId id = 0; id < p_.exprs.size(); ++id)
      os << in << "  " << exprConst(id) << " = " << id << ",\n";
    os << in << "};\n";
  }

  /// The rule's expr ids, which the family's shared match functions are instantiated with.
  void emitIds(std::ostream& os) const {
    os << "/// Expr ids of rule " << rule_.name << " (indices into its RuleSpec's exprs).\n";
    os << "struct " << idsName() << " {\n";
    emitExprIds(os, "  ");
    os << "};\n\n";
  }

  void emitExprMatch(std::ostream& os, ExprId id) const {
    os << wrappedComment(matchFnDoc(id) + "  (" + matchFnLoc(id) + ")", "  ///");
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
          emitNodeMatch(os, id, 4, prefix);
        } else {
          os << "    auto present = [&] {\n";
          emitNodeMatch(os, id, 6, prefix);
          os << "    };\n";
          os << "    const uint32_t m = mark();\n";
          os << "    if (present()) return true;\n";
          os << "    undo(m);\n";
          os << "    // absent: " << opLabel(e.domain, e.op) << " stands for its input\n";
          os << "    return " << matchFn(e.inputs[0]) << "(v, k);\n";
        }
        break;
      }
    }
    os << "  }\n\n";
  }

  /// `return matchA(input(n, 0), [&] { return matchB(input(n, 1), k); });`: inputs in
  /// order, each continuing with the next; one lambda per line when that is too long.
  std::string inputChain(const ir::Expr& e, size_t from, size_t indent, bool broken) const {
    const std::string arg = "input(n, " + std::to_string(from) + ")";
    const std::string fn = matchFn(e.inputs[from]);
    if (from + 1 == e.inputs.size()) return "return " + fn + "(" + arg + ", k);";
    if (!broken)
      return "return " + fn + "(" + arg + ", [&] { " + inputChain(e, from + 1, 0, false) + " });";
    const std::string pad(indent, ' ');
    return "return " + fn + "(" + arg + ", [&] {\n" + pad + "  " +
           inputChain(e, from + 1, indent + 2, true) + "\n" + pad + "});";
  }

  void emitNodeMatch(std::ostream& os, ExprId id, size_t indent, const std::string& prefix) const {
    const ir::Expr& e = p_.exprs[id];
    const std::string in(indent, ' ');
    const std::string c = prefix + exprConst(id);
    os << in << "const NodeId n = node(" << c << ", v, " << opConst(e) << ");\n";
    os << in << "if (n == kNoId || !attrs(" << c << ", n, v)) return false;\n";
    const size_t count = e.inputs.size();
    if (count == 0) {
      os << in << "return k();\n";
      return;
    }
    if (!plan_.commutative[id]) {
      std::string chain = inputChain(e, 0, indent, false);
      if (indent + chain.size() > cpp::kColumns) chain = inputChain(e, 0, indent, true);
      os << in << chain << "\n";
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
    if (plan_.targets.size() == 1) {
      os << "    return rewrite0();\n";
    } else {
      os << "    switch (chosen()) {\n";
      for (size_t i = 0; i < plan_.targets.size(); ++i)
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
        if (!te.helper.empty()) return "tensor(helper, " + te.helper + ")";
        return te.like.empty() ? "tensor(" + te.literal.str() + ")"
                               : "tensor(like(" + te.like + "), " + te.literal.str() + ")";
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

  /// A literal target attribute as the call that makes it.
  static std::string literalAttr(const ir::TargetAttr& a) {
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

  /// `{kSlotA, kSlotB}` and `{"a", "b"}`: a helper's argument slots and names.
  std::pair<std::string, std::string> helperArgs(const std::vector<uint32_t>& slots,
                                                 const std::vector<std::string>& names) const {
    std::vector<std::string> slot_text, name_text;
    for (uint32_t s : slots) slot_text.push_back(slotConst(s));
    for (const std::string& n : names) name_text.push_back(str(n));
    return {"{" + joinStrings(slot_text) + "}", "{" + joinStrings(name_text) + "}"};
  }

  /// Checks and values computed before the graph changes: target expr `i`.
  void emitPrepare(std::ostream& os, const plan::TargetPlan& tp, uint32_t i) const {
    const ir::TargetExpr& te = tp.target->exprs[i];
    const plan::TargetExprPlan& xp = tp.exprs[i];
    const std::string t = "t" + std::to_string(i);
    switch (te.kind) {
      case ir::TargetExpr::Kind::kRef:
        os << "    "
           << call(4, "if (!requireBound", {slotConst(xp.slot), str(xp.loc), str(te.name)},
                   ") return false;")
           << "\n";
        return;
      case ir::TargetExpr::Kind::kNone:
      case ir::TargetExpr::Kind::kRest:
        return;
      case ir::TargetExpr::Kind::kTensor: {
        const std::string decl = "std::optional<onnx::TensorProto> " + t + " = ";
        if (te.helper.empty()) {
          std::vector<std::string> dims;
          for (int64_t d : xp.dims) dims.push_back(std::to_string(d));
          const std::string values = cpp::literalText(plan::specLiteral(te.literal));
          const std::string shape = "{" + joinStrings(dims) + "}";
          // A literal of a given type is built here; tensor(like(x)) takes x's when it applies.
          const bool like = !te.like.empty();
          os << "    "
             << call(4, decl + (like ? "likeTensor" : "gen::literalTensor"),
                     like ? std::vector<std::string>{values, slotConst(xp.slot), shape, str(xp.loc),
                                                     str(te.like)}
                          : std::vector<std::string>{values, std::to_string(xp.elem_type), shape},
                     ";")
             << "\n";
        } else {
          const auto [slots, names] = helperArgs(xp.args, te.args);
          os << "    "
             << call(4, decl + "helperTensor",
                     {"gen::tensorHelper(" + str(te.helper) + ")", slots, names, str(xp.loc)}, ";")
             << "\n";
        }
        os << "    if (!" << t << ") return false;\n";
        return;
      }
      case ir::TargetExpr::Kind::kOp:
        break;
    }
    if (te.op.empty()) return;
    const std::string attrs = "attrs" + std::to_string(i);
    os << "    std::vector<onnx::AttributeProto> " << attrs << ";\n";
    for (size_t k = 0; k < te.attrs.size(); ++k) {
      const ir::TargetAttr& a = te.attrs[k];
      const plan::TargetAttrPlan& ap = xp.attrs[k];
      const std::string var = "a" + std::to_string(i) + "_" + std::to_string(k);
      const std::string decl = "std::optional<onnx::AttributeProto> " + var + " = ";
      const std::string loc = str(ap.loc);
      std::string made;
      switch (a.kind) {
        case ir::TargetAttr::Kind::kLiteral:
          os << "    " << call(4, attrs + ".push_back", {literalAttr(a)}, ";") << "\n";
          continue;
        case ir::TargetAttr::Kind::kCaptured:
          made = call(4, decl + "captured",
                      {std::to_string(ap.slot), str(a.name), str(a.ref), loc, loc}, ";");
          break;
        case ir::TargetAttr::Kind::kValueOf:
          made = call(4, decl + "valueOf", {slotConst(ap.slot), str(a.name), str(a.ref), loc, loc},
                      ";");
          break;
        case ir::TargetAttr::Kind::kHelper: {
          const auto [slots, names] = helperArgs(ap.args, a.args);
          made = call(
              4, decl + "attrHelper",
              {"gen::attributeHelper(" + str(a.ref) + ")", slots, names, str(a.name), loc, loc},
              ";");
          break;
        }
        case ir::TargetAttr::Kind::kParam:  // the plan rejects these
          continue;
      }
      os << "    " << made << "\n";
      os << "    if (!" << var << ") return false;\n";
      os << "    " << attrs << ".push_back(std::move(*" << var << "));\n";
    }
  }

  /// `spec.inputs = {...}`, splicing each `rest...` as the matched node's further inputs.
  void emitInputs(std::ostream& os, const plan::TargetPlan& tp, const ir::TargetExpr& te,
                  const std::string& spec) const {
    const ir::Target& t = *tp.target;
    std::vector<std::string> ins;
    size_t i = 0;
    for (; i < te.inputs.size() && t.exprs[te.inputs[i]].kind != ir::TargetExpr::Kind::kRest; ++i)
      ins.push_back("v" + std::to_string(te.inputs[i]));
    os << "    " << spec << ".inputs = {" << joinStrings(ins) << "};\n";
    for (; i < te.inputs.size(); ++i) {
      const uint32_t in = te.inputs[i];
      if (t.exprs[in].kind != ir::TargetExpr::Kind::kRest) {
        os << "    " << spec << ".inputs.push_back(v" << in << ");\n";
        continue;
      }
      os << "    for (const ValueId in : rest(" << exprConst(tp.exprs[in].rest) << ")) " << spec
         << ".inputs.push_back(in);  // " << t.exprs[in].name << "...\n";
    }
  }

  /// Target expr `i` made in the graph: `v<i>` is its value.
  void emitBuild(std::ostream& os, const plan::TargetPlan& tp, uint32_t i) const {
    const ir::TargetExpr& te = tp.target->exprs[i];
    const plan::TargetExprPlan& xp = tp.exprs[i];
    const std::string v = "v" + std::to_string(i);
    switch (te.kind) {
      case ir::TargetExpr::Kind::kRef:
        os << "    const ValueId " << v << " = slot(" << slotConst(xp.slot) << ");\n";
        return;
      case ir::TargetExpr::Kind::kNone:
        os << "    const ValueId " << v << " = kNoId;\n";
        return;
      case ir::TargetExpr::Kind::kRest:
        return;  // spliced into the inputs of the node that reads it
      case ir::TargetExpr::Kind::kTensor:
        os << "    const ValueId " << v << " = rw_.addInitializer(std::move(*t" << i
           << "), ruleName());\n";
        return;
      case ir::TargetExpr::Kind::kOp:
        break;
    }
    if (te.op.empty()) {
      os << "    const ValueId " << v << " = g_.node(n" << te.inputs[0] << ").output(" << te.output
         << ");\n";
      return;
    }
    const std::string spec = "spec" + std::to_string(i);
    os << "    NodeSpec " << spec << ";\n";
    os << "    " << spec << ".op = " << opConst({te.domain, te.op}) << ";\n";
    emitInputs(os, tp, te, spec);
    if (xp.num_outputs != 1) os << "    " << spec << ".num_outputs = " << xp.num_outputs << ";\n";
    if (!xp.omitted.empty()) {
      std::vector<std::string> om;
      for (uint32_t o : xp.omitted) om.push_back(std::to_string(o));
      os << "    " << spec << ".omitted_outputs = {" << joinStrings(om) << "};\n";
    }
    os << "    " << spec << ".attributes = std::move(attrs" << i << ");\n";
    os << "    " << spec << ".created_by = ruleName();\n";
    os << "    const NodeId n" << i << " = rw_.createNode(std::move(" << spec << "));\n";
    os << "    const ValueId " << v << " = g_.node(n" << i << ").output(" << te.output << ");\n";
  }

  void emitRewrite(std::ostream& os, size_t index) const {
    const plan::TargetPlan& tp = plan_.targets[index];
    const ir::Target& t = *tp.target;
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
    os << ", " << tp.loc << ":\n";
    for (const auto& [name, i] : t.replacements)
      os << "  ///   " << name << " = " << targetText(t, i) << "\n";
    os << "  bool rewrite" << index << "() {\n";
    os << "    // Everything that can still fail, before the graph changes.\n";
    for (uint32_t i : tp.order) emitPrepare(os, tp, i);
    os << "    collectMatched();\n";
    for (const plan::ReplacementPlan& r : tp.replacements) {
      const ir::TargetExpr::Kind kind = t.exprs[r.expr].kind;
      const char* to = kind == ir::TargetExpr::Kind::kRef      ? "To::kRef"
                       : kind == ir::TargetExpr::Kind::kTensor ? "To::kTensor"
                                                               : "To::kOp";
      const uint32_t to_slot = tp.exprs[r.expr].slot;
      os << "    "
         << call(4, "if (!replaceable",
                 {slotConst(r.slot), to,
                  to_slot == gen::kNoSlot ? "gen::kNoSlot" : slotConst(to_slot), str(tp.loc),
                  str(r.expr_loc)},
                 ") return false;")
         << "\n";
    }
    os << "    if (!rw_.checkReplaceable(s_.matched, s_.provided)) return false;\n\n";
    os << "    // Build.\n";
    for (uint32_t i : tp.order) emitBuild(os, tp, i);
    std::vector<std::string> pairs;
    for (size_t k = 0; k < tp.replacements.size(); ++k)
      pairs.push_back("{s_.provided[" + std::to_string(k) + "], v" +
                      std::to_string(tp.replacements[k].expr) + "}");
    os << "    return rw_.replaceMatch(s_.matched, {" << joinStrings(pairs) << "});\n";
    os << "  }\n";
  }

  // ---- The pattern class ------------------------------------------------------------------

  void emitPattern(std::ostream& os) const {
    std::vector<std::string> tags, creates;
    for (const std::string& t : rule_.tags) tags.push_back(str(t));
    for (const plan::OpName& op : plan_.creates) creates.push_back(opConst(op));
    os << "/// " << rule_.name << " as a RewritePattern"
       << (plan_.roots.size() > 1 ? " (one per root op)" : "") << ".\n";
    os << "class " << name_ << "Rule : public RewritePattern {\n";
    os << " public:\n";
    os << "  " << name_ << "Rule(std::string name, OpId root, uint32_t root_output)\n";
    os << "      : "
       << cpp::braced(8, "RewritePattern(RuleInfo",
                      {"std::move(name)", "root", std::to_string(rule_.priority),
                       "{" + joinStrings(tags) + "}", str(rule_.loc.str()),
                       "{" + joinStrings(creates) + "}"},
                      "),")
       << "\n";
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
  plan::RulePlan plan_;
  std::map<std::string, std::string>& ops_;
  std::string name_;
  std::vector<std::string> ident_;
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
        body << wrappedComment(rules_[r].matchFnDoc(id), "  ///");
        body << wrappedComment("(" + file + ": " + joinStrings(where) + ")", "  ///");
        body << rules_[r].matchFnText(id, "Ids::");
      }
    for (size_t r = 0; r < n; ++r) rules_[r].useShared(shared_[r], class_name);
    if (written.empty()) return "";
    std::ostringstream os;
    os << "\n" << kRuleLine;
    os << "// Match functions that several rules of this file share, written once. `Ids` is\n";
    os << "// the rule's expr ids: the same function names the same exprs in each rule.\n";
    os << kRuleLine << "\n";
    os << "template <typename Ids>\n";
    os << "class " << class_name << " : public gen::Matcher, protected Ids {\n";
    os << " protected:\n";
    os << "  using gen::Matcher::Matcher;\n\n";
    std::string text = body.str();
    if (text.size() >= 2 && text.compare(text.size() - 2, 2, "\n\n") == 0) text.pop_back();
    os << text;
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
  for (const ir::Rule* r : rules) emitters.emplace_back(*r, ops);
  body << SharedMatchPlanner(emitters).plan(pascal(stem(input)) + "SharedMatch", input);
  for (RuleEmitter& emitter : emitters) {
    body << emitter.run();
    for (const std::string& a : emitter.patternsToAdd()) adds.push_back(a);
  }
  std::ostringstream os;
  os << cpp::banner(stem(input) + ".gen.cc - " + input + " compiled by rulec");
  os << "//\n";
  os << "// Automatically generated by rulec, do not edit!\n";
  os << "//\n";
  os << "// Generated from: " << input << "\n";
  os << wrappedComment("Regenerate with: " + command_);
  os << "//\n";
  os << kLayoutNote;
  os << "//\n";
  os << kRuleLine;
  os << "// clang-format off\n";
  os << "#include <cstdint>\n#include <memory>\n#include <optional>\n#include <string>\n"
        "#include <utility>\n#include <vector>\n\n";
  os << "#include \"generated/registry.gen.h\"\n";
  os << "#include \"runtime/driver/RewritePattern.h\"\n";
  os << "#include \"runtime/driver/Rewriter.h\"\n";
  os << "#include \"runtime/match/GeneratedSupport.h\"\n\n";
  os << "namespace onnx_rewrite {\nnamespace {\n\n";
  os << "// Spec tables name only the members before the last non-default one.\n";
  os << "#pragma GCC diagnostic ignored \"-Wmissing-field-initializers\"\n\n";
  os << "using To = gen::Matcher::To;\n";
  os << cpp::specTableAliases() << "\n";
  os << "// Ops the rules match or create, interned once.\n";
  os << "namespace op {\n";
  for (const auto& [name, init] : ops) os << init << "\n";
  os << "}  // namespace op\n";
  os << body.str();
  os << "\n}  // namespace\n\n";
  os << "void populate" << pascal(stem(input)) << "(RuleSet& rules) {\n";
  for (const std::string& a : adds) os << "  " << a << "\n";
  os << "}\n\n";
  os << "}  // namespace onnx_rewrite\n";
  return os.str();
}

std::string CppEmitter::registryHeading(const std::string& name) const {
  std::string out = cpp::banner(name + " - the rules rulec compiled");
  out += "//\n// Automatically generated by rulec, do not edit!\n//\n";
  for (const std::string& in : inputs_) out += "// Generated from: " + in + "\n";
  out += wrappedComment("Regenerate with: " + command_);
  return out + "//\n" + kRuleLine;
}

std::string CppEmitter::emitRegistryHeader() const {
  std::ostringstream os;
  os << registryHeading("registry.gen.h");
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
  os << registryHeading("registry.gen.cc");
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
