//===- NodeSchemaInference.h - one node through its ONNX inference function ===//
//
// ONNX's per-op inference functions, called for a single node over input types the
// caller knows, without the whole-model pass around them. Two callers: the symbolic shape
// pass, for the ops it has no rule of its own for (so that the default path runs no
// whole-model ONNX inference), and the driver's soundness check, for the nodes a rewrite
// just made (LocalInference).
//
// Inference functions throw on inputs they reject and on inputs they cannot see; the
// error is returned as one line, the outputs then say nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// The schema that infers `op` of `domain` ("" for ONNX) in a model importing the domain
/// at `version` (< 1: not imported), from inferenceSchemas(); null when none has an
/// inference function (also for ONNX opsets NewerOpsetSchemas does not know).
/// com.microsoft ops answer whatever the version: a rule may add the first of the domain.
const onnx::OpSchema* inferenceSchemaOf(const std::string& op, const std::string& domain,
                                        int64_t version);

/// Whether `node` has at least the inputs `schema` requires, as many outputs as it allows
/// and every attribute it requires, of its type, which inference functions assume
/// (Split's divides by its output count, Scan's reads its body). More inputs than declared
/// pass: NewerOpsetSchemas serves opsets 18+ partly with the schemas of 17, whose
/// declarations lack the inputs that became inputs (ReduceMean's axes).
bool nodeFitsSchema(const onnx::OpSchema& schema, const onnx::NodeProto& node);

/// One node's inference: its attributes (by name), its input types (null: unknown or
/// absent) and the constant inputs inference may read (Reshape's shape, axes).
struct NodeInferenceInputs {
  std::function<const onnx::AttributeProto*(const std::string&)> attribute;
  std::vector<const onnx::TypeProto*> types;
  std::vector<std::optional<onnx::TensorProto>> data;
  size_t outputs = 0;
};

/// What the inference function found: the output types (empty TypeProtos when it failed
/// or knows nothing), and its error message on one line when it threw.
struct NodeInferenceResult {
  std::vector<onnx::TypeProto> outputs;
  bool ran = false;  ///< the function returned normally
  std::string error;
};

/// Runs `schema`'s inference function on `in`.
NodeInferenceResult inferNode(const onnx::OpSchema& schema, NodeInferenceInputs in);

/// ONNX's message on one line, without its "[ShapeInferenceError] " tag and the context
/// ONNX appends.
std::string oneLineInferenceError(std::string message);

}  // namespace onnx_rewrite
