//===- DimReads.cc - a model's reads of dims at run time -----------------===//
#include "runtime/match/DimReads.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/match/MatchSupport.h"

namespace onnx_rewrite {

namespace {

/// A one-element integer constant, or nullopt.
std::optional<std::vector<int64_t>> smallInts(const MatchContext& ctx, ValueId v) {
  std::vector<int64_t> values;
  if (v == kNoId || !readConstantInts(ctx.model, ctx.graph, v, values, 1)) return std::nullopt;
  return values;
}

}  // namespace

ValueId throughIntCasts(const Graph& g, ValueId v) {
  for (const Node* c = producerOp(g, v, "Cast"); c; c = producerOp(g, v, "Cast")) {
    const onnx::AttributeProto* to = c->attribute("to");
    if (!to || (to->i() != onnx::TensorProto::INT32 && to->i() != onnx::TensorProto::INT64)) break;
    v = c->input(0);
  }
  return v;
}

std::optional<int64_t> staticDim(const Graph& g, ValueId v, size_t axis) {
  const auto dims = staticShape(g, v);
  if (!dims || dims->size() <= axis || (*dims)[axis] < 0) return std::nullopt;
  return (*dims)[axis];
}

bool wholeShape(const Node& shape) {
  const onnx::AttributeProto* start = shape.attribute("start");
  const onnx::AttributeProto* end = shape.attribute("end");
  return (!start || start->i() == 0) && (!end || end->i() >= INT32_MAX);
}

namespace {

/// `v` with what keeps a dim read's value looked through: integer Casts, Squeeze,
/// Unsqueeze and adding a constant 0; kNoId when an Add adds something else.
ValueId throughDimKeepers(const MatchContext& ctx, ValueId v) {
  const Graph& g = ctx.graph;
  for (;;) {
    v = throughIntCasts(g, v);
    const Node* n = g.producerOf(v);
    if (!n || !n->live() || !n->domain().empty()) return v;
    if (n->opType() == "Squeeze" || n->opType() == "Unsqueeze") {
      v = n->input(0);
    } else if (n->opType() == "Add") {
      if (isScalarConstant(ctx.model, g, n->input(1), 0.0, 0.0))
        v = n->input(0);
      else if (isScalarConstant(ctx.model, g, n->input(0), 0.0, 0.0))
        v = n->input(1);
      else
        return kNoId;
    } else {
      return v;
    }
  }
}

/// The value and axis whose dim `v` (through throughDimKeepers) reads at run time:
/// `Gather(Shape(y), i)` or `Shape(y, start=i, end=i+1)`; nullopt for anything else.
std::optional<std::pair<ValueId, int>> dimReadSource(const MatchContext& ctx, ValueId v) {
  const Graph& g = ctx.graph;
  if (const Node* gather = producerOp(g, v, "Gather")) {
    const onnx::AttributeProto* a = gather->attribute("axis");
    const Node* shape = producerOp(g, gather->input(0), "Shape");
    const auto index = smallInts(ctx, gather->input(1));
    if ((a && a->i() != 0) || !shape || !wholeShape(*shape) || !index || index->size() != 1)
      return std::nullopt;
    const ValueId y = shape->input(0);
    const auto rank = valueRank(g, y);
    const auto i = rank ? normalizeAxis((*index)[0], *rank) : std::nullopt;
    if (!i) return std::nullopt;
    return std::make_pair(y, static_cast<int>(*i));
  }
  if (const Node* shape = producerOp(g, v, "Shape")) {
    const onnx::AttributeProto* start = shape->attribute("start");
    const onnx::AttributeProto* end = shape->attribute("end");
    const ValueId y = shape->input(0);
    const auto rank = valueRank(g, y);
    if (!start || !end || !rank) return std::nullopt;
    const auto s = normalizeAxis(start->i(), *rank);
    const auto e = end->i() < 0 ? end->i() + *rank : end->i();
    if (!s || e != *s + 1) return std::nullopt;
    return std::make_pair(y, static_cast<int>(*s));
  }
  return std::nullopt;
}

}  // namespace

bool sameDimRead(const MatchContext& ctx, ValueId a, ValueId b) {
  if (a == kNoId || b == kNoId) return false;
  if (a == b) return true;
  const ValueId v = throughDimKeepers(ctx, a);
  const auto source = v == kNoId ? std::nullopt : dimReadSource(ctx, v);
  return source && isDimOf(ctx, b, source->first, source->second);
}

bool isDimOf(const MatchContext& ctx, ValueId v, ValueId x, int axis) {
  const Graph& g = ctx.graph;
  v = throughDimKeepers(ctx, v);
  if (v == kNoId) return false;
  if (const auto c = smallInts(ctx, v)) {
    const auto dim = staticDim(g, x, static_cast<size_t>(axis));
    return c->size() == 1 && dim && (*c)[0] == *dim;
  }
  const auto source = dimReadSource(ctx, v);
  return source && sameDim(g, source->first, source->second, x, axis);
}

std::optional<ValueId> throughExpandSizeGuard(const MatchContext& ctx, ValueId s) {
  const Graph& g = ctx.graph;
  const Node* where = producerOp(g, s, "Where");
  if (!where) return s;
  const Node* equal = producerOp(g, where->input(0), "Equal");
  const ValueId kept = where->input(2);
  if (!equal || valueRank(g, kept) != 1) return std::nullopt;
  std::vector<int64_t> c;
  if (!readConstantInts(ctx.model, g, otherInput(*equal, kept), c, 64) || c.empty() ||
      std::any_of(c.begin(), c.end(), [](int64_t x) { return x >= 0; }))
    return std::nullopt;
  // reshape_to_own_shape drops the Reshape(s', [-1]) of a 1-D s' first.
  const Node* reshape = producerOp(g, kept, "Reshape");
  return reshape ? reshape->input(0) : kept;
}

std::optional<PrefixSlice> prefixSlice(Model& model, const Graph& g, NodeId slice, int64_t rank) {
  std::vector<int64_t> starts, axes, steps;
  if (!readIntsParam(model, g, slice, "starts", starts) ||
      std::any_of(starts.begin(), starts.end(), [](int64_t s) { return s != 0; }))
    return std::nullopt;
  const size_t n = starts.size();
  if (findParam(g, slice, "axes").kind == ParamRef::Kind::kAbsent) {
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  } else if (!readIntsParam(model, g, slice, "axes", axes) || axes.size() != n) {
    return std::nullopt;
  }
  if (findParam(g, slice, "steps").kind != ParamRef::Kind::kAbsent &&
      (!readIntsParam(model, g, slice, "steps", steps) || steps != std::vector<int64_t>(n, 1)))
    return std::nullopt;
  PrefixSlice p;
  for (int64_t a : axes) {
    const auto axis = normalizeAxis(a, rank);
    if (!axis) return std::nullopt;
    p.axes.push_back(*axis);
  }
  p.ends = findParam(g, slice, "ends");
  return p;
}

}  // namespace onnx_rewrite
