//===- SymbolicShapes.cc - shapes ONNX's inference cannot see through ----===//
#include "runtime/io/SymbolicShapes.h"

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "runtime/graph/Opsets.h"
#include "runtime/io/NodeSchemaInference.h"
#include "runtime/io/ShapeInference.h"
#include "runtime/io/SymbolicOps.h"

namespace onnx_rewrite {
namespace symbolic {

const Dims* NodeView::shape(size_t i) const {
  const Facts* f = in(i);
  return f && f->shape ? &*f->shape : nullptr;
}

const Dims* NodeView::value(size_t i) const {
  const Facts* f = in(i);
  return f && f->value ? &*f->value : nullptr;
}

std::optional<std::vector<int64_t>> NodeView::ints(size_t i) const {
  const Dims* v = value(i);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (const Sym& s : *v) {
    if (!s.isInt()) return std::nullopt;
    out.push_back(s.value);
  }
  return out;
}

int32_t NodeView::elem(size_t i) const {
  const Facts* f = in(i);
  return f ? f->elem : 0;
}

const onnx::AttributeProto* NodeView::attr(const char* name) const {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::optional<int64_t> NodeView::intAttr(const char* name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a || a->type() != onnx::AttributeProto::INT) return std::nullopt;
  return a->i();
}

std::optional<std::vector<int64_t>> NodeView::intsAttr(const char* name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a || a->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<int64_t>> NodeView::attrOrInput(const char* name, int64_t since,
                                                          size_t input, bool* present) const {
  if (opset < since) {
    *present = attr(name) != nullptr;
    return intsAttr(name);
  }
  *present = in(input) != nullptr;
  return ints(input);
}

namespace {

const OpRules& opRules() {
  static const OpRules rules = [] {
    OpRules r;
    addValueOpRules(r);
    addTensorOpRules(r);
    return r;
  }();
  return rules;
}

/// What an initializer is: its type, and its elements when small and integer.
Facts factsOfInitializer(const onnx::TensorProto& t) {
  Facts f;
  f.elem = t.data_type();
  Dims dims;
  for (int64_t d : t.dims()) {
    if (d < 0) return Facts{};  // malformed
    dims.push_back(Sym::of(d));
  }
  f.shape = dims;
  f.value = smallIntTensor(t);
  return f;
}

/// Dims the pass cannot size get a name of their own, "unk__<value>[<axis>]", as ONNX's
/// inference names them unk__N: whatever the pass derives from such a dim (a Shape read, a
/// Reshape to it, an elementwise op on it) carries the same name, so that rules can see that
/// two dims are one. The unk__ prefix keeps them unknown to everything that asks whether a
/// dim is sized (isUnknownDim: the soundness check, another round of inference).
bool isNamedUnknown(const Sym& s) { return s.isDimSymbol() && s.name().rfind("unk__", 0) == 0; }

void nameUnknownDims(Facts& facts, const std::string& value) {
  if (!facts.shape) return;
  for (size_t i = 0; i < facts.shape->size(); ++i)
    if (!(*facts.shape)[i].known())
      (*facts.shape)[i] = Sym::symbol("unk__" + value + "[" + std::to_string(i) + "]");
}

/// `ours` merged into `known`: ours fills what known lacks (a named unknown dim counts as
/// lacking); on any disagreement (a rank or a dim), what is known stands and our elements
/// are dropped. Both are taken by value so that callers move them in: the pass merges every
/// output of every node.
Facts merge(Facts known, Facts ours) {
  // A static dim on which the two disagree: what is known stands, untouched.
  if (known.shape && ours.shape && known.shape->size() == ours.shape->size())
    for (size_t i = 0; i < known.shape->size(); ++i) {
      const Sym& k = (*known.shape)[i];
      const Sym& o = (*ours.shape)[i];
      if (k.isInt() && o.isInt() && k.value != o.value) return known;
    }
  if (known.elem == 0) known.elem = ours.elem;
  if (ours.elem != 0 && known.elem != ours.elem) return known;
  if (!ours.shape) return known;
  if (!known.shape) {
    known.shape = std::move(ours.shape);
  } else {
    if (known.shape->size() != ours.shape->size()) return known;
    for (size_t i = 0; i < known.shape->size(); ++i) {
      Sym& k = (*known.shape)[i];
      Sym& o = (*ours.shape)[i];
      if (!k.known() || (isNamedUnknown(k) && o.known() && !isNamedUnknown(o))) k = std::move(o);
    }
  }
  if (ours.value && staticCount(*known.shape) == static_cast<int64_t>(ours.value->size()))
    known.value = std::move(ours.value);
  return known;
}

/// A linear form of symbols as a dim: "unk__(P + S)", so that two values of one form (the
/// key and value caches' P + S) show the same dim to rules, while it stays unsized to every
/// check that asks (isUnknownDim), as a sum the model never names must.
std::string linearFormName(const Sym& s) {
  std::string text = "unk__(";
  for (size_t i = 0; i < s.terms.size(); ++i) {
    const auto& [name, coefficient] = s.terms[i];
    const int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    text += i == 0 ? (coefficient < 0 ? "-" : "") : (coefficient < 0 ? " - " : " + ");
    if (magnitude != 1) text += std::to_string(magnitude) + "*";
    text += name;
  }
  if (s.value != 0)
    text += (s.value < 0 ? " - " : " + ") + std::to_string(s.value < 0 ? -s.value : s.value);
  return text + ")";
}

bool isLinearForm(const Sym& s) { return s.isSymbol() && !s.isDimSymbol(); }

void setDim(onnx::TensorShapeProto::Dimension& d, const Sym& s) {
  d.Clear();
  if (s.isInt()) d.set_dim_value(s.value);
  if (s.isDimSymbol()) d.set_dim_param(s.name());
  if (isLinearForm(s)) d.set_dim_param(linearFormName(s));
}

/// Writes into `type` what `facts` adds to it; true if anything changed.
bool refine(onnx::TypeProto& type, const Facts& facts) {
  if (type.value_case() != onnx::TypeProto::VALUE_NOT_SET && !type.has_tensor_type()) return false;
  if (!type.has_tensor_type() && facts.elem == 0) return false;
  onnx::TypeProto_Tensor* t = type.mutable_tensor_type();
  bool changed = false;
  if (t->elem_type() == 0 && facts.elem != 0) {
    t->set_elem_type(facts.elem);
    changed = true;
  }
  if (!facts.shape || t->elem_type() == 0) return changed;
  if (!t->has_shape()) {
    onnx::TensorShapeProto* shape = t->mutable_shape();
    for (const Sym& s : *facts.shape) setDim(*shape->add_dim(), s);
    return true;
  }
  if (t->shape().dim_size() != static_cast<int>(facts.shape->size())) return changed;
  for (int i = 0; i < t->shape().dim_size(); ++i) {
    onnx::TensorShapeProto::Dimension& d = *t->mutable_shape()->mutable_dim(i);
    const Sym& s = (*facts.shape)[static_cast<size_t>(i)];
    if (!isUnknownDim(d) || !s.known()) continue;
    // A linear form's name is unsized too: written once, it is nothing new.
    if (isLinearForm(s) && d.dim_param() == linearFormName(s)) continue;
    setDim(d, s);
    changed = true;
  }
  return changed;
}

/// What an If's output is whichever branch runs: the element type both give, and the dims
/// both give alike (an int, or a name the model gives); nothing where they differ.
Facts bothBranches(const Facts& a, const Facts& b) {
  Facts f;
  if (a.elem == 0 || a.elem != b.elem) return f;
  f.elem = a.elem;
  if (!a.shape || !b.shape || a.shape->size() != b.shape->size()) return f;
  Dims dims;
  for (size_t i = 0; i < a.shape->size(); ++i) {
    const Sym& x = (*a.shape)[i];
    const Sym& y = (*b.shape)[i];
    const bool same = (x.isInt() && y.isInt() && x.value == y.value) ||
                      (x.isDimSymbol() && y.isDimSymbol() && x.name() == y.name());
    dims.push_back(same ? x : Sym::unknown());
  }
  f.shape = std::move(dims);
  return f;
}

/// The value names of one graph, numbered once. The pass keeps what it knows of each value
/// in vectors indexed by these numbers: each name is hashed when the graph is numbered,
/// not once per table and per read (a third of the pass's time went to string hashing).
class ValueIds {
 public:
  /// The number of `name`, or -1 when the graph never names it.
  int find(const std::string& name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
  }
  /// The number of `name`, numbering it if new; -1 for "" (an omitted input or output).
  int intern(const std::string& name) {
    if (name.empty()) return -1;
    return ids_.try_emplace(name, static_cast<int>(ids_.size())).first->second;
  }
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, int> ids_;
};

/// Each node's inputs and outputs as value numbers (-1: omitted), read once.
struct NodeValues {
  std::vector<int> ids;
  std::vector<size_t> input_start, output_start;  // by node; outputs end at the next input_start

  NodeValues(const onnx::GraphProto& g, ValueIds& numbers) {
    for (const onnx::NodeProto& n : g.node()) {
      input_start.push_back(ids.size());
      for (const std::string& in : n.input()) ids.push_back(numbers.intern(in));
      output_start.push_back(ids.size());
      for (const std::string& out : n.output()) ids.push_back(numbers.intern(out));
    }
    input_start.push_back(ids.size());
  }
  int input(int node, int i) const { return ids[input_start[static_cast<size_t>(node)] + i]; }
  int output(int node, int o) const { return ids[output_start[static_cast<size_t>(node)] + o]; }
};

/// A graph's nodes in topological order (inputs produced by the graph's own nodes first);
/// nodes on a cycle are left out.
std::vector<int> topologicalOrder(const onnx::GraphProto& g, const NodeValues& values,
                                  size_t value_count) {
  std::vector<int> producer(value_count, -1);  // the first node writing each value
  for (int i = 0; i < g.node_size(); ++i)
    for (int o = 0; o < g.node(i).output_size(); ++o) {
      const int v = values.output(i, o);
      if (v >= 0 && producer[static_cast<size_t>(v)] < 0) producer[static_cast<size_t>(v)] = i;
    }
  std::vector<int> pending(static_cast<size_t>(g.node_size()), 0);
  std::vector<std::vector<int>> readers(static_cast<size_t>(g.node_size()));
  std::deque<int> ready;
  for (int i = 0; i < g.node_size(); ++i) {
    for (int k = 0; k < g.node(i).input_size(); ++k) {
      const int v = values.input(i, k);
      const int from = v < 0 ? -1 : producer[static_cast<size_t>(v)];
      if (from < 0 || from == i) continue;
      ++pending[static_cast<size_t>(i)];
      readers[static_cast<size_t>(from)].push_back(i);
    }
    if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int r : readers[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(r)] == 0) ready.push_back(r);
  }
  return order;
}

/// `facts` as the TypeProto ONNX's inference functions read: the element type, and the dims
/// (an int, a name the model gives, or unknown) when the rank is known. Unknown when the
/// element type is.
onnx::TypeProto typeOfFacts(const Facts& facts) {
  onnx::TypeProto type;
  if (facts.elem == 0) return type;
  onnx::TypeProto_Tensor* t = type.mutable_tensor_type();
  t->set_elem_type(facts.elem);
  if (facts.shape) {
    onnx::TensorShapeProto* shape = t->mutable_shape();  // a scalar has a shape of no dims
    for (const Sym& s : *facts.shape) setDim(*shape->add_dim(), s);
  }
  return type;
}

/// A small integer constant as a tensor an inference function reads (Reshape's shape,
/// Unsqueeze's axes), or nullopt.
std::optional<onnx::TensorProto> dataOfFacts(const Facts& facts) {
  if (!facts.value || !facts.shape || !isShapeElem(facts.elem)) return std::nullopt;
  onnx::TensorProto t;
  t.set_data_type(facts.elem);
  for (const Sym& d : *facts.shape) {
    if (!d.isInt()) return std::nullopt;
    t.add_dims(d.value);
  }
  for (const Sym& v : *facts.value) {
    if (!v.isInt()) return std::nullopt;
    if (facts.elem == onnx::TensorProto::INT64)
      t.add_int64_data(v.value);
    else
      t.add_int32_data(static_cast<int32_t>(v.value));
  }
  return t;
}

bool anyElem(const std::vector<Facts>& outputs) {
  for (const Facts& f : outputs)
    if (f.elem != 0) return true;
  return false;
}

/// Every present input's element type is known: what an inference function needs to say
/// anything (and all it can fail on when it throws).
bool typedInputs(const NodeView& view) {
  for (const Facts* f : view.inputs)
    if (f && f->elem == 0) return false;
  return true;
}

/// The opsets a model imports, by domain ("" for ONNX), for the ops the pass has no rule
/// of its own for: they go through their ONNX inference function (NodeSchemaInference.h).
using Imports = std::unordered_map<std::string, int64_t>;

/// What `node`'s ONNX inference function says of its outputs, over `view`'s inputs;
/// nothing for control flow (the pass types bodies itself) and for ops without one.
void inferThroughSchema(const NodeView& view, const std::string& domain, const Imports& imports,
                        std::vector<Facts>& outputs) {
  const std::string& op = view.node.op_type();
  if (domain.empty() && (op == "If" || op == "Loop" || op == "Scan")) return;
  auto version = imports.find(domain);
  const onnx::OpSchema* schema =
      inferenceSchemaOf(op, domain, version == imports.end() ? -1 : version->second);
  if (!schema) return;
  // GroupQueryAttention's reads the query as Q alone, which a packed QKV given as the only
  // input is not: its schema takes 7 inputs at least.
  if (!nodeFitsSchema(*schema, view.node)) return;
  std::vector<onnx::TypeProto> types(view.inputs.size());
  NodeInferenceInputs in;
  in.attribute = [&view](const std::string& name) { return view.attr(name.c_str()); };
  for (size_t i = 0; i < view.inputs.size(); ++i) {
    const Facts* f = view.inputs[i];
    if (f) types[i] = typeOfFacts(*f);
    in.types.push_back(f && types[i].has_tensor_type() ? &types[i] : nullptr);
    in.data.push_back(f ? dataOfFacts(*f) : std::nullopt);
  }
  in.outputs = outputs.size();
  NodeInferenceResult inferred = inferNode(*schema, std::move(in));
  if (!inferred.ran) return;
  for (size_t o = 0; o < outputs.size() && o < inferred.outputs.size(); ++o)
    outputs[o] = factsOfType(inferred.outputs[o]);
}

/// What is known of the values of one graph, and of the graphs around it: a body reads the
/// values of its enclosing graphs by name (ONNX forbids a body to redefine them).
struct Scope {
  ValueIds ids;
  std::vector<Facts> facts;   // by value number
  std::vector<char> present;  // by value number: this graph has an entry for it (maybe empty)
  const Scope* outer = nullptr;

  /// What is known of `name`: this graph's entry, else the enclosing graphs'.
  const Facts* find(const std::string& name) const { return find(ids.find(name), name); }
  /// The same for `name` numbered `id` here (-1: not named here), without hashing it here.
  const Facts* find(int id, const std::string& name) const {
    if (id >= 0 && has(id)) return &facts[static_cast<size_t>(id)];
    return outer ? outer->find(name) : nullptr;
  }
  /// This graph's entry for value `id`, made (empty) if it had none.
  Facts& entry(int id) {
    present[static_cast<size_t>(id)] = 1;
    return facts[static_cast<size_t>(id)];
  }
  bool has(int id) const { return present[static_cast<size_t>(id)] != 0; }
};

/// Refines the intermediates and outputs of `g` (a body when `outer` is set), then the
/// bodies of its nodes with what is known here as their outer scope. `bounds` starts as
/// what the enclosing graphs' Gathers proved: they ran whenever this graph runs. What this
/// graph's Gathers prove holds only when it runs, so it stays with this graph and its bodies.
int refineGraph(onnx::GraphProto& g, int64_t opset, const Imports& imports, const Scope* outer,
                UpperBounds bounds, bool initializer_inputs_constant, bool again = false) {
  Scope scope;
  scope.outer = outer;
  // Every name the graph uses is numbered before the tables are sized: `facts` must not
  // grow while a node's view points into it.
  ValueIds& ids = scope.ids;
  for (const onnx::ValueInfoProto& in : g.input()) ids.intern(in.name());
  for (const onnx::TensorProto& t : g.initializer()) ids.intern(t.name());
  for (const auto* list : {&g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto& info : *list) ids.intern(info.name());
  const NodeValues values(g, ids);
  const size_t count = ids.size();
  scope.facts.resize(count);
  scope.present.assign(count, 0);
  std::vector<char> is_input(count, 0);
  for (const onnx::ValueInfoProto& in : g.input()) {
    const int id = ids.find(in.name());
    if (id < 0) continue;
    is_input[static_cast<size_t>(id)] = 1;
    scope.entry(id) = factsOfType(in.type(), /*declared=*/true);
  }
  for (const onnx::TensorProto& t : g.initializer()) {
    const int id = ids.find(t.name());
    if (id < 0) continue;
    // An initializer that is also an input is a default a feed may replace (from IR 4): not
    // a constant.
    if (is_input[static_cast<size_t>(id)] && !initializer_inputs_constant) continue;
    scope.entry(id) = factsOfInitializer(t);
  }
  // Intermediates and outputs as ONNX's inference (or the model) typed them. A name may
  // have an output entry and a value_info entry: both are refined, and what they say is
  // merged first. A body's output may be an outer value it passes through: the body has no
  // type of its own to refine then.
  std::vector<char> defined(count, 0);
  if (outer)
    for (int i = 0; i < g.node_size(); ++i)
      for (int o = 0; o < g.node(i).output_size(); ++o)
        if (const int v = values.output(i, o); v >= 0) defined[static_cast<size_t>(v)] = 1;
  std::vector<std::vector<onnx::ValueInfoProto*>> infos(count);
  for (auto* list : {g.mutable_output(), g.mutable_value_info()})
    for (onnx::ValueInfoProto& info : *list) {
      const int id = ids.find(info.name());
      if (id < 0 || is_input[static_cast<size_t>(id)]) continue;
      if (outer && !defined[static_cast<size_t>(id)] && !scope.has(id)) continue;
      infos[static_cast<size_t>(id)].push_back(&info);
      Facts given = factsOfType(info.type());
      const bool fresh = !scope.has(id);
      Facts& known = scope.entry(id);
      known = fresh ? std::move(given) : merge(std::move(known), std::move(given));
    }

  // Values the model types itself keep the dims it gives (its unk__ names included).
  std::vector<char> declared(count, 0);
  for (size_t v = 0; v < count; ++v) declared[v] = !infos[v].empty();

  const OpRules& rules = opRules();
  const std::vector<int> order = topologicalOrder(g, values, count);
  int refined = 0;
  // A second sweep only when the first found a bound after a Slice with run-time bounds,
  // which it may size: a Gather that proves one may come after that Slice in topological
  // order.
  bool runtime_slice_seen = false, late_bound = false;
  for (int sweep = 0; sweep < 2 && (sweep == 0 || late_bound); ++sweep)
    for (int index : order) {
      const onnx::NodeProto& node = g.node(index);
      const std::string& domain = node.domain();
      const bool onnx_domain = domain.empty() || domain == "ai.onnx";
      auto rule = rules.find(onnx_domain ? node.op_type() : domain + ":" + node.op_type());
      if (node.output_size() == 0) continue;
      std::vector<Facts> none_known(static_cast<size_t>(node.input_size()));
      NodeView view{node, opset, {}, &bounds};
      for (int i = 0; i < node.input_size(); ++i) {
        const std::string& in = node.input(i);
        const Facts* known = scope.find(values.input(index, i), in);
        // An input nothing is known of is an input with empty Facts; an absent one is null.
        view.inputs.push_back(in.empty() ? nullptr
                              : known    ? known
                                         : &none_known[static_cast<size_t>(i)]);
      }
      std::vector<Facts> outputs(static_cast<size_t>(node.output_size()));
      if (rule != rules.end()) rule->second(view, outputs);
      // Where no rule of the pass, or a rule that proved nothing (FusedMatMul's batch
      // transposes, Shape-13 with Shape-15's attributes), the op's ONNX function speaks.
      if (sweep == 0 && !anyElem(outputs) && typedInputs(view))
        inferThroughSchema(view, onnx_domain ? std::string() : domain, imports, outputs);
      forwardSpan(view, outputs);
      if (sweep == 0) {
        runtime_slice_seen |= onnx_domain && node.op_type() == "Slice" && opset >= 10 &&
                              (!view.ints(1) || !view.ints(2));
        const size_t known_bounds = bounds.size();
        recordIndexBound(view, bounds);
        late_bound |= runtime_slice_seen && bounds.size() > known_bounds;
      }
      for (int o = 0; o < node.output_size(); ++o) {
        const std::string& name = node.output(o);
        const int id = values.output(index, o);
        if (id < 0 || is_input[static_cast<size_t>(id)]) continue;
        Facts& known = scope.entry(id);
        std::optional<IntSpan> span = std::move(outputs[static_cast<size_t>(o)].span);
        known = merge(std::move(known), std::move(outputs[static_cast<size_t>(o)]));
        if (!known.span) known.span = std::move(span);
        if (!declared[static_cast<size_t>(id)]) nameUnknownDims(known, name);
        std::vector<onnx::ValueInfoProto*>& entries = infos[static_cast<size_t>(id)];
        if (entries.empty()) {
          // A value inference left untyped: a new entry, which undo() removes again.
          onnx::ValueInfoProto fresh;
          fresh.set_name(name);
          if (refine(*fresh.mutable_type(), known)) {
            onnx::ValueInfoProto* added = g.add_value_info();
            *added = std::move(fresh);
            entries.push_back(added);
            ++refined;
          }
          continue;
        }
        bool changed = false;
        for (onnx::ValueInfoProto* info : entries) changed |= refine(*info->mutable_type(), known);
        refined += changed ? 1 : 0;
      }
    }
  // If/Loop/Scan bodies (and bodies nested in them), once what they read here is known.
  for (onnx::NodeProto& node : *g.mutable_node())
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_g())
        refined += refineGraph(*a.mutable_g(), opset, imports, &scope, bounds,
                               initializer_inputs_constant);
      for (onnx::GraphProto& body : *a.mutable_graphs())
        refined += refineGraph(body, opset, imports, &scope, bounds, initializer_inputs_constant);
    }
  // An If's outputs are what both branches agree on; when a node here reads one it learned
  // something of, the graph is swept once more (its bodies with it).
  std::unordered_set<std::string> learned;
  for (const onnx::NodeProto& node : g.node()) {
    if ((!node.domain().empty() && node.domain() != "ai.onnx") || node.op_type() != "If") continue;
    const onnx::GraphProto* then_branch = nullptr;
    const onnx::GraphProto* else_branch = nullptr;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "then_branch" && a.has_g()) then_branch = &a.g();
      if (a.name() == "else_branch" && a.has_g()) else_branch = &a.g();
    }
    if (!then_branch || !else_branch) continue;
    for (int o = 0; o < node.output_size(); ++o) {
      const std::string& name = node.output(o);
      const int id = ids.find(name);
      if (id < 0 || is_input[static_cast<size_t>(id)] || o >= then_branch->output_size() ||
          o >= else_branch->output_size())
        continue;
      Facts joined = bothBranches(factsOfType(then_branch->output(o).type()),
                                  factsOfType(else_branch->output(o).type()));
      std::vector<onnx::ValueInfoProto*>& entries = infos[static_cast<size_t>(id)];
      if (entries.empty()) {
        onnx::ValueInfoProto fresh;
        fresh.set_name(name);
        if (!refine(*fresh.mutable_type(), joined)) continue;
        entries.push_back(g.add_value_info());
        *entries.back() = std::move(fresh);
        learned.insert(name);
        ++refined;
        continue;
      }
      for (onnx::ValueInfoProto* info : entries)
        if (refine(*info->mutable_type(), joined)) learned.insert(name);
    }
  }
  auto readHere = [&] {
    for (const onnx::NodeProto& node : g.node())
      for (const std::string& in : node.input())
        if (learned.count(in)) return true;
    return false;
  };
  if (!learned.empty() && !again && readHere())
    refined += refineGraph(g, opset, imports, outer, std::move(bounds), initializer_inputs_constant,
                           /*again=*/true);
  return refined;
}

}  // namespace
}  // namespace symbolic

bool inferNodeTypes(const onnx::NodeProto& node, int64_t opset,
                    const std::vector<const onnx::TypeProto*>& inputs,
                    const std::vector<std::optional<std::vector<int64_t>>>& ints,
                    size_t output_count, std::vector<onnx::TypeProto>& outputs) {
  using namespace symbolic;
  outputs.clear();
  const std::string& domain = node.domain();
  const bool onnx_domain = domain.empty() || domain == "ai.onnx";
  const OpRules& rules = opRules();
  auto rule = rules.find(onnx_domain ? node.op_type() : domain + ":" + node.op_type());
  if (rule == rules.end() || output_count == 0) return false;
  std::vector<Facts> facts(inputs.size());
  UpperBounds bounds;
  NodeView view{node, opset, {}, &bounds};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      view.inputs.push_back(nullptr);
      continue;
    }
    facts[i] = factsOfType(*inputs[i]);
    if (i < ints.size() && ints[i] && facts[i].shape &&
        staticCount(*facts[i].shape) == static_cast<int64_t>(ints[i]->size())) {
      Dims value;
      for (int64_t x : *ints[i]) value.push_back(Sym::of(x));
      facts[i].value = std::move(value);
    }
    view.inputs.push_back(&facts[i]);
  }
  std::vector<Facts> out(output_count);
  rule->second(view, out);
  if (!anyElem(out)) return false;
  for (const Facts& f : out) outputs.push_back(typeOfFacts(f));
  return true;
}

int refineSymbolicShapes(onnx::ModelProto& model) {
  symbolic::Imports imports;
  for (const onnx::OperatorSetIdProto& o : model.opset_import())
    imports.emplace(o.domain() == "ai.onnx" ? std::string() : o.domain(), o.version());
  // A model without an ai.onnx import is read at the newest opset, as the graph IR reads it.
  int64_t opset = onnxOpsetVersion(model.opset_import());
  if (opset < 0) opset = kNewestOnnxOpset;
  imports.emplace("", opset);
  return symbolic::refineGraph(*model.mutable_graph(), opset, imports, nullptr, {},
                               initializerInputsAreConstant(model));
}

}  // namespace onnx_rewrite
