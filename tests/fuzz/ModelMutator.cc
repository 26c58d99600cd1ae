//===- ModelMutator.cc - structure-aware mutations of an ONNX model -------===//
#include "tests/fuzz/ModelMutator.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace onnx_rewrite::fuzz {
namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

/// Every place in the model a mutation can reach, gathered once per mutation.
struct Places {
  std::vector<onnx::GraphProto*> graphs;
  std::vector<Nodes*> node_lists;
  std::vector<onnx::NodeProto*> nodes;
  std::vector<onnx::TensorProto*> tensors;
  std::vector<onnx::TensorShapeProto*> shapes;
  std::vector<onnx::TypeProto_Tensor*> tensor_types;
  std::vector<std::string*> names;  // value names: node inputs/outputs, graph io, initializers
  std::vector<google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>*> opset_lists;
};

void gatherType(onnx::TypeProto& type, Places& p, int depth) {
  if (depth > 8) return;
  if (type.has_tensor_type()) {
    p.tensor_types.push_back(type.mutable_tensor_type());
    if (type.tensor_type().has_shape())
      p.shapes.push_back(type.mutable_tensor_type()->mutable_shape());
  }
  if (type.has_sequence_type() && type.sequence_type().has_elem_type())
    gatherType(*type.mutable_sequence_type()->mutable_elem_type(), p, depth + 1);
  if (type.has_optional_type() && type.optional_type().has_elem_type())
    gatherType(*type.mutable_optional_type()->mutable_elem_type(), p, depth + 1);
}

void gatherGraph(onnx::GraphProto& g, Places& p, int depth);

void gatherNodes(Nodes& nodes, Places& p, int depth) {
  p.node_lists.push_back(&nodes);
  for (onnx::NodeProto& n : nodes) {
    p.nodes.push_back(&n);
    for (int i = 0; i < n.input_size(); ++i) p.names.push_back(n.mutable_input(i));
    for (int i = 0; i < n.output_size(); ++i) p.names.push_back(n.mutable_output(i));
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_t()) p.tensors.push_back(a.mutable_t());
      for (onnx::TensorProto& t : *a.mutable_tensors()) p.tensors.push_back(&t);
      if (a.has_g()) gatherGraph(*a.mutable_g(), p, depth + 1);
      for (onnx::GraphProto& g : *a.mutable_graphs()) gatherGraph(g, p, depth + 1);
    }
  }
}

void gatherGraph(onnx::GraphProto& g, Places& p, int depth) {
  // Deeper bodies than this are refused by the loader anyway; stop well before the stack
  // could matter.
  if (depth > 40) return;
  p.graphs.push_back(&g);
  for (onnx::TensorProto& t : *g.mutable_initializer()) {
    p.tensors.push_back(&t);
    p.names.push_back(t.mutable_name());
  }
  for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer()) {
    p.tensors.push_back(s.mutable_values());
    p.tensors.push_back(s.mutable_indices());
  }
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (onnx::ValueInfoProto& v : *list) {
      p.names.push_back(v.mutable_name());
      if (v.has_type()) gatherType(*v.mutable_type(), p, 0);
    }
  gatherNodes(*g.mutable_node(), p, depth);
}

Places gather(onnx::ModelProto& model) {
  Places p;
  p.opset_lists.push_back(model.mutable_opset_import());
  if (model.has_graph()) gatherGraph(*model.mutable_graph(), p, 0);
  for (onnx::FunctionProto& f : *model.mutable_functions()) {
    p.opset_lists.push_back(f.mutable_opset_import());
    for (int i = 0; i < f.input_size(); ++i) p.names.push_back(f.mutable_input(i));
    for (int i = 0; i < f.output_size(); ++i) p.names.push_back(f.mutable_output(i));
    gatherNodes(*f.mutable_node(), p, 0);
  }
  return p;
}

class Mutator {
 public:
  Mutator(onnx::ModelProto& model, std::mt19937_64& rng)
      : model_(model), rng_(rng), p_(gather(model)) {}

  /// One mutation; false if the kind drawn had nothing to work on.
  bool mutateOnce() {
    switch (below(15)) {
      case 0:
        return tensorDims();
      case 1:
        return tensorType();
      case 2:
        return rawDataLength();
      case 3:
        return shapeDim();
      case 4:
        return valueElemType();
      case 5:
        return name();
      case 6:
        return opType();
      case 7:
        return attribute();
      case 8:
        return nodeEdges();
      case 9:
        return nodeOrder();
      case 10:
        return opsets();
      case 11:
        return graphInputsOutputs();
      case 12:
        return nodeCopyOrRemove();
      case 13:
        return externalData();
      default:
        return typedData();
    }
  }

 private:
  uint64_t below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool coin() { return below(2) == 0; }
  template <typename T>
  T* pick(const std::vector<T*>& v) {
    return v.empty() ? nullptr : v[below(v.size())];
  }

  /// Numbers that find overflow and sign bugs, or a small step from `near`.
  int64_t interesting(int64_t near) {
    static const int64_t kValues[] = {0,
                                      1,
                                      2,
                                      3,
                                      4,
                                      8,
                                      -1,
                                      -2,
                                      255,
                                      65536,
                                      int64_t{1} << 31,
                                      (int64_t{1} << 31) - 1,
                                      int64_t{1} << 32,
                                      int64_t{1} << 62,
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min()};
    // A step from `near` wraps (in unsigned arithmetic) rather than overflowing.
    switch (below(4)) {
      case 0:
        return static_cast<int64_t>(static_cast<uint64_t>(near) + 1);
      case 1:
        return static_cast<int64_t>(static_cast<uint64_t>(near) - 1);
      default:
        return kValues[below(sizeof kValues / sizeof kValues[0])];
    }
  }

  bool tensorDims() {
    onnx::TensorProto* t = pick(p_.tensors);
    if (!t) return false;
    if (t->dims_size() == 0 || below(4) == 0) {
      t->add_dims(interesting(1));
    } else if (below(4) == 0) {
      t->mutable_dims()->RemoveLast();
    } else {
      const int i = static_cast<int>(below(t->dims_size()));
      t->set_dims(i, interesting(t->dims(i)));
    }
    return true;
  }

  bool tensorType() {
    onnx::TensorProto* t = pick(p_.tensors);
    if (!t) return false;
    t->set_data_type(static_cast<int32_t>(below(4) == 0 ? interesting(t->data_type()) : below(24)));
    return true;
  }

  bool rawDataLength() {
    onnx::TensorProto* t = pick(p_.tensors);
    if (!t) return false;
    std::string& raw = *t->mutable_raw_data();
    switch (below(4)) {
      case 0:
        raw.resize(raw.size() / 2);
        break;
      case 1:
        raw.resize(raw.size() + 1 + below(16), '\x7f');
        break;
      case 2:
        if (!raw.empty()) raw.pop_back();
        break;
      default:
        raw.assign(below(64), static_cast<char>(below(256)));
        break;
    }
    return true;
  }

  bool shapeDim() {
    onnx::TensorShapeProto* s = pick(p_.shapes);
    if (!s) return false;
    if (s->dim_size() == 0 || below(5) == 0) {
      s->add_dim()->set_dim_value(interesting(1));
      return true;
    }
    onnx::TensorShapeProto_Dimension* d = s->mutable_dim(static_cast<int>(below(s->dim_size())));
    switch (below(4)) {
      case 0:
        d->set_dim_param(coin() ? "N" : "S");
        break;
      case 1:
        d->clear_value();
        break;
      case 2:
        s->mutable_dim()->RemoveLast();
        break;
      default:
        d->set_dim_value(interesting(d->dim_value()));
        break;
    }
    return true;
  }

  bool valueElemType() {
    onnx::TypeProto_Tensor* t = pick(p_.tensor_types);
    if (!t) return false;
    t->set_elem_type(static_cast<int32_t>(below(24)));
    return true;
  }

  bool name() {
    std::string* n = pick(p_.names);
    if (!n) return false;
    switch (below(6)) {
      case 0:
        *n = *pick(p_.names);
        break;  // an edge to another value, or a duplicate
      case 1:
        n->clear();
        break;  // an omitted optional input
      case 2:
        *n += "\nforged";
        break;
      case 3:
        n->append(300, 'n');
        break;
      case 4:
        *n += "_";
        break;  // a value nothing produces
      default:
        std::swap(*n, *pick(p_.names));
        break;
    }
    return true;
  }

  bool opType() {
    static const char* const kOps[] = {"Add",
                                       "Sub",
                                       "Mul",
                                       "Div",
                                       "Pow",
                                       "Sqrt",
                                       "ReduceMean",
                                       "ReduceSum",
                                       "Reshape",
                                       "Transpose",
                                       "MatMul",
                                       "Gemm",
                                       "Softmax",
                                       "Cast",
                                       "Identity",
                                       "Constant",
                                       "Shape",
                                       "Gather",
                                       "Unsqueeze",
                                       "Squeeze",
                                       "Concat",
                                       "Slice",
                                       "Split",
                                       "If",
                                       "Loop",
                                       "Where",
                                       "Expand",
                                       "Erf",
                                       "Tanh",
                                       "Sigmoid",
                                       "Neg",
                                       "Reciprocal",
                                       "Dropout",
                                       "LayerNormalization",
                                       "SkipLayerNormalization",
                                       "Attention",
                                       "MultiHeadAttention",
                                       "RotaryEmbedding",
                                       "SimplifiedLayerNormalization",
                                       "Einsum",
                                       "ConstantOfShape",
                                       "Range",
                                       "NoSuchOp"};
    onnx::NodeProto* n = pick(p_.nodes);
    if (!n) return false;
    if (below(4) == 0) {
      static const char* const kDomains[] = {"", "ai.onnx", "com.microsoft", "ai.onnx.ml", "x.y"};
      n->set_domain(kDomains[below(5)]);
    } else if (coin()) {
      n->set_op_type(pick(p_.nodes)->op_type());
    } else {
      n->set_op_type(kOps[below(sizeof kOps / sizeof kOps[0])]);
    }
    return true;
  }

  bool attribute() {
    onnx::NodeProto* n = pick(p_.nodes);
    if (!n) return false;
    if (n->attribute_size() == 0 || below(4) == 0) {
      static const char* const kNames[] = {"axis",  "axes",      "keepdims", "epsilon",
                                           "perm",  "to",        "value",    "then_branch",
                                           "body",  "num_heads", "split",    "transA",
                                           "alpha", "equation",  "allowzero"};
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(kNames[below(sizeof kNames / sizeof kNames[0])]);
      if (coin()) {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(interesting(0));
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (uint64_t k = below(5); k > 0; --k) a->add_ints(interesting(0));
      }
      return true;
    }
    onnx::AttributeProto* a = n->mutable_attribute(static_cast<int>(below(n->attribute_size())));
    switch (below(7)) {
      case 0:
        a->set_i(interesting(a->i()));
        break;
      case 1:
        a->set_f(coin() ? -a->f() : a->f() * 1e30f);
        break;
      case 2:
        a->add_ints(interesting(0));
        break;
      case 3:
        a->clear_ints();
        break;
      case 4:
        a->set_type(static_cast<onnx::AttributeProto_AttributeType>(below(15)));
        break;
      case 5:
        a->set_name(a->name() + "x");
        break;
      default:
        n->mutable_attribute()->SwapElements(static_cast<int>(below(n->attribute_size())),
                                             n->attribute_size() - 1);
        n->mutable_attribute()->RemoveLast();
        break;
    }
    return true;
  }

  bool nodeEdges() {
    onnx::NodeProto* n = pick(p_.nodes);
    if (!n || p_.names.empty()) return false;
    switch (below(5)) {
      case 0:
        n->add_input(*pick(p_.names));
        break;
      case 1:
        if (n->input_size() > 0) n->mutable_input()->RemoveLast();
        break;
      case 2:
        n->add_output(*pick(p_.names));
        break;
      case 3:
        if (n->output_size() > 0) n->mutable_output()->RemoveLast();
        break;
      default:
        n->add_input("");
        break;
    }
    return true;
  }

  bool nodeOrder() {
    Nodes* nodes = pick(p_.node_lists);
    if (!nodes || nodes->size() < 2) return false;
    if (below(4) == 0) {
      std::reverse(nodes->pointer_begin(), nodes->pointer_end());
    } else {
      nodes->SwapElements(static_cast<int>(below(nodes->size())),
                          static_cast<int>(below(nodes->size())));
    }
    return true;
  }

  bool opsets() {
    if (below(6) == 0) {
      model_.set_ir_version(interesting(model_.ir_version()));
      return true;
    }
    auto* list = pick(p_.opset_lists);
    if (!list) return false;
    if (list->empty() || below(5) == 0) {
      onnx::OperatorSetIdProto* o = list->Add();
      o->set_domain(coin() ? "com.microsoft" : "");
      o->set_version(static_cast<int64_t>(1 + below(25)));
      return true;
    }
    onnx::OperatorSetIdProto& o = list->at(static_cast<int>(below(list->size())));
    switch (below(4)) {
      case 0:
        o.set_version(interesting(o.version()));
        break;
      case 1:
        o.set_domain(coin() ? "ai.onnx" : "com.microsoft");
        break;
      case 2:
        list->RemoveLast();
        break;
      default:
        o.set_version(static_cast<int64_t>(1 + below(25)));
        break;
    }
    return true;
  }

  bool graphInputsOutputs() {
    onnx::GraphProto* g = pick(p_.graphs);
    if (!g) return false;
    switch (below(4)) {
      case 0:
        if (g->input_size() > 0) g->mutable_input()->RemoveLast();
        break;
      case 1:
        if (g->output_size() > 0) g->mutable_output()->RemoveLast();
        break;
      case 2:
        if (!p_.names.empty()) g->add_output()->set_name(*pick(p_.names));
        break;
      default:
        if (!p_.names.empty()) g->add_input()->set_name(*pick(p_.names));
        break;
    }
    return true;
  }

  bool nodeCopyOrRemove() {
    Nodes* nodes = pick(p_.node_lists);
    if (!nodes || nodes->empty()) return false;
    const int i = static_cast<int>(below(nodes->size()));
    if (coin()) {
      *nodes->Add() = nodes->Get(i);  // two producers of the same outputs
    } else {
      nodes->SwapElements(i, nodes->size() - 1);
      nodes->RemoveLast();
    }
    return true;
  }

  bool externalData() {
    onnx::TensorProto* t = pick(p_.tensors);
    if (!t) return false;
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    static const char* const kKeys[] = {"location", "offset", "length", "checksum"};
    static const char* const kValues[] = {"model.onnx",
                                          "w.bin",
                                          "../w.bin",
                                          "/etc/passwd",
                                          "0",
                                          "8",
                                          "-1",
                                          "9999999999999999999",
                                          "4611686018427387904",
                                          "",
                                          "x"};
    onnx::StringStringEntryProto* e = t->add_external_data();
    e->set_key(kKeys[below(4)]);
    e->set_value(kValues[below(sizeof kValues / sizeof kValues[0])]);
    return true;
  }

  bool typedData() {
    onnx::TensorProto* t = pick(p_.tensors);
    if (!t) return false;
    switch (below(5)) {
      case 0:
        t->add_float_data(1.5f);
        break;
      case 1:
        t->add_int64_data(interesting(0));
        break;
      case 2:
        t->add_int32_data(static_cast<int32_t>(interesting(0)));
        break;
      case 3:
        t->add_string_data("s");
        break;
      default:
        t->clear_raw_data();
        break;
    }
    return true;
  }

  onnx::ModelProto& model_;
  std::mt19937_64& rng_;
  Places p_;
};

}  // namespace

void mutateModel(onnx::ModelProto& model, std::mt19937_64& rng) {
  const int count = 1 + static_cast<int>(rng() % 3);
  for (int done = 0, tries = 0; done < count && tries < 16; ++tries) {
    // Gathered again each time: a mutation may add or remove the places another reads.
    Mutator mutator(model, rng);
    if (mutator.mutateOnce()) ++done;
  }
}

}  // namespace onnx_rewrite::fuzz
