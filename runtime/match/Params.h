//===- Params.h - an op's parameters, whichever opset form they have ------===//
//
// Later ONNX opsets turned some attributes into inputs: ReduceMean's `axes` is an
// attribute up to opset 17 and input 1 from 18, Squeeze's from 13, Slice's
// starts/ends/axes/steps from 10. Rules name such a parameter once, as an
// attribute; these readers find it on a node in either form (the attribute, or
// the constant at the input it moved to), so the interpreter and rulec's
// generated code read parameters the same way.
//
// Also here: reading small constants without allocating (into caller-owned
// buffers) and axis normalisation (negative axes count from the end).
//
// Which parameters moved where is runtime/match/OpsetForms.h's table; the two
// functions below add the opset test to it.
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

/// Input index that parameter `name` of op (`domain`, `op_type`) occupies at `opset`, or -1
/// if it is an attribute there (or not a moved parameter at all). `opset` < 0 (unknown)
/// counts as "moved" so that a node's inputs decide.
int movedParamInput(std::string_view domain, std::string_view op_type, std::string_view name,
                    int64_t opset);

/// True when input `index` of op (`domain`, `op_type`) at `opset` holds a moved parameter
/// (Slice's input 3 is `axes` from opset 10). Matchers allow such inputs beyond the ones a
/// pattern lists.
bool isParamInput(std::string_view domain, std::string_view op_type, uint32_t index, int64_t opset);

/// Where a parameter of one node is.
struct ParamRef {
  enum class Kind {
    kAbsent,     ///< neither the attribute nor its input is there (the schema default holds)
    kAttribute,  ///< `attribute` holds it
    kInput,      ///< input `input_index` (value `input`) holds it; it may not be constant
  };
  Kind kind = Kind::kAbsent;
  const onnx::AttributeProto* attribute = nullptr;
  ValueId input = kNoId;
  int input_index = -1;
};

/// Finds parameter `name` of `node`: the attribute if present, else the input it moved to
/// at the graph's opset of the node's domain if that input is present. Never allocates.
ParamRef findParam(const Graph& graph, NodeId node, std::string_view name);

/// Reads an integer-list parameter into `out` (cleared first): an INTS or INT attribute or
/// a constant integer input with at most `max_elements` elements. False if absent, not
/// constant or of another type. Allocates only to grow `out`.
bool readIntsParam(Model& model, const Graph& graph, NodeId node, std::string_view name,
                   std::vector<int64_t>& out, size_t max_elements = 64);

/// The integer-list parameter `name` of `node` (see readIntsParam), or nullopt.
std::optional<std::vector<int64_t>> intsParam(Model& model, const Graph& graph, NodeId node,
                                              std::string_view name);

/// A single-int parameter: an INT attribute or a one-element constant integer input;
/// `default_value` (the schema's) if absent; nullopt if absent without default or unreadable.
std::optional<int64_t> intParam(Model& model, const Graph& graph, NodeId node,
                                std::string_view name,
                                std::optional<int64_t> default_value = std::nullopt);

/// A single-float parameter: a FLOAT attribute or a one-element constant input.
std::optional<double> floatParam(Model& model, const Graph& graph, NodeId node,
                                 std::string_view name,
                                 std::optional<double> default_value = std::nullopt);

/// A STRING attribute (strings never moved to inputs). The result views the node's
/// attribute or `default_value`, whichever applies.
std::optional<std::string_view> stringParam(
    const Graph& graph, NodeId node, std::string_view name,
    std::optional<std::string_view> default_value = std::nullopt);

// ---- Axes ------------------------------------------------------------------------------

/// The rank of `v` from its type (value_info, graph input/output, shape inference) or, for
/// a constant, its tensor; nullopt if unknown. Never allocates.
std::optional<int64_t> valueRank(const Graph& graph, ValueId v);

/// The shape of `v` from its type (value_info, graph input/output, shape inference; an
/// outer value's from its definition), or null. Constants: see constantTensor's dims.
const onnx::TensorShapeProto* valueShape(const Graph& graph, ValueId v);

/// The element type of `v` (TensorProto::DataType) from its type or, for a constant, its
/// tensor; 0 (UNDEFINED) if unknown.
int32_t valueElemType(const Graph& graph, ValueId v);

/// The rank axes of `node`'s parameter count against: the output's for Unsqueeze (whose
/// axes index the result), the first input's otherwise.
std::optional<int64_t> axesRank(const Graph& graph, NodeId node);

/// `axis` in [0, rank): negative axes count from the end. nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Normalises every axis in place; false (leaving `axes` partly normalised) if one is out
/// of range.
bool normalizeAxes(std::vector<int64_t>& axes, int64_t rank);

// ---- Small constants -------------------------------------------------------------------

/// Reads constant `v` (initializer or Constant node, see constantTensor) into `out` if it
/// has at most `max_elements` elements of an integer type. Allocates only to grow `out`
/// (and for external or packed 16-bit data).
bool readConstantInts(Model& model, const Graph& graph, ValueId v, std::vector<int64_t>& out,
                      size_t max_elements);

/// The same for any numeric type, as doubles (float16/bfloat16 widened).
bool readConstantDoubles(Model& model, const Graph& graph, ValueId v, std::vector<double>& out,
                         size_t max_elements);

/// Number of elements of constant tensor `t` from its dims (1 for a scalar), or -1 if a dim
/// is negative.
int64_t tensorElementCount(const onnx::TensorProto& t);

/// True for FLOAT, DOUBLE, FLOAT16 and BFLOAT16.
bool isFloatingType(int32_t data_type);

}  // namespace onnx_rewrite
