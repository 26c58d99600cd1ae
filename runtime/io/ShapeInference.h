//===- ShapeInference.h - ONNX shape inference that never aborts ---------===//
//
// Rules constrain ranks and dims, so the runtime wants every value typed. Our symbolic
// shape pass (SymbolicShapes.h) types the model: it folds shape computations ONNX's own
// inference cannot see through (Reshapes to shapes computed at run time, and everything
// after them), types If branches and loop bodies, and calls ONNX's per-op inference
// functions (through NewerOpsetSchemas, which knows what changed after opset 17) only for
// the ops it has no rule for, one node at a time. ONNX's whole-model inference never runs.
// Opsets newer than NewerOpsetSchemas knows skip inference with a note. Inference never
// throws, and is undone before saving: the saved model carries only the type information
// it came with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// What inference added, so it can be taken out again.
class InferredShapes {
 public:
  /// Runs inference on `model` in place, or explains in note() why it did not. With
  /// `forget_unknown_dims`, the dims an earlier inference could only name (ONNX calls them
  /// unk__0, unk__1, ...) are cleared first, so what inference knows now replaces them:
  /// ONNX keeps a dim a value_info already names over the one it infers.
  explicit InferredShapes(onnx::ModelProto& model, bool forget_unknown_dims = false);
  /// Removes the inferred value_info entries and restores every type inference refined.
  /// Call before the graph IR puts its nodes back (Model::finish). Idempotent.
  void undo();

  bool ran() const { return ran_; }
  /// Why inference was skipped or stopped early; empty when it ran cleanly.
  const std::string& note() const { return note_; }

 private:
  std::vector<std::pair<onnx::GraphProto*, int>> value_info_sizes_;
  /// Every output and pre-existing value_info entry with its type as loaded (nullopt:
  /// it had none). Inference refines these in place, so they are restored one by one.
  std::vector<std::pair<onnx::ValueInfoProto*, std::optional<onnx::TypeProto>>> types_;
  bool ran_ = false;
  bool undone_ = false;
  std::string note_;
};

/// True for a dim inference could not size: no value, and no name or one of the names
/// ONNX's inference makes up for such dims (unk__0, unk__1, ...).
bool isUnknownDim(const onnx::TensorShapeProto::Dimension& dim);

/// Why inference cannot serve `model` (e.g. "ai.onnx opset 30 is newer than 24, the
/// newest whose shapes onnx-rewrite can infer"), or empty when it can.
std::string unsupportedOpsetReason(const onnx::ModelProto& model);

}  // namespace onnx_rewrite
