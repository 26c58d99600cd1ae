//===- LocalInference.h - types of a rewrite's new values, node by node --===//
//
// The soundness check compares each value a rewrite replaces with its replacement,
// before anything is rewired. The replacement is usually the output of a node the
// rule just created, which no shape inference has seen. Inferring the whole model again
// per rewrite would cost more than the rewrite, so this types the one node over the
// types the graph already knows for its inputs: by the symbolic shape pass's rule for
// its op (as the model's values were typed, with no schema registry to build) when that
// types every output the node has, else by the op's ONNX inference function (from
// NewerOpsetSchemas, which also knows the com.microsoft ops rules emit).
//
// ONNX's inference functions throw on inputs they reject and on inputs they cannot
// see; both are caught here and told apart: only a failure over fully typed inputs
// says something about the node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// What inferring one node's outputs found.
struct NodeInference {
  enum class Status {
    kInferred,       ///< the op's inference ran; the outputs hold what it knows (maybe little)
    kNoInference,    ///< no schema, or no inference function, for the op at the model's opset
    kUntypedInputs,  ///< it failed, but an input's element type is unknown: nothing learnt
    kRejected,       ///< it rejected inputs whose element types are all known: an invalid node
  };
  Status status = Status::kNoInference;
  /// ONNX's message when inference failed (one line, without its "[...Error] " tag).
  std::string error;
  /// Every present input has a known element type and shape (rank).
  bool inputs_shaped = false;
};

/// Types of values created by a rewrite, inferred one node at a time. Values it has not
/// inferred answer with what the graph knows (value_info, graph inputs and outputs, shape
/// inference, a constant's tensor).
class LocalInference {
 public:
  LocalInference(Model& model, const Graph& graph) : model_(model), graph_(graph) {}

  /// Infers the outputs of node `id`. Inputs written by nodes inferred before through this
  /// object read those types, so a chain of new nodes is inferred in creation order.
  NodeInference infer(NodeId id);

  /// The type of `v` as inferred here, else as the graph knows it; null if unknown.
  const onnx::TypeProto* typeOf(ValueId v);

 private:
  Model& model_;
  const Graph& graph_;
  /// Outputs of the nodes inferred here, and the types of constants built from their tensors.
  std::unordered_map<ValueId, onnx::TypeProto> types_;
};

}  // namespace onnx_rewrite
