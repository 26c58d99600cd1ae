//===- Equivalence.h - two values computed the same way -------------------===//
//
// The `equivalent` constraint: exporters repeat a computation per module (each
// attention head of a per-head export slices its own copy of the causal mask
// from its own copy of the tril buffer), so values that are different tensors
// in the graph still hold the same numbers. A rule that merges such modules
// keeps one copy, which is exact only when the copies are computed alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// True when `a` and `b` hold the same values whatever the graph inputs are: they are the
/// same value; or both are constants with equal element type, dims and contents (up to
/// 16 MiB each); or both are the same output of live nodes of the same op with equal
/// attributes (and no subgraphs) whose inputs are pairwise equivalent in turn.
/// Non-deterministic ops (random generators, Dropout) are never equivalent to another node.
/// Conservative: gives false after comparing more than 256 node pairs.
bool equivalentValues(Model& model, const Graph& graph, ValueId a, ValueId b);

}  // namespace onnx_rewrite
