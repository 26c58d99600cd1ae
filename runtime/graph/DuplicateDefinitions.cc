//===- DuplicateDefinitions.cc - values a model defines more than once ---===//
//
// ONNX requires every value name of a graph to be defined once, but real models
// break that and ONNX Runtime loads some of them, so import must read them as ONNX
// Runtime does (onnxruntime/core/graph/graph.cc, checked against ORT 1.30):
//
// - In the main graph, the Graph constructor turns every Constant node into an
//   initializer appended after the model's own (then sparse initializers after
//   those) and maps names to initializers "latest wins", with the warning
//   "Duplicate initializer (dense, sparse or ConstantNode): '284' the model will use
//   the latest encountered initializer". So when initializers and Constant nodes
//   define one name, every reader reads the last of [initializers, Constant nodes,
//   sparse initializers] in file order, even readers placed before it. A real GPT-2
//   export patched by a script (gpt2_past.onnx) depends on this: its last Constants
//   carry the num_heads and sqrt(head_size) the model runs with. Two sparse
//   definitions are refused ("Duplicate sparse_tensor_initializer").
// - When that name is also a graph input, the winner becomes the input's default
//   value (an initializer listed as an input can be overridden by a feed).
// - Any other duplicate (a name written by a node other than a Constant, a node
//   redefining an input or initializer, any duplicate in an If/Loop/Scan body, where
//   ONNX's SSA check runs first) is refused by VerifyNoDuplicateName: "This is an
//   invalid model. Error: Duplicate definition of name (x)".
//
// Import resolves the first kind as ORT does: the other definitions are dropped,
// so the saved model is valid ONNX. A graph input's Constant default is kept as is
// (saved as loaded) and rules treat the value as the input it is.
//
// Of the duplicates ORT refuses, import repairs only those whose meaning does not
// depend on how one reads them: nodes identical in everything but their name (the
// same deterministic op on the same inputs) are merged, and when every reader comes
// after the last definition (in file order and in ORT's "latest wins" reading alike)
// the earlier ones are dead and dropped. Anything else (a reader between two
// definitions, or before them all) is an error: choosing for the user would invent
// a model ORT never ran.
//
//===----------------------------------------------------------------------===//
#include <map>
#include <set>

#include <google/protobuf/util/message_differencer.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/ModelError.h"

namespace onnx_rewrite {
namespace {

/// Ops whose two applications to the same inputs may give different values.
bool isRandom(OpId op) {
  static const std::set<std::string> kRandom = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Multinomial",  "Bernoulli",     "Dropout"};
  return op.domain().empty() && kRandom.count(op.opType()) > 0;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const char* const kRefused = "ONNX Runtime refuses such a model too";

}  // namespace

/// Resolves the duplicates one graph recorded on import (see the file comment).
class DuplicateResolver {
 public:
  explicit DuplicateResolver(Graph& graph) : g_(graph) {}

  void run() {
    for (auto& [v, defs] : g_.duplicates_) resolve(v, defs);
    settleLosers();
    for (const Outcome& o : outcomes_) g_.import_notes_.push_back(noteOf(o));
  }

  /// True when something was dropped or renamed (the saved graph changes).
  bool changed() const { return !losers_.empty() || !g_.dropped_initializers_.empty(); }

 private:
  using Definition = Graph::Definition;
  using DefKind = Graph::Definition::Kind;

  /// One value's resolution; its note is written once the losing nodes' fate is known.
  struct Outcome {
    std::string head;  // "<graph>: value 'x' is defined N times (<definitions>)"
    std::string how;   // " with different values, ...: " / " and read only after the last: "
    std::string kept;  // "kept the last" / "kept the first"
    std::vector<NodeId> losers;
    std::string name;
    std::string tail;  // "" or " (ONNX Runtime refuses the model as it was)"
  };

  void resolve(ValueId v, const std::vector<Definition>& defs) {
    static const OpId kConstant = OpId::get("", "Constant");
    Value& value = g_.values_[v];
    const std::string name = value.name_;
    std::vector<std::string> described;
    if (value.graph_input_) described.push_back("a graph input");
    size_t initializers = 0, sparse = 0, others = 0;
    std::set<NodeId> nodes;
    for (const Definition& d : defs) {
      described.push_back(describe(d));
      if (d.kind == DefKind::kInitializer) ++initializers;
      if (d.kind == DefKind::kSparseInitializer) ++sparse;
      if (d.kind != DefKind::kNode) continue;
      if (!nodes.insert(d.index).second)
        throw ModelError(g_.label_ + ": value '" + name + "' is defined more than once (" +
                         describeNode(d.index) + " writes it twice)");
      if (g_.nodes_[d.index].op_ != kConstant) ++others;
    }
    const std::string head = g_.label_ + ": value '" + name + "' is defined " +
                             std::to_string(described.size()) + " times (" + joined(described) +
                             ")";
    if (g_.kind_ == Graph::Kind::kMain && others == 0) return resolveAsOrt(v, defs, head);
    if (nodes.empty())
      throw ModelError(head + ": only the main graph may define a name twice (" + kRefused + ")");
    if (value.graph_input_ || initializers > 0 || sparse > 0)
      throw ModelError(head + ": a node cannot redefine a graph input or initializer (" + kRefused +
                       ")");
    resolveNodes(v, defs, head);
  }

  /// Initializers and Constant nodes of the main graph: the last of [initializers,
  /// Constant nodes, sparse initializers], each in file order, wins for every reader.
  void resolveAsOrt(ValueId v, const std::vector<Definition>& defs, const std::string& head) {
    Value& value = g_.values_[v];
    std::vector<Definition> order;
    for (DefKind k : {DefKind::kInitializer, DefKind::kNode, DefKind::kSparseInitializer})
      for (const Definition& d : defs)
        if (d.kind == k) order.push_back(d);
    if (std::count_if(order.begin(), order.end(), [](const Definition& d) {
          return d.kind == DefKind::kSparseInitializer;
        }) > 1)
      throw ModelError(head + ": two of them are sparse initializers (" + kRefused + ")");
    const Definition winner = order.back();
    value.producer_ = kNoId;
    value.initializer_ = nullptr;
    value.sparse_initializer_ = winner.kind == DefKind::kSparseInitializer;
    if (winner.kind == DefKind::kInitializer) {
      value.initializer_ = g_.graph_proto_->mutable_initializer(static_cast<int>(winner.index));
      value.initializer_index_ = winner.index;
    }
    if (value.graph_input_) {
      // The winner is the input's default, which a feed overrides: every definition stays
      // as loaded, so ONNX Runtime reads the saved model as it read this one, and no
      // Constant node claims the input's name in the IR.
      for (const Definition& d : defs)
        if (d.kind == DefKind::kNode)
          g_.nodes_[d.index].outputs_[d.slot] = detachedValue(value.name_, d.index, d.slot);
      g_.import_notes_.push_back(head +
                                 ": kept as loaded; ONNX Runtime makes the last one the input's "
                                 "default value, and rules treat '" +
                                 value.name_ + "' as an input");
      return;
    }
    if (winner.kind == DefKind::kNode) {
      value.producer_ = winner.index;
      value.producer_output_ = winner.slot;
    }
    Outcome outcome{head, "", "kept the last", {}, value.name_, ""};
    bool identical = true;
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      identical = identical && sameConstant(order[i], winner);
      lose(order[i], outcome);
    }
    outcome.how = identical ? " with identical values: "
                            : " with different values, of which ONNX Runtime reads the last "
                              "everywhere: ";
    outcomes_.push_back(std::move(outcome));
  }

  /// Nodes only (ONNX Runtime refuses these): repaired where every reading agrees.
  void resolveNodes(ValueId v, const std::vector<Definition>& defs, const std::string& head) {
    Value& value = g_.values_[v];
    bool identical = true;
    for (const Definition& d : defs)
      identical = identical && identicalNodes(defs[0].index, d.index);
    Outcome outcome{head, "", "", {}, value.name_, " (ONNX Runtime refuses the model as it was)"};
    Definition winner = defs.front();
    if (identical) {
      outcome.how = " by identical nodes: ";
      outcome.kept = "kept the first";
    } else {
      // defs are in file order; a reader at or before the last one could mean either.
      winner = defs.back();
      for (const Use& u : value.uses_)
        if (u.node <= winner.index)
          throw ModelError(head + " and " + describeNode(u.node) +
                           " reads it before the last definition, so which one it reads is "
                           "ambiguous (" +
                           kRefused + ")");
      outcome.how = " and read only after the last: ";
      outcome.kept = "kept the last";
    }
    value.producer_ = winner.index;
    value.producer_output_ = winner.slot;
    for (const Definition& d : defs)
      if (d.index != winner.index) lose(d, outcome);
    outcomes_.push_back(std::move(outcome));
  }

  /// Detaches a losing definition; nodes are judged once every value is resolved (a node
  /// may lose one output and keep another).
  void lose(const Definition& d, Outcome& outcome) {
    if (d.kind == DefKind::kInitializer) {
      g_.dropped_initializers_.push_back(d.index);
      return;
    }
    g_.nodes_[d.index].outputs_[d.slot] = kNoId;
    outcome.losers.push_back(d.index);
    losers_.push_back(d.index);
  }

  /// A losing node that writes nothing anyone reads is erased; one whose other outputs are
  /// read stays, its losing outputs renamed. Repairs are not rewrites: modified() stays.
  void settleLosers() {
    const bool was_modified = g_.modified_;
    for (NodeId id : losers_) {
      Node& n = g_.nodes_[id];
      if (!n.live_ || renamed_.count(id)) continue;
      if (g_.isDead(id)) {
        g_.eraseNode(id);
        continue;
      }
      for (uint32_t o = 0; o < n.outputs_.size(); ++o) {
        const std::string& old_name = n.proto_->output(static_cast<int>(o));
        if (n.outputs_[o] != kNoId || old_name.empty()) continue;
        const ValueId fresh = g_.newValue(g_.names_.fresh(old_name));
        g_.values_[fresh].producer_ = id;
        g_.values_[fresh].producer_output_ = o;
        n.outputs_[o] = fresh;
        n.io_dirty_ = true;
        renamed_[id][old_name] = g_.values_[fresh].name_;
      }
    }
    g_.modified_ = was_modified;
  }

  std::string noteOf(const Outcome& o) const {
    std::vector<std::string> fates;
    bool all_dropped = true;
    for (NodeId id : o.losers) {
      auto it = renamed_.find(id);
      if (it == renamed_.end()) {
        fates.push_back("dropped " + describeNode(id));
        continue;
      }
      all_dropped = false;
      fates.push_back("renamed the output of " + describeNode(id) +
                      ", which computes other values too, to '" + it->second.at(o.name) + "'");
    }
    const std::string others = all_dropped ? "dropped the others" : joined(fates);
    return o.head + o.how + o.kept + ", " + others + o.tail;
  }

  ValueId detachedValue(const std::string& name, NodeId producer, uint32_t slot) {
    const ValueId id = static_cast<ValueId>(g_.values_.size());
    Value& v = g_.values_.emplace_back();  // not indexed by name: readers never find it
    v.name_ = name;
    v.producer_ = producer;
    v.producer_output_ = slot;
    return id;
  }

  std::string describeNode(NodeId id) const {
    const Node& n = g_.nodes_[id];
    // Unnamed nodes (common in exports) are named by their place in the file.
    const std::string name = n.name().empty() ? "#" + std::to_string(id + 1) : "'" + n.name() + "'";
    return "node " + name + " (" + n.op_.str() + ")";
  }

  std::string describe(const Definition& d) const {
    if (d.kind == DefKind::kInitializer) return "an initializer";
    if (d.kind == DefKind::kSparseInitializer) return "a sparse initializer";
    return describeNode(d.index);
  }

  bool identicalNodes(NodeId a, NodeId b) const {
    const Node& x = g_.nodes_[a];
    const Node& y = g_.nodes_[b];
    if (x.op_ != y.op_ || isRandom(x.op_)) return false;
    // Everything but the name and the doc string: op, inputs, outputs, attributes.
    onnx::NodeProto px = *x.proto_, py = *y.proto_;
    for (onnx::NodeProto* p : {&px, &py}) {
      p->clear_name();
      p->clear_doc_string();
    }
    return google::protobuf::util::MessageDifferencer::Equals(px, py);
  }

  const onnx::TensorProto* constantOf(const Definition& d) const {
    if (d.kind == DefKind::kInitializer) return &g_.graph_proto_->initializer(d.index);
    if (d.kind != DefKind::kNode) return nullptr;
    const onnx::AttributeProto* value = g_.nodes_[d.index].attribute("value");
    return value && value->has_t() ? &value->t() : nullptr;
  }

  bool sameConstant(const Definition& a, const Definition& b) const {
    if (a.kind == DefKind::kNode && b.kind == DefKind::kNode)
      return identicalNodes(a.index, b.index);
    const onnx::TensorProto* ta = constantOf(a);
    const onnx::TensorProto* tb = constantOf(b);
    if (!ta || !tb) return false;
    // An initializer is named, a Constant's tensor usually is not: compare the rest.
    onnx::TensorProto ca = *ta, cb = *tb;
    ca.clear_name();
    cb.clear_name();
    return google::protobuf::util::MessageDifferencer::Equals(ca, cb);
  }

  Graph& g_;
  std::vector<Outcome> outcomes_;
  std::vector<NodeId> losers_;
  std::map<NodeId, std::map<std::string, std::string>> renamed_;  // node -> old -> new name
};

void Graph::recordDuplicate(ValueId v, Definition def) {
  auto [it, inserted] = duplicates_.try_emplace(v);
  if (inserted) {
    // The definition the value held so far (an input is a flag, not a definition).
    const Value& value = values_[v];
    if (value.producer_ != kNoId)
      it->second.push_back({Definition::Kind::kNode, value.producer_, value.producer_output_});
    else if (value.initializer_)
      it->second.push_back({Definition::Kind::kInitializer, value.initializer_index_, 0});
    else if (value.sparse_initializer_)
      it->second.push_back({Definition::Kind::kSparseInitializer, 0, 0});
  }
  it->second.push_back(def);
}

void Graph::resolveDuplicateDefinitions() {
  DuplicateResolver resolver(*this);
  resolver.run();
  duplicates_.clear();
  if (!resolver.changed()) return;  // everything kept as loaded
  // Readers may now come before the definition they read; drops and renames are saved.
  needs_sort_ = true;
  repaired_ = true;
}

}  // namespace onnx_rewrite
