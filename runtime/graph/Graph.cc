//===- Graph.cc - mutable graph IR with use lists ------------------------===//
//
// Import takes the NodeProtos out of the GraphProto (ExtractSubrange hands over
// ownership without copying) and indexes values by name; export puts them back
// in topological order. Everything in the GraphProto other than nodes (inputs,
// outputs, initializers, value_info, doc strings, unknown fields of newer ONNX
// versions) never leaves the proto, which is what makes the round trip lossless.
//
//===----------------------------------------------------------------------===//
#include "runtime/graph/Graph.h"

#include <algorithm>
#include <cassert>
#include <queue>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>

#include "runtime/graph/ModelError.h"

namespace onnx_rewrite {
namespace {

/// NodeProto.metadata_props (field 9) exists from ONNX 1.16 on; ONNX 1.12's classes keep
/// it as an unknown field, so provenance is written in that wire form.
constexpr int kNodeMetadataPropsField = 9;
constexpr const char* kRuleMetadataKey = "onnx_rewrite.rule";

void addRuleMetadata(onnx::NodeProto& node, const std::string& rule) {
  onnx::StringStringEntryProto entry;
  entry.set_key(kRuleMetadataKey);
  entry.set_value(rule);
  // The generated accessor, not GetReflection(): reflection builds the descriptors of all
  // of onnx.proto on first use, a tenth of a small model's whole run.
  node.mutable_unknown_fields()->AddLengthDelimited(kNodeMetadataPropsField,
                                                    entry.SerializeAsString());
}

}  // namespace

bool Value::isNamePinned() const {
  if (graph_output_count_ > 0 || outer_) return true;
  return std::any_of(uses_.begin(), uses_.end(),
                     [](const Use& u) { return u.input == kSubgraphUse; });
}

const onnx::AttributeProto* Node::attribute(std::string_view name) const {
  for (const onnx::AttributeProto& a : proto_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

Graph::Graph(Kind kind, NameTable& names, Graph* parent, NodeId owner)
    : kind_(kind), names_(names), parent_(parent), owner_(owner) {
  if (parent_) {
    opsets_ = parent_->opsets_;
    initializer_inputs_constant_ = parent_->initializer_inputs_constant_;
  }
}

Graph::~Graph() = default;

// ---- Import ------------------------------------------------------------------------

ValueId Graph::newValue(std::string name) {
  ValueId id = static_cast<ValueId>(values_.size());
  Value& v = values_.emplace_back();
  v.name_ = std::move(name);
  // First definition wins, as with a map's emplace (fresh and outer names are new anyway).
  by_name_.insert(v.name_, valueName(), [id] { return id; });
  return id;
}

ValueId Graph::internValue(const std::string& name) {
  return by_name_.insert(name, valueName(), [&] {
    names_.insert(name);
    values_.emplace_back().name_ = name;
    return static_cast<ValueId>(values_.size() - 1);
  });
}

ValueId Graph::findValue(std::string_view name) const {
  const uint32_t id = by_name_.find(name, valueName());
  return id == NameIndex::kAbsent ? kNoId : id;
}

ValueId Graph::resolveCapture(const std::string& name, NodeId capturing_node) {
  ValueId v = findValue(name);
  if (v == kNoId) {
    if (!parent_)
      throw ModelError("a subgraph of node '" + nodes_[capturing_node].name() + "' reads '" + name +
                       "', which no enclosing graph defines");
    v = newValue(name);
    values_[v].outer_ = true;
    values_[v].type_ = parent_->value(parent_->resolveCapture(name, owner_)).type_;
  }
  Node& n = nodes_[capturing_node];
  if (std::find(n.captures_.begin(), n.captures_.end(), v) == n.captures_.end()) {
    n.captures_.push_back(v);
    values_[v].uses_.push_back(Use{capturing_node, kSubgraphUse});
    if (values_[v].producer_ != kNoId && values_[v].producer_ > capturing_node) needs_sort_ = true;
  }
  return v;
}

void Graph::importFrom(onnx::GraphProto& proto) {
  graph_proto_ = &proto;
  if (kind_ == Kind::kMain) label_ = "main";
  // Roughly one value per node output, input and initializer: reserve to avoid rehashing.
  const size_t expected =
      static_cast<size_t>(proto.node_size()) * 2 + proto.initializer_size() + proto.input_size();
  by_name_.reserve(by_name_.size() + expected, valueName());
  // Node names come on top of values, and rewrites add names: room for half as many
  // again, so the driver does not pay for growing a table of every name in the model.
  names_.reserve(names_.size() + expected + expected / 2);
  for (const onnx::ValueInfoProto& in : proto.input()) {
    ValueId v = internValue(in.name());
    values_[v].graph_input_ = true;
    if (in.has_type()) values_[v].type_ = &in.type();
    inputs_.push_back(v);
  }
  for (int i = 0; i < proto.initializer_size(); ++i) {
    onnx::TensorProto& t = *proto.mutable_initializer(i);
    ValueId v = internValue(t.name());
    if (values_[v].initializer_) {
      recordDuplicate(v, {Definition::Kind::kInitializer, static_cast<uint32_t>(i), 0});
      continue;
    }
    values_[v].initializer_ = &t;
    values_[v].initializer_index_ = static_cast<uint32_t>(i);
  }
  for (int i = 0; i < proto.sparse_initializer_size(); ++i) {
    ValueId v = internValue(proto.sparse_initializer(i).values().name());
    if (values_[v].initializer_ || values_[v].sparse_initializer_) {
      recordDuplicate(v, {Definition::Kind::kSparseInitializer, static_cast<uint32_t>(i), 0});
      continue;
    }
    values_[v].sparse_initializer_ = true;
  }
  importNodes(*proto.mutable_node());
  for (const onnx::ValueInfoProto& out : proto.output()) {
    ValueId v = findValue(out.name());
    if (v == kNoId) {
      if (!parent_) throw ModelError("graph output '" + out.name() + "' is never defined");
      v = newValue(out.name());
      values_[v].outer_ = true;
      values_[v].type_ = parent_->value(parent_->resolveCapture(out.name(), owner_)).type_;
    }
    values_[v].graph_output_count_++;
    if (!values_[v].type_ && out.has_type()) values_[v].type_ = &out.type();
    outputs_.push_back(v);
  }
  for (const onnx::ValueInfoProto& info : proto.value_info()) {
    ValueId v = findValue(info.name());
    if (v != kNoId && !values_[v].type_ && info.has_type()) values_[v].type_ = &info.type();
  }
  for (NodeId id = 0; id < nodes_.size(); ++id) importSubgraphs(id);
  if (!duplicates_.empty()) resolveDuplicateDefinitions();
  if (needs_sort_) topologicalOrder();  // rejects a cyclic graph now, not on save
}

void Graph::importFrom(onnx::FunctionProto& proto) {
  function_proto_ = &proto;
  label_ = "function " + (proto.domain().empty() ? "" : proto.domain() + "::") + proto.name();
  for (const std::string& in : proto.input()) {
    ValueId v = internValue(in);
    values_[v].graph_input_ = true;
    inputs_.push_back(v);
  }
  importNodes(*proto.mutable_node());
  for (const std::string& out : proto.output()) {
    ValueId v = findValue(out);
    if (v == kNoId) throw ModelError(label_ + ": output '" + out + "' is never defined");
    values_[v].graph_output_count_++;
    outputs_.push_back(v);
  }
  for (NodeId id = 0; id < nodes_.size(); ++id) importSubgraphs(id);
  if (!duplicates_.empty()) resolveDuplicateDefinitions();
  if (needs_sort_) topologicalOrder();  // rejects a cyclic graph now, not on save
}

void Graph::importNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& protos) {
  const int count = protos.size();
  std::vector<onnx::NodeProto*> owned(count);
  if (count > 0) protos.ExtractSubrange(0, count, owned.data());
  const NodeId first = static_cast<NodeId>(nodes_.size());
  // Ownership first, so an error below cannot lose a node (see abandonImport).
  for (int i = 0; i < count; ++i) nodes_.emplace_back().proto_.reset(owned[i]);
  // Pass 1: the values nodes define, so that inputs may name later nodes.
  for (int i = 0; i < count; ++i) {
    NodeId id = first + static_cast<NodeId>(i);
    Node& n = nodes_[id];
    n.op_ = OpId::get(n.proto_->domain(), n.proto_->op_type());
    n.order_ = static_cast<uint64_t>(i) << 16;
    if (n.op_.index() >= by_op_.size()) by_op_.resize(n.op_.index() + 1);
    by_op_[n.op_.index()].push_back(id);
    if (!n.proto_->name().empty()) names_.insert(n.proto_->name());
    n.outputs_.reserve(n.proto_->output_size());
    for (int o = 0; o < n.proto_->output_size(); ++o) {
      const std::string& name = n.proto_->output(o);
      if (name.empty()) {
        n.outputs_.push_back(kNoId);
        continue;
      }
      ValueId v = internValue(name);
      Value& value = values_[v];
      if (value.producer_ != kNoId || value.graph_input_ || value.initializer_ ||
          value.sparse_initializer_) {
        recordDuplicate(v, {Definition::Kind::kNode, id, static_cast<uint32_t>(o)});
        n.outputs_.push_back(v);  // resolveDuplicateDefinitions decides
        continue;
      }
      value.producer_ = id;
      value.producer_output_ = static_cast<uint32_t>(o);
      n.outputs_.push_back(v);
    }
    ++live_nodes_;
  }
  // Pass 2: inputs and use lists.
  for (int i = 0; i < count; ++i) {
    NodeId id = first + static_cast<NodeId>(i);
    Node& n = nodes_[id];
    n.inputs_.reserve(n.proto_->input_size());
    for (int k = 0; k < n.proto_->input_size(); ++k) {
      const std::string& name = n.proto_->input(k);
      if (name.empty()) {
        n.inputs_.push_back(kNoId);
        continue;
      }
      ValueId v = findValue(name);
      if (v == kNoId) {
        if (!parent_)
          throw ModelError(label_ + ": node '" + n.proto_->name() + "' (" + n.op_.str() +
                           ") reads '" + name + "', which nothing defines");
        v = newValue(name);
        values_[v].outer_ = true;
        values_[v].type_ = parent_->value(parent_->resolveCapture(name, owner_)).type_;
      }
      values_[v].uses_.push_back(Use{id, static_cast<uint32_t>(k)});
      if (values_[v].initializer_) values_[v].drop_if_unused_ = true;
      if (values_[v].producer_ != kNoId && values_[v].producer_ >= id) needs_sort_ = true;
      n.inputs_.push_back(v);
    }
  }
}

void Graph::importSubgraphs(NodeId id) {
  // Each body's label names its place, e.g. "main/loop_1.body".
  auto makeBody = [&](onnx::GraphProto& body, const std::string& attr) {
    auto g = std::make_unique<Graph>(Kind::kSubgraph, names_, this, id);
    g->label_ = label_ + "/" + nodes_[id].proto_->name() + "." + attr;
    nodes_[id].subgraphs_.push_back(std::move(g));
    nodes_[id].subgraphs_.back()->importFrom(body);
  };
  for (onnx::AttributeProto& a : *nodes_[id].proto_->mutable_attribute()) {
    if (a.has_g()) makeBody(*a.mutable_g(), a.name());
    for (onnx::GraphProto& g : *a.mutable_graphs()) makeBody(g, a.name());
  }
}

// ---- Queries -----------------------------------------------------------------------

std::vector<NodeId> Graph::nodesOf(OpId op) const {
  std::vector<NodeId> result;
  if (op.index() >= by_op_.size()) return result;
  for (NodeId id : by_op_[op.index()])
    if (nodes_[id].live_) result.push_back(id);
  return result;
}

std::vector<NodeId> Graph::liveNodes() const {
  std::vector<NodeId> result;
  result.reserve(live_nodes_);
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (nodes_[id].live_) result.push_back(id);
  return result;
}

std::pair<const Graph*, ValueId> Graph::definition(ValueId v) const {
  const Graph* g = this;
  while (v != kNoId && g->values_[v].outer_ && g->parent_) {
    const std::string& name = g->values_[v].name_;
    g = g->parent_;
    v = g->findValue(name);
  }
  return {g, v};
}

const Node* Graph::producerOf(ValueId v) const {
  if (v == kNoId || values_[v].producer_ == kNoId) return nullptr;
  return &nodes_[values_[v].producer_];
}

int64_t Graph::opsetVersion(std::string_view domain) const {
  domain = canonicalDomain(domain);
  for (const auto& [d, version] : opsets_)
    if (canonicalDomain(d) == domain) return version;
  return -1;
}

std::vector<NodeId> Graph::topologicalOrder() const {
  // Kahn's algorithm; among ready nodes the smallest (order, id) goes first, so an
  // unmodified, sorted graph comes out in file order and new nodes sit where their
  // match was. When the live nodes sorted by (order, id) are already topologically
  // ordered (the usual case: a rewrite puts new nodes at its match's place), Kahn's
  // algorithm would emit exactly that sequence, so a sort and one check replace the
  // heap.
  using Key = std::pair<uint64_t, NodeId>;
  std::vector<Key> sorted;
  sorted.reserve(live_nodes_);
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (nodes_[id].live_) sorted.emplace_back(nodes_[id].order_, id);
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
  if (std::vector<NodeId> order = sortedIfTopological(sorted); !order.empty() || live_nodes_ == 0)
    return order;

  std::vector<uint32_t> pending(nodes_.size(), 0);
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  auto countDeps = [&](NodeId id, ValueId v) {
    if (v != kNoId && values_[v].producer_ != kNoId) ++pending[id];
  };
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    if (!n.live_) continue;
    for (ValueId v : n.inputs_) countDeps(id, v);
    for (ValueId v : n.captures_) countDeps(id, v);
    if (pending[id] == 0) ready.push({n.order_, id});
  }
  std::vector<NodeId> order;
  order.reserve(live_nodes_);
  while (!ready.empty()) {
    NodeId id = ready.top().second;
    ready.pop();
    order.push_back(id);
    for (ValueId out : nodes_[id].outputs_) {
      if (out == kNoId) continue;
      for (const Use& u : values_[out].uses_)
        if (--pending[u.node] == 0) ready.push({nodes_[u.node].order_, u.node});
    }
  }
  if (order.size() != live_nodes_) throw ModelError(label_ + ": the graph has a cycle");
  return order;
}

std::vector<NodeId> Graph::sortedIfTopological(
    const std::vector<std::pair<uint64_t, NodeId>>& sorted) const {
  constexpr uint32_t kNotPlaced = UINT32_MAX;
  std::vector<uint32_t> position(nodes_.size(), kNotPlaced);
  for (uint32_t i = 0; i < sorted.size(); ++i) position[sorted[i].second] = i;
  // Every producer a node waits for (Kahn counts inputs and captures with a producer)
  // must be live and come earlier.
  auto earlier = [&](ValueId v, uint32_t pos) {
    if (v == kNoId || values_[v].producer_ == kNoId) return true;
    const uint32_t p = position[values_[v].producer_];
    return p != kNotPlaced && p < pos;
  };
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    const Node& n = nodes_[sorted[i].second];
    for (ValueId v : n.inputs_)
      if (!earlier(v, i)) return {};
    for (ValueId v : n.captures_)
      if (!earlier(v, i)) return {};
  }
  std::vector<NodeId> order;
  order.reserve(sorted.size());
  for (const auto& key : sorted) order.push_back(key.second);
  return order;
}

// ---- Mutation ----------------------------------------------------------------------

NodeId Graph::addNode(NodeSpec spec) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  Node& n = nodes_.emplace_back();
  n.op_ = spec.op;
  n.proto_ = std::make_unique<onnx::NodeProto>();
  n.proto_->set_op_type(spec.op.opType());
  if (!spec.op.domain().empty()) n.proto_->set_domain(spec.op.domain());
  std::string hint = !spec.name_hint.empty()    ? spec.name_hint
                     : !spec.created_by.empty() ? spec.created_by
                                                : spec.op.opType();
  n.proto_->set_name(names_.fresh(hint));
  for (onnx::AttributeProto& a : spec.attributes) *n.proto_->add_attribute() = std::move(a);
  if (!spec.created_by.empty()) addRuleMetadata(*n.proto_, spec.created_by);
  n.created_by_ = std::move(spec.created_by);
  n.order_ = spec.order;
  n.io_dirty_ = true;
  n.live_ = true;
  n.inputs_ = std::move(spec.inputs);
  for (uint32_t k = 0; k < n.inputs_.size(); ++k)
    if (n.inputs_[k] != kNoId) values_[n.inputs_[k]].uses_.push_back(Use{id, k});
  for (uint32_t o = 0; o < spec.num_outputs; ++o) {
    bool omitted = std::find(spec.omitted_outputs.begin(), spec.omitted_outputs.end(), o) !=
                   spec.omitted_outputs.end();
    if (omitted) {
      n.outputs_.push_back(kNoId);
      continue;
    }
    // "<node>_out" / "<node>_out<k>": distinct from the node's own name, so the first try
    // is free and the name table's suffix counters do not grow per node.
    ValueId v = newValue(names_.fresh(n.proto_->name() + "_out" +
                                      (spec.num_outputs == 1 ? std::string() : std::to_string(o))));
    values_[v].producer_ = id;
    values_[v].producer_output_ = o;
    n.outputs_.push_back(v);
  }
  if (n.op_.index() >= by_op_.size()) by_op_.resize(n.op_.index() + 1);
  by_op_[n.op_.index()].push_back(id);
  ++live_nodes_;
  modified_ = true;
  return id;
}

ValueId Graph::addInitializer(onnx::TensorProto tensor, std::string_view name_hint) {
  std::string name = names_.fresh(name_hint);
  tensor.set_name(name);
  if (graph_proto_) {
    const auto index = static_cast<uint32_t>(graph_proto_->initializer_size());
    onnx::TensorProto* stored = graph_proto_->add_initializer();
    *stored = std::move(tensor);
    ValueId v = newValue(name);
    values_[v].initializer_ = stored;
    values_[v].initializer_index_ = index;
    values_[v].drop_if_unused_ = true;
    modified_ = true;
    return v;
  }
  // Functions have no initializers: the tensor becomes a Constant node.
  NodeSpec spec;
  spec.op = OpId::get("", "Constant");
  spec.name_hint = name + "_constant";
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = std::move(tensor);
  spec.attributes.push_back(std::move(value));
  NodeId id = addNode(std::move(spec));
  return nodes_[id].outputs_[0];
}

void Graph::setInferredType(ValueId v, onnx::TypeProto type) {
  Value& value = values_[v];
  if (value.type_) return;
  inferred_types_.push_back(std::move(type));
  value.type_ = &inferred_types_.back();
  value.local_type_ = true;
}

void Graph::markUsersDirty(ValueId v) {
  Value& value = values_[v];
  if (value.producer_ != kNoId) nodes_[value.producer_].io_dirty_ = true;
  for (const Use& u : value.uses_)
    if (u.input != kSubgraphUse) nodes_[u.node].io_dirty_ = true;
}

bool Graph::replaceAllUsesWith(ValueId from, ValueId to) {
  if (from == to) return true;
  Value& a = values_[from];
  Value& b = values_[to];
  const bool pinned = a.isNamePinned();
  if (pinned && (b.isNamePinned() || b.graph_input_ || b.initializer_ || b.sparse_initializer_))
    return false;
  for (const Use& u : a.uses_) {
    Node& user = nodes_[u.node];
    if (u.input == kSubgraphUse) {
      std::replace(user.captures_.begin(), user.captures_.end(), from, to);
    } else {
      user.inputs_[u.input] = to;
      user.io_dirty_ = true;
    }
    b.uses_.push_back(u);
  }
  a.uses_.clear();
  // The replacement computes the same tensor: it inherits what is known of its type, so
  // rules that run later (SkipLayerNorm after LayerNorm) still see shapes.
  if (!b.type_) b.type_ = a.type_;
  if (pinned) {
    // %b takes over the name readers outside this graph rely on; %a, about to die,
    // keeps %b's old name so both stay unique.
    const size_t slot_a = by_name_.slotOf(a.name_, valueName());
    const size_t slot_b = by_name_.slotOf(b.name_, valueName());
    std::swap(a.name_, b.name_);
    by_name_.setId(slot_a, to);
    by_name_.setId(slot_b, from);
    b.graph_output_count_ = a.graph_output_count_;
    a.graph_output_count_ = 0;
    std::replace(outputs_.begin(), outputs_.end(), from, to);
    markUsersDirty(from);
    markUsersDirty(to);
  }
  modified_ = true;
  return true;
}

bool Graph::isDead(NodeId id) const {
  for (ValueId out : nodes_[id].outputs_)
    if (out != kNoId && (!values_[out].uses_.empty() || values_[out].graph_output_count_ > 0))
      return false;
  return true;
}

uint32_t Graph::dropUnreadTrailingOutputs(NodeId id, uint32_t from) {
  Node& n = nodes_[id];
  uint32_t dropped = 0;
  while (n.outputs_.size() > from) {
    const ValueId out = n.outputs_.back();
    if (out != kNoId && (!values_[out].uses_.empty() || values_[out].graph_output_count_ > 0))
      break;
    if (out != kNoId) values_[out].live_ = false;
    n.outputs_.pop_back();
    ++dropped;
  }
  if (dropped) {
    n.io_dirty_ = true;
    modified_ = true;
  }
  return dropped;
}

void Graph::removeUse(ValueId v, Use use) {
  std::vector<Use>& uses = values_[v].uses_;
  // Search from the back (the newest uses go first) and swap-pop: shared constants
  // can have tens of thousands of uses.
  auto it = std::find(uses.rbegin(), uses.rend(), use);
  assert(it != uses.rend());
  std::swap(*it, uses.back());
  uses.pop_back();
}

void Graph::eraseNode(NodeId id) {
  assert(isDead(id) && "eraseNode: outputs still used");
  Node& n = nodes_[id];
  if (!n.live_) return;
  for (uint32_t k = 0; k < n.inputs_.size(); ++k)
    if (n.inputs_[k] != kNoId) removeUse(n.inputs_[k], Use{id, k});
  // Captured values stay recorded in enclosing graphs: conservative, it can only block
  // a rewrite there, never allow a wrong one.
  for (ValueId v : n.captures_) removeUse(v, Use{id, kSubgraphUse});
  for (ValueId out : n.outputs_)
    if (out != kNoId) values_[out].live_ = false;
  n.live_ = false;
  --live_nodes_;
  modified_ = true;
}

// ---- Export ------------------------------------------------------------------------

void Graph::writeNodeIo(Node& n) const {
  onnx::NodeProto& p = *n.proto_;
  p.clear_input();
  for (ValueId v : n.inputs_) p.add_input(v == kNoId ? std::string() : values_[v].name_);
  p.clear_output();
  for (ValueId v : n.outputs_) p.add_output(v == kNoId ? std::string() : values_[v].name_);
}

void Graph::exportNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
  std::vector<NodeId> order = (modified_ || needs_sort_) ? topologicalOrder() : liveNodes();
  out.Reserve(static_cast<int>(order.size()));
  for (NodeId id : order) {
    Node& n = nodes_[id];
    for (auto& body : n.subgraphs_) body->exportBack();
    if (n.io_dirty_) writeNodeIo(n);
    out.AddAllocated(n.proto_.release());
  }
  for (NodeId id = 0; id < nodes_.size(); ++id) nodes_[id].proto_.reset();  // erased nodes
}

bool Graph::modifiedWithin() const {
  if (modified_) return true;
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (nodes_[id].live_)
      for (const auto& body : nodes_[id].subgraphs_)
        if (body->modifiedWithin()) return true;
  return false;
}

bool Graph::readsOuter(const std::string& name) const {
  const ValueId v = findValue(name);
  // A body value of that name that is not outer is the body's own (a malformed shadow).
  if (v == kNoId || !values_[v].outer_) return false;
  if (values_[v].graph_output_count_ > 0) return true;
  for (const Use& u : values_[v].uses_) {
    if (u.input != kSubgraphUse) return true;  // erased nodes drop their uses
    const Node& n = nodes_[u.node];
    if (!n.live_) continue;
    for (const auto& body : n.subgraphs_)
      if (body->readsOuter(name)) return true;
  }
  return false;
}

bool Graph::onlyStaleCaptures(ValueId v) const {
  const Value& value = values_[v];
  if (value.uses_.empty()) return false;
  for (const Use& u : value.uses_) {
    if (u.input != kSubgraphUse) return false;
    const Node& n = nodes_[u.node];
    if (!n.live_) continue;
    for (const auto& body : n.subgraphs_)
      if (body->readsOuter(value.name_)) return false;
  }
  return true;
}

void Graph::exportInitializers() {
  auto* inits = graph_proto_->mutable_initializer();
  bool any_dropped = !dropped_initializers_.empty();
  std::vector<bool> keep(inits->size(), true);
  for (uint32_t index : dropped_initializers_) keep[index] = false;
  for (ValueId id = 0; id < values_.size(); ++id) {
    const Value& v = values_[id];
    if (!v.initializer_ || v.graph_output_count_ > 0 || v.graph_input_) continue;
    // Unread since a rewrite took its last reader here, or read only by bodies that were
    // rewritten not to read it (a merged decoder's cos/sin caches, once both branches'
    // rotary embeddings are fused). An initializer nothing read on import stays.
    if (v.uses_.empty() ? !v.drop_if_unused_ : !onlyStaleCaptures(id)) continue;
    // Initializers move only here, so the index taken on import or add still holds.
    if (v.initializer_index_ >= keep.size() || &inits->Get(v.initializer_index_) != v.initializer_)
      continue;
    keep[v.initializer_index_] = false;
    any_dropped = true;
  }
  if (!any_dropped) return;
  int w = 0;
  for (int r = 0; r < inits->size(); ++r)
    if (keep[r]) inits->SwapElements(w++, r);
  inits->DeleteSubrange(w, inits->size() - w);
}

void Graph::exportValueInfo() {
  auto* infos = graph_proto_->mutable_value_info();
  int w = 0;
  for (int r = 0; r < infos->size(); ++r) {
    ValueId v = findValue(infos->Get(r).name());
    bool alive =
        v != kNoId && values_[v].live_ &&
        (values_[v].producer_ != kNoId || !values_[v].uses_.empty() ||
         values_[v].graph_output_count_ > 0 || values_[v].graph_input_ || values_[v].initializer_);
    if (alive) infos->SwapElements(w++, r);
  }
  infos->DeleteSubrange(w, infos->size() - w);
}

void Graph::abandonImport() {
  if (exported_) return;
  exported_ = true;
  auto* out = graph_proto_ ? graph_proto_->mutable_node() : function_proto_->mutable_node();
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    Node& n = nodes_[id];
    for (auto& body : n.subgraphs_) body->abandonImport();
    if (n.proto_) out->AddAllocated(n.proto_.release());
  }
}

void Graph::exportBack() {
  if (exported_) return;
  exported_ = true;
  if (graph_proto_) {
    // Checked before the nodes go back (bodies included): a rewrite in a body may leave an
    // initializer of this graph unread.
    const bool rewritten = modified_ || repaired_ || modifiedWithin();
    exportNodes(*graph_proto_->mutable_node());
    if (rewritten) {
      exportInitializers();
      exportValueInfo();
    }
  } else if (function_proto_) {
    exportNodes(*function_proto_->mutable_node());
  }
}

}  // namespace onnx_rewrite
