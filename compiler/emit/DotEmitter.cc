//===- DotEmitter.cc - rules as Graphviz drawings -------------------------===//
#include "compiler/emit/DotEmitter.h"

namespace onnx_rewrite {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string opLabel(const std::string& domain, const std::string& op) {
  return domain.empty() ? op : domain + "." + op;
}

}  // namespace

std::string DotEmitter::run() const {
  std::string out;
  for (const ir::Rule& rule : file_.rules) out += emitRule(rule);
  return out;
}

std::string DotEmitter::emitRule(const ir::Rule& rule) const {
  std::string out =
      "digraph \"" + escape(rule.name) + "\" {\n  rankdir=BT;\n  node [fontname=\"Helvetica\"];\n";
  out +=
      "  label=\"" + escape(rule.name) + " (priority " + std::to_string(rule.priority) + ")\";\n";
  out += emitPattern(rule);
  for (size_t i = 0; i < rule.targets.size(); ++i) out += emitTarget(rule, i);
  return out + "}\n";
}

std::string DotEmitter::emitPattern(const ir::Rule& rule) const {
  const ir::Pattern& p = rule.pattern;
  std::string out = "  subgraph cluster_match {\n    label=\"match\";\n";
  for (size_t id = 0; id < p.exprs.size(); ++id) {
    const ir::Expr& e = p.exprs[id];
    std::string node = "    m" + std::to_string(id);
    std::string name = e.name.empty() ? "" : "\\n" + escape(e.name);
    switch (e.kind) {
      case ir::Expr::Kind::kCapture:
        out += node + " [shape=ellipse, label=\"" + escape(e.name) + "\"];\n";
        break;
      case ir::Expr::Kind::kConstant:
        out += node + " [shape=plaintext, label=\"" + escape(e.literal.str()) + "\"];\n";
        break;
      case ir::Expr::Kind::kAlternatives:
        out += node + " [shape=diamond, label=\"any of" + name + "\"];\n";
        break;
      case ir::Expr::Kind::kNone:
        out += node + " [shape=point];\n";
        break;
      case ir::Expr::Kind::kOp: {
        std::string attrs;
        for (const ir::AttrMatch& a : e.attrs)
          attrs += "\\n" + escape(a.name) +
                   (a.kind == ir::AttrMatch::Kind::kCapture ? "=capture"
                    : a.values.empty()                      ? ""
                                                            : "=" + escape(a.values[0].str()));
        out += node + " [shape=box" + std::string(e.optional ? ", style=dashed" : "") +
               (static_cast<ir::ExprId>(id) == p.root ? ", penwidth=2" : "") + ", label=\"" +
               escape(opLabel(e.domain, e.op)) + (e.optional ? "?" : "") + name + attrs + "\"];\n";
        if (!e.rest.empty()) {
          // `rest...`: a dashed node for the inputs after the written ones.
          const std::string m = "m" + std::to_string(id);
          out += "    " + m + "_rest [shape=ellipse, style=dashed, label=\"" + escape(e.rest) +
                 "...\"];\n    " + m + "_rest -> " + m + " [label=\"" +
                 std::to_string(e.inputs.size()) + "...\"];\n";
        }
        break;
      }
    }
    for (size_t i = 0; i < e.inputs.size(); ++i)
      out += "    m" + std::to_string(e.inputs[i]) + " -> m" + std::to_string(id) +
             (e.kind == ir::Expr::Kind::kOp ? " [label=\"" + std::to_string(i) + "\"]" : "") +
             ";\n";
  }
  return out + "  }\n";
}

std::string DotEmitter::emitTarget(const ir::Rule& rule, size_t index) const {
  const ir::Target& t = rule.targets[index];
  const std::string prefix = "t" + std::to_string(index) + "_";
  std::string out =
      "  subgraph cluster_rewrite_" + std::to_string(index) + " {\n    label=\"rewrite";
  if (t.when && (t.when->min_opset >= 0 || t.when->max_opset >= 0))
    out += " opset " + std::to_string(t.when->min_opset) + ".." + std::to_string(t.when->max_opset);
  out += "\";\n";
  for (size_t id = 0; id < t.exprs.size(); ++id) {
    const ir::TargetExpr& e = t.exprs[id];
    std::string node = "    " + prefix + std::to_string(id);
    switch (e.kind) {
      case ir::TargetExpr::Kind::kRef:
        out += node + " [shape=ellipse, label=\"" + escape(e.name) + "\"];\n";
        break;
      case ir::TargetExpr::Kind::kNone:
        out += node + " [shape=point];\n";
        break;
      case ir::TargetExpr::Kind::kRest:
        out += node + " [shape=ellipse, style=dashed, label=\"" + escape(e.name) + "...\"];\n";
        break;
      case ir::TargetExpr::Kind::kTensor:
        out += node + " [shape=plaintext, label=\"" +
               escape(e.helper.empty() ? e.literal.str() : e.helper + "(...)") + "\"];\n";
        break;
      case ir::TargetExpr::Kind::kOp:
        out +=
            node + " [shape=box, label=\"" +
            escape(e.op.empty() ? "output " + std::to_string(e.output) : opLabel(e.domain, e.op)) +
            "\"];\n";
        break;
    }
    for (size_t i = 0; i < e.inputs.size(); ++i)
      out += "    " + prefix + std::to_string(e.inputs[i]) + " -> " + prefix + std::to_string(id) +
             ";\n";
  }
  out += "  }\n";
  // Which source value each target value replaces.
  for (const auto& [name, id] : t.replacements)
    for (size_t m = 0; m < rule.pattern.exprs.size(); ++m)
      if (rule.pattern.exprs[m].name == name &&
          rule.pattern.exprs[m].kind != ir::Expr::Kind::kCapture) {
        out += "  m" + std::to_string(m) + " -> " + prefix + std::to_string(id) +
               " [style=dashed, constraint=false, label=\"replaced by\"];\n";
        break;
      }
  return out;
}

}  // namespace onnx_rewrite
