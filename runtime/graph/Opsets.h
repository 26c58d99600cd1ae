//===- Opsets.h - the ai.onnx opset a model is read at --------------------===//
//
// ONNX spells its default domain "" or "ai.onnx", in opset imports and in node
// domains alike. A model that imports neither still loads in ONNX Runtime, which
// imports its own newest ai.onnx opset for it (onnxruntime/core/graph/model.cc: every
// domain its schema registry knows and the model does not import is added at the
// newest version; ORT 1.30 then reads ReduceMean's axes as an input and refuses the
// attribute). onnx-rewrite reads such a model the same way, at the newest opset it
// knows, and says so in a note; the saved model is not given an import, so ONNX
// Runtime keeps choosing for itself. A model with no opset import at all is refused
// by ONNX Runtime ("Missing opset in the model") and by loadModelFile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// The newest ai.onnx opset onnx-rewrite knows (the rule catalog's and shape
/// inference's); models without an ai.onnx import are read at it.
inline constexpr int64_t kNewestOnnxOpset = 24;

/// The ai.onnx version `imports` name (as "" or "ai.onnx"), or -1 when they name none.
int64_t onnxOpsetVersion(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports);

/// Whether `model`'s initializers that its graph also lists as inputs are constants: IR
/// versions 1 to 3 required every initializer to be an input, and ONNX Runtime reads them
/// as constants there; from IR 4 such an initializer is a default a feed may replace.
bool initializerInputsAreConstant(const onnx::ModelProto& model);

/// The note for a model that imports no ai.onnx opset.
std::string missingOnnxOpsetNote();

}  // namespace onnx_rewrite
