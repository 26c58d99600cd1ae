//===- FunctionModels.h - models as dynamo exports with local functions ----===//
//
// torch.onnx's dynamo exporter of torch 2.1 to 2.3 writes a model as nested local
// functions: the model and each module a function of its own (domain pkg.transformers,
// pkg.torch...) whose body calls one torchlib function per aten op (domain
// pkg.onnxscript.torch_lib), attributes passed by reference. withLocalFunctions gives any
// model that layout, so that the whole-model tests can check that what fuses in a flat
// export fuses the same once its ops sit in function bodies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::testing {

/// `model` with its main graph's nodes moved into a function "Model" (domain
/// pkg.torch.modules) that the main graph calls once, with the graph's inputs and
/// initializers as arguments; every node of that body (but those with graph attributes)
/// becomes a call of a one-node function (domain pkg.onnxscript.torch_lib), one per op type,
/// arity and attribute names, its attributes referenced (`ref_attr_name`). Value infos of
/// the main graph are dropped (their values now live in the function).
onnx::ModelProto withLocalFunctions(const onnx::ModelProto& model);

}  // namespace onnx_rewrite::testing
