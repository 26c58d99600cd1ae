//===- Soundness.h - a rewrite must not change what readers see ----------===//
//
// DESIGN.md: "the driver refuses a rewrite that changes the type, rank or a known dim
// of any value visible outside the match; rules need not remember broadcasting". A
// rule that drops Mul(x, c) with c of shape [1] in front of a MatMul forgets that the
// Mul made a scalar x a vector; FusedMatMul then gets the scalar and ONNX Runtime
// refuses the model. No constraint of the rule says so, and no rule author should
// have to remember it: the Rewriter compares every replaced value (the root and each
// re-exported intermediate) with its replacement before rewiring anything.
//
// What counts as known: the element type, the rank, and static dims, as the graph
// knows them for the replaced value (inputs, value_info, shape inference) and as ONNX's
// per-op inference gives them for the replacement (LocalInference). Symbolic dims are
// never compared (the names inference makes up differ for equal dims). A rewrite is
// refused when
//   - a new node's inference rejects inputs whose element types are all known (the
//     scalar FusedMatMul input: "Input tensors of wrong rank (0)"), or
//   - a replaced value and its replacement both have a known element type and they
//     differ, both have a known rank and they differ, or both have a static dim at the
//     same axis and they differ.
// Unknown is never a reason to refuse: where the graph has no shapes at all
// (--no-shape-inference on a model without value_info) nothing is refused, and a
// replacement whose shape inference cannot tell (an op without inference, inputs of
// unknown shape) is allowed. Test builds check those too, after the fact (kVerify).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// One value a rewrite replaces: readers of `from` (named `name`, of type `before`) will
/// read `to`.
struct TypedReplacement {
  ValueId from = kNoId;
  ValueId to = kNoId;
  std::string name;
  const onnx::TypeProto* before = nullptr;
};

enum class Strictness {
  /// Before rewiring: refuse what is known to change; unknown is allowed.
  kRefuse,
  /// Test builds, after rewiring: also a replacement whose rank cannot be inferred from
  /// inputs of known shape (an ai.onnx or com.microsoft op the inference registry lacks, or
  /// a node it cannot size) while the replaced value's rank was known.
  kVerify,
};

/// Why replacing per `replacements`, with `created` the nodes the rewrite made (in creation
/// order), changes what readers of a replaced value see; empty when it does not.
/// `inferred`, when given, receives the element type and shape inferred for each output of
/// a created node (those inference knows something about), so the Rewriter can record them.
std::string findTypeChange(Model& model, const Graph& graph, const std::vector<NodeId>& created,
                           const std::vector<TypedReplacement>& replacements, Strictness strictness,
                           std::vector<std::pair<ValueId, onnx::TypeProto>>* inferred = nullptr);

/// True when `before` and `after` are both known to differ in element type, rank or a
/// static dim (see the file comment).
bool typesDiffer(const onnx::TypeProto* before, const onnx::TypeProto* after);

/// A type for messages: "float[2,3]", "float16[batch,?]" (? an unknown dim), "float[]" (a
/// scalar), "float" (rank unknown), "?" (nothing known).
std::string describeType(const onnx::TypeProto* type);

/// Thrown in test builds when a rewrite got through that changed an outside-visible type
/// or shape (see Options::verify_rewrites): a bug in the soundness check or a rule.
class SoundnessViolation : public std::logic_error {
 public:
  explicit SoundnessViolation(const std::string& message) : std::logic_error(message) {}
};

}  // namespace onnx_rewrite
