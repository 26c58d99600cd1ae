//===- ShapeInference.h - ONNX shape inference that never aborts ---------===//
//
// Rules constrain ranks and dims, so the runtime wants every value typed. ONNX
// 1.12's inference knows operator schemas up to opset 17; for a newer opset it
// would silently apply an older schema (ReduceMean-13 reads axes from an
// attribute, ReduceMean-18 from an input) and infer wrong shapes. So inference
// runs only when the registry knows every imported ONNX opset, never throws, and
// is undone before saving: the saved model carries only the type information it
// came with.
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
  /// Runs inference on `model` in place, or explains in note() why it did not.
  explicit InferredShapes(onnx::ModelProto& model);
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

/// Why ONNX 1.12's schemas cannot serve `model` (e.g. "ai.onnx opset 18 is newer than 17,
/// the newest this ONNX knows"), or empty when they can.
std::string unsupportedOpsetReason(const onnx::ModelProto& model);

}  // namespace onnx_rewrite
