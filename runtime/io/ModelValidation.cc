//===- ModelValidation.cc - a model checked before anything reads it -----===//
#include "runtime/io/ModelValidation.h"

#include <string>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/graph/TensorCheck.h"

namespace onnx_rewrite {
namespace {

/// Walks one model, knowing where it is for messages.
class Validator {
 public:
  void graph(const onnx::GraphProto& g, int depth) {
    if (depth > kMaxGraphNesting)
      throw ModelError("graph " + quoted(g.name()) + ": subgraphs are nested deeper than " +
                       std::to_string(kMaxGraphNesting) + " levels");
    // Names in the main graph need no place; names in a body say which body.
    const std::string where = depth == 0 ? "" : " in graph " + quoted(g.name());
    // Names are built only for a message: a model has a value_info per value.
    auto declared = [&](const char* kind, const onnx::ValueInfoProto& v) {
      const std::string problem = typeProblem(v.type(), 0);
      if (!problem.empty())
        throw ModelError(kind + (" " + quoted(v.name())) + where + ": " + problem);
    };
    for (const onnx::ValueInfoProto& v : g.input()) declared("graph input", v);
    for (const onnx::ValueInfoProto& v : g.output()) declared("graph output", v);
    for (const onnx::ValueInfoProto& v : g.value_info()) declared("value_info", v);
    for (const onnx::TensorProto& t : g.initializer())
      checkTensor(t, [&] { return "initializer " + quoted(t.name()) + where; });
    for (const onnx::SparseTensorProto& s : g.sparse_initializer())
      sparse(s, "sparse initializer " + quoted(s.values().name()) + where);
    nodes(g.node(), where, depth);
  }

  void nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
             const std::string& where, int depth) {
    for (const onnx::NodeProto& n : nodes)
      for (const onnx::AttributeProto& a : n.attribute()) {
        // Most attributes are numbers: the name is built only for one that holds a tensor.
        const bool holds = a.has_t() || a.tensors_size() > 0 || a.has_sparse_tensor() ||
                           a.sparse_tensors_size() > 0 || a.has_tp() || a.type_protos_size() > 0;
        if (holds) {
          const std::string what = "attribute " + quoted(a.name()) + " of node " +
                                   quoted(n.name()) + " (" + oneLine(n.op_type()) + ")" + where;
          if (a.has_t()) checkTensor(a.t(), what);
          for (const onnx::TensorProto& t : a.tensors()) checkTensor(t, what);
          if (a.has_sparse_tensor()) sparse(a.sparse_tensor(), what);
          for (const onnx::SparseTensorProto& s : a.sparse_tensors()) sparse(s, what);
          std::string problem = a.has_tp() ? typeProblem(a.tp(), 0) : "";
          for (const onnx::TypeProto& tp : a.type_protos())
            if (problem.empty()) problem = typeProblem(tp, 0);
          if (!problem.empty()) throw ModelError(what + ": " + problem);
        }
        if (a.has_g()) graph(a.g(), depth + 1);
        for (const onnx::GraphProto& body : a.graphs()) graph(body, depth + 1);
      }
  }

 private:
  void sparse(const onnx::SparseTensorProto& s, const std::string& what) {
    auto fail = [&](const std::string& problem) { throw ModelError(what + ": " + problem); };
    for (int64_t d : s.dims())
      if (d < 0) fail("has a negative dim " + std::to_string(d) + " in its shape");
    if (!checkedElementCount(s.dims())) fail("its shape has more than 2^63 - 1 elements");
    checkTensor(s.values(), what + " (values)");
    checkTensor(s.indices(), what + " (indices)");
    // values is [NNZ]; indices is [NNZ] (linear) or [NNZ, rank] (coordinates).
    const onnx::TensorProto& values = s.values();
    const onnx::TensorProto& indices = s.indices();
    if (values.dims_size() != 1) fail("its values are not a 1-D tensor");
    const bool linear = indices.dims_size() == 1;
    const bool coordinates = indices.dims_size() == 2 && indices.dims(1) == s.dims_size();
    if (!linear && !coordinates) fail("its indices are neither [NNZ] nor [NNZ, rank]");
    if (indices.dims(0) != values.dims(0))
      fail("it has " + std::to_string(values.dims(0)) + " values but " +
           std::to_string(indices.dims(0)) + " indices");
  }

  /// Why declared type `t` is malformed (nested too deep), or "".
  static std::string typeProblem(const onnx::TypeProto& t, int depth) {
    if (depth > kMaxGraphNesting)
      return "its type is nested deeper than " + std::to_string(kMaxGraphNesting) + " levels";
    // Negative dims are not a problem here: nameNegativeDims reads them as unknown.
    if (t.has_sequence_type()) return typeProblem(t.sequence_type().elem_type(), depth + 1);
    if (t.has_map_type()) return typeProblem(t.map_type().value_type(), depth + 1);
    if (t.has_optional_type()) return typeProblem(t.optional_type().elem_type(), depth + 1);
    return {};
  }
};

}  // namespace

namespace {

/// Gives each negative dim a symbol of its own: a dim of any size, the same as itself
/// only (two -1 dims need not be equal), which rules and inference can still follow
/// through Shape and its readers.
class NegativeDims {
 public:
  int count() const { return count_; }

  void type(onnx::TypeProto& t, int depth) {
    if (depth > kMaxGraphNesting) return;
    // has_* first: the mutable accessors would add what the model does not have.
    if (t.has_tensor_type() && t.tensor_type().has_shape())
      shape(*t.mutable_tensor_type()->mutable_shape());
    else if (t.has_sparse_tensor_type() && t.sparse_tensor_type().has_shape())
      shape(*t.mutable_sparse_tensor_type()->mutable_shape());
    else if (t.has_sequence_type())
      type(*t.mutable_sequence_type()->mutable_elem_type(), depth + 1);
    else if (t.has_map_type())
      type(*t.mutable_map_type()->mutable_value_type(), depth + 1);
    else if (t.has_optional_type())
      type(*t.mutable_optional_type()->mutable_elem_type(), depth + 1);
  }

  void graph(onnx::GraphProto& g, int depth) {
    if (depth > kMaxGraphNesting) return;
    for (auto* infos : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
      for (onnx::ValueInfoProto& v : *infos)
        if (v.has_type()) type(*v.mutable_type(), 0);  // mutable_type() would add a type
    for (onnx::NodeProto& node : *g.mutable_node())
      for (onnx::AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) graph(*a.mutable_g(), depth + 1);
        for (onnx::GraphProto& body : *a.mutable_graphs()) graph(body, depth + 1);
      }
  }

 private:
  void shape(onnx::TensorShapeProto& s) {
    for (auto& d : *s.mutable_dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        d.set_dim_param("onnx_rewrite_any_dim_" + std::to_string(count_++));
  }

  int count_ = 0;
};

}  // namespace

int nameNegativeDims(onnx::ModelProto& model) {
  NegativeDims dims;
  dims.graph(*model.mutable_graph(), 0);
  return dims.count();
}

void validateModel(const onnx::ModelProto& model) {
  Validator v;
  v.graph(model.graph(), 0);
  for (const onnx::FunctionProto& f : model.functions())
    v.nodes(f.node(), " in function " + quoted(f.name()), 0);
}

}  // namespace onnx_rewrite
