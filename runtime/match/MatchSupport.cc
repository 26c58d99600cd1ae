//===- MatchSupport.cc - small queries matchers are built from -----------===//
#include "runtime/match/MatchSupport.h"

#include <cmath>

#include "runtime/graph/ModelError.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {

NodeId producerIf(const Graph& graph, ValueId v, OpId op) {
  if (v == kNoId) return kNoId;
  NodeId p = graph.value(v).producer();
  if (p == kNoId || graph.node(p).op() != op || !graph.node(p).live()) return kNoId;
  return p;
}

const Node* producerOp(const Graph& graph, ValueId v, std::string_view op_type) {
  const Node* n = v == kNoId ? nullptr : graph.producerOf(v);
  return n && n->live() && n->domain().empty() && n->opType() == op_type ? n : nullptr;
}

std::optional<double> matMulAlpha(const Node& n) {
  if (n.opType() == "MatMul" && n.domain().empty()) return 1.0;
  if (n.opType() != "FusedMatMul" || n.domain() != "com.microsoft") return std::nullopt;
  const onnx::AttributeProto* alpha = n.attribute("alpha");
  return alpha ? alpha->f() : 1.0;
}

ValueId otherInput(const Node& node, ValueId known) {
  if (node.inputs().size() != 2) return kNoId;
  if (node.input(0) == known) return node.input(1);
  if (node.input(1) == known) return node.input(0);
  return kNoId;
}

size_t consumerCount(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  return value.uses().size() + (value.isGraphOutput() ? 1 : 0);
}

const onnx::TensorProto* constantTensor(const Graph& body, ValueId v) {
  if (v == kNoId) return nullptr;
  // A body reads constants of enclosing graphs by name.
  auto [defining, id] = body.definition(v);
  if (id == kNoId) return nullptr;
  const Graph& graph = *defining;
  v = id;
  const Value& value = graph.value(v);
  if (value.initializer())
    return value.isGraphInput() && !graph.initializerInputsAreConstant() ? nullptr
                                                                         : value.initializer();
  static const OpId kConstant = OpId::get("", "Constant");
  NodeId p = producerIf(graph, v, kConstant);
  if (p == kNoId) return nullptr;
  const onnx::AttributeProto* a = graph.node(p).attribute("value");
  return a && a->has_t() ? &a->t() : nullptr;
}

std::optional<std::vector<double>> constantValues(Model& model, const Graph& graph, ValueId v,
                                                  int64_t max_elements) {
  const onnx::TensorProto* t = constantTensor(graph, v);
  if (!t) return std::nullopt;
  int64_t count = 1;
  for (int64_t d : t->dims()) count *= d;
  const size_t element = elementSize(t->data_type());
  if (count > max_elements || element == 0) return std::nullopt;
  try {
    TensorBytes bytes = model.readTensorData(*t, static_cast<uint64_t>(count) * element);
    std::vector<double> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[i] = elementAsDouble(bytes, i);
    return values;
  } catch (const ModelError&) {
    return std::nullopt;  // unreadable constants simply do not match
  }
}

bool isScalarConstant(Model& model, const Graph& graph, ValueId v, double expected,
                      double tolerance) {
  auto values = constantValues(model, graph, v, 1);
  return values && values->size() == 1 && std::fabs((*values)[0] - expected) <= tolerance;
}

std::optional<std::vector<int64_t>> staticShape(const Graph& graph, ValueId v) {
  if (v == kNoId) return std::nullopt;
  if (const onnx::TensorProto* t = constantTensor(graph, v))
    return std::vector<int64_t>(t->dims().begin(), t->dims().end());
  const onnx::TensorShapeProto* shape = valueShape(graph, v);
  if (!shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : shape->dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

bool splitsEvenly(Model& model, const Graph& graph, ValueId v, ValueId x, int64_t axis,
                  size_t parts) {
  static const OpId kSplit = OpId::get("", "Split");
  const NodeId split = v == kNoId ? kNoId : producerIf(graph, v, kSplit);
  const auto dims = x == kNoId ? std::nullopt : staticShape(graph, x);
  if (split == kNoId || !dims || axis >= static_cast<int64_t>(dims->size())) return false;
  const Node& n = graph.node(split);
  const int64_t dim = (*dims)[static_cast<size_t>(axis)];
  const int64_t count = static_cast<int64_t>(parts);
  if (n.outputs().size() != parts || n.output(0) != v || n.input(0) != x || dim <= 0 ||
      dim % count != 0)
    return false;
  const onnx::AttributeProto* a = n.attribute("axis");
  const int64_t at = a ? a->i() : 0;
  if (at != axis && at != axis - static_cast<int64_t>(dims->size())) return false;
  if (findParam(graph, split, "split").kind == ParamRef::Kind::kAbsent) return true;
  std::vector<int64_t> sizes;
  return readIntsParam(model, graph, split, "split", sizes) &&
         sizes == std::vector<int64_t>(parts, dim / count);
}

bool sameDim(const Graph& graph, ValueId a, int i, ValueId b, int j) {
  if (a == kNoId || b == kNoId) return false;
  if (a == b && i == j) return true;
  const onnx::TensorShapeProto* sa = valueShape(graph, a);
  const onnx::TensorShapeProto* sb = valueShape(graph, b);
  if (!sa || !sb) return false;
  if (i < 0) i += sa->dim_size();
  if (j < 0) j += sb->dim_size();
  if (i < 0 || j < 0 || i >= sa->dim_size() || j >= sb->dim_size()) return false;
  const auto& da = sa->dim(i);
  const auto& db = sb->dim(j);
  if (da.has_dim_value() && db.has_dim_value()) return da.dim_value() == db.dim_value();
  return da.has_dim_param() && db.has_dim_param() && !da.dim_param().empty() &&
         da.dim_param() == db.dim_param();
}

std::optional<std::vector<int64_t>> constantShape(const Graph& graph, ValueId v) {
  const onnx::TensorProto* t = constantTensor(graph, v);
  if (!t) return std::nullopt;
  return std::vector<int64_t>(t->dims().begin(), t->dims().end());
}

}  // namespace onnx_rewrite
