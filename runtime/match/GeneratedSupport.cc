//===- GeneratedSupport.cc - what rulec's generated matchers call ---------===//
//
// One implementation of the checks and messages serves both rulec's generated
// matchers and the interpreter (runtime/interp/RuleInterpreter.cc drives these
// over the RuleSpec of the one plan, compiler/plan/RulePlan.h). The interpreted
// and compiled searches are still compared by CompiledEqualsInterpretedTest on
// every rule test model.
//
//===----------------------------------------------------------------------===//
#include "runtime/match/GeneratedSupport.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "runtime/graph/OpId.h"
#include "runtime/match/Equivalence.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite::gen {
namespace {

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string formatNumbers(const std::vector<double>& values, bool as_float, bool list) {
  Literal l;
  if (as_float) {
    l.kind = list ? Literal::Kind::kFloats : Literal::Kind::kFloat;
    l.floats = values;
  } else {
    l.kind = list ? Literal::Kind::kInts : Literal::Kind::kInt;
    for (double v : values) l.ints.push_back(static_cast<int64_t>(v));
  }
  return l.str();
}

std::string elemTypeName(int32_t t) {
  if (!onnx::TensorProto_DataType_IsValid(t)) return "type " + std::to_string(t);
  return lowercase(onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t)));
}

template <typename F>
bool reject(std::string* why, F&& text) {
  if (why) *why = text();
  return false;
}

bool closeFloats(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

std::string joinLiterals(const std::vector<Literal>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].str();
  return out + "]";
}

std::string rangeText(const ConstraintSpec& c, bool ints) {
  auto num = [&](double x) {
    return ints ? std::to_string(static_cast<int64_t>(x)) : formatDouble(x);
  };
  if (c.has_min && c.has_max)
    return c.min == c.max && ints ? num(c.min) : "in [" + num(c.min) + ", " + num(c.max) + "]";
  if (c.has_min) return ">= " + num(c.min);
  if (c.has_max) return "<= " + num(c.max);
  return "any";
}

}  // namespace

// ---- Literals ------------------------------------------------------------------------------

std::string Literal::str() const {
  auto q = [](const std::string& s) { return "'" + s + "'"; };
  auto list = [](const auto& items, auto format) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + format(items[i]);
    return out + "]";
  };
  switch (kind) {
    case Kind::kInt:
      return ints.empty() ? "?" : std::to_string(ints[0]);
    case Kind::kFloat:
      return floats.empty() ? "?" : formatDouble(floats[0]);
    case Kind::kString:
      return strings.empty() ? "?" : q(strings[0]);
    case Kind::kInts:
      return list(ints, [](int64_t v) { return std::to_string(v); });
    case Kind::kFloats:
      return list(floats, formatDouble);
    case Kind::kStrings:
      return list(strings, q);
  }
  return "?";
}

Literal intLiteral(int64_t v) {
  Literal l;
  l.kind = Literal::Kind::kInt;
  l.ints = {v};
  return l;
}
Literal floatLiteral(double v) {
  Literal l;
  l.kind = Literal::Kind::kFloat;
  l.floats = {v};
  return l;
}
Literal stringLiteral(std::string v) {
  Literal l;
  l.kind = Literal::Kind::kString;
  l.strings = {std::move(v)};
  return l;
}
Literal intsLiteral(std::vector<int64_t> v) {
  Literal l;
  l.kind = Literal::Kind::kInts;
  l.ints = std::move(v);
  return l;
}
Literal floatsLiteral(std::vector<double> v) {
  Literal l;
  l.kind = Literal::Kind::kFloats;
  l.floats = std::move(v);
  return l;
}
Literal stringsLiteral(std::vector<std::string> v) {
  Literal l;
  l.kind = Literal::Kind::kStrings;
  l.strings = std::move(v);
  return l;
}

onnx::AttributeProto literalAttribute(const Literal& lit, const std::string& name) {
  onnx::AttributeProto a;
  a.set_name(name);
  switch (lit.kind) {
    case Literal::Kind::kInt:
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(lit.ints.at(0));
      break;
    case Literal::Kind::kFloat:
      a.set_type(onnx::AttributeProto::FLOAT);
      a.set_f(static_cast<float>(lit.floats.at(0)));
      break;
    case Literal::Kind::kString:
      a.set_type(onnx::AttributeProto::STRING);
      a.set_s(lit.strings.at(0));
      break;
    case Literal::Kind::kInts:
      a.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : lit.ints) a.add_ints(v);
      break;
    case Literal::Kind::kFloats:
      a.set_type(onnx::AttributeProto::FLOATS);
      for (double v : lit.floats) a.add_floats(static_cast<float>(v));
      break;
    case Literal::Kind::kStrings:
      a.set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& s : lit.strings) a.add_strings(s);
      break;
  }
  return a;
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string opLabel(const std::string& domain, const std::string& op) {
  return canonicalDomain(domain).empty() ? op : domain + "." + op;
}

// ---- Target attributes and native functions ------------------------------------------------

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t raw_exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (raw_exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int32_t exp = static_cast<int32_t>(raw_exp) - 127 + 15;
  if (exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // a carry rounds up the exponent
  return static_cast<uint16_t>(half);
}

namespace {

uint16_t floatToBfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace

std::optional<onnx::TensorProto> literalTensor(const Literal& values, int32_t type,
                                               const std::vector<int64_t>& dims) {
  if (!values.isNumeric()) return std::nullopt;
  const size_t count = values.isInt() ? values.ints.size() : values.floats.size();
  onnx::TensorProto t;
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  for (size_t i = 0; i < count; ++i) {
    const double v = values.isInt() ? static_cast<double>(values.ints[i]) : values.floats[i];
    switch (type) {
      case onnx::TensorProto::FLOAT:
        t.add_float_data(static_cast<float>(v));
        break;
      case onnx::TensorProto::DOUBLE:
        t.add_double_data(v);
        break;
      case onnx::TensorProto::INT64:
        t.add_int64_data(values.isInt() ? values.ints[i] : static_cast<int64_t>(v));
        break;
      case onnx::TensorProto::INT32:
      case onnx::TensorProto::INT16:
      case onnx::TensorProto::INT8:
      case onnx::TensorProto::UINT16:
      case onnx::TensorProto::UINT8:
      case onnx::TensorProto::BOOL:
        t.add_int32_data(static_cast<int32_t>(v));
        break;
      case onnx::TensorProto::UINT32:
      case onnx::TensorProto::UINT64:
        t.add_uint64_data(static_cast<uint64_t>(v));
        break;
      case onnx::TensorProto::FLOAT16:
        t.add_int32_data(floatToHalf(static_cast<float>(v)));
        break;
      case onnx::TensorProto::BFLOAT16:
        t.add_int32_data(floatToBfloat16(static_cast<float>(v)));
        break;
      default:
        return std::nullopt;
    }
  }
  return t;
}

onnx::AttributeProto intAttribute(const char* name, int64_t v) {
  return literalAttribute(intLiteral(v), name);
}
onnx::AttributeProto floatAttribute(const char* name, double v) {
  return literalAttribute(floatLiteral(v), name);
}
onnx::AttributeProto stringAttribute(const char* name, std::string v) {
  return literalAttribute(stringLiteral(std::move(v)), name);
}
onnx::AttributeProto intsAttribute(const char* name, std::vector<int64_t> v) {
  return literalAttribute(intsLiteral(std::move(v)), name);
}
onnx::AttributeProto floatsAttribute(const char* name, std::vector<double> v) {
  return literalAttribute(floatsLiteral(std::move(v)), name);
}
onnx::AttributeProto stringsAttribute(const char* name, std::vector<std::string> v) {
  return literalAttribute(stringsLiteral(std::move(v)), name);
}

bool opsetIn(const Graph& graph, std::string_view domain, int64_t min_opset, int64_t max_opset) {
  const int64_t version = graph.opsetVersion(domain);
  return version >= 0 && (min_opset < 0 || version >= min_opset) &&
         (max_opset < 0 || version <= max_opset);
}

const NativePredicate* nativePredicate(const char* name) {
  const NativePredicate* p = findNativePredicate(name);
  if (!p) throw std::logic_error(std::string("no native predicate named ") + name);
  return p;
}
const AttributeHelper* attributeHelper(const char* name) {
  const AttributeHelper* p = findAttributeHelper(name);
  if (!p) throw std::logic_error(std::string("no attribute helper named ") + name);
  return p;
}
const TensorHelper* tensorHelper(const char* name) {
  const TensorHelper* p = findTensorHelper(name);
  if (!p) throw std::logic_error(std::string("no tensor helper named ") + name);
  return p;
}

// ---- Matcher: search -----------------------------------------------------------------------

using Failure = Scratch::Failure;
using FK = Scratch::Failure::Kind;
using TK = Scratch::TrailKind;

Matcher::Matcher(const RuleSpec& spec, Scratch& scratch, Rewriter& rw)
    : spec_(spec), s_(scratch), rw_(rw), model_(rw.model()), g_(rw.graph()) {}

void Matcher::reset() {
  const size_t n = spec_.exprs.size();
  s_.trail.clear();
  s_.expr_value.assign(n, kNoId);
  s_.expr_node.assign(n, kNoId);
  s_.alt.assign(n, -1);
  s_.slots.assign(spec_.slot_names.size(), kNoId);
  s_.captures.assign(spec_.num_captures, Scratch::Capture{});
  s_.assigned = 0;
  s_.chosen = -1;
  s_.best = Failure{};
}

void Matcher::resetSymbols() { s_.symbols.assign(spec_.num_symbols, Scratch::Symbol{}); }

void Matcher::undo(uint32_t mark) {
  while (s_.trail.size() > mark) {
    const Scratch::TrailEntry e = s_.trail.back();
    s_.trail.pop_back();
    switch (e.kind) {
      case TK::kExprValue:
        s_.expr_value[e.index] = kNoId;
        --s_.assigned;
        break;
      case TK::kExprNode:
        s_.expr_node[e.index] = kNoId;
        break;
      case TK::kSlot:
        s_.slots[e.index] = kNoId;
        break;
      case TK::kAlt:
        s_.alt[e.index] = -1;
        break;
      case TK::kCapture:
        s_.captures[e.index] = Scratch::Capture{};
        break;
    }
  }
}

bool Matcher::fail(FK kind, ExprId expr, ValueId value, ValueId other, NodeId node, uint32_t index,
                   uint32_t progress) {
  const uint32_t p = progress == UINT32_MAX ? s_.assigned : progress;
  if (s_.best.kind == FK::kNone || p > s_.best.progress) {
    s_.best = Failure{kind, p, expr, value, other, node, index};
    s_.best_slots = s_.slots;
  }
  return false;
}

bool Matcher::rootOmitted() { return fail(FK::kRootOmitted, spec_.root); }

bool Matcher::bindSlot(uint32_t slot, ValueId v, ExprId at) {
  ValueId& bound = s_.slots[slot];
  if (bound == v) return true;
  if (bound != kNoId) return fail(FK::kNameConflict, at, v, bound, kNoId, slot);
  bound = v;
  s_.trail.push_back({TK::kSlot, slot});
  return true;
}

bool Matcher::same(ExprId e, ValueId v) {
  if (s_.expr_value[e] == v) return true;
  const uint32_t slot = spec_.exprs[e].slot;
  if (slot != kNoSlot) return fail(FK::kNameConflict, e, v, s_.expr_value[e], kNoId, slot);
  return fail(FK::kExprConflict, e, v, s_.expr_value[e]);
}

bool Matcher::bind(ExprId e, ValueId v) {
  s_.expr_value[e] = v;
  ++s_.assigned;
  s_.trail.push_back({TK::kExprValue, e});
  const uint32_t slot = spec_.exprs[e].slot;
  return slot == kNoSlot || bindSlot(slot, v, e);
}

bool Matcher::choose(ExprId e, uint32_t i) {
  for (ExprId peer : spec_.exprs[e].peers)
    if (s_.alt[peer] >= 0 && s_.alt[peer] != static_cast<int32_t>(i)) return false;
  s_.alt[e] = static_cast<int32_t>(i);
  s_.trail.push_back({TK::kAlt, e});
  return true;
}

NodeId Matcher::node(ExprId e, ValueId v, OpId op) {
  const ExprSpec& x = spec_.exprs[e];
  const Value& value = g_.value(v);
  const NodeId n = value.producer();
  if (n == kNoId) return fail(FK::kNoProducer, e, v), kNoId;
  const Node& nd = g_.node(n);
  if (!nd.live() || nd.op() != op) return fail(FK::kWrongOp, e, v, kNoId, n), kNoId;
  if (value.producerOutput() != x.output) return fail(FK::kWrongOutput, e, v, kNoId, n), kNoId;
  const size_t have = nd.inputs().size();
  for (uint32_t i = 0; i < x.num_inputs; ++i)
    if (nd.input(i) == kNoId &&
        std::find(x.none_inputs.begin(), x.none_inputs.end(), i) == x.none_inputs.end())
      return fail(FK::kOmittedInput, e, v, kNoId, n, i), kNoId;
  if (x.variadic) return n;
  for (uint32_t i = x.num_inputs; i < have; ++i)
    if (nd.input(i) != kNoId &&
        !isParamInput(nd.domain(), nd.opType(), i, g_.opsetVersion(nd.domain())))
      return fail(FK::kExtraInput, e, v, kNoId, n, i), kNoId;
  return n;
}

bool Matcher::attrs(ExprId e, NodeId n, ValueId v) {
  const ExprSpec& x = spec_.exprs[e];
  for (uint32_t k = 0; k < x.attrs.size(); ++k) {
    const AttrSpec& a = x.attrs[k];
    if (!matchAttr(a, n, nullptr)) return fail(FK::kAttr, e, v, kNoId, n, k);
    if (a.capture != kNoSlot) {
      Scratch::Capture& c = s_.captures[a.capture];
      if (c.node != kNoId) {
        if (!sameCapture(c, Scratch::Capture{n, &a}))
          return fail(FK::kCaptureConflict, e, v, kNoId, n, k);
        continue;
      }
      c = Scratch::Capture{n, &a};
      s_.trail.push_back({TK::kCapture, a.capture});
    }
  }
  s_.expr_node[e] = n;
  s_.trail.push_back({TK::kExprNode, e});
  const Node& nd = g_.node(n);
  for (const ExprSpec::OtherOutput& o : x.other_outputs) {
    if (o.slot == kNoSlot) continue;
    const ValueId out = nd.output(o.output);
    if (out == kNoId) return fail(FK::kOtherOutputOmitted, e, v, kNoId, n, o.output);
    if (!bindSlot(o.slot, out, e)) return false;
  }
  return true;
}

bool Matcher::constant(ExprId e, ValueId v) {
  const ExprSpec& x = spec_.exprs[e];
  if (!constantMatches(x.literal, x.tolerance, v, nullptr)) return fail(FK::kConstant, e, v);
  return true;
}

bool Matcher::none(ExprId e, ValueId v) {
  if (v == kNoId) return true;
  return fail(FK::kPresentInput, e, v);
}

ListRef<ValueId> Matcher::rest(ExprId e) const {
  const NodeId n = s_.expr_node[e];
  if (n == kNoId) return {};
  const std::vector<ValueId>& inputs = g_.node(n).inputs();
  const size_t from = spec_.exprs[e].num_inputs;
  if (inputs.size() <= from) return {};
  return {inputs.data() + from, inputs.size() - from};
}

bool Matcher::accept() {
  const uint32_t base = static_cast<uint32_t>(spec_.exprs.size()) + 1;
  resetSymbols();
  for (uint32_t i = 0; i < spec_.constraints.size(); ++i)
    if (!checkConstraint(i, nullptr))
      return fail(FK::kConstraint, UINT32_MAX, kNoId, kNoId, kNoId, i, base + i);
  for (size_t i = 0; i < spec_.variants.size(); ++i)
    if (whenHolds(spec_.variants[i])) {
      s_.chosen = static_cast<int>(i);
      return true;
    }
  return fail(FK::kNoVariant, UINT32_MAX, kNoId, kNoId, kNoId, 0,
              base + static_cast<uint32_t>(spec_.constraints.size()));
}

bool Matcher::whenHolds(const VariantSpec& w) const {
  if (!w.has_when) return true;
  if (w.min_opset >= 0 || w.max_opset >= 0) {
    const int64_t version = g_.opsetVersion(w.domain);
    if (version < 0 || (w.min_opset >= 0 && version < w.min_opset) ||
        (w.max_opset >= 0 && version > w.max_opset))
      return false;
  }
  for (const auto& carriers : w.tags) {
    bool taken = false;
    for (const auto& [alt, index] : carriers)
      taken = taken || s_.alt[alt] == static_cast<int32_t>(index);
    if (!taken) return false;
  }
  return true;
}

// ---- Matcher: failure reasons --------------------------------------------------------------

std::string Matcher::describe() {
  const Failure& f = s_.best;
  const ExprSpec* x = f.expr < spec_.exprs.size() ? &spec_.exprs[f.expr] : nullptr;
  const std::string loc = x ? x->loc : spec_.loc;
  const std::string label = x ? x->label : spec_.name;
  auto name = [&](ValueId v) {
    return v == kNoId ? std::string("<none>") : quoted(g_.value(v).name());
  };
  const std::string head = loc + ": " + label + ": ";
  switch (f.kind) {
    case FK::kNone:
      return spec_.loc + ": " + spec_.name + ": no match";
    case FK::kRootOmitted:
      return head + "the root node has no output " + std::to_string(x->output);
    case FK::kNoProducer: {
      const Value& v = g_.value(f.value);
      const char* what = v.isOuter()        ? "is defined in an enclosing graph"
                         : v.initializer()  ? "is an initializer"
                         : v.isGraphInput() ? "is a graph input"
                                            : "has no producer";
      return head + name(f.value) + " " + what + ", not an output of " + label;
    }
    case FK::kWrongOp: {
      const Node& n = g_.node(f.node);
      return head + name(f.value) + " is computed by " + opLabel(n.domain(), n.opType()) +
             ", not " + label;
    }
    case FK::kWrongOutput:
      return head + name(f.value) + " is output " +
             std::to_string(g_.value(f.value).producerOutput()) + " of " + label +
             ", expected output " + std::to_string(x->output);
    case FK::kOmittedInput: {
      const Node& n = g_.node(f.node);
      if (f.index >= n.inputs().size())
        return head + "has " + std::to_string(n.inputs().size()) + " inputs, the pattern expects " +
               std::to_string(x->num_inputs);
      return head + "input " + std::to_string(f.index) + " is omitted";
    }
    case FK::kPresentInput:
      return head + name(f.value) + " is an input here, expected an omitted one";
    case FK::kExtraInput:
      return head + "has " + std::to_string(g_.node(f.node).inputs().size()) +
             " inputs, the pattern expects " + std::to_string(x->num_inputs);
    case FK::kAttr: {
      const AttrSpec& a = x->attrs[f.index];
      std::string why;
      matchAttr(a, f.node, &why);
      return a.loc + ": " + label + ": " + why;
    }
    case FK::kOtherOutputOmitted: {
      std::string bound;
      for (const ExprSpec::OtherOutput& o : x->other_outputs)
        if (o.output == f.index) bound = o.name;
      return head + "output " + std::to_string(f.index) + " (bound to " + bound + ") is omitted";
    }
    case FK::kConstant: {
      std::string why;
      constantMatches(x->literal, x->tolerance, f.value, &why);
      return loc + ": " + label + ": " + why;
    }
    case FK::kNameConflict:
      return loc + ": " + spec_.slot_names[f.index] + ": is " + name(f.value) + " here but " +
             name(f.other) + " earlier";
    case FK::kExprConflict:
      return head + "is " + name(f.value) + " here but " + name(f.other) + " earlier";
    case FK::kCaptureConflict: {
      const AttrSpec& a = x->attrs[f.index];
      return a.loc + ": " + label + ": attribute " + a.name + " differs from the one captured as " +
             a.capture_name + " earlier";
    }
    case FK::kConstraint: {
      s_.slots = s_.best_slots;
      resetSymbols();
      for (uint32_t i = 0; i < f.index; ++i) checkConstraint(i, nullptr);
      std::string why;
      checkConstraint(f.index, &why);
      return spec_.constraints[f.index].loc + ": " + why;
    }
    case FK::kNoVariant:
      return spec_.loc + ": " + spec_.name + ": no rewrite variant applies";
  }
  return head + "no match";
}

// ---- Matcher: attributes -------------------------------------------------------------------

struct Matcher::Actual {
  enum class Type { kNumber, kNumbers, kString, kStrings, kOther };
  Type type = Type::kOther;
  bool is_float = false;
  const std::string* str = nullptr;
  const google::protobuf::RepeatedPtrField<std::string>* attr_strs = nullptr;
  const std::vector<std::string>* lit_strs = nullptr;
  int attr_type = 0;

  size_t stringCount() const {
    return attr_strs ? static_cast<size_t>(attr_strs->size()) : lit_strs ? lit_strs->size() : 0;
  }
  const std::string& stringAt(size_t i) const {
    return attr_strs ? (*attr_strs)[static_cast<int>(i)] : (*lit_strs)[i];
  }
};

void Matcher::loadLiteral(Actual& a, const Literal& lit) {
  switch (lit.kind) {
    case Literal::Kind::kInt:
    case Literal::Kind::kInts:
      a.type = lit.isList() ? Actual::Type::kNumbers : Actual::Type::kNumber;
      s_.ints_a.assign(lit.ints.begin(), lit.ints.end());
      break;
    case Literal::Kind::kFloat:
    case Literal::Kind::kFloats:
      a.type = lit.isList() ? Actual::Type::kNumbers : Actual::Type::kNumber;
      a.is_float = true;
      s_.doubles.assign(lit.floats.begin(), lit.floats.end());
      break;
    case Literal::Kind::kString:
      a.type = Actual::Type::kString;
      a.str = &lit.strings[0];
      break;
    case Literal::Kind::kStrings:
      a.type = Actual::Type::kStrings;
      a.lit_strs = &lit.strings;
      break;
  }
}

void Matcher::loadAttribute(Actual& a, const onnx::AttributeProto& attr) {
  switch (attr.type()) {
    case onnx::AttributeProto::INT:
      a.type = Actual::Type::kNumber;
      s_.ints_a.assign(1, attr.i());
      break;
    case onnx::AttributeProto::INTS:
      a.type = Actual::Type::kNumbers;
      s_.ints_a.assign(attr.ints().begin(), attr.ints().end());
      break;
    case onnx::AttributeProto::FLOAT:
      a.type = Actual::Type::kNumber;
      a.is_float = true;
      s_.doubles.assign(1, attr.f());
      break;
    case onnx::AttributeProto::FLOATS:
      a.type = Actual::Type::kNumbers;
      a.is_float = true;
      s_.doubles.assign(attr.floats().begin(), attr.floats().end());
      break;
    case onnx::AttributeProto::STRING:
      a.type = Actual::Type::kString;
      a.str = &attr.s();
      break;
    case onnx::AttributeProto::STRINGS:
      a.type = Actual::Type::kStrings;
      a.attr_strs = &attr.strings();
      break;
    default:
      a.type = Actual::Type::kOther;
      a.attr_type = attr.type();
      break;
  }
}

std::string Matcher::actualText(const Actual& a) const {
  Literal l;
  switch (a.type) {
    case Actual::Type::kNumber:
    case Actual::Type::kNumbers: {
      const bool list = a.type == Actual::Type::kNumbers;
      if (a.is_float) {
        l.kind = list ? Literal::Kind::kFloats : Literal::Kind::kFloat;
        l.floats = s_.doubles;
      } else {
        l.kind = list ? Literal::Kind::kInts : Literal::Kind::kInt;
        l.ints = s_.ints_a;
      }
      return l.str();
    }
    case Actual::Type::kString:
      l.kind = Literal::Kind::kString;
      l.strings = {*a.str};
      return l.str();
    case Actual::Type::kStrings:
      l.kind = Literal::Kind::kStrings;
      for (size_t i = 0; i < a.stringCount(); ++i) l.strings.push_back(a.stringAt(i));
      return l.str();
    case Actual::Type::kOther:
      return "a " +
             lowercase(onnx::AttributeProto_AttributeType_Name(
                 static_cast<onnx::AttributeProto_AttributeType>(a.attr_type))) +
             " attribute";
  }
  return "?";
}

bool Matcher::equalsLiteral(const Actual& a, const Literal& lit, bool axes, int64_t rank) {
  switch (a.type) {
    case Actual::Type::kNumber:
    case Actual::Type::kNumbers: {
      if (!lit.isNumeric() || lit.isList() != (a.type == Actual::Type::kNumbers)) return false;
      const size_t count = a.is_float ? s_.doubles.size() : s_.ints_a.size();
      if (count != (lit.isInt() ? lit.ints.size() : lit.floats.size())) return false;
      if (!a.is_float && lit.isInt()) {
        if (axes && rank >= 0) {
          s_.ints_b = s_.ints_a;
          s_.ints_c.assign(lit.ints.begin(), lit.ints.end());
          if (!normalizeAxes(s_.ints_b, rank) || !normalizeAxes(s_.ints_c, rank)) return false;
          return s_.ints_b == s_.ints_c;
        }
        return std::equal(s_.ints_a.begin(), s_.ints_a.end(), lit.ints.begin());
      }
      for (size_t i = 0; i < count; ++i) {
        const double x = a.is_float ? s_.doubles[i] : static_cast<double>(s_.ints_a[i]);
        const double y = lit.isInt() ? static_cast<double>(lit.ints[i]) : lit.floats[i];
        if (!closeFloats(x, y)) return false;
      }
      return true;
    }
    case Actual::Type::kString:
      return lit.kind == Literal::Kind::kString && lit.strings[0] == *a.str;
    case Actual::Type::kStrings:
      if (lit.kind != Literal::Kind::kStrings || lit.strings.size() != a.stringCount())
        return false;
      for (size_t i = 0; i < lit.strings.size(); ++i)
        if (lit.strings[i] != a.stringAt(i)) return false;
      return true;
    case Actual::Type::kOther:
      return false;
  }
  return false;
}

const Literal* Matcher::defaultOf(const AttrSpec& m, NodeId n) const {
  if (!m.older_defaults.empty()) {
    const int64_t opset = g_.opsetVersion(g_.node(n).op().domain());
    for (const auto& [until, value] : m.older_defaults)
      if (opset >= 0 && opset <= until) return &value;
  }
  return m.default_value ? &*m.default_value : nullptr;
}

bool Matcher::matchAttr(const AttrSpec& m, NodeId n, std::string* why) {
  const ParamRef ref = findParam(g_, n, m.name);
  Actual a;
  switch (ref.kind) {
    case ParamRef::Kind::kAbsent: {
      const Literal* d = defaultOf(m, n);
      if (!d)
        return reject(why, [&] { return "attribute " + m.name + " is absent and has no default"; });
      loadLiteral(a, *d);
      break;
    }
    case ParamRef::Kind::kAttribute:
      loadAttribute(a, *ref.attribute);
      break;
    case ParamRef::Kind::kInput:
      if (!readConstantInts(model_, g_, ref.input, s_.ints_a, 64))
        return reject(why, [&] {
          return m.name + " (input " + std::to_string(ref.input_index) + ")" +
                 (constantTensor(g_, ref.input) ? " is not a small integer constant"
                                                : " is not a constant");
        });
      a.type = Actual::Type::kNumbers;
      break;
  }
  if (m.kind == AttrSpec::Kind::kCapture) return true;
  const bool axes = m.axes && !a.is_float &&
                    (a.type == Actual::Type::kNumber || a.type == Actual::Type::kNumbers);
  const int64_t rank = axes ? axesRank(g_, n).value_or(-1) : -1;
  bool ok = false;
  switch (m.kind) {
    case AttrSpec::Kind::kEquals:
      ok = equalsLiteral(a, m.values[0], axes, rank);
      break;
    case AttrSpec::Kind::kOneOf:
      for (const Literal& lit : m.values) ok = ok || equalsLiteral(a, lit, axes, rank);
      break;
    case AttrSpec::Kind::kRange:
      if (a.type == Actual::Type::kNumber) {
        const double x = a.is_float ? s_.doubles[0] : static_cast<double>(s_.ints_a[0]);
        ok = x >= m.min && x <= m.max;
      }
      break;
    case AttrSpec::Kind::kCapture:
      break;
  }
  if (ok) return true;
  return reject(why, [&] {
    std::string subject;
    switch (ref.kind) {
      case ParamRef::Kind::kAbsent:
        subject = "attribute " + m.name + " is " + actualText(a) + " (default)";
        break;
      case ParamRef::Kind::kAttribute:
        subject = "attribute " + m.name + " is " + actualText(a);
        break;
      case ParamRef::Kind::kInput:
        subject = m.name + " (input " + std::to_string(ref.input_index) + ") is " + actualText(a);
        break;
    }
    std::string expected;
    switch (m.kind) {
      case AttrSpec::Kind::kEquals:
        expected = m.values[0].str();
        break;
      case AttrSpec::Kind::kOneOf:
        expected = "one of " + joinLiterals(m.values);
        break;
      default:
        expected = "in [" + formatDouble(m.min) + ", " + formatDouble(m.max) + "]";
        break;
    }
    std::string suffix;
    if (axes) suffix = rank >= 0 ? " (rank " + std::to_string(rank) + ")" : " (rank unknown)";
    return subject + ", expected " + expected + suffix;
  });
}

std::optional<onnx::AttributeProto> Matcher::materialize(const Scratch::Capture& c) {
  const ParamRef ref = findParam(g_, c.node, c.spec->name);
  switch (ref.kind) {
    case ParamRef::Kind::kAttribute:
      return *ref.attribute;
    case ParamRef::Kind::kInput: {
      if (!readConstantInts(model_, g_, ref.input, s_.ints_a, 1 << 16)) return std::nullopt;
      onnx::AttributeProto a;
      a.set_type(onnx::AttributeProto::INTS);
      for (int64_t x : s_.ints_a) a.add_ints(x);
      return a;
    }
    case ParamRef::Kind::kAbsent:
      const Literal* d = defaultOf(*c.spec, c.node);
      if (!d) return std::nullopt;
      return literalAttribute(*d, c.spec->name);
  }
  return std::nullopt;
}

bool Matcher::sameCapture(const Scratch::Capture& a, const Scratch::Capture& b) {
  std::optional<onnx::AttributeProto> x = materialize(a);
  std::optional<onnx::AttributeProto> y = materialize(b);
  if (!x || !y) return false;
  x->clear_name();
  y->clear_name();
  return x->SerializeAsString() == y->SerializeAsString();
}

// ---- Matcher: constants and constraints ----------------------------------------------------

bool Matcher::constantMatches(const Literal& lit, double tolerance, ValueId v, std::string* why) {
  const onnx::TensorProto* t = constantTensor(g_, v);
  auto vname = [&] { return quoted(g_.value(v).name()); };
  if (!t) return reject(why, [&] { return vname() + " is not a constant"; });
  const size_t want = lit.isInt() ? lit.ints.size() : lit.floats.size();
  const int64_t count = tensorElementCount(*t);
  if (count != static_cast<int64_t>(want))
    return reject(why, [&] {
      return vname() + " has " + std::to_string(count) + " elements, expected " +
             std::to_string(want);
    });
  if (!readConstantDoubles(model_, g_, v, s_.doubles, want))
    return reject(why, [&] { return vname() + " cannot be read"; });
  for (size_t i = 0; i < want; ++i) {
    const bool ok = lit.isInt() ? s_.doubles[i] == static_cast<double>(lit.ints[i])
                                : std::fabs(s_.doubles[i] - lit.floats[i]) <= tolerance;
    if (!ok)
      return reject(why, [&] {
        return vname() + " is " +
               formatNumbers(s_.doubles, isFloatingType(t->data_type()), lit.isList()) +
               ", expected " + lit.str();
      });
  }
  return true;
}

bool Matcher::checkConstraint(uint32_t index, std::string* why) {
  const ConstraintSpec& c = spec_.constraints[index];
  using K = ConstraintSpec::Kind;
  if (c.guard_slot != kNoSlot && s_.slots[c.guard_slot] == kNoId) return true;
  if (c.kind == K::kNative) {
    s_.args.clear();
    for (uint32_t slot : c.arg_slots) {
      if (s_.slots[slot] == kNoId) return true;
      s_.args.push_back(s_.slots[slot]);
    }
    if (c.predicate->fn(MatchContext{model_, g_}, ValueArgs(s_.args))) return true;
    return reject(why, [&] {
      std::string args;
      for (size_t i = 0; i < c.args.size(); ++i) args += (i ? ", " : "") + c.args[i];
      // The predicate's doc line says what was required (and what the user can do).
      const std::string& doc = c.predicate->doc;
      return c.native + "(" + args + "): does not hold" + (doc.empty() ? "" : " (" + doc + ")");
    });
  }
  const ValueId v = s_.slots[c.slot];
  if (v == kNoId) return true;
  const std::string& subject = c.subject;
  auto vname = [&] { return quoted(g_.value(v).name()); };
  auto no = [&](auto&& text) { return reject(why, [&] { return subject + ": " + text(); }); };
  switch (c.kind) {
    case K::kConstant:
      if (constantTensor(g_, v)) return true;
      return no([&] { return vname() + " is not a constant"; });
    case K::kScalar: {
      const onnx::TensorProto* t = constantTensor(g_, v);
      if (!t) return no([&] { return vname() + " is not a constant"; });
      const int64_t count = tensorElementCount(*t);
      if (count != 1)
        return no(
            [&] { return vname() + " has " + std::to_string(count) + " elements, expected 1"; });
      if (!c.has_min && !c.has_max) return true;
      if (!readConstantDoubles(model_, g_, v, s_.doubles, 1))
        return no([&] { return vname() + " cannot be read"; });
      const double x = s_.doubles[0];
      if ((!c.has_min || x >= c.min) && (!c.has_max || x <= c.max)) return true;
      return no([&] {
        return vname() + " is " + formatNumbers(s_.doubles, isFloatingType(t->data_type()), false) +
               ", expected a scalar " + rangeText(c, false);
      });
    }
    case K::kConstantEquals:
      if (constantMatches(c.literal, c.tolerance, v, why)) return true;
      if (why) *why = subject + ": " + *why;
      return false;
    case K::kRank: {
      const std::optional<int64_t> rank = valueRank(g_, v);
      if (!rank) return no([&] { return "the rank of " + vname() + " is unknown"; });
      if (std::find(c.ints.begin(), c.ints.end(), *rank) != c.ints.end()) return true;
      return no([&] {
        std::string expected;
        if (c.ints.size() == 1) {
          expected = std::to_string(c.ints[0]);
        } else {
          expected = "one of " + intsLiteral(c.ints).str();
        }
        return vname() + " has rank " + std::to_string(*rank) + ", expected " + expected;
      });
    }
    case K::kElemType: {
      const int32_t t = valueElemType(g_, v);
      if (t == 0) return no([&] { return "the element type of " + vname() + " is unknown"; });
      if (std::find(c.elem_types.begin(), c.elem_types.end(), t) != c.elem_types.end()) return true;
      return no([&] {
        std::string expected = c.strings.size() == 1 ? c.strings[0] : "one of [";
        if (c.strings.size() != 1) {
          for (size_t i = 0; i < c.strings.size(); ++i) expected += (i ? ", " : "") + c.strings[i];
          expected += "]";
        }
        return vname() + " has element type " + elemTypeName(t) + ", expected " + expected;
      });
    }
    case K::kShape:
      return checkShape(c, v, why);
    case K::kConsumers: {
      const size_t count = consumerCount(g_, v);
      if ((!c.has_min || static_cast<double>(count) >= c.min) &&
          (!c.has_max || static_cast<double>(count) <= c.max))
        return true;
      return no([&] {
        return vname() + " has " + std::to_string(count) + " consumers, expected " +
               rangeText(c, true);
      });
    }
    case K::kEquivalent: {
      const ValueId other = s_.slots[c.arg_slots[0]];
      if (other == kNoId || equivalentValues(model_, g_, v, other)) return true;
      return no([&] {
        return vname() + " is not computed as " + quoted(g_.value(other).name()) + " (" +
               c.args[0] + ") is";
      });
    }
    case K::kNative:
      break;
  }
  return true;
}

bool Matcher::checkShape(const ConstraintSpec& c, ValueId v, std::string* why) {
  using Dim = ConstraintSpec::Dim;
  auto vname = [&] { return quoted(g_.value(v).name()); };
  auto no = [&](auto&& text) { return reject(why, [&] { return c.subject + ": " + text(); }); };
  const onnx::TensorProto* constant = constantTensor(g_, v);
  const onnx::TensorShapeProto* shape = constant ? nullptr : valueShape(g_, v);
  if (!constant && !shape) return no([&] { return "the shape of " + vname() + " is unknown"; });
  const int rank = constant ? constant->dims_size() : shape->dim_size();
  if (static_cast<size_t>(rank) != c.dim_plans.size())
    return no([&] {
      return vname() + " has rank " + std::to_string(rank) + ", expected " +
             std::to_string(c.dim_plans.size());
    });
  for (int i = 0; i < rank; ++i) {
    const Dim& want = c.dim_plans[i];
    if (want.kind == Dim::Kind::kAny) continue;
    bool is_static = true;
    int64_t value = 0;
    const std::string* param = nullptr;
    if (constant) {
      value = constant->dims(i);
    } else if (shape->dim(i).has_dim_value()) {
      value = shape->dim(i).dim_value();
    } else {
      is_static = false;
      if (shape->dim(i).has_dim_param() && !shape->dim(i).dim_param().empty())
        param = &shape->dim(i).dim_param();
    }
    auto dimText = [&] { return is_static ? std::to_string(value) : param ? *param : "unknown"; };
    const std::string& wanted = c.dims[i];
    if (!is_static && !param)
      return no([&] {
        return "dim " + std::to_string(i) + " of " + vname() + " is unknown, expected " + wanted;
      });
    if (want.kind == Dim::Kind::kStatic) {
      if (is_static && value == want.value) continue;
      return no([&] {
        return "dim " + std::to_string(i) + " of " + vname() + " is " + dimText() + ", expected " +
               wanted;
      });
    }
    Scratch::Symbol& sym = s_.symbols[want.symbol];
    if (!sym.bound) {
      sym = Scratch::Symbol{true, is_static, value, param, v, static_cast<uint32_t>(i)};
      continue;
    }
    if (sym.is_static == is_static && (is_static ? sym.value == value : *sym.param == *param))
      continue;
    return no([&] {
      return "dim " + std::to_string(i) + " of " + vname() + " is " + dimText() + ", but " +
             wanted + " is " + (sym.is_static ? std::to_string(sym.value) : *sym.param) + " (dim " +
             std::to_string(sym.dim) + " of " + quoted(g_.value(sym.v).name()) + ")";
    });
  }
  return true;
}

// ---- Matcher: rewrite ----------------------------------------------------------------------

bool Matcher::unbound(const char* loc, const std::string& name) {
  return rw_.notifyMatchFailure([&] {
    return std::string(loc) + ": " + name + ": not bound by this match, but the rewrite reads it";
  });
}

bool Matcher::requireBound(uint32_t slot, const char* loc, const char* name) {
  return s_.slots[slot] != kNoId || unbound(loc, name);
}

std::optional<onnx::TensorProto> Matcher::likeTensor(const Literal& values, uint32_t slot,
                                                     const std::vector<int64_t>& dims,
                                                     const char* loc, const char* name) {
  if (!requireBound(slot, loc, name)) return std::nullopt;
  const int32_t type = valueElemType(g_, s_.slots[slot]);
  switch (type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::DOUBLE:
      return literalTensor(values, type, dims);
    default:
      rw_.notifyMatchFailure([&] {
        return std::string(loc) + ": tensor(like(" + name + ")): " + name + "'s element type " +
               (type ? elemTypeName(type) : std::string("is unknown")) +
               (type ? " is not a floating type" : "");
      });
      return std::nullopt;
  }
}

bool Matcher::gatherArgs(ListRef<uint32_t> slots, ListRef<const char*> names, const char* loc) {
  s_.args.clear();
  const char* const* name = names.begin();
  for (uint32_t slot : slots) {
    if (s_.slots[slot] == kNoId) return unbound(loc, *name);
    s_.args.push_back(s_.slots[slot]);
    ++name;
  }
  return true;
}

std::optional<onnx::AttributeProto> Matcher::valueOf(uint32_t slot, const char* attr,
                                                     const char* ref, const char* loc,
                                                     const char* unbound_loc) {
  const ValueId v = s_.slots[slot];
  if (v == kNoId) return unbound(unbound_loc, ref), std::nullopt;
  const onnx::TensorProto* t = constantTensor(g_, v);
  if (!t || tensorElementCount(*t) != 1 || !readConstantDoubles(model_, g_, v, s_.doubles, 1)) {
    rw_.notifyMatchFailure([&] {
      return std::string(loc) + ": " + attr + "=value(" + ref + "): " + quoted(g_.value(v).name()) +
             " is not a one-element numeric constant";
    });
    return std::nullopt;
  }
  onnx::AttributeProto a;
  if (isFloatingType(t->data_type())) {
    // Float attributes are 32-bit: a double constant they cannot hold (1e-50 epsilon becomes
    // 0, 1e300 infinity, a subnormal loses its digits) would change what the op computes.
    const double d = s_.doubles[0];
    const float f = static_cast<float>(d);
    if (std::isfinite(d) && d != 0 && (!std::isfinite(f) || std::fabs(f) < FLT_MIN)) {
      rw_.notifyMatchFailure([&] {
        char text[32];
        std::snprintf(text, sizeof text, "%g", d);
        return std::string(loc) + ": " + attr + "=value(" + ref +
               "): " + quoted(g_.value(v).name()) + " (" + text +
               ") does not fit a float attribute";
      });
      return std::nullopt;
    }
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(f);
  } else {
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(static_cast<int64_t>(s_.doubles[0]));
  }
  a.set_name(attr);
  return a;
}

std::optional<onnx::AttributeProto> Matcher::captured(uint32_t capture, const char* attr,
                                                      const char* ref, const char* loc,
                                                      const char* unbound_loc) {
  const Scratch::Capture& c = s_.captures[capture];
  if (c.node == kNoId) return unbound(unbound_loc, ref), std::nullopt;
  std::optional<onnx::AttributeProto> out = materialize(c);
  if (!out) {
    rw_.notifyMatchFailure([&] {
      return std::string(loc) + ": " + attr + "=attr(" + ref +
             "): the captured attribute cannot be read";
    });
    return std::nullopt;
  }
  out->set_name(attr);
  return out;
}

std::optional<onnx::AttributeProto> Matcher::attrHelperArgs(const AttributeHelper* helper,
                                                            ListRef<uint32_t> slots,
                                                            ListRef<const char*> names,
                                                            const char* attr, const char* loc,
                                                            const char* unbound_loc) {
  if (!gatherArgs(slots, names, unbound_loc)) return std::nullopt;
  std::optional<onnx::AttributeProto> out =
      helper->fn(MatchContext{model_, g_}, ValueArgs(s_.args));
  if (!out) {
    rw_.notifyMatchFailure([&] {
      return std::string(loc) + ": " + attr + "=helper(" + helper->name + "): gave no value";
    });
    return std::nullopt;
  }
  out->set_name(attr);
  return out;
}

std::optional<onnx::TensorProto> Matcher::helperTensorArgs(const TensorHelper* helper,
                                                           ListRef<uint32_t> slots,
                                                           ListRef<const char*> names,
                                                           const char* loc) {
  if (!gatherArgs(slots, names, loc)) return std::nullopt;
  std::optional<onnx::TensorProto> made = helper->fn(MatchContext{model_, g_}, ValueArgs(s_.args));
  if (!made)
    rw_.notifyMatchFailure(
        [&] { return std::string(loc) + ": tensor helper " + helper->name + ": gave no value"; });
  return made;
}

void Matcher::collectMatched() {
  s_.matched.clear();
  for (NodeId node : s_.expr_node)
    if (node != kNoId && std::find(s_.matched.begin(), s_.matched.end(), node) == s_.matched.end())
      s_.matched.push_back(node);
  s_.provided.clear();
}

bool Matcher::replaceable(uint32_t slot, To to_kind, uint32_t to_slot, const char* target_loc,
                          const char* expr_loc) {
  const std::string& name = spec_.slot_names[slot];
  const ValueId from = s_.slots[slot];
  if (from == kNoId) return unbound(target_loc, name);
  const NodeId producer = g_.value(from).producer();
  if (std::find(s_.matched.begin(), s_.matched.end(), producer) == s_.matched.end() ||
      producer == kNoId)
    return rw_.notifyMatchFailure([&] {
      return std::string(target_loc) + ": " + name + ": " + quoted(g_.value(from).name()) +
             " is not computed by the match, so it cannot be replaced";
    });
  s_.provided.push_back(from);
  const bool to_constant = to_kind == To::kTensor && g_.kind() != Graph::Kind::kFunction;
  const ValueId to = to_kind == To::kRef ? s_.slots[to_slot] : kNoId;
  const bool to_pinned = to != kNoId && (g_.value(to).isNamePinned() ||
                                         g_.value(to).isGraphInput() || g_.value(to).initializer());
  // A value kept as it is (`keep`: to == from) replaces nothing, whatever its name.
  if (g_.value(from).isNamePinned() && to != from && (to_constant || to_pinned))
    return rw_.notifyMatchFailure([&] {
      return std::string(expr_loc) + ": " + name + ": cannot replace " +
             quoted(g_.value(from).name()) + " by " +
             (to == kNoId ? std::string("a new initializer") : quoted(g_.value(to).name())) +
             ": both names must be kept";
    });
  return true;
}

}  // namespace onnx_rewrite::gen
