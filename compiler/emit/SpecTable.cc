//===- SpecTable.cc - a rule's gen::RuleSpec as a C++ constant table ------===//
//
// One function per RuleSpec struct; each lists every member in declaration
// order (runtime/match/RuleSpec.h) with whether it holds its default, and a Row
// drops the defaults at the end. Keep these in step with RuleSpec.h: a member
// added there must be added here, at the same position.
//
//===----------------------------------------------------------------------===//
#include "compiler/emit/SpecTable.h"

#include <utility>

namespace onnx_rewrite::cpp {
namespace {

/// One struct's initializer: members in order, trailing defaults left out.
class Row {
 public:
  Row& add(Init value, bool is_default) {
    members_.push_back(std::move(value));
    defaults_.push_back(is_default);
    return *this;
  }
  Row& add(std::string text, bool is_default) {
    return add(Init::atom(std::move(text)), is_default);
  }

  Init done() {
    size_t n = members_.size();
    while (n > 0 && defaults_[n - 1]) --n;
    members_.resize(n);
    return Init::list(std::move(members_));
  }

 private:
  std::vector<Init> members_;
  std::vector<bool> defaults_;
};

std::string slotText(uint32_t slot) {
  return slot == gen::kNoSlot ? "gen::kNoSlot" : std::to_string(slot);
}

template <typename T, typename F>
Init listOf(const std::vector<T>& items, F&& item) {
  std::vector<Init> out;
  for (const T& i : items) out.push_back(item(i));
  return Init::list(std::move(out));
}

Init ints(const std::vector<int64_t>& v) {
  return listOf(v, [](int64_t i) { return Init::atom(std::to_string(i)); });
}
Init uints(const std::vector<uint32_t>& v) {
  return listOf(v, [](uint32_t i) { return Init::atom(std::to_string(i)); });
}
Init strings(const std::vector<std::string>& v) {
  return listOf(v, [](const std::string& s) { return Init::atom(str(s)); });
}

bool isDefault(const gen::Literal& l) {
  return l.kind == gen::Literal::Kind::kInt && l.ints.empty() && l.floats.empty() &&
         l.strings.empty();
}

Init attrSpec(const gen::AttrSpec& a) {
  static const char* const kKinds[] = {"kEquals", "kOneOf", "kRange", "kCapture"};
  Init older = listOf(a.older_defaults, [](const std::pair<int64_t, gen::Literal>& d) {
    return Init::list({Init::atom(std::to_string(d.first)), Init::atom(literalText(d.second))});
  });
  return Row()
      .add(str(a.name), false)
      .add(str(a.loc), false)
      .add(std::string("Attr::") + kKinds[static_cast<int>(a.kind)],
           a.kind == gen::AttrSpec::Kind::kEquals)
      .add(listOf(a.values, [](const gen::Literal& l) { return Init::atom(literalText(l)); }),
           a.values.empty())
      .add(a.axes ? "true" : "false", !a.axes)
      .add(a.default_value ? literalText(*a.default_value) : "{}", !a.default_value)
      .add(older, a.older_defaults.empty())
      .add(num(a.min), a.min == 0)
      .add(num(a.max), a.max == 0)
      .add(slotText(a.capture), a.capture == gen::kNoSlot)
      .add(str(a.capture_name), a.capture_name.empty())
      .done();
}

Init exprSpec(const gen::ExprSpec& x) {
  Init others = listOf(x.other_outputs, [](const gen::ExprSpec::OtherOutput& o) {
    return Init::list({Init::atom(std::to_string(o.output)), Init::atom(slotText(o.slot)),
                       Init::atom(str(o.name))});
  });
  return Row()
      .add(str(x.label), false)
      .add(str(x.loc), false)
      .add(slotText(x.slot), x.slot == gen::kNoSlot)
      .add(std::to_string(x.num_inputs), x.num_inputs == 0)
      .add(listOf(x.attrs, attrSpec), x.attrs.empty())
      .add(literalText(x.literal), isDefault(x.literal))
      .add(num(x.tolerance), x.tolerance == gen::ExprSpec().tolerance)
      .add(std::to_string(x.output), x.output == 0)
      .add(uints(x.none_inputs), x.none_inputs.empty())
      .add(x.variadic ? "true" : "false", !x.variadic)
      .add(others, x.other_outputs.empty())
      .add(uints(x.peers), x.peers.empty())
      .done();
}

Init dimSpec(const gen::ConstraintSpec::Dim& d) {
  static const char* const kKinds[] = {"kAny", "kStatic", "kSymbol"};
  return Row()
      .add(std::string("Dim::") + kKinds[static_cast<int>(d.kind)], false)
      .add(std::to_string(d.value), d.value == 0)
      .add(std::to_string(d.symbol), d.symbol == 0)
      .done();
}

Init constraintSpec(const gen::ConstraintSpec& c) {
  static const char* const kKinds[] = {"kConstant",  "kScalar",   "kConstantEquals",
                                       "kRank",      "kElemType", "kShape",
                                       "kConsumers", "kNative",   "kEquivalent"};
  const bool native = c.kind == gen::ConstraintSpec::Kind::kNative;
  std::vector<int64_t> elem_types(c.elem_types.begin(), c.elem_types.end());
  return Row()
      .add(std::string("Check::") + kKinds[static_cast<int>(c.kind)], false)
      .add(str(c.loc), false)
      .add(str(c.subject), c.subject.empty())
      .add(slotText(c.slot), c.slot == gen::kNoSlot)
      .add(strings(c.args), c.args.empty())
      .add(uints(c.arg_slots), c.arg_slots.empty())
      .add(str(c.native), c.native.empty())
      .add(native ? "gen::nativePredicate(" + str(c.native) + ")" : "nullptr", !native)
      .add(slotText(c.guard_slot), c.guard_slot == gen::kNoSlot)
      .add(ints(c.ints), c.ints.empty())
      .add(c.has_min ? "true" : "false", !c.has_min)
      .add(c.has_max ? "true" : "false", !c.has_max)
      .add(num(c.min), c.min == 0)
      .add(num(c.max), c.max == 0)
      .add(strings(c.strings), c.strings.empty())
      .add(ints(elem_types), elem_types.empty())
      .add(strings(c.dims), c.dims.empty())
      .add(listOf(c.dim_plans, dimSpec), c.dim_plans.empty())
      .add(literalText(c.literal), isDefault(c.literal))
      .add(num(c.tolerance), c.tolerance == gen::ConstraintSpec().tolerance)
      .done();
}

Init variantSpec(const gen::VariantSpec& v) {
  Init tags = listOf(v.tags, [](const std::vector<std::pair<gen::ExprId, uint32_t>>& carriers) {
    return listOf(carriers, [](const std::pair<gen::ExprId, uint32_t>& c) {
      return Init::list(
          {Init::atom(std::to_string(c.first)), Init::atom(std::to_string(c.second))});
    });
  });
  return Row()
      .add(v.has_when ? "true" : "false", !v.has_when)
      .add(str(v.domain), v.domain.empty())
      .add(std::to_string(v.min_opset), v.min_opset == -1)
      .add(std::to_string(v.max_opset), v.max_opset == -1)
      .add(tags, v.tags.empty())
      .done();
}

}  // namespace

std::string specTableAliases() {
  return "// Enum values in the spec tables (runtime/match/RuleSpec.h).\n"
         "using Attr = gen::AttrSpec::Kind;\n"
         "using Check = gen::ConstraintSpec::Kind;\n"
         "using Dim = gen::ConstraintSpec::Dim::Kind;\n";
}

Init specTable(const gen::RuleSpec& spec, const std::vector<std::string>& expr_notes) {
  std::vector<Init> exprs;
  for (size_t i = 0; i < spec.exprs.size(); ++i) {
    exprs.push_back(exprSpec(spec.exprs[i]));
    if (i < expr_notes.size()) exprs.back().note(expr_notes[i]);
  }
  std::vector<Init> top;
  top.push_back(Init::atom(str(spec.name)));
  top.push_back(Init::atom(str(spec.loc)));
  top.push_back(Init::atom(std::to_string(spec.root)).trailing("root expr"));
  top.push_back(strings(spec.slot_names).note("slots"));
  top.push_back(Init::atom(std::to_string(spec.num_captures)).trailing("attribute captures"));
  top.push_back(Init::atom(std::to_string(spec.num_symbols)).trailing("shape symbols"));
  top.push_back(Init::list(std::move(exprs)).note("exprs"));
  top.push_back(listOf(spec.constraints, constraintSpec).note("constraints"));
  top.push_back(listOf(spec.variants, variantSpec).note("rewrite variants"));
  return Init::list(std::move(top));
}

std::string literalText(const gen::Literal& l) {
  using K = gen::Literal::Kind;
  std::vector<std::string> items;
  const bool one = l.ints.size() + l.floats.size() + l.strings.size() == 1;
  switch (l.kind) {
    case K::kInt:
      if (one && l.ints.size() == 1) return "gen::intLiteral(" + std::to_string(l.ints[0]) + ")";
      break;
    case K::kFloat:
      if (one && l.floats.size() == 1) return "gen::floatLiteral(" + num(l.floats[0]) + ")";
      break;
    case K::kString:
      if (one && l.strings.size() == 1) return "gen::stringLiteral(" + str(l.strings[0]) + ")";
      break;
    case K::kInts:
      if (!l.floats.empty() || !l.strings.empty()) break;
      for (int64_t v : l.ints) items.push_back(std::to_string(v));
      return "gen::intsLiteral({" + joinStrings(items) + "})";
    case K::kFloats:
      if (!l.ints.empty() || !l.strings.empty()) break;
      for (double v : l.floats) items.push_back(num(v));
      return "gen::floatsLiteral({" + joinStrings(items) + "})";
    case K::kStrings:
      if (!l.ints.empty() || !l.floats.empty()) break;
      for (const std::string& v : l.strings) items.push_back(str(v));
      return "gen::stringsLiteral({" + joinStrings(items) + "})";
  }
  if (isDefault(l)) return "{}";
  // Anything else, member by member (a malformed literal the plan let through unused).
  static const char* const kKinds[] = {"kInt", "kFloat", "kString", "kInts", "kFloats", "kStrings"};
  std::vector<std::string> ints_text, floats_text, strings_text;
  for (int64_t v : l.ints) ints_text.push_back(std::to_string(v));
  for (double v : l.floats) floats_text.push_back(num(v));
  for (const std::string& v : l.strings) strings_text.push_back(str(v));
  return std::string("gen::Literal{gen::Literal::Kind::") + kKinds[static_cast<int>(l.kind)] +
         ", {" + joinStrings(ints_text) + "}, {" + joinStrings(floats_text) + "}, {" +
         joinStrings(strings_text) + "}}";
}

}  // namespace onnx_rewrite::cpp
