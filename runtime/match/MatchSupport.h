//===- MatchSupport.h - small queries matchers are built from ------------===//
//
// Hand-written rules and rulec's generated code share these: find the producer
// of a value if it is a given op, read a small constant (initializer or Constant
// node) without touching any other tensor, query static shapes. None allocates
// on the success path of a structural check.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// The producer of `v` if it is a live node of `op`, else kNoId.
NodeId producerIf(const Graph& graph, ValueId v, OpId op);

/// The live node of `op_type` in the ONNX domain producing `v`, or null: the form native
/// checks use, which name ops by string.
const Node* producerOp(const Graph& graph, ValueId v, std::string_view op_type);

/// The factor `n` applies to the product of its inputs: 1 for an ONNX MatMul, alpha for a
/// com.microsoft.FusedMatMul; nullopt for any other op.
std::optional<double> matMulAlpha(const Node& n);

/// The other input of binary node `node` given one input `known` (kNoId if `known` is
/// not an input; the second input when both inputs are `known`).
ValueId otherInput(const Node& node, ValueId known);

/// Number of uses of `v` (subgraph captures included); graph outputs count as one more.
size_t consumerCount(const Graph& graph, ValueId v);

/// The tensor holding `v`'s constant value: an initializer that is not also a graph input
/// (those can be overridden at run time), or a Constant node's `value`. Null otherwise.
const onnx::TensorProto* constantTensor(const Graph& graph, ValueId v);

/// Values of constant `v` if it has at most `max_elements` elements, as doubles.
std::optional<std::vector<double>> constantValues(Model& model, const Graph& graph, ValueId v,
                                                  int64_t max_elements);

/// True when `v` is a constant with exactly one element equal to `expected` within
/// `tolerance` (absolute). Reads at most one element's bytes.
bool isScalarConstant(Model& model, const Graph& graph, ValueId v, double expected,
                      double tolerance);

/// Static dims of `v` (-1 for a symbolic or unknown dim), or nullopt if the rank is unknown.
std::optional<std::vector<int64_t>> staticShape(const Graph& graph, ValueId v);

/// `v` is output 0 of a `parts`-output Split of `x` along `axis` (or its negative spelling),
/// where x's static dim divides evenly, cut in equal parts (no `split`: equal parts, as
/// opset 13-17 and num_outputs at 18+ cut them).
bool splitsEvenly(Model& model, const Graph& graph, ValueId v, ValueId x, int64_t axis,
                  size_t parts);

/// Dim `i` of `a` and dim `j` of `b` (negative: from the end) are known and the same: equal
/// static sizes or one symbol; or the same dim of the same value.
bool sameDim(const Graph& graph, ValueId a, int i, ValueId b, int j);

/// Shape of constant `v` from its tensor (no data read), or nullopt.
std::optional<std::vector<int64_t>> constantShape(const Graph& graph, ValueId v);

}  // namespace onnx_rewrite
