//===- Opsets.cc - the ai.onnx opset a model is read at -------------------===//
#include "runtime/graph/Opsets.h"

#include "runtime/graph/OpId.h"

namespace onnx_rewrite {

int64_t onnxOpsetVersion(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  for (const onnx::OperatorSetIdProto& o : imports)
    if (canonicalDomain(o.domain()).empty()) return o.version();
  return -1;
}

bool initializerInputsAreConstant(const onnx::ModelProto& model) {
  return model.ir_version() >= 1 && model.ir_version() < 4;
}

std::string missingOnnxOpsetNote() {
  return "the model imports no ai.onnx opset; read at opset " + std::to_string(kNewestOnnxOpset) +
         ", the newest onnx-rewrite knows, as ONNX Runtime reads it at its newest";
}

}  // namespace onnx_rewrite
