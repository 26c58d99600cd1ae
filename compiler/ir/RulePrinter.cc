//===- RulePrinter.cc - Rule IR as canonical text -------------------------===//
#include "compiler/ir/RulePrinter.h"

#include <functional>
#include <map>
#include <type_traits>

namespace onnx_rewrite::ir {
namespace {

std::string at(const SourceLoc& loc, const PrintOptions& o) {
  return o.locations && loc.known() ? "  @ " + loc.trace() : "";
}

std::string opName(const std::string& domain, const std::string& op) {
  return domain.empty() ? op : domain + "." + op;
}

std::string attrMatchText(const AttrMatch& a) {
  switch (a.kind) {
    case AttrMatch::Kind::kEquals:
      return a.name + " == " + (a.values.empty() ? "?" : a.values[0].str());
    case AttrMatch::Kind::kOneOf: {
      std::string s = a.name + " in {";
      for (size_t i = 0; i < a.values.size(); ++i) s += (i ? ", " : "") + a.values[i].str();
      return s + "}";
    }
    case AttrMatch::Kind::kRange:
      return a.name + " in [" + Literal{Literal::Kind::kFloat, {}, {a.min}, {}}.str() + ", " +
             Literal{Literal::Kind::kFloat, {}, {a.max}, {}}.str() + "]";
    case AttrMatch::Kind::kCapture:
      return a.name + " -> capture " + a.capture;
    case AttrMatch::Kind::kParam:
      return a.name + " == parameter " + a.capture;
  }
  return "?";
}

/// Prints the pattern DAG in post-order from the root.
class PatternPrinter {
 public:
  PatternPrinter(const Pattern& p, const PrintOptions& o, std::string& out)
      : p_(p), o_(o), out_(out) {}

  std::string visit(ExprId id) {
    auto found = numbers_.find(id);
    if (found != numbers_.end()) return found->second;
    const Expr& e = p_.exprs.at(id);
    std::vector<std::string> inputs;
    for (ExprId in : e.inputs) inputs.push_back(visit(in));
    std::string number = "%" + std::to_string(numbers_.size());
    numbers_[id] = number;
    std::string line = "    " + number + " = ";
    switch (e.kind) {
      case Expr::Kind::kCapture:
        line += "capture " + e.name;
        break;
      case Expr::Kind::kConstant:
        line += "const " + e.literal.str();
        break;
      case Expr::Kind::kNone:
        line += "none";
        break;
      case Expr::Kind::kOp: {
        line += std::string(e.optional ? "optional " : "") + "op " + opName(e.domain, e.op) + "(";
        for (size_t i = 0; i < inputs.size(); ++i) line += (i ? ", " : "") + inputs[i];
        if (!e.rest.empty()) line += std::string(inputs.empty() ? "" : ", ") + e.rest + "...";
        line += ")";
        if (e.output != 0) line += "." + std::to_string(e.output);
        if (!e.attrs.empty()) {
          line += " {";
          for (size_t i = 0; i < e.attrs.size(); ++i) {
            line += (i ? ", " : "") + attrMatchText(e.attrs[i]);
            if (e.attrs[i].default_value)
              line += " (default " + e.attrs[i].default_value->str() + ")";
            for (const auto& [until, value] : e.attrs[i].older_defaults)
              line += " (default " + value.str() + " up to opset " + std::to_string(until) + ")";
          }
          line += "}";
        }
        if (e.commutative) line += " commutative";
        if (!e.name.empty()) line += " -> " + e.name;
        for (const auto& [index, name] : e.other_outputs)
          line += ", ." + std::to_string(index) + " -> " + name;
        break;
      }
      case Expr::Kind::kAlternatives: {
        line += "alt(";
        for (size_t i = 0; i < inputs.size(); ++i) {
          line += (i ? " | " : "") + inputs[i];
          if (i < e.tags.size() && !e.tags[i].empty()) line += " @" + e.tags[i];
        }
        line += ")";
        if (e.group != ir::kNoGroup) {
          // Numbered as first printed, so both front ends print the same text.
          auto [it, added] = groups_.emplace(e.group, groups_.size());
          line += " tuple " + std::to_string(it->second);
        }
        if (!e.name.empty()) line += " -> " + e.name;
        break;
      }
    }
    out_ += line + at(e.loc, o_) + "\n";
    return number;
  }

 private:
  const Pattern& p_;
  const PrintOptions& o_;
  std::string& out_;
  std::map<ExprId, std::string> numbers_;
  std::map<uint32_t, size_t> groups_;
};

std::string constraintText(const Constraint& c) {
  auto bounds = [&] {
    std::string s;
    if (c.has_min) s += " min " + Literal{Literal::Kind::kFloat, {}, {c.min}, {}}.str();
    if (c.has_max) s += " max " + Literal{Literal::Kind::kFloat, {}, {c.max}, {}}.str();
    return s;
  };
  auto join = [](const auto& items) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) s += ", ";
      if constexpr (std::is_same_v<std::decay_t<decltype(items[i])>, std::string>)
        s += items[i];
      else
        s += std::to_string(items[i]);
    }
    return s + "]";
  };
  std::string s = c.subject + ": ";
  switch (c.kind) {
    case Constraint::Kind::kConstant:
      return s + "constant";
    case Constraint::Kind::kScalar:
      return s + "scalar" + bounds();
    case Constraint::Kind::kConstantEquals:
      return s + "constant == " + c.literal.str();
    case Constraint::Kind::kRank:
      return s + "rank in " + join(c.ints);
    case Constraint::Kind::kElemType:
      return s + "elem_type in " + join(c.strings);
    case Constraint::Kind::kShape:
      return s + "shape " + join(c.dims);
    case Constraint::Kind::kConsumers:
      return s + "consumers" + bounds();
    case Constraint::Kind::kNative:
      return s + "native " + c.native + join(c.args);
    case Constraint::Kind::kEquivalent:
      return s + "equivalent " + (c.args.empty() ? std::string("?") : c.args[0]);
  }
  return s + "?";
}

std::string targetAttrText(const TargetAttr& a) {
  switch (a.kind) {
    case TargetAttr::Kind::kLiteral:
      return a.name + " = " + a.literal.str();
    case TargetAttr::Kind::kCaptured:
      return a.name + " = attr(" + a.ref + ")";
    case TargetAttr::Kind::kValueOf:
      return a.name + " = value(" + a.ref + ")";
    case TargetAttr::Kind::kHelper: {
      std::string s = a.name + " = helper " + a.ref + "(";
      for (size_t i = 0; i < a.args.size(); ++i) s += (i ? ", " : "") + a.args[i];
      return s + ")";
    }
    case TargetAttr::Kind::kParam:
      return a.name + " = parameter " + a.ref;
  }
  return "?";
}

void printTarget(const Target& t, const PrintOptions& o, std::string& out) {
  out += "  rewrite";
  if (t.when) {
    out += " when";
    if (t.when->min_opset >= 0 || t.when->max_opset >= 0) {
      out += " opset(" + (t.when->domain.empty() ? std::string("ai.onnx") : t.when->domain) + ")";
      if (t.when->min_opset >= 0) out += " >= " + std::to_string(t.when->min_opset);
      if (t.when->max_opset >= 0) out += " <= " + std::to_string(t.when->max_opset);
    }
    for (const std::string& tag : t.when->tags) out += " @" + tag;
  }
  out += at(t.loc, o) + "\n";
  std::map<uint32_t, std::string> numbers;
  std::function<std::string(uint32_t)> visit = [&](uint32_t id) -> std::string {
    auto found = numbers.find(id);
    if (found != numbers.end()) return found->second;
    const TargetExpr& e = t.exprs.at(id);
    std::vector<std::string> inputs;
    for (uint32_t in : e.inputs) inputs.push_back(visit(in));
    std::string number = "%" + std::to_string(numbers.size());
    numbers[id] = number;
    std::string line = "    " + number + " = ";
    switch (e.kind) {
      case TargetExpr::Kind::kRef:
        line += "ref " + e.name;
        break;
      case TargetExpr::Kind::kNone:
        line += "none";
        break;
      case TargetExpr::Kind::kRest:
        line += "rest " + e.name + "...";
        break;
      case TargetExpr::Kind::kTensor:
        if (!e.helper.empty()) {
          line += "tensor helper " + e.helper + "(";
          for (size_t i = 0; i < e.args.size(); ++i) line += (i ? ", " : "") + e.args[i];
          line += ")";
        } else {
          line += "tensor " + (e.like.empty() ? e.elem_type : "like(" + e.like + ")") + " " +
                  e.literal.str();
          if (!e.dims.empty()) {
            line += " dims [";
            for (size_t i = 0; i < e.dims.size(); ++i)
              line += (i ? ", " : "") + std::to_string(e.dims[i]);
            line += "]";
          }
        }
        break;
      case TargetExpr::Kind::kOp:
        line += "op " + opName(e.domain, e.op) + "(";
        for (size_t i = 0; i < inputs.size(); ++i) line += (i ? ", " : "") + inputs[i];
        line += ")";
        if (e.output != 0 || e.num_outputs != 1)
          line += "." + std::to_string(e.output) + " of " + std::to_string(e.num_outputs);
        if (!e.attrs.empty()) {
          line += " {";
          for (size_t i = 0; i < e.attrs.size(); ++i)
            line += (i ? ", " : "") + targetAttrText(e.attrs[i]);
          line += "}";
        }
        break;
    }
    out += line + at(e.loc, o) + "\n";
    return number;
  };
  for (const auto& [name, id] : t.replacements) {
    std::string number = visit(id);
    out += "    replace " + name + " with " + number + "\n";
  }
}

}  // namespace

std::string printRule(const Rule& rule, const PrintOptions& o) {
  std::string out = "rule " + rule.name + " priority " + std::to_string(rule.priority);
  if (!rule.tags.empty()) {
    out += " tags [";
    for (size_t i = 0; i < rule.tags.size(); ++i) out += (i ? ", " : "") + rule.tags[i];
    out += "]";
  }
  out += at(rule.loc, o) + "\n";
  if (!rule.doc.empty()) out += "  doc " + rule.doc + "\n";
  for (const Applicability& a : rule.requires) {
    out += "  requires " + (a.domain.empty() ? std::string("ai.onnx") : a.domain);
    if (a.min_opset >= 0) out += " >= " + std::to_string(a.min_opset);
    if (a.max_opset >= 0) out += " <= " + std::to_string(a.max_opset);
    out += at(a.loc, o) + "\n";
  }
  out += "  match\n";
  if (rule.pattern.root != kNoExpr) {
    PatternPrinter printer(rule.pattern, o, out);
    out += "    root " + printer.visit(rule.pattern.root) + "\n";
  }
  if (!rule.pattern.constraints.empty()) {
    out += "  where\n";
    for (const Constraint& c : rule.pattern.constraints)
      out += "    " + constraintText(c) + (c.guard.empty() ? "" : " if " + c.guard + " matched") +
             at(c.loc, o) + "\n";
  }
  for (const Target& t : rule.targets) printTarget(t, o, out);
  return out;
}

std::string printOpDecl(const OpDecl& op, const PrintOptions& o) {
  std::string out = "op " + opName(op.domain, op.op) + " since " + std::to_string(op.since_version);
  if (op.commutative) out += " commutative";
  out += at(op.loc, o) + "\n";
  auto params = [&](const char* what, const std::vector<OpDecl::Param>& ps) {
    out += std::string("  ") + what + " (";
    for (size_t i = 0; i < ps.size(); ++i)
      out += (i ? ", " : "") + ps[i].name + (ps[i].optional ? "?" : "") +
             (ps[i].variadic ? "..." : "");
    out += ")\n";
  };
  params("inputs", op.inputs);
  params("outputs", op.outputs);
  for (const OpDecl::Attr& a : op.attrs) {
    out += "  attr " + a.name + ": " + a.type + (a.required ? " required" : "");
    if (a.default_value) out += " = " + a.default_value->str();
    out += "\n";
  }
  return out;
}

std::string printRuleFile(const RuleFile& file, const PrintOptions& o) {
  std::string out;
  for (const OpDecl& op : file.ops) out += printOpDecl(op, o);
  for (const Rule& rule : file.rules) out += printRule(rule, o);
  return out;
}

}  // namespace onnx_rewrite::ir
