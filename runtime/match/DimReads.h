//===- DimReads.h - a model's reads of dims at run time -------------------===//
//
// Exporters read sizes at run time (TorchScript's Unsqueeze(Gather(Shape(x), i)), dynamo's
// Shape(x, start=i, end=i+1)) and use them as Slice bounds, Range limits and shapes. The
// natives of several rule families prove what such a read holds: these are the shared
// queries, over the shapes the symbolic pass left in the graph (a dim the model names is
// the same number wherever the name appears).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph/Graph.h"
#include "runtime/match/NativeHelpers.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {

/// `v` with Casts between integer types looked through: sizes and positions keep their
/// values in int32 and int64.
ValueId throughIntCasts(const Graph& g, ValueId v);

/// The static dim `axis` of `v`, if known.
std::optional<int64_t> staticDim(const Graph& g, ValueId v, size_t axis);

/// A Shape node reading the whole shape (opset 15's start and end absent or covering it).
bool wholeShape(const Node& shape);

/// `v` (a scalar or one-element tensor) holds dim `axis` of `x` at run time: a constant
/// equal to its static size, `Gather(Shape(y), i)` or `Shape(y, start=i, end=i+1)` with dim
/// i of y that dim (the same value, static size or dim name), through integer Casts,
/// Squeeze, Unsqueeze and adding a constant 0 (Hugging Face's seq_length +
/// past_key_values_length).
bool isDimOf(const MatchContext& ctx, ValueId v, ValueId x, int axis);

/// `a` and `b` (scalars or one-element tensors) hold the same dim at run time: the same
/// value, or `a` reads dim i of some y (as isDimOf reads them) and `b` is that dim (isDimOf).
bool sameDimRead(const MatchContext& ctx, ValueId a, ValueId b);

/// The sizes an Expand target guarded by TorchScript's expand symbolic holds:
/// Where(Equal(r, c), k, r) with c a constant of negatives only (dims never are, so the
/// Where keeps r), r or Reshape(r, [-1]) of a 1-D r. nullopt when `s` is another Where; `s`
/// itself when it is no Where.
std::optional<ValueId> throughExpandSizeGuard(const MatchContext& ctx, ValueId s);

/// A Slice that keeps a prefix of every axis it slices: starts all 0, steps absent or all 1
/// (x[..., :n] as exporters write it).
struct PrefixSlice {
  std::vector<int64_t> axes;  ///< one per start, normalized by the input's rank
  ParamRef ends;              ///< where the ends are (read them with readIntsParam)
};

/// Slice node `slice` on an input of rank `rank` as a PrefixSlice, or nullopt when it is
/// not one (or a parameter it needs is not a constant).
std::optional<PrefixSlice> prefixSlice(Model& model, const Graph& g, NodeId slice, int64_t rank);

}  // namespace onnx_rewrite
