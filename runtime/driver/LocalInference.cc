//===- LocalInference.cc - types of a rewrite's new values, node by node -===//
#include "runtime/driver/LocalInference.h"

#include <cstdint>
#include <exception>
#include <optional>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include "runtime/graph/OpId.h"
#include "runtime/graph/TensorData.h"
#include "runtime/io/NodeSchemaInference.h"
#include "runtime/io/SymbolicShapes.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

/// Integer constants up to this many elements are shown to inference (Reshape's shape,
/// Unsqueeze's axes, Slice's bounds); larger ones are never parameters of a shape.
constexpr size_t kMaxDataElements = 64;

bool hasElemType(const onnx::TypeProto* type) {
  if (!type || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) return false;
  return !type->has_tensor_type() || type->tensor_type().elem_type() != 0;
}

bool hasShape(const onnx::TypeProto* type) {
  return hasElemType(type) && type->has_tensor_type() && type->tensor_type().has_shape();
}

/// ONNX 1.12's Reshape inference gives no shape when the target shape is computed (a
/// Concat of Shape slices, as exporters write it). Its length still fixes the rank, which
/// is what the soundness check compares first.
void refineReshapeRank(const Node& node, const onnx::TypeProto* target,
                       std::vector<onnx::TypeProto>& outputs) {
  if (node.opType() != "Reshape" || outputs.empty() || !hasShape(target)) return;
  const onnx::TensorShapeProto& length = target->tensor_type().shape();
  if (length.dim_size() != 1 || !length.dim(0).has_dim_value()) return;
  onnx::TypeProto& out = outputs[0];
  if (!out.has_tensor_type() || out.tensor_type().has_shape()) return;
  auto* shape = out.mutable_tensor_type()->mutable_shape();
  for (int64_t i = 0; i < length.dim(0).dim_value(); ++i) shape->add_dim();
}

}  // namespace

const onnx::TypeProto* LocalInference::typeOf(ValueId v) {
  if (v == kNoId) return nullptr;
  if (auto it = types_.find(v); it != types_.end())
    return it->second.value_case() == onnx::TypeProto::VALUE_NOT_SET ? nullptr : &it->second;
  auto [defining, id] = graph_.definition(v);
  if (id == kNoId) return nullptr;
  if (const onnx::TypeProto* type = defining->value(id).type()) return type;
  // Constants the graph has no value_info for (new initializers, Constant nodes): their
  // tensor's header says it all, without reading the data.
  const onnx::TensorProto* tensor = constantTensor(graph_, v);
  if (!tensor || tensorElementCount(*tensor) < 0) return nullptr;  // a negative dim: malformed
  onnx::TypeProto& type = types_[v];
  type.mutable_tensor_type()->set_elem_type(tensor->data_type());
  auto* shape = type.mutable_tensor_type()->mutable_shape();
  for (int64_t d : tensor->dims()) shape->add_dim()->set_dim_value(d);
  return &type;
}

NodeInference LocalInference::infer(NodeId id) {
  const Node& node = graph_.node(id);
  NodeInference result;
  std::vector<const onnx::TypeProto*> inputs;
  bool typed = true;
  result.inputs_shaped = true;
  // The small integer constants among the inputs (Reshape's shape, Unsqueeze's axes), with
  // the tensor each was read from.
  std::vector<std::optional<std::vector<int64_t>>> constant_ints(node.inputs().size());
  std::vector<const onnx::TensorProto*> constant_tensors(node.inputs().size(), nullptr);
  std::vector<int64_t> ints;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const ValueId in = node.inputs()[i];
    inputs.push_back(typeOf(in));
    if (in == kNoId) continue;
    typed &= hasElemType(inputs.back());
    result.inputs_shaped &= hasShape(inputs.back());
    // Only in-memory tensors, read (and validated) by readConstantInts: inference never
    // sees a malformed payload, and never makes us read external data.
    const onnx::TensorProto* tensor = constantTensor(graph_, in);
    if (!tensor || isExternal(*tensor) ||
        !readConstantInts(model_, graph_, in, ints, kMaxDataElements))
      continue;
    constant_ints[i] = ints;
    constant_tensors[i] = tensor;
  }

  // Whatever happens, the outputs count as inferred here: an unknown stays unknown rather
  // than falling back to a type the graph may have copied from the value it replaces.
  auto record = [&](std::vector<onnx::TypeProto>* outputs) {
    for (size_t o = 0; o < node.outputs().size(); ++o)
      if (node.outputs()[o] != kNoId)
        types_[node.outputs()[o]] = outputs ? std::move((*outputs)[o]) : onnx::TypeProto();
  };

  // The symbolic shape pass's own rule first, as the model's values were typed: no schema
  // registry to build. Where it has none, or proves nothing, the op's ONNX function
  // speaks, and may reject the node.
  {
    const onnx::TypeProto unknown;
    std::vector<const onnx::TypeProto*> given;
    for (size_t i = 0; i < inputs.size(); ++i)
      given.push_back(node.inputs()[i] == kNoId ? nullptr : inputs[i] ? inputs[i] : &unknown);
    std::vector<onnx::TypeProto> outputs;
    // Every output the node has must be typed: the symbolic rules of some ops leave the
    // optional ones (Attention's present) to the op's ONNX function.
    auto typedOutputs = [&] {
      for (size_t o = 0; o < outputs.size(); ++o)
        if (node.outputs()[o] != kNoId && !hasElemType(&outputs[o])) return false;
      return true;
    };
    if (inferNodeTypes(node.proto(), graph_.opsetVersion(""), given, constant_ints,
                       node.outputs().size(), outputs) &&
        typedOutputs()) {
      result.status = NodeInference::Status::kInferred;
      record(&outputs);
      return result;
    }
  }
  const std::string domain(canonicalDomain(node.domain()));
  const onnx::OpSchema* schema =
      inferenceSchemaOf(node.opType(), domain, graph_.opsetVersion(domain));
  if (!schema) {
    record(nullptr);
    return result;
  }
  const onnx::TypeProto* reshape_target = inputs.size() > 1 ? inputs[1] : nullptr;
  NodeInferenceInputs in;
  in.attribute = [&node](const std::string& name) { return node.attribute(name); };
  in.types = std::move(inputs);
  in.data.resize(constant_ints.size());
  for (size_t i = 0; i < constant_ints.size(); ++i) {
    if (!constant_ints[i]) continue;
    onnx::TensorProto& t = in.data[i].emplace();
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : constant_tensors[i]->dims()) t.add_dims(d);
    for (int64_t x : *constant_ints[i]) t.add_int64_data(x);
  }
  in.outputs = node.outputs().size();
  NodeInferenceResult inferred = inferNode(*schema, std::move(in));
  if (inferred.ran) {
    result.status = NodeInference::Status::kInferred;
    refineReshapeRank(node, reshape_target, inferred.outputs);
    record(&inferred.outputs);
    return result;
  }
  result.error = std::move(inferred.error);
  result.status = typed ? NodeInference::Status::kRejected : NodeInference::Status::kUntypedInputs;
  record(nullptr);
  return result;
}

}  // namespace onnx_rewrite
