//===- RuleIR.cc - small helpers of the Rule IR ---------------------------===//
#include "compiler/ir/RuleIR.h"

#include <algorithm>
#include <cstdio>

namespace onnx_rewrite::ir {

std::string SourceLoc::str() const {
  if (file.empty() && !known()) return "<unknown>";
  if (!known()) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

std::string SourceLoc::trace() const {
  std::string out = str();
  for (const FragmentUse* use = via.get(); use; use = use->at.via.get())
    out += " (in " + use->fragment + " at " + use->at.str() + ")";
  return out;
}

namespace {

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  // Floats always show a point or exponent, so 2.0 never prints like the int 2.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

template <typename T, typename F>
std::string list(const std::vector<T>& items, F format) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + format(items[i]);
  return out + "]";
}

}  // namespace

void Literal::toFloats() {
  if (kind == Kind::kInt) kind = Kind::kFloat;
  if (kind == Kind::kInts) kind = Kind::kFloats;
  for (int64_t v : ints) floats.push_back(static_cast<double>(v));
  ints.clear();
}

std::string Literal::str() const {
  switch (kind) {
    case Kind::kInt:
      return ints.empty() ? "?" : std::to_string(ints[0]);
    case Kind::kFloat:
      return floats.empty() ? "?" : formatDouble(floats[0]);
    case Kind::kString:
      return strings.empty() ? "?" : quote(strings[0]);
    case Kind::kInts:
      return list(ints, [](int64_t v) { return std::to_string(v); });
    case Kind::kFloats:
      return list(floats, formatDouble);
    case Kind::kStrings:
      return list(strings, quote);
  }
  return "?";
}

bool operator==(const Literal& a, const Literal& b) {
  return a.kind == b.kind && a.ints == b.ints && a.floats == b.floats && a.strings == b.strings;
}

void compactPattern(Pattern& p) {
  std::vector<bool> reached(p.exprs.size(), false);
  std::vector<ExprId> stack = {p.root};
  while (!stack.empty()) {
    const ExprId id = stack.back();
    stack.pop_back();
    if (id >= reached.size() || reached[id]) continue;
    reached[id] = true;
    for (ExprId in : p.exprs[id].inputs) stack.push_back(in);
  }
  if (std::all_of(reached.begin(), reached.end(), [](bool r) { return r; })) return;
  std::vector<ExprId> renumber(p.exprs.size(), kNoExpr);
  std::vector<Expr> kept;
  for (ExprId id = 0; id < p.exprs.size(); ++id) {
    if (!reached[id]) continue;
    renumber[id] = static_cast<ExprId>(kept.size());
    kept.push_back(std::move(p.exprs[id]));
  }
  for (Expr& e : kept)
    for (ExprId& in : e.inputs) in = renumber[in];
  p.root = renumber[p.root];
  p.exprs = std::move(kept);
}

}  // namespace onnx_rewrite::ir
