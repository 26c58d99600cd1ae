//===- SymbolicOps.h - per-op rules of the symbolic shape pass ------------===//
//
// Each op the pass knows has one function that reads what is known of the node's
// inputs (NodeView) and says what it can prove of the outputs. It says nothing it
// cannot prove: an output's Facts start empty (unknown) and stay so on any doubt,
// including inputs a valid model could not have. The functions are grouped by family:
// SymbolicValueOps.cc folds shape computations (Shape, Gather, Concat, Range, ...) and
// the shapes they feed (Reshape, Expand, ConstantOfShape, Tile); SymbolicTensorOps.cc
// propagates shapes through the ops of a model body (broadcasting, MatMul, Split, ...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/io/SymbolicDims.h"

namespace onnx_rewrite::symbolic {

/// One node, with what is known of its inputs.
struct NodeView {
  const onnx::NodeProto& node;
  int64_t opset;                        ///< the model's ai.onnx opset
  std::vector<const Facts*> inputs;     ///< null for an absent optional input
  const UpperBounds* bounds = nullptr;  ///< what the model's Gathers proved so far

  const Facts* in(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  /// Input i's dims when its rank is known, else null.
  const Dims* shape(size_t i) const;
  /// Input i's folded elements, else null.
  const Dims* value(size_t i) const;
  /// Input i's folded elements when every one is an int.
  std::optional<std::vector<int64_t>> ints(size_t i) const;
  /// Input i's elem type (0 unknown).
  int32_t elem(size_t i) const;
  const onnx::AttributeProto* attr(const char* name) const;
  std::optional<int64_t> intAttr(const char* name) const;
  std::optional<std::vector<int64_t>> intsAttr(const char* name) const;
  /// An op parameter given as an attribute before opset `since` and as input `input`
  /// from then on (axes, splits): its ints, or nullopt when absent or not constant.
  /// `present` says whether it was given at all.
  std::optional<std::vector<int64_t>> attrOrInput(const char* name, int64_t since, size_t input,
                                                  bool* present) const;
};

using OpRule = void (*)(const NodeView& node, std::vector<Facts>& outputs);
/// Keyed by "op" for the ONNX domain and "domain:op" for others.
using OpRules = std::unordered_map<std::string, OpRule>;

void addValueOpRules(OpRules& rules);  // SymbolicValueOps.cc
/// Carries an input's IntSpan to the output of ops that only rearrange elements (Reshape,
/// Unsqueeze, Squeeze, Flatten, Identity, a widening integer Cast).
void forwardSpan(const NodeView& node, std::vector<Facts>& outputs);
/// What a Gather proves of its indices (see UpperBound), added to `bounds`.
void recordIndexBound(const NodeView& node, UpperBounds& bounds);
void addTensorOpRules(OpRules& rules);  // SymbolicTensorOps.cc

}  // namespace onnx_rewrite::symbolic
