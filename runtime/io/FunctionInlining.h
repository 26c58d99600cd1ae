//===- FunctionInlining.h - calls of model-local functions, expanded ------===//
//
// torch.onnx's dynamo exporter (torch 2.1 to 2.3, and onnxscript models) writes each
// module and each torchlib op as a model-local function: a LayerNorm or an attention
// block then spans several function bodies and the graph that calls them, where no
// rule can see it whole. ONNX Runtime inlines such calls when it loads the model, and
// fuses afterwards; onnx-rewrite does the same before it reads the model into the IR.
//
// A call is inlined when its function is defined once, its opset imports agree with
// the model's (a domain the model lacks is added to the model), and every attribute
// its body refers to is given by the call or by a default. What is left (a recursive
// or ambiguous function, a version conflict) stays a call, is said in a note, and
// keeps its function; functions no call reaches any more are dropped, as ONNX
// Runtime's optimized model drops them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// What inlineLocalFunctions did.
struct InliningReport {
  /// Call nodes replaced by their function's body (nested calls counted one by one).
  int calls_inlined = 0;
  /// Functions removed because nothing calls them any more.
  int functions_removed = 0;
  /// One line per function whose calls were kept, with the reason.
  std::vector<std::string> kept;
};

/// Whether any graph of `model` (bodies included) calls one of its local functions.
bool callsLocalFunctions(const onnx::ModelProto& model);

/// Replaces every call of a model-local function in `model` (main graph, control-flow
/// bodies and the bodies of functions still kept) by the function's nodes, renamed so
/// that every value and node name stays unique in the model. A model that calls none of
/// its functions is left as it is (callsLocalFunctions is the cheaper question).
InliningReport inlineLocalFunctions(onnx::ModelProto& model);

}  // namespace onnx_rewrite
