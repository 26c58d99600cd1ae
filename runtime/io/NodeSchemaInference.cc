//===- NodeSchemaInference.cc - one node through its ONNX inference function ===//
#include "runtime/io/NodeSchemaInference.h"

#include <cstdint>
#include <exception>
#include <utility>

#include <onnx/defs/shape_inference.h>

#include "runtime/io/NewerOpsetSchemas.h"

namespace onnx_rewrite {
namespace {

/// ONNX's view of one node: attributes and inputs from NodeInferenceInputs, outputs
/// collected here.
class OneNodeContext : public onnx::InferenceContext {
 public:
  explicit OneNodeContext(NodeInferenceInputs in) : in_(std::move(in)), outputs_(in_.outputs) {}

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    return in_.attribute ? in_.attribute(name) : nullptr;
  }
  size_t getNumInputs() const override { return in_.types.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    return i < in_.types.size() ? in_.types[i] : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return i < in_.data.size() && in_.data[i] ? &*in_.data[i] : nullptr;
  }
  size_t getNumOutputs() const override { return outputs_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override {
    return i < outputs_.size() ? &outputs_[i] : nullptr;
  }
  // No bodies are inferred node by node (the symbolic pass types If, Loop and Scan
  // itself, and rules create none), and there is no data propagation.
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override {
    return nullptr;
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }

  std::vector<onnx::TypeProto>& outputs() { return outputs_; }

 private:
  NodeInferenceInputs in_;
  std::vector<onnx::TypeProto> outputs_;
};

}  // namespace

const onnx::OpSchema* inferenceSchemaOf(const std::string& op, const std::string& domain,
                                        int64_t version) {
  const onnx::OpSchema* schema = nullptr;
  if (domain.empty()) {
    if (inferredOpset(version))
      schema = inferenceSchemas().GetSchema(op, static_cast<int>(version), domain);
  } else {
    const int query = version < 1 || version > INT32_MAX ? 1 : static_cast<int>(version);
    schema = inferenceSchemas().GetSchema(op, query, domain);
  }
  return schema && schema->has_type_and_shape_inference_function() ? schema : nullptr;
}

bool nodeFitsSchema(const onnx::OpSchema& schema, const onnx::NodeProto& node) {
  if (node.input_size() < schema.min_input() || node.output_size() < schema.min_output() ||
      node.output_size() > schema.max_output())
    return false;
  for (const auto& [name, declared] : schema.attributes()) {
    const onnx::AttributeProto* given = nullptr;
    for (const onnx::AttributeProto& a : node.attribute())
      if (a.name() == name) given = &a;
    // A body of the wrong kind reads as a null graph.
    const bool graph = declared.type == onnx::AttributeProto::GRAPH ||
                       declared.type == onnx::AttributeProto::GRAPHS;
    if (given ? (graph && given->type() != declared.type) : declared.required) return false;
  }
  return true;
}

NodeInferenceResult inferNode(const onnx::OpSchema& schema, NodeInferenceInputs in) {
  NodeInferenceResult result;
  const size_t outputs = in.outputs;
  OneNodeContext ctx(std::move(in));
  try {
    schema.GetTypeAndShapeInferenceFunction()(ctx);
    result.ran = true;
    result.outputs = std::move(ctx.outputs());
    return result;
  } catch (const std::exception& e) {
    result.error = oneLineInferenceError(e.what());
  } catch (...) {
    result.error = "unknown error";
  }
  result.outputs.assign(outputs, onnx::TypeProto());
  return result;
}

std::string oneLineInferenceError(std::string message) {
  if (message.size() > 1 && message[0] == '[') {
    const size_t close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  const size_t context = message.find("\n\n==> Context:");
  if (context != std::string::npos) message.erase(context);
  for (char& c : message)
    if (c == '\n') c = ' ';
  return message;
}

}  // namespace onnx_rewrite
