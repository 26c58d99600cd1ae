//===- Graph.h - mutable graph IR with use lists -------------------------===//
//
// The graph the driver rewrites. Nodes live in an arena and keep their id for
// the life of the graph (erased nodes stay as tombstones); values know their
// producer and every use; an index maps each interned op to its nodes. Untouched
// nodes keep the NodeProto they were loaded from, so saving is lossless and
// cheap: only nodes a rewrite created or rewired are re-serialised.
//
// One Graph class serves the main graph, If/Loop/Scan bodies and model-local
// functions. A body that reads a value of an enclosing graph gets an "outer"
// value of its own, and the enclosing graph records a use of the captured value
// by the node that owns the body (input index kSubgraphUse), so the safety check
// of a rewrite sees that use like any other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/graph/NameIndex.h"
#include "runtime/graph/NameTable.h"
#include "runtime/graph/OpId.h"
#include "runtime/graph/SegmentedVector.h"

namespace onnx_rewrite {

using NodeId = uint32_t;
using ValueId = uint32_t;
/// "No node" / "no value" (an omitted optional input or output is kNoId).
inline constexpr uint32_t kNoId = UINT32_MAX;
/// Use::input of a use by one of the node's subgraphs (an outer-scope capture).
inline constexpr uint32_t kSubgraphUse = UINT32_MAX;

class Graph;

/// One consumer of a value: `node` reads it as input `input` (or kSubgraphUse).
struct Use {
  NodeId node;
  uint32_t input;
  friend bool operator==(const Use& a, const Use& b) {
    return a.node == b.node && a.input == b.input;
  }
};

/// A tensor (or other ONNX value) flowing through the graph.
class Value {
 public:
  const std::string& name() const { return name_; }
  /// The node that computes this value, or kNoId for inputs, initializers and outer values.
  NodeId producer() const { return producer_; }
  /// Which output of the producer this value is.
  uint32_t producerOutput() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool isGraphInput() const { return graph_input_; }
  bool isGraphOutput() const { return graph_output_count_ > 0; }
  /// Defined in an enclosing graph and read here by name.
  bool isOuter() const { return outer_; }
  /// The initializer holding this value, or null. Data is never read here.
  const onnx::TensorProto* initializer() const { return initializer_; }
  bool isSparseInitializer() const { return sparse_initializer_; }
  /// Element type and shape from graph inputs/outputs, value_info or shape inference; may be null.
  const onnx::TypeProto* type() const { return type_; }
  /// The type is what the producer's own inference gave when a rewrite made it
  /// (Graph::setInferredType), not what whole-model inference knows.
  bool typeInferredLocally() const { return local_type_; }
  /// Graph outputs and values captured by subgraphs keep their name through a rewrite:
  /// a replacement value takes the name over.
  bool isNamePinned() const;
  bool live() const { return live_; }

 private:
  friend class Graph;
  friend class DuplicateResolver;  // import's repair of values defined twice
  std::string name_;
  NodeId producer_ = kNoId;
  uint32_t producer_output_ = 0;
  std::vector<Use> uses_;
  uint32_t graph_output_count_ = 0;
  bool graph_input_ = false;
  bool outer_ = false;
  bool sparse_initializer_ = false;
  bool live_ = true;
  bool local_type_ = false;
  bool drop_if_unused_ = false;     // an initializer that lost its last use to a rewrite
  uint32_t initializer_index_ = 0;  // position of initializer_ in the GraphProto
  onnx::TensorProto* initializer_ = nullptr;
  const onnx::TypeProto* type_ = nullptr;
};

/// One operator application. Attributes stay in the NodeProto it came from.
class Node {
 public:
  OpId op() const { return op_; }
  const std::string& opType() const { return proto_->op_type(); }
  /// The canonical domain: "" for the ONNX domain however the model spells it ("" or
  /// "ai.onnx"); the NodeProto keeps its own spelling.
  const std::string& domain() const {
    static const std::string kOnnx;
    return proto_->domain() == "ai.onnx" ? kOnnx : proto_->domain();
  }
  const std::string& name() const { return proto_->name(); }
  /// Input values in order; kNoId marks an omitted optional input.
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  ValueId input(size_t i) const { return i < inputs_.size() ? inputs_[i] : kNoId; }
  ValueId output(size_t i) const { return i < outputs_.size() ? outputs_[i] : kNoId; }
  /// The attribute named `name`, or null.
  const onnx::AttributeProto* attribute(std::string_view name) const;
  const onnx::NodeProto& proto() const { return *proto_; }
  /// Bodies of GRAPH/GRAPHS attributes (If branches, Loop/Scan bodies), in attribute order.
  const std::vector<std::unique_ptr<Graph>>& subgraphs() const { return subgraphs_; }
  /// Outer values this node's subgraphs read (directly or from deeper nesting).
  const std::vector<ValueId>& captures() const { return captures_; }
  /// The rule that created this node, or empty for nodes loaded from the model.
  const std::string& createdBy() const { return created_by_; }
  bool live() const { return live_; }
  /// Position key: loaded nodes keep their file order; new nodes sort next to the match they
  /// replaced. Saving restores a topological order, preferring this key among ready nodes.
  uint64_t order() const { return order_; }

 private:
  friend class Graph;
  friend class DuplicateResolver;  // import's repair of values defined twice
  // The driver reads op_ and live_ of every candidate: one cache line, beside inputs_.
  OpId op_;
  bool live_ = true;
  bool io_dirty_ = false;  // input/output names must be rewritten on export
  std::unique_ptr<onnx::NodeProto> proto_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<std::unique_ptr<Graph>> subgraphs_;
  std::vector<ValueId> captures_;
  std::string created_by_;
  uint64_t order_ = 0;
};

/// What a new node looks like; Graph::addNode turns it into a node with fresh output values.
struct NodeSpec {
  OpId op;
  std::vector<ValueId> inputs;  // kNoId for an omitted optional input
  uint32_t num_outputs = 1;
  /// Output slots left empty (an omitted optional output, e.g. SkipLayerNormalization's mean).
  std::vector<uint32_t> omitted_outputs;
  std::vector<onnx::AttributeProto> attributes;
  /// Prefix for the node's and its outputs' deterministic names.
  std::string name_hint;
  /// Recorded on the node (metadata "onnx_rewrite.rule") and used in statistics.
  std::string created_by;
  /// Sort key of the new node (see Node::order); usually the order of the match root.
  uint64_t order = 0;
};

/// A graph: the model's main graph, a control-flow body or a model-local function.
class Graph {
 public:
  enum class Kind { kMain, kSubgraph, kFunction };

  Graph(Kind kind, NameTable& names, Graph* parent, NodeId owner);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// Takes the nodes out of `proto` (zero-copy) and indexes everything else in place.
  /// `proto` must outlive the graph; exportTo() puts the nodes back.
  void importFrom(onnx::GraphProto& proto);
  /// The same for a model-local function; its inputs/outputs are plain names.
  void importFrom(onnx::FunctionProto& proto);
  /// Writes nodes back into the proto given to importFrom, in topological order, with
  /// rewired names, dropped initializers and value_info of removed values.
  void exportBack();
  /// Puts the nodes back in their original order without checks; used when an import
  /// fails halfway, so the caller's proto is left as it was.
  void abandonImport();

  Kind kind() const { return kind_; }
  /// The enclosing graph of a body, else null; owner() is the node holding the body.
  Graph* parent() const { return parent_; }
  NodeId owner() const { return owner_; }
  /// "main", "function domain::name" or "<parent>/<node name>.<attribute>", for reports.
  const std::string& label() const { return label_; }

  // ---- Queries ----------------------------------------------------------------------

  Node& node(NodeId id) { return nodes_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  Value& value(ValueId id) { return values_[id]; }
  const Value& value(ValueId id) const { return values_[id]; }
  /// Arena sizes, erased entries included (ids are below these bounds).
  size_t nodeCapacity() const { return nodes_.size(); }
  size_t valueCapacity() const { return values_.size(); }
  size_t liveNodeCount() const { return live_nodes_; }
  /// The value named `name` in this graph (not searching enclosing graphs), or kNoId.
  ValueId findValue(std::string_view name) const;
  ValueId findValue(const std::string& name) const { return findValue(std::string_view(name)); }
  ValueId findValue(const char* name) const { return findValue(std::string_view(name)); }
  /// Live nodes of `op` in ascending id order.
  std::vector<NodeId> nodesOf(OpId op) const;
  /// Live node ids in ascending id order (loaded nodes in file order first).
  std::vector<NodeId> liveNodes() const;
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  /// Where `v` is defined: itself here, or for an outer value the enclosing graph and
  /// value that define it.
  std::pair<const Graph*, ValueId> definition(ValueId v) const;
  /// The producer of `v`, or null.
  const Node* producerOf(ValueId v) const;
  /// Opset version of `domain` imported by the model ("" and "ai.onnx" alike), or -1.
  int64_t opsetVersion(std::string_view domain) const;
  /// A topological order of the live nodes, stable with respect to Node::order().
  std::vector<NodeId> topologicalOrder() const;
  /// Number of rewrites applied (mutations through the API below).
  bool modified() const { return modified_; }
  /// What import repaired in this graph (values defined more than once; see
  /// DuplicateDefinitions.cc), one line each, for Result::notes.
  const std::vector<std::string>& importNotes() const { return import_notes_; }
  /// True when import dropped or renamed definitions, so the saved graph differs from the
  /// loaded one even if no rule applies.
  bool repaired() const { return repaired_; }

  // ---- Mutation (the driver's Rewriter is the only intended caller) -----------------

  /// Given: nothing. Execute: adds node `spec` with fresh outputs. Result: the new node id.
  NodeId addNode(NodeSpec spec);
  /// Adds an initializer with a fresh name derived from `name_hint`; returns its value.
  ValueId addInitializer(onnx::TensorProto tensor, std::string_view name_hint);
  /// Given: %a (uses U), %b. Execute: replaceAllUsesWith(%a, %b). Result: %a has no uses,
  /// every use in U reads %b. A pinned %a hands its name (and graph-output role) to %b.
  /// Returns false, changing nothing, when both are pinned or %b is a graph input or
  /// initializer and %a is a graph output (ONNX cannot rename either).
  bool replaceAllUsesWith(ValueId from, ValueId to);
  /// Given: node %n whose outputs have no uses and are not graph outputs. Execute:
  /// eraseNode(%n). Result: %n is a tombstone, its input uses are gone; an initializer
  /// that loses its last use this way is dropped on export.
  void eraseNode(NodeId id);
  /// True when erasing `id` is allowed (no output used or exported).
  bool isDead(NodeId id) const;
  /// Given: node %n. Execute: its last outputs, while each is unread and not exported,
  /// become omitted, as far as output `from` (never below it). Result: %n declares fewer
  /// outputs; returns how many went.
  uint32_t dropUnreadTrailingOutputs(NodeId id, uint32_t from);
  /// Gives `v`, a value a rewrite created whose type nothing else knows, the type its
  /// producer's shape inference gave (so later rules can test it). Kept in the graph, not
  /// exported: ONNX Runtime infers it again.
  void setInferredType(ValueId v, onnx::TypeProto type);

  /// Model-wide table of value and node names (shared by all graphs of a model).
  NameTable& names() { return names_; }
  /// Set by Model: opset imports of the model, or of the function for a function graph.
  void setOpsets(std::vector<std::pair<std::string, int64_t>> opsets) {
    opsets_ = std::move(opsets);
  }
  /// Whether an initializer the graph also lists as an input is a constant (IR version < 4,
  /// where every initializer had to be an input, as ONNX Runtime reads it) or a default a
  /// feed may replace (IR 4 on). Set by Model before import; bodies take their parent's.
  bool initializerInputsAreConstant() const { return initializer_inputs_constant_; }
  void setInitializerInputsAreConstant(bool constant) { initializer_inputs_constant_ = constant; }

 private:
  ValueId newValue(std::string name);
  ValueId internValue(const std::string& name);
  /// Resolves `name` read by a body of `capturing_node`; creates outer values as needed.
  ValueId resolveCapture(const std::string& name, NodeId capturing_node);
  void importNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes);
  void importSubgraphs(NodeId id);

  /// One definition of a value name: an initializer, a sparse initializer or a node output.
  struct Definition {
    enum class Kind : uint8_t { kInitializer, kSparseInitializer, kNode };
    Kind kind;
    uint32_t index;  // initializer position, or node id
    uint32_t slot;   // output slot of a node
  };
  /// Records `def` as a further definition of `v` (import keeps the first one on `v`
  /// until resolveDuplicateDefinitions decides).
  void recordDuplicate(ValueId v, Definition def);
  /// Decides, for every value name defined more than once, which definition its readers
  /// read, as ONNX Runtime does where it loads such a model, and drops or renames the
  /// others; throws ModelError where the readers' value is ambiguous. In
  /// DuplicateDefinitions.cc, with its helper DuplicateResolver.
  void resolveDuplicateDefinitions();
  friend class DuplicateResolver;
  void removeUse(ValueId v, Use use);
  void markUsersDirty(ValueId v);
  void writeNodeIo(Node& n) const;
  /// The ids of `sorted` (live nodes by (order, id)) if that is a topological order,
  /// else empty.
  std::vector<NodeId> sortedIfTopological(
      const std::vector<std::pair<uint64_t, NodeId>>& sorted) const;
  void exportNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& out);
  /// True when this graph or a body of one of its live nodes (at any depth) was rewritten.
  bool modifiedWithin() const;
  /// True when this body (or one nested in it) still reads the enclosing graphs' value
  /// `name`: a live node reads it, a body output passes it on, or a deeper body reads it.
  bool readsOuter(const std::string& name) const;
  /// True when `v` has uses and each is a capture no body of its node reads any more (the
  /// nodes that read it there were rewritten away).
  bool onlyStaleCaptures(ValueId v) const;
  void exportInitializers();
  void exportValueInfo();

  Kind kind_;
  NameTable& names_;
  Graph* parent_;
  NodeId owner_;
  std::string label_;
  onnx::GraphProto* graph_proto_ = nullptr;
  onnx::FunctionProto* function_proto_ = nullptr;

  // Segmented: references stay valid while rewrites add nodes and values.
  SegmentedVector<Node> nodes_;
  SegmentedVector<Value> values_;
  /// Types setInferredType gave new values (a deque: Value::type_ points into it).
  std::deque<onnx::TypeProto> inferred_types_;
  /// Reads the current name of a value, for by_name_.
  struct ValueName {
    const SegmentedVector<Value>* values;
    std::string_view operator()(ValueId id) const { return (*values)[id].name_; }
  };
  ValueName valueName() const { return ValueName{&values_}; }

  NameIndex by_name_;                       // value name -> id; names stay in values_
  std::vector<std::vector<NodeId>> by_op_;  // indexed by OpId::index()
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<std::pair<std::string, int64_t>> opsets_;
  bool initializer_inputs_constant_ = false;
  size_t live_nodes_ = 0;
  /// Import only: values defined more than once, with every definition in file order.
  std::map<ValueId, std::vector<Definition>> duplicates_;
  /// Initializers (positions) that lost to a later definition of their name; dropped on export.
  std::vector<uint32_t> dropped_initializers_;
  std::vector<std::string> import_notes_;
  bool repaired_ = false;  // import dropped or renamed definitions: export rewrites
  bool modified_ = false;
  bool needs_sort_ = false;  // loaded nodes were not in topological order
  bool exported_ = false;
};

}  // namespace onnx_rewrite
