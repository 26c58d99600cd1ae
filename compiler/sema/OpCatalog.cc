//===- OpCatalog.cc - ops by domain, opset and name -----------------------===//
//
// ONNX 1.12's registry stops at opset 17. Past it, an op's signature is the
// registry's newest one with the changes of the table below applied; new ops
// come from the same table. What was checked, and against what, is recorded
// next to each entry and in docs/target-ops.md. Changes after opset 17 that no
// rule depends on (Resize-18's new attributes, QuantizeLinear-21's block_size,
// ...) are not in the table: their newer attributes read as unknown.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/OpCatalog.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace onnx_rewrite {
namespace {

/// The newest ONNX opset the installed registry (ONNX 1.12) knows.
constexpr int64_t kRegistryNewestOnnxOpset = 17;

// ---- Literals and parameters -----------------------------------------------------------

ir::Literal intLit(int64_t v) { return ir::Literal{ir::Literal::Kind::kInt, {v}, {}, {}}; }
ir::Literal floatLit(double v) { return ir::Literal{ir::Literal::Kind::kFloat, {}, {v}, {}}; }
ir::Literal stringLit(std::string v) {
  return ir::Literal{ir::Literal::Kind::kString, {}, {}, {std::move(v)}};
}

/// The shortest decimal that reads back as `f`, as a double: schemas store 1e-5f, and
/// rules compare against 1e-5, not 9.99999975e-06.
double floatToDouble(float f) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return static_cast<double>(f);
}

std::string attrTypeName(onnx::AttributeProto::AttributeType type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      return "float";
    case onnx::AttributeProto::INT:
      return "int";
    case onnx::AttributeProto::STRING:
      return "string";
    case onnx::AttributeProto::TENSOR:
      return "tensor";
    case onnx::AttributeProto::GRAPH:
      return "graph";
    case onnx::AttributeProto::SPARSE_TENSOR:
      return "sparse_tensor";
    case onnx::AttributeProto::TYPE_PROTO:
      return "type_proto";
    case onnx::AttributeProto::FLOATS:
      return "floats";
    case onnx::AttributeProto::INTS:
      return "ints";
    case onnx::AttributeProto::STRINGS:
      return "strings";
    case onnx::AttributeProto::TENSORS:
      return "tensors";
    case onnx::AttributeProto::GRAPHS:
      return "graphs";
    case onnx::AttributeProto::SPARSE_TENSORS:
      return "sparse_tensors";
    case onnx::AttributeProto::TYPE_PROTOS:
      return "type_protos";
    default:
      return "undefined";
  }
}

std::optional<ir::Literal> literalOf(const onnx::AttributeProto& a) {
  using Kind = ir::Literal::Kind;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return floatLit(floatToDouble(a.f()));
    case onnx::AttributeProto::INT:
      return intLit(a.i());
    case onnx::AttributeProto::STRING:
      return stringLit(a.s());
    case onnx::AttributeProto::FLOATS: {
      ir::Literal l{Kind::kFloats, {}, {}, {}};
      for (float f : a.floats()) l.floats.push_back(floatToDouble(f));
      return l;
    }
    case onnx::AttributeProto::INTS:
      return ir::Literal{Kind::kInts, {a.ints().begin(), a.ints().end()}, {}, {}};
    case onnx::AttributeProto::STRINGS:
      return ir::Literal{Kind::kStrings, {}, {}, {a.strings().begin(), a.strings().end()}};
    default:
      return std::nullopt;
  }
}

/// Parameters from "X scale? axes?" ('?' optional, '...' variadic).
std::vector<OpParam> params(std::string_view spec) {
  std::vector<OpParam> out;
  size_t i = 0;
  while (i < spec.size()) {
    while (i < spec.size() && spec[i] == ' ') ++i;
    size_t j = i;
    while (j < spec.size() && spec[j] != ' ') ++j;
    if (j > i) {
      std::string word(spec.substr(i, j - i));
      OpParam p;
      if (word.size() > 3 && word.compare(word.size() - 3, 3, "...") == 0) {
        p.variadic = true;
        word.resize(word.size() - 3);
      }
      if (!word.empty() && word.back() == '?') {
        p.optional = true;
        word.pop_back();
      }
      p.name = word;
      out.push_back(std::move(p));
    }
    i = j;
  }
  return out;
}

/// min/max counts of a parameter list, as ONNX computes them: everything up to the last
/// required parameter is required; a variadic last parameter has no upper bound.
void arity(const std::vector<OpParam>& ps, int& min_count, int& max_count) {
  min_count = 0;
  for (size_t i = 0; i < ps.size(); ++i)
    if (!ps[i].optional) min_count = static_cast<int>(i) + 1;
  max_count = !ps.empty() && ps.back().variadic ? kUnboundedArity : static_cast<int>(ps.size());
}

void sortAttrs(OpSignature& s) {
  std::sort(s.attrs.begin(), s.attrs.end(),
            [](const OpAttr& a, const OpAttr& b) { return a.name < b.name; });
}

void setInputs(OpSignature& s, std::string_view spec) {
  s.inputs = params(spec);
  arity(s.inputs, s.min_inputs, s.max_inputs);
}

void setOutputs(OpSignature& s, std::string_view spec) {
  s.outputs = params(spec);
  arity(s.outputs, s.min_outputs, s.max_outputs);
}

void addAttr(OpSignature& s, std::string name, std::string type,
             std::optional<ir::Literal> default_value = std::nullopt, bool required = false) {
  s.attrs.push_back(OpAttr{std::move(name), std::move(type), required, std::move(default_value)});
  sortAttrs(s);
}

void removeAttr(OpSignature& s, std::string_view name) {
  s.attrs.erase(std::remove_if(s.attrs.begin(), s.attrs.end(),
                               [&](const OpAttr& a) { return a.name == name; }),
                s.attrs.end());
}

bool isOnnxCommutative(std::string_view op) {
  static const std::set<std::string_view> kOps = {"Add",   "Mul",        "Max",       "Min",
                                                  "Sum",   "And",        "Or",        "Xor",
                                                  "Equal", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return kOps.count(op) != 0;
}

/// Attributes of ONNX Attention, the same at opsets 23 and 24.
void addAttentionAttrs(OpSignature& s) {
  addAttr(s, "is_causal", "int", intLit(0));
  addAttr(s, "kv_num_heads", "int");
  addAttr(s, "q_num_heads", "int");
  addAttr(s, "qk_matmul_output_mode", "int", intLit(0));
  addAttr(s, "scale", "float");
  addAttr(s, "softcap", "float", floatLit(0.0));
  addAttr(s, "softmax_precision", "int");
}

// ---- ONNX after opset 17 ---------------------------------------------------------------
//
// Checked against ONNX Runtime 1.30 (tests/oracle's onnxruntime-node), whose ONNX schemas
// reach opset 24: for each entry a model with the op was loaded and ORT's schema checker
// reported the input/output count range ("not in range [min=.., max=..]"), which inputs
// may be empty, and accepted or rejected each attribute name and type. Defaults come from
// the ONNX operator documentation (onnx.ai/onnx/operators: Gelu, RMSNormalization,
// RotaryEmbedding, Attention, Cast, CastLike) and ONNX's defs sources; where no source
// was checked the attribute is listed without a default.

/// An op ONNX added after opset 17.
struct NewOnnxOp {
  const char* op;
  int64_t since;
  const char* inputs;
  const char* outputs;
  void (*attrs)(OpSignature&);
};

void noAttrs(OpSignature&) {}

const std::vector<NewOnnxOp>& newOnnxOps() {
  static const std::vector<NewOnnxOp> kOps = {
      {"BitwiseAnd", 18, "A B", "C", noAttrs},
      {"BitwiseOr", 18, "A B", "C", noAttrs},
      {"BitwiseXor", 18, "A B", "C", noAttrs},
      {"BitwiseNot", 18, "X", "Y", noAttrs},
      {"Mish", 18, "X", "Y", noAttrs},
      {"Gelu", 20, "X", "Y",
       [](OpSignature& s) { addAttr(s, "approximate", "string", stringLit("none")); }},
      {"RMSNormalization", 23, "X scale", "Y",
       [](OpSignature& s) {
         addAttr(s, "axis", "int", intLit(-1));
         addAttr(s, "epsilon", "float", floatLit(1e-5));
         addAttr(s, "stash_type", "int", intLit(1));
       }},
      {"RotaryEmbedding", 23, "X cos_cache sin_cache position_ids?", "Y",
       [](OpSignature& s) {
         addAttr(s, "interleaved", "int", intLit(0));
         addAttr(s, "rotary_embedding_dim", "int", intLit(0));
         addAttr(s, "num_heads", "int");
       }},
      {"Attention", 23, "Q K V attn_mask? past_key? past_value?",
       "Y present_key? present_value? qk_matmul_output?", addAttentionAttrs},
      // Attention-24 adds nonpad_kv_seqlen; the brief's list put it at 23, ORT's schema
      // checker and ONNX's defs put it at 24 (Attention-23 takes 3 to 6 inputs).
      {"Attention", 24, "Q K V attn_mask? past_key? past_value? nonpad_kv_seqlen?",
       "Y present_key? present_value? qk_matmul_output?", addAttentionAttrs},
      {"Swish", 24, "X", "Y", [](OpSignature& s) { addAttr(s, "alpha", "float"); }},
      {"TensorScatter", 24, "past_cache update write_indices?", "present_cache",
       [](OpSignature& s) {
         addAttr(s, "axis", "int");
         addAttr(s, "mode", "string");
       }},
  };
  return kOps;
}

/// Changes after opset 17 to ops the registry knows, applied to its opset-17 signature.
void applyLaterChanges(OpSignature& s, int64_t version) {
  static const std::set<std::string_view> kReduceAxesAt18 = {
      "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
      "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};
  if (kReduceAxesAt18.count(s.op) && version >= 18) {
    // axes becomes optional input 1; noop_with_empty_axes (as ReduceSum-13 has) appears.
    removeAttr(s, "axes");
    setInputs(s, "data axes?");
    if (!s.findAttr("noop_with_empty_axes")) addAttr(s, "noop_with_empty_axes", "int", intLit(0));
    s.since_version = 18;
  }
  if (s.op == "Split" && version >= 18) {
    addAttr(s, "num_outputs", "int");
    s.since_version = 18;
  }
  if (s.op == "Pad" && version >= 18) {
    setInputs(s, "data pads constant_value? axes?");
    s.since_version = 18;
  }
  if ((s.op == "Cast" || s.op == "CastLike") && version >= 19) {
    addAttr(s, "saturate", "int", intLit(1));
    s.since_version = 19;
  }
}

std::unique_ptr<OpSignature> fromSchema(const onnx::OpSchema& schema) {
  auto s = std::make_unique<OpSignature>();
  s->domain = schema.domain();
  s->op = schema.Name();
  s->since_version = schema.SinceVersion();
  auto convert = [](const std::vector<onnx::OpSchema::FormalParameter>& formals) {
    std::vector<OpParam> out;
    for (const auto& f : formals) {
      OpParam p;
      p.name = f.GetName();
      p.optional = f.GetOption() == onnx::OpSchema::Optional;
      p.variadic = f.GetOption() == onnx::OpSchema::Variadic;
      out.push_back(std::move(p));
    }
    return out;
  };
  s->inputs = convert(schema.inputs());
  s->outputs = convert(schema.outputs());
  s->min_inputs = schema.min_input();
  s->max_inputs = schema.max_input();
  s->min_outputs = schema.min_output();
  s->max_outputs = schema.max_output();
  for (const auto& [name, a] : schema.attributes()) {
    OpAttr attr;
    attr.name = name;
    attr.type = attrTypeName(a.type);
    attr.required = a.required;
    if (a.default_value.type() != onnx::AttributeProto::UNDEFINED)
      attr.default_value = literalOf(a.default_value);
    s->attrs.push_back(std::move(attr));
  }
  sortAttrs(*s);
  s->commutative = s->domain.empty() && isOnnxCommutative(s->op);
  s->source = OpSignature::Source::kOnnxRegistry;
  return s;
}

std::unique_ptr<OpSignature> fromDecl(const ir::OpDecl& d) {
  auto s = std::make_unique<OpSignature>();
  s->domain = OpCatalog::normalizeDomain(d.domain);
  s->op = d.op;
  s->since_version = d.since_version;
  for (const auto& p : d.inputs) s->inputs.push_back(OpParam{p.name, p.optional, p.variadic});
  for (const auto& p : d.outputs) s->outputs.push_back(OpParam{p.name, p.optional, p.variadic});
  arity(s->inputs, s->min_inputs, s->max_inputs);
  arity(s->outputs, s->min_outputs, s->max_outputs);
  for (const auto& a : d.attrs)
    s->attrs.push_back(OpAttr{a.name, a.type, a.required, a.default_value});
  sortAttrs(*s);
  s->commutative = d.commutative;
  s->source = OpSignature::Source::kDeclared;
  return s;
}

/// The registry's schema of `op` at `version` (capped at 17), or null if none or deprecated.
const onnx::OpSchema* registrySchema(const std::string& domain, const std::string& op,
                                     int64_t version) {
  int64_t capped = domain.empty() ? std::min(version, kRegistryNewestOnnxOpset) : version;
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(capped), domain);
  if (!s || s->Deprecated()) return nullptr;
  return s;
}

/// Newest opsets of the registry's domains other than ONNX's (ai.onnx.ml: 3, ...).
int64_t registryNewest(const std::string& domain) {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(domain);
  return it == map.end() ? -1 : it->second.second;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// ---- OpSignature -----------------------------------------------------------------------

const OpAttr* OpSignature::findAttr(std::string_view name) const {
  for (const OpAttr& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

const OpParam* OpSignature::inputAt(size_t index) const {
  if (index < inputs.size()) return &inputs[index];
  if (!inputs.empty() && inputs.back().variadic) return &inputs.back();
  return nullptr;
}

// ---- Edit distance ---------------------------------------------------------------------

size_t editDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string closestName(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string lowered = lower(word);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    if (c == word) continue;
    size_t distance = lower(c) == lowered ? 0 : editDistance(word, c);
    if (distance < best_distance || (distance == best_distance && c < best)) {
      best = c;
      best_distance = distance;
    }
  }
  size_t limit = std::min<size_t>(2, word.size() / 3);
  if (!best.empty() && best_distance <= limit) return best;
  // A truncated name ("SkipLayerNorm"): the shortest candidate it begins.
  std::string prefixed;
  if (word.size() >= 4) {
    for (const std::string& c : candidates) {
      if (c.size() <= word.size() || lower(c).compare(0, lowered.size(), lowered) != 0) continue;
      if (prefixed.empty() || c.size() < prefixed.size() ||
          (c.size() == prefixed.size() && c < prefixed))
        prefixed = c;
    }
  }
  return prefixed;
}

// ---- OpCatalog -------------------------------------------------------------------------

OpCatalog::OpCatalog(std::vector<ir::OpDecl> decls) : decls_(std::move(decls)) {
  for (ir::OpDecl& d : decls_) d.domain = normalizeDomain(d.domain);
}

OpCatalog::~OpCatalog() = default;

bool OpCatalog::isOnnxDomain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string OpCatalog::normalizeDomain(std::string_view domain) {
  return isOnnxDomain(domain) ? std::string() : std::string(domain);
}

std::string OpCatalog::displayName(std::string_view domain, std::string_view op) {
  return isOnnxDomain(domain) ? std::string(op) : std::string(domain) + "." + std::string(op);
}

bool OpCatalog::knowsDomain(std::string_view domain) const {
  std::string d = normalizeDomain(domain);
  if (d.empty() || registryNewest(d) >= 0) return true;
  for (const ir::OpDecl& decl : decls_)
    if (decl.domain == d) return true;
  return false;
}

int64_t OpCatalog::newestOpset(std::string_view domain) const {
  std::string d = normalizeDomain(domain);
  if (d.empty()) return kNewestOnnxOpset;
  int64_t newest = registryNewest(d);
  for (const ir::OpDecl& decl : decls_)
    if (decl.domain == d) newest = std::max(newest, decl.since_version);
  return newest;
}

const ir::OpDecl* OpCatalog::findDecl(const std::string& domain, const std::string& op,
                                      int64_t version) const {
  const ir::OpDecl* best = nullptr;
  for (const ir::OpDecl& d : decls_) {
    if (d.domain != domain || d.op != op || d.since_version > version) continue;
    if (!best || d.since_version > best->since_version) best = &d;
  }
  return best;
}

std::unique_ptr<OpSignature> OpCatalog::build(const std::string& domain, const std::string& op,
                                              int64_t version) const {
  if (domain.empty() && version > kRegistryNewestOnnxOpset) {
    const NewOnnxOp* newest = nullptr;
    for (const NewOnnxOp& n : newOnnxOps())
      if (op == n.op && n.since <= version && (!newest || n.since > newest->since)) newest = &n;
    if (newest) {
      auto s = std::make_unique<OpSignature>();
      s->op = op;
      s->since_version = newest->since;
      setInputs(*s, newest->inputs);
      setOutputs(*s, newest->outputs);
      newest->attrs(*s);
      s->commutative = isOnnxCommutative(op);
      s->source = OpSignature::Source::kOnnxLater;
      return s;
    }
  }
  if (const onnx::OpSchema* schema = registrySchema(domain, op, version)) {
    auto s = fromSchema(*schema);
    if (domain.empty() && version > kRegistryNewestOnnxOpset) {
      int64_t before = s->since_version;
      applyLaterChanges(*s, version);
      if (s->since_version != before) s->source = OpSignature::Source::kOnnxLater;
    }
    return s;
  }
  if (const ir::OpDecl* d = findDecl(domain, op, version)) return fromDecl(*d);
  return nullptr;
}

const OpSignature* OpCatalog::find(std::string_view domain, std::string_view op,
                                   int64_t version) const {
  std::string d = normalizeDomain(domain);
  int64_t newest = newestOpset(d);
  if (newest < 0 || version < 1) return nullptr;
  version = std::min(version, newest);
  auto key = std::make_tuple(d, std::string(op), version);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, build(d, std::string(op), version)).first;
  return it->second.get();
}

std::optional<std::pair<int64_t, int64_t>> OpCatalog::availability(std::string_view domain,
                                                                   std::string_view op) const {
  int64_t newest = newestOpset(domain);
  int64_t first = -1, last = -1;
  for (int64_t v = 1; v <= newest; ++v) {
    if (find(domain, op, v)) {
      if (first < 0) first = v;
      last = v;
    }
  }
  if (first < 0) return std::nullopt;
  return std::make_pair(first, last);
}

bool OpCatalog::knowsOp(std::string_view domain, std::string_view op) const {
  return availability(domain, op).has_value();
}

bool OpCatalog::isCommutative(std::string_view domain, std::string_view op) const {
  std::string d = normalizeDomain(domain);
  if (d.empty() && isOnnxCommutative(op)) return true;
  for (const ir::OpDecl& decl : decls_)
    if (decl.domain == d && decl.op == op && decl.commutative) return true;
  return false;
}

std::vector<std::string> OpCatalog::opNames(std::string_view domain) const {
  std::string d = normalizeDomain(domain);
  auto it = names_.find(d);
  if (it != names_.end()) return it->second;
  std::set<std::string> names;
  if (d.empty() || registryNewest(d) >= 0) {
    for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas())
      if (s.domain() == d) names.insert(s.Name());
  }
  if (d.empty())
    for (const NewOnnxOp& n : newOnnxOps()) names.insert(n.op);
  for (const ir::OpDecl& decl : decls_)
    if (decl.domain == d) names.insert(decl.op);
  return names_[d] = std::vector<std::string>(names.begin(), names.end());
}

std::string OpCatalog::suggestOp(std::string_view domain, std::string_view op) const {
  std::string d = normalizeDomain(domain);
  std::string same = closestName(op, opNames(d));
  if (!same.empty()) return displayName(d, same);
  // Another domain: the ONNX domain and every declared one.
  std::set<std::string> domains = {""};
  for (const ir::OpDecl& decl : decls_) domains.insert(decl.domain);
  std::vector<std::string> qualified;
  for (const std::string& other : domains) {
    if (other == d) continue;
    for (const std::string& name : opNames(other))
      if (name == op || !closestName(op, {name}).empty())
        qualified.push_back(displayName(other, name));
  }
  if (qualified.empty()) return "";
  std::sort(qualified.begin(), qualified.end(), [&](const std::string& a, const std::string& b) {
    auto bare = [](const std::string& q) { return q.substr(q.rfind('.') + 1); };
    size_t da = editDistance(op, bare(a)), db = editDistance(op, bare(b));
    return da != db ? da < db : a < b;
  });
  return qualified.front();
}

}  // namespace onnx_rewrite
