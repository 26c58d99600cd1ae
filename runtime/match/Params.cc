//===- Params.cc - an op's parameters, whichever opset form they have -----===//
//
// Which parameters moved, and where to, is runtime/match/OpsetForms.h's table;
// this file adds the reading: attribute or constant input, defaults, axes.
//
//===----------------------------------------------------------------------===//
#include "runtime/match/Params.h"

#include <cstdint>
#include <cstring>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/TensorData.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/OpsetForms.h"

namespace onnx_rewrite {
namespace {

using onnx::TensorProto;

bool isIntegerType(int32_t t) {
  switch (t) {
    case TensorProto::INT8:
    case TensorProto::INT16:
    case TensorProto::INT32:
    case TensorProto::INT64:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::UINT64:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

template <typename Raw, typename Out>
bool fromRaw(const std::string& raw, int64_t count, std::vector<Out>& out) {
  if (raw.size() != static_cast<size_t>(count) * sizeof(Raw)) return false;
  for (int64_t i = 0; i < count; ++i) {
    Raw r;
    std::memcpy(&r, raw.data() + i * sizeof(Raw), sizeof r);
    out.push_back(static_cast<Out>(r));
  }
  return true;
}

template <typename Field, typename Out>
bool fromField(const Field& field, int64_t count, std::vector<Out>& out) {
  if (field.size() != count) return false;
  for (auto v : field) out.push_back(static_cast<Out>(v));
  return true;
}

/// Decodes the common inline layouts directly; external data and 16-bit floats go
/// through Model::readTensorData (which allocates, and counts external bytes).
template <typename Out>
bool readTensorInto(Model& model, const TensorProto& t, size_t max_elements,
                    std::vector<Out>& out) {
  out.clear();
  const int64_t count = tensorElementCount(t);
  if (count < 0 || static_cast<uint64_t>(count) > max_elements) return false;
  if (!isExternal(t)) {
    const bool raw = t.has_raw_data();
    const std::string& bytes = t.raw_data();
    switch (t.data_type()) {
      case TensorProto::FLOAT:
        return raw ? fromRaw<float>(bytes, count, out) : fromField(t.float_data(), count, out);
      case TensorProto::DOUBLE:
        return raw ? fromRaw<double>(bytes, count, out) : fromField(t.double_data(), count, out);
      case TensorProto::INT64:
        return raw ? fromRaw<int64_t>(bytes, count, out) : fromField(t.int64_data(), count, out);
      case TensorProto::INT32:
        return raw ? fromRaw<int32_t>(bytes, count, out) : fromField(t.int32_data(), count, out);
      case TensorProto::INT16:
        return raw ? fromRaw<int16_t>(bytes, count, out) : fromField(t.int32_data(), count, out);
      case TensorProto::INT8:
        return raw ? fromRaw<int8_t>(bytes, count, out) : fromField(t.int32_data(), count, out);
      case TensorProto::UINT8:
      case TensorProto::BOOL:
        return raw ? fromRaw<uint8_t>(bytes, count, out) : fromField(t.int32_data(), count, out);
      case TensorProto::UINT16:
        return raw ? fromRaw<uint16_t>(bytes, count, out) : fromField(t.int32_data(), count, out);
      case TensorProto::UINT32:
        return raw ? fromRaw<uint32_t>(bytes, count, out) : fromField(t.uint64_data(), count, out);
      case TensorProto::UINT64:
        return raw ? fromRaw<uint64_t>(bytes, count, out) : fromField(t.uint64_data(), count, out);
      default:
        break;
    }
  }
  const size_t element = elementSize(t.data_type());
  if (element == 0) return false;
  try {
    TensorBytes bytes = model.readTensorData(t, static_cast<uint64_t>(count) * element);
    for (int64_t i = 0; i < count; ++i) out.push_back(static_cast<Out>(elementAsDouble(bytes, i)));
    return true;
  } catch (const ModelError&) {
    return false;  // unreadable constants simply do not match
  }
}

/// Scratch for the convenience readers that return single values.
thread_local std::vector<int64_t> tls_ints;
thread_local std::vector<double> tls_doubles;

}  // namespace

int movedParamInput(std::string_view domain, std::string_view op_type, std::string_view name,
                    int64_t opset) {
  const OpsetForm* form = findOpsetForm(domain, op_type, name);
  if (!form || (opset >= 0 && opset < form->since_version)) return -1;
  return static_cast<int>(form->input_index);
}

bool isParamInput(std::string_view domain, std::string_view op_type, uint32_t index,
                  int64_t opset) {
  const OpsetForm* form = findOpsetFormAtInput(domain, op_type, index);
  return form && (opset < 0 || opset >= form->since_version);
}

ParamRef findParam(const Graph& graph, NodeId node, std::string_view name) {
  const Node& n = graph.node(node);
  ParamRef ref;
  if (const onnx::AttributeProto* a = n.attribute(name)) {
    ref.kind = ParamRef::Kind::kAttribute;
    ref.attribute = a;
    return ref;
  }
  const int index = movedParamInput(n.domain(), n.opType(), name, graph.opsetVersion(n.domain()));
  if (index >= 0 && n.input(index) != kNoId) {
    ref.kind = ParamRef::Kind::kInput;
    ref.input = n.input(index);
    ref.input_index = index;
  }
  return ref;
}

bool readIntsParam(Model& model, const Graph& graph, NodeId node, std::string_view name,
                   std::vector<int64_t>& out, size_t max_elements) {
  out.clear();
  const ParamRef ref = findParam(graph, node, name);
  switch (ref.kind) {
    case ParamRef::Kind::kAbsent:
      return false;
    case ParamRef::Kind::kAttribute:
      if (ref.attribute->type() == onnx::AttributeProto::INTS) {
        if (static_cast<size_t>(ref.attribute->ints_size()) > max_elements) return false;
        out.assign(ref.attribute->ints().begin(), ref.attribute->ints().end());
        return true;
      }
      if (ref.attribute->type() == onnx::AttributeProto::INT) {
        out.push_back(ref.attribute->i());
        return true;
      }
      return false;
    case ParamRef::Kind::kInput:
      return readConstantInts(model, graph, ref.input, out, max_elements);
  }
  return false;
}

std::optional<std::vector<int64_t>> intsParam(Model& model, const Graph& graph, NodeId node,
                                              std::string_view name) {
  std::vector<int64_t> out;
  if (!readIntsParam(model, graph, node, name, out)) return std::nullopt;
  return out;
}

std::optional<int64_t> intParam(Model& model, const Graph& graph, NodeId node,
                                std::string_view name, std::optional<int64_t> default_value) {
  const ParamRef ref = findParam(graph, node, name);
  switch (ref.kind) {
    case ParamRef::Kind::kAbsent:
      return default_value;
    case ParamRef::Kind::kAttribute:
      if (ref.attribute->type() != onnx::AttributeProto::INT) return std::nullopt;
      return ref.attribute->i();
    case ParamRef::Kind::kInput:
      if (!readConstantInts(model, graph, ref.input, tls_ints, 1) || tls_ints.size() != 1)
        return std::nullopt;
      return tls_ints[0];
  }
  return std::nullopt;
}

std::optional<double> floatParam(Model& model, const Graph& graph, NodeId node,
                                 std::string_view name, std::optional<double> default_value) {
  const ParamRef ref = findParam(graph, node, name);
  switch (ref.kind) {
    case ParamRef::Kind::kAbsent:
      return default_value;
    case ParamRef::Kind::kAttribute:
      if (ref.attribute->type() != onnx::AttributeProto::FLOAT) return std::nullopt;
      return ref.attribute->f();
    case ParamRef::Kind::kInput:
      if (!readConstantDoubles(model, graph, ref.input, tls_doubles, 1) || tls_doubles.size() != 1)
        return std::nullopt;
      return tls_doubles[0];
  }
  return std::nullopt;
}

std::optional<std::string_view> stringParam(const Graph& graph, NodeId node, std::string_view name,
                                            std::optional<std::string_view> default_value) {
  const onnx::AttributeProto* a = graph.node(node).attribute(name);
  if (!a) return default_value;
  if (a->type() != onnx::AttributeProto::STRING) return std::nullopt;
  return std::string_view(a->s());
}

namespace {

/// The type of `v`, looking through to the definition of an outer value.
const onnx::TypeProto* typeOf(const Graph& graph, ValueId v) {
  if (v == kNoId) return nullptr;
  if (!graph.value(v).isOuter()) return graph.value(v).type();
  auto [defining, id] = graph.definition(v);
  return id == kNoId ? nullptr : defining->value(id).type();
}

}  // namespace

const onnx::TensorShapeProto* valueShape(const Graph& graph, ValueId v) {
  const onnx::TypeProto* type = typeOf(graph, v);
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return nullptr;
  return &type->tensor_type().shape();
}

int32_t valueElemType(const Graph& graph, ValueId v) {
  if (v == kNoId) return 0;
  if (const TensorProto* t = constantTensor(graph, v)) return t->data_type();
  const onnx::TypeProto* type = typeOf(graph, v);
  return type && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

std::optional<int64_t> valueRank(const Graph& graph, ValueId v) {
  if (v == kNoId) return std::nullopt;
  if (const TensorProto* t = constantTensor(graph, v)) return t->dims_size();
  const onnx::TensorShapeProto* shape = valueShape(graph, v);
  if (!shape) return std::nullopt;
  return shape->dim_size();
}

std::optional<int64_t> axesRank(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  if (canonicalDomain(n.domain()).empty() && n.opType() == "Unsqueeze")
    return valueRank(graph, n.output(0));
  return valueRank(graph, n.input(0));
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool normalizeAxes(std::vector<int64_t>& axes, int64_t rank) {
  for (int64_t& a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n) return false;
    a = *n;
  }
  return true;
}

bool readConstantInts(Model& model, const Graph& graph, ValueId v, std::vector<int64_t>& out,
                      size_t max_elements) {
  out.clear();
  const TensorProto* t = constantTensor(graph, v);
  if (!t || !isIntegerType(t->data_type())) return false;
  return readTensorInto(model, *t, max_elements, out);
}

bool readConstantDoubles(Model& model, const Graph& graph, ValueId v, std::vector<double>& out,
                         size_t max_elements) {
  out.clear();
  const TensorProto* t = constantTensor(graph, v);
  if (!t) return false;
  return readTensorInto(model, *t, max_elements, out);
}

int64_t tensorElementCount(const onnx::TensorProto& t) {
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && count > INT64_MAX / d)) return -1;
    count *= d;
  }
  return count;
}

bool isFloatingType(int32_t data_type) {
  return data_type == TensorProto::FLOAT || data_type == TensorProto::DOUBLE ||
         data_type == TensorProto::FLOAT16 || data_type == TensorProto::BFLOAT16;
}

}  // namespace onnx_rewrite
