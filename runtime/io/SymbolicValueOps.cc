//===- SymbolicValueOps.cc - folding shape computations -------------------===//
//
// Exporters compute shapes at run time: Shape, Gather of one dim, Unsqueeze, Concat
// with constants, Reshape to the result. Folding those to their elements (ints or the
// model's symbols) gives the shape of the Reshape, Expand or ConstantOfShape they feed.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include "runtime/io/SymbolicOps.h"

namespace onnx_rewrite::symbolic {
namespace {

using onnx::TensorProto;

Dims intsToDims(const std::vector<int64_t>& ints) {
  Dims dims;
  for (int64_t v : ints) dims.push_back(Sym::of(v));
  return dims;
}

/// Sets `out` to a value of `elem`s and `shape`, with its elements when the shape is static
/// and holds exactly that many (Facts::value is only ever that).
void setValue(Facts& out, int32_t elem, Dims shape, Dims value) {
  out.elem = elem;
  out.shape = std::move(shape);
  if (staticCount(*out.shape) == static_cast<int64_t>(value.size())) out.value = std::move(value);
}

void constantRule(const NodeView& n, std::vector<Facts>& out) {
  if (const onnx::AttributeProto* a = n.attr("value"); a && a->has_t()) {
    const TensorProto& t = a->t();
    Dims shape;
    for (int64_t d : t.dims()) {
      if (d < 0) return;
      shape.push_back(Sym::of(d));
    }
    out[0].elem = t.data_type();
    out[0].shape = shape;
    if (std::optional<Dims> values = smallIntTensor(t))
      setValue(out[0], t.data_type(), shape, *values);
  } else if (std::optional<int64_t> v = n.intAttr("value_int")) {
    setValue(out[0], TensorProto::INT64, {}, {Sym::of(*v)});
  } else if (std::optional<std::vector<int64_t>> vs = n.intsAttr("value_ints")) {
    if (static_cast<int64_t>(vs->size()) <= kMaxFoldedElements)
      setValue(out[0], TensorProto::INT64, {Sym::of(static_cast<int64_t>(vs->size()))},
               intsToDims(*vs));
  }
}

void shapeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = TensorProto::INT64;
  const Dims* in = n.shape(0);
  if (!in) return;
  const int64_t rank = static_cast<int64_t>(in->size());
  // Before opset 15 Shape has no start/end: a node that gives them is not what we know.
  if (n.opset < 15 && (n.attr("start") || n.attr("end"))) return;
  // Shape-15's start/end, clamped as the spec says.
  auto clamp = [rank](int64_t x) { return std::clamp(x < 0 ? x + rank : x, int64_t{0}, rank); };
  const int64_t start = clamp(n.intAttr("start").value_or(0));
  const int64_t end = clamp(n.intAttr("end").value_or(rank));
  Dims value;
  for (int64_t i = start; i < end; ++i) value.push_back((*in)[static_cast<size_t>(i)]);
  setValue(out[0], TensorProto::INT64, {Sym::of(static_cast<int64_t>(value.size()))}, value);
}

void identityRule(const NodeView& n, std::vector<Facts>& out) {
  if (n.in(0)) out[0] = *n.in(0);
}

void gatherRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* data = n.shape(0);
  const Dims* indices = n.shape(1);
  if (!data || !indices) return;
  const std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis").value_or(0), static_cast<int64_t>(data->size()));
  if (!axis) return;
  Dims shape(data->begin(), data->begin() + *axis);
  shape.insert(shape.end(), indices->begin(), indices->end());
  shape.insert(shape.end(), data->begin() + *axis + 1, data->end());
  out[0].shape = shape;
  // Elements of a 1-D value (a shape) picked by constant indices.
  const Dims* values = n.value(0);
  const std::optional<std::vector<int64_t>> picks = n.ints(1);
  if (!values || !picks || data->size() != 1) return;
  const int64_t size = static_cast<int64_t>(values->size());
  Dims picked;
  for (int64_t i : *picks) {
    if (i < -size || i >= size) return;  // out of range: the model fails there
    picked.push_back((*values)[static_cast<size_t>(i < 0 ? i + size : i)]);
  }
  setValue(out[0], n.elem(0), shape, picked);
}

/// Slice's parameters: starts, ends, axes, steps (inputs from opset 10, attributes before).
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

std::optional<SliceParams> sliceParams(const NodeView& n, int64_t rank) {
  SliceParams p;
  if (n.opset < 10) {
    auto s = n.intsAttr("starts"), e = n.intsAttr("ends");
    if (!s || !e) return std::nullopt;
    p.starts = *s;
    p.ends = *e;
    if (auto a = n.intsAttr("axes")) p.axes = *a;
  } else {
    auto s = n.ints(1), e = n.ints(2);
    if (!s || !e) return std::nullopt;
    p.starts = *s;
    p.ends = *e;
    if (n.in(3)) {
      auto a = n.ints(3);
      if (!a) return std::nullopt;
      p.axes = *a;
    }
    if (n.in(4)) {
      auto st = n.ints(4);
      if (!st) return std::nullopt;
      p.steps = *st;
    }
  }
  if (p.axes.empty())
    for (size_t i = 0; i < p.starts.size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  if (p.steps.empty()) p.steps.assign(p.starts.size(), 1);
  if (p.ends.size() != p.starts.size() || p.axes.size() != p.starts.size() ||
      p.steps.size() != p.starts.size())
    return std::nullopt;
  for (int64_t& a : p.axes) {
    const std::optional<int64_t> axis = normalizeAxis(a, rank);
    if (!axis) return std::nullopt;
    a = *axis;
  }
  for (size_t i = 0; i < p.axes.size(); ++i) {
    if (p.steps[i] == 0) return std::nullopt;
    for (size_t j = 0; j < i; ++j)
      if (p.axes[i] == p.axes[j]) return std::nullopt;  // repeated axis: invalid
  }
  return p;
}

/// Start and end of a slice of a dim of `size` (> 0), clamped as ONNX says: into [0, size]
/// for a positive step, start into [0, size - 1] and end into [-1, size - 1] for a negative.
std::pair<int64_t, int64_t> clampedBounds(int64_t size, int64_t start, int64_t end, int64_t step) {
  auto clampTo = [size](int64_t x, int64_t lo, int64_t hi) {
    return std::clamp(x < 0 ? x + size : x, lo, hi);
  };
  if (step > 0) return {clampTo(start, 0, size), clampTo(end, 0, size)};
  return {clampTo(start, 0, size - 1), clampTo(end, -1, size - 1)};
}

/// The number of elements a slice of a dim of `size` takes.
int64_t sliceLength(int64_t size, int64_t start, int64_t end, int64_t step) {
  if (size <= 0) return 0;
  const auto [s, e] = clampedBounds(size, start, end, step);
  // s and e lie in [-1, size]: no overflow. ceil(span / |step|), at least 0.
  const int64_t span = step > 0 ? e - s : s - e;
  const int64_t stride =
      step > 0 ? step
               : (step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max()
                                                              : -step);
  return span <= 0 ? 0 : (span - 1) / stride + 1;
}

/// The length of a slice of a dim whose size is a symbol or unknown: provable only for the
/// whole dim (start 0, an end past any dim, step 1).
Sym symbolicSliceLength(const Sym& size, int64_t start, int64_t end, int64_t step) {
  constexpr int64_t kPastAnyDim = std::numeric_limits<int32_t>::max();
  if (step == 1 && start == 0 && end >= kPastAnyDim) return size;
  return Sym::unknown();
}

/// The length of the `i`th slice of a dim of `size` when its bounds are computed at run time
/// (opset >= 10): start and end non-negative, step 1, end - start never negative, and
/// end <= size proven (an int, or by an UpperBound), so that nothing is clamped: the
/// causal mask a decoder cuts from its [max, max] buffer by the cached and new lengths,
/// rows [P, P + S) and columns [0, P + S), once the position embedding's Gather proved
/// P + S <= max.
Sym symbolicBoundsLength(const NodeView& n, size_t i, const Sym& size) {
  if (n.opset < 10 || !size.isInt() || !n.bounds) return Sym::unknown();
  const Dims* starts = n.value(1);
  const Dims* ends = n.value(2);
  if (!starts || !ends || i >= starts->size() || starts->size() != ends->size())
    return Sym::unknown();
  if (n.in(4)) {
    const std::optional<std::vector<int64_t>> steps = n.ints(4);
    if (!steps || i >= steps->size() || (*steps)[i] != 1) return Sym::unknown();
  }
  const Sym& start = (*starts)[i];
  const Sym& end = (*ends)[i];
  const Sym length = addSyms(end, start, -1);
  if (!start.isNonNegative() || !end.isNonNegative() || !length.isNonNegative() ||
      !provablyAtMost(end, size.value, *n.bounds))
    return Sym::unknown();
  return length;
}

void sliceRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* data = n.shape(0);
  if (!data) return;
  const int64_t rank = static_cast<int64_t>(data->size());
  const std::optional<SliceParams> p = sliceParams(n, rank);
  if (!p) {
    // Bounds computed at run time: the rank stays, and the dims of axes not sliced.
    std::optional<std::vector<int64_t>> axes =
        n.opset < 10 ? n.intsAttr("axes") : (n.in(3) ? n.ints(3) : std::nullopt);
    Dims shape(data->size());
    if (axes) {
      shape = *data;
      for (size_t i = 0; i < axes->size(); ++i) {
        const std::optional<int64_t> axis = normalizeAxis((*axes)[i], rank);
        if (!axis) return;
        shape[static_cast<size_t>(*axis)] = symbolicBoundsLength(n, i, (*data)[*axis]);
      }
    }
    out[0].shape = shape;
    return;
  }
  Dims shape = *data;
  for (size_t i = 0; i < p->axes.size(); ++i) {
    const size_t axis = static_cast<size_t>(p->axes[i]);
    const Sym& size = (*data)[axis];
    shape[axis] = size.isInt()
                      ? Sym::of(sliceLength(size.value, p->starts[i], p->ends[i], p->steps[i]))
                      : symbolicSliceLength(size, p->starts[i], p->ends[i], p->steps[i]);
  }
  out[0].shape = shape;
  // A 1-D value (a shape) sliced by constant bounds.
  const Dims* value = n.value(0);
  if (!value || data->size() != 1 || !(*data)[0].isInt()) return;
  if (p->axes.empty()) {
    setValue(out[0], n.elem(0), shape, *value);
    return;
  }
  const int64_t size = (*data)[0].value;
  const int64_t first = clampedBounds(size, p->starts[0], p->ends[0], p->steps[0]).first;
  Dims picked;
  // shape[0] elements from `first` by `step`, all inside the value (the length says so).
  for (int64_t k = 0; k < shape[0].value; ++k)
    picked.push_back((*value)[static_cast<size_t>(first + k * p->steps[0])]);
  setValue(out[0], n.elem(0), shape, picked);
}

void concatRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  std::vector<const Dims*> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Dims* s = n.shape(i);
    if (!s || (!shapes.empty() && s->size() != shapes[0]->size())) return;
    shapes.push_back(s);
  }
  if (shapes.empty() || shapes[0]->empty()) return;
  const int64_t rank = static_cast<int64_t>(shapes[0]->size());
  const std::optional<int64_t> axis = normalizeAxis(n.intAttr("axis").value_or(0), rank);
  if (!axis) return;
  Dims shape(shapes[0]->size());
  Sym single;  // the axis dim when all but one input have 0 there
  int nonzero = 0;
  for (const Dims* s : shapes) {
    for (size_t d = 0; d < s->size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) continue;
      // Every input has the same dim off the axis in a valid model: any known one holds.
      if (!shape[d].known()) shape[d] = (*s)[d];
    }
    const Sym& a = (*s)[static_cast<size_t>(*axis)];
    if (!a.isInt(0)) {
      ++nonzero;
      single = a;
    }
  }
  // The sum of the lengths (a cache of P positions and S new ones: P + S), or the one
  // input's length when all others are 0.
  Sym along = Sym::of(0);
  for (const Dims* s : shapes) along = addSyms(along, (*s)[static_cast<size_t>(*axis)], 1);
  if (!along.known() && nonzero == 1) along = single;
  shape[static_cast<size_t>(*axis)] = along;
  out[0].shape = shape;
  if (rank != 1) return;
  // The elements of inputs not folded are unknown, but still hold their places.
  Dims value;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Dims* v = n.value(i);
    const Sym& length = (*shapes[i])[0];
    if (!length.isInt() || length.value > kMaxFoldedElements) return;
    if (v)
      value.insert(value.end(), v->begin(), v->end());
    else
      value.insert(value.end(), static_cast<size_t>(length.value), Sym::unknown());
  }
  setValue(out[0], n.elem(0), shape, value);
}

/// Unsqueeze/Squeeze axes: attribute before opset 13, input 1 from 13.
std::optional<std::vector<int64_t>> squeezeAxes(const NodeView& n, bool* present) {
  return n.attrOrInput("axes", 13, 1, present);
}

void unsqueezeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  bool present = false;
  const std::optional<std::vector<int64_t>> axes = squeezeAxes(n, &present);
  const Dims* in = n.shape(0);
  if (!in || !axes) return;
  const int64_t rank = static_cast<int64_t>(in->size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    const std::optional<int64_t> axis = normalizeAxis(a, rank);
    if (!axis || inserted[static_cast<size_t>(*axis)]) return;
    inserted[static_cast<size_t>(*axis)] = true;
  }
  Dims shape;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted[static_cast<size_t>(i)] ? Sym::of(1) : (*in)[next++]);
  out[0].shape = shape;
  if (const Dims* v = n.value(0)) setValue(out[0], n.elem(0), shape, *v);
}

void squeezeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  bool present = false;
  const std::optional<std::vector<int64_t>> axes = squeezeAxes(n, &present);
  const Dims* in = n.shape(0);
  if (!in || (present && !axes)) return;
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<bool> removed(in->size(), false);
  if (present) {
    for (int64_t a : *axes) {
      const std::optional<int64_t> axis = normalizeAxis(a, rank);
      if (!axis) return;
      const Sym& d = (*in)[static_cast<size_t>(*axis)];
      if (d.isInt() && d.value != 1) return;  // squeezing a dim that is not 1: invalid
      removed[static_cast<size_t>(*axis)] = true;
    }
  } else {
    // No axes: every dim of 1 goes, which needs every dim known.
    for (size_t i = 0; i < in->size(); ++i) {
      if (!(*in)[i].isInt()) return;
      removed[i] = (*in)[i].value == 1;
    }
  }
  Dims shape;
  for (size_t i = 0; i < in->size(); ++i)
    if (!removed[i]) shape.push_back((*in)[i]);
  out[0].shape = shape;
  if (const Dims* v = n.value(0)) setValue(out[0], n.elem(0), shape, *v);
}

void castRule(const NodeView& n, std::vector<Facts>& out) {
  const std::optional<int64_t> to = n.intAttr("to");
  if (!to || *to <= 0 || *to > std::numeric_limits<int32_t>::max()) return;
  out[0].elem = static_cast<int32_t>(*to);
  if (!n.shape(0)) return;
  out[0].shape = *n.shape(0);
  // Integer values survive a cast to an integer type wide enough for them.
  const Dims* v = n.value(0);
  if (!v || !isShapeElem(static_cast<int32_t>(*to)) || !isShapeElem(n.elem(0))) return;
  for (const Sym& s : *v) {
    if (*to != TensorProto::INT32) break;
    // A symbol is not known to fit in 32 bits, nor is every int.
    if (!s.isInt() || s.value < std::numeric_limits<int32_t>::min() ||
        s.value > std::numeric_limits<int32_t>::max())
      return;
  }
  setValue(out[0], static_cast<int32_t>(*to), *n.shape(0), *v);
}

/// CastLike(x, like) (opset 15): x's shape in like's element type (torchlib writes it for
/// every literal it mixes with a tensor). Values are not carried: Cast covers shapes.
void castLikeRule(const NodeView& n, std::vector<Facts>& out) {
  const int32_t to = n.elem(1);
  if (to <= 0) return;
  out[0].elem = to;
  if (n.shape(0)) out[0].shape = *n.shape(0);
}

/// k * a for a linear form a; unknown on overflow.
Sym scaleSym(const Sym& a, int64_t k) {
  if (k == 0) return Sym::of(0);
  Sym r = a;
  if (__builtin_mul_overflow(a.value, k, &r.value)) return Sym::unknown();
  for (auto& term : r.terms)
    if (__builtin_mul_overflow(term.second, k, &term.second)) return Sym::unknown();
  return r;
}

/// Integer arithmetic on two elements, or unknown. Identities hold for symbols too, and a
/// symbol plus or minus an int keeps the offset (S + 1 - S = 1).
Sym arith(const std::string& op, const Sym& a, const Sym& b) {
  int64_t r = 0;
  if (a.isInt() && b.isInt()) {
    if (op == "Add" && !__builtin_add_overflow(a.value, b.value, &r)) return Sym::of(r);
    if (op == "Sub" && !__builtin_sub_overflow(a.value, b.value, &r)) return Sym::of(r);
    if (op == "Mul" && !__builtin_mul_overflow(a.value, b.value, &r)) return Sym::of(r);
    // Integer Div truncates in ONNX Runtime, floors in numpy: only exact or non-negative.
    if (op == "Div" && b.value != 0 &&
        !(a.value == std::numeric_limits<int64_t>::min() && b.value == -1) &&
        (a.value % b.value == 0 || (a.value >= 0 && b.value > 0)))
      return Sym::of(a.value / b.value);
    return Sym::unknown();
  }
  if (op == "Add") return addSyms(a, b, 1);
  if (op == "Sub") return addSyms(a, b, -1);
  // A linear form times an int (a batch of heads: B * N) is one too.
  if (op == "Mul" && b.isInt() && a.known()) return scaleSym(a, b.value);
  if (op == "Mul" && a.isInt() && b.known()) return scaleSym(b, a.value);
  if (op == "Div" && b.isInt(1)) return a;
  return Sym::unknown();
}

/// Folds a broadcasting op elementwise over small values; `pick` combines the elements.
template <typename Pick>
void foldBroadcast(const NodeView& n, Facts& out, size_t inputs, const Dims& shape, int32_t elem,
                   Pick pick) {
  const std::optional<int64_t> count = staticCount(shape);
  if (!count) return;
  std::vector<const Dims*> values, shapes;
  for (size_t i = 0; i < inputs; ++i) {
    if (!n.value(i) || !n.shape(i)) return;
    values.push_back(n.value(i));
    shapes.push_back(n.shape(i));
  }
  Dims result;
  std::vector<Sym> args(inputs);
  for (int64_t flat = 0; flat < *count; ++flat) {
    for (size_t i = 0; i < inputs; ++i) {
      // The element of input i that broadcasts to output position `flat`.
      int64_t rest = flat, index = 0, stride = 1;
      const Dims& s = *shapes[i];
      for (size_t d = shape.size(); d-- > 0;) {
        const int64_t coord = rest % shape[d].value;
        rest /= shape[d].value;
        const size_t k = d + s.size();
        if (k < shape.size()) continue;  // a leading dim the input lacks
        const int64_t dim = s[k - shape.size()].value;
        index += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
      }
      args[i] = (*values[i])[static_cast<size_t>(index)];
    }
    result.push_back(pick(args));
  }
  setValue(out, elem, shape, result);
}

std::optional<Dims> broadcastInputs(const NodeView& n, size_t inputs) {
  std::optional<Dims> shape = Dims{};
  for (size_t i = 0; i < inputs; ++i) {
    if (!n.shape(i)) return std::nullopt;
    shape = broadcastShapes(*shape, *n.shape(i));
    if (!shape) return std::nullopt;
  }
  return shape;
}

void arithmeticRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  if (n.inputs.size() != 2) return;
  const std::optional<Dims> shape = broadcastInputs(n, 2);
  if (!shape) return;
  out[0].shape = shape;
  if (!isShapeElem(n.elem(0))) return;
  const std::string& op = n.node.op_type();
  foldBroadcast(n, out[0], 2, *shape, n.elem(0),
                [&op](const std::vector<Sym>& a) { return arith(op, a[0], a[1]); });
}

void equalRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = TensorProto::BOOL;
  if (n.inputs.size() != 2) return;
  const std::optional<Dims> shape = broadcastInputs(n, 2);
  if (!shape) return;
  out[0].shape = shape;
  if (!isShapeElem(n.elem(0))) return;
  foldBroadcast(n, out[0], 2, *shape, TensorProto::BOOL, [](const std::vector<Sym>& a) {
    if (a[0].isInt() && a[1].isInt()) return Sym::of(a[0].value == a[1].value ? 1 : 0);
    if (a[0].same(a[1])) return Sym::of(1);
    // Linear forms that differ by a non-zero int are different numbers.
    if (addSyms(a[0], a[1], -1).isInt()) return Sym::of(0);
    // A symbol is a dim, never negative: it differs from any negative int (Reshape's -1).
    if ((a[0].isNonNegative() && a[1].isInt() && a[1].value < 0) ||
        (a[1].isNonNegative() && a[0].isInt() && a[0].value < 0))
      return Sym::of(0);
    return Sym::unknown();
  });
}

/// Abs(x): torchlib's aten_expand takes Abs of its size, turning expand's -1 ("keep this
/// dim") into a 1 that Expand broadcasts the same. A dim is never negative.
void absRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  if (n.inputs.size() != 1 || !n.shape(0)) return;
  out[0].shape = *n.shape(0);
  const Dims* v = n.value(0);
  if (!v || !isShapeElem(n.elem(0))) return;
  Dims abs;
  for (const Sym& s : *v) {
    if (s.isInt() && s.value != std::numeric_limits<int64_t>::min())
      abs.push_back(Sym::of(s.value < 0 ? -s.value : s.value));
    else
      abs.push_back(s.isNonNegative() ? s : Sym::unknown());
  }
  setValue(out[0], n.elem(0), *n.shape(0), std::move(abs));
}

void whereRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(1) ? n.elem(1) : n.elem(2);
  if (n.inputs.size() != 3) return;
  const std::optional<Dims> shape = broadcastInputs(n, 3);
  if (!shape) return;
  out[0].shape = shape;
  if (!isShapeElem(out[0].elem)) return;
  foldBroadcast(n, out[0], 3, *shape, out[0].elem, [](const std::vector<Sym>& a) {
    if (!a[0].isInt()) return Sym::unknown();
    return a[0].value != 0 ? a[1] : a[2];
  });
}

void rangeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* start = n.value(0);
  const Dims* limit = n.value(1);
  const Dims* delta = n.value(2);
  out[0].shape = Dims{Sym::unknown()};
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return;
  const Sym &s = (*start)[0], &l = (*limit)[0], &d = (*delta)[0];
  if (d.isInt(1) && isShapeElem(n.elem(0))) out[0].span = IntSpan{s, l};
  const Sym span = addSyms(l, s, -1);  // also P + S - P = S
  if (span.isSymbol() && d.isInt(1) && span.isNonNegative()) {
    (*out[0].shape)[0] = span;
    return;
  }
  if (!span.isInt() || !d.isInt() || d.value == 0) {
    // Range(0, n, 1) has n elements; a dim n (plus a non-negative offset) is never negative.
    if (s.isInt(0) && d.isInt(1) && l.isNonNegative()) (*out[0].shape)[0] = l;
    return;
  }
  // ceil(span / delta), at least 0.
  int64_t len = span.value / d.value +
                ((span.value % d.value != 0 && ((span.value < 0) == (d.value < 0))) ? 1 : 0);
  len = std::max<int64_t>(len, 0);
  (*out[0].shape)[0] = Sym::of(len);
  if (len > kMaxFoldedElements || !isShapeElem(n.elem(0)) || !s.isInt()) return;
  Dims value;
  for (int64_t i = 0; i < len; ++i) value.push_back(Sym::of(s.value + i * d.value));
  setValue(out[0], n.elem(0), *out[0].shape, value);
}

/// A shape tensor's elements as the dims of an output: negative ints are invalid dims.
std::optional<Dims> dimsFromValue(const Dims& value) {
  for (const Sym& s : value)
    if (s.isInt() && s.value < 0) return std::nullopt;
  return value;
}

void constantOfShapeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = TensorProto::FLOAT;
  std::optional<Dims> fill;
  if (const onnx::AttributeProto* a = n.attr("value"); a && a->has_t()) {
    out[0].elem = a->t().data_type();
    fill = smallIntTensor(a->t());
    if (fill && fill->size() != 1) return;
  }
  // The shape's length is the output's rank.
  const Dims* length = n.shape(0);
  if (length && length->size() == 1 && (*length)[0].isInt() &&
      (*length)[0].value <= kMaxFoldedElements)
    out[0].shape = Dims(static_cast<size_t>((*length)[0].value));
  const Dims* v = n.value(0);
  if (!v) return;
  const std::optional<Dims> shape = dimsFromValue(*v);
  if (!shape) return;
  out[0].shape = shape;
  const std::optional<int64_t> count = staticCount(*shape);
  if (fill && count && isShapeElem(out[0].elem))
    setValue(out[0], out[0].elem, *shape, Dims(static_cast<size_t>(*count), (*fill)[0]));
}

/// The element count of `dims` as an int coefficient times a product of symbolic factors
/// (each a linear form, opaque); nullopt when a dim is unknown or the count overflows.
struct Product {
  int64_t coefficient = 1;
  std::vector<Sym> factors;  // sorted by factorOrder
};

bool factorOrder(const Sym& a, const Sym& b) {
  return std::tie(a.terms, a.value) < std::tie(b.terms, b.value);
}

std::optional<Product> productOf(const Dims& dims) {
  Product p;
  for (const Sym& d : dims) {
    if (d.isInt()) {
      if (d.value < 0 || __builtin_mul_overflow(p.coefficient, d.value, &p.coefficient))
        return std::nullopt;
    } else if (d.isSymbol() && d.value == 0 && d.terms.size() == 1 && d.terms[0].second > 1) {
      // c*X (a batch of heads, B*N with N static) is the factor X, c times.
      if (__builtin_mul_overflow(p.coefficient, d.terms[0].second, &p.coefficient))
        return std::nullopt;
      p.factors.push_back(Sym::symbol(d.terms[0].first));
    } else if (d.isSymbol()) {
      p.factors.push_back(d);
    } else {
      return std::nullopt;
    }
  }
  std::sort(p.factors.begin(), p.factors.end(), factorOrder);
  return p;
}

/// in / rest when provably an int or an int times one symbolic factor (Reshape's -1: the
/// 4*B tokens of TensorFlow's BERT, which flattens [B, 4, H] to rows [-1, H]).
Sym quotient(const Product& in, const Product& rest) {
  if (rest.coefficient <= 0 || in.coefficient % rest.coefficient != 0) return Sym::unknown();
  std::vector<Sym> left;
  std::set_difference(in.factors.begin(), in.factors.end(), rest.factors.begin(),
                      rest.factors.end(), std::back_inserter(left), factorOrder);
  // Every factor of the rest must cancel against one of the input.
  if (left.size() + rest.factors.size() != in.factors.size()) return Sym::unknown();
  const int64_t c = in.coefficient / rest.coefficient;
  if (left.empty()) return Sym::of(c);
  if (left.size() == 1) return scaleSym(left[0], c);
  return Sym::unknown();  // a product of symbols has no name
}

void reshapeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* target = n.value(1);
  const Dims* in = n.shape(0);
  if (!target) {
    // A target of known length still fixes the rank.
    const Dims* ts = n.shape(1);
    if (ts && ts->size() == 1 && (*ts)[0].isInt() && (*ts)[0].value <= kMaxFoldedElements)
      out[0].shape = Dims(static_cast<size_t>((*ts)[0].value));
    return;
  }
  const bool allowzero = n.intAttr("allowzero").value_or(0) != 0;
  Dims shape;
  int minus_one = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const Sym& t = (*target)[i];
    if (t.isInt(0) && !allowzero) {
      // 0 copies the input's dim. (A symbol that is 0 in some run would copy too; a dim
      // named by a symbol is taken as the dim of a non-empty tensor, as ONNX does.)
      shape.push_back(in && i < in->size() ? (*in)[i] : Sym::unknown());
      if (in && i >= in->size()) return;  // invalid
    } else if (t.isInt(-1)) {
      if (minus_one >= 0) return;  // two -1: invalid
      minus_one = static_cast<int>(i);
      shape.push_back(Sym::unknown());
    } else if (t.isInt() && t.value < 0) {
      return;  // invalid
    } else {
      shape.push_back(t);
    }
  }
  if (minus_one >= 0 && in) {
    Dims rest = shape;
    rest.erase(rest.begin() + minus_one);
    const std::optional<Product> whole = productOf(*in), part = productOf(rest);
    if (whole && part) shape[static_cast<size_t>(minus_one)] = quotient(*whole, *part);
  }
  out[0].shape = shape;
  if (const Dims* v = n.value(0)) setValue(out[0], n.elem(0), shape, *v);
}

/// The product of `dims` as one int or one symbolic factor (S * 1 * 1 is S), else unknown.
Sym productDim(const Dims& dims) {
  const std::optional<Product> p = productOf(dims);
  return p ? quotient(*p, Product{}) : Sym::unknown();
}

/// Flatten(x, axis): [product of the dims before axis, product of the rest].
void flattenRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* in = n.shape(0);
  if (!in) return;
  const int64_t rank = static_cast<int64_t>(in->size());
  const int64_t axis = n.intAttr("axis").value_or(1);
  // Flatten takes axis in [-rank, rank] (rank: everything before it).
  if (axis < -rank || axis > rank) return;
  const size_t split = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  out[0].shape = Dims{productDim(Dims(in->begin(), in->begin() + split)),
                      productDim(Dims(in->begin() + split, in->end()))};
}

/// Size(x): the element count, a scalar.
void sizeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = TensorProto::INT64;
  out[0].shape = Dims{};
  const Dims* in = n.shape(0);
  if (!in) return;
  const Sym count = productDim(*in);
  if (count.known()) setValue(out[0], TensorProto::INT64, Dims{}, Dims{count});
}

void expandRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* in = n.shape(0);
  if (!in) return;
  if (const Dims* target = n.value(1)) {
    const std::optional<Dims> dims = dimsFromValue(*target);
    if (dims) out[0].shape = broadcastShapes(*in, *dims);
    return;
  }
  // A target computed where its elements are not known (a rewrite's new node, typed alone)
  // still has a length: the rank, and the input's dims above 1, which every target dim
  // must be 1 or equal to.
  const Dims* ts = n.shape(1);
  if (ts && ts->size() == 1 && (*ts)[0].isInt() && (*ts)[0].value >= 0 &&
      (*ts)[0].value <= kMaxFoldedElements)
    out[0].shape = broadcastShapes(*in, Dims(static_cast<size_t>((*ts)[0].value)));
}

void tileRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* in = n.shape(0);
  const std::optional<std::vector<int64_t>> repeats = n.ints(1);
  if (!in || !repeats || repeats->size() != in->size()) return;
  Dims shape;
  for (size_t i = 0; i < in->size(); ++i) {
    const int64_t r = (*repeats)[i];
    if (r < 0) return;
    Sym d = (*in)[i];
    if (r == 0)
      d = Sym::of(0);
    else if (d.isInt())
      d = __builtin_mul_overflow(d.value, r, &d.value) ? Sym::unknown() : d;
    else if (r != 1)
      d = Sym::unknown();
    shape.push_back(d);
  }
  out[0].shape = shape;
}

}  // namespace

void forwardSpan(const NodeView& n, std::vector<Facts>& out) {
  const Facts* in = n.in(0);
  if (!in || !in->span || out.empty() || !n.node.domain().empty()) return;
  const std::string& op = n.node.op_type();
  bool keeps = op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Flatten" ||
               op == "Identity";
  if (op == "Cast") {
    // int32 -> int32/int64 and int64 -> int64 keep every value; a narrowing Cast wraps.
    const int64_t to = n.intAttr("to").value_or(0);
    keeps = to == TensorProto::INT64 ? isShapeElem(in->elem)
                                     : to == TensorProto::INT32 && in->elem == TensorProto::INT32;
  }
  if (keeps) out[0].span = in->span;
}

void recordIndexBound(const NodeView& n, UpperBounds& bounds) {
  const Dims* data = n.shape(0);
  const Facts* indices = n.in(1);
  if (!data || !indices || !indices->span || !n.node.domain().empty() ||
      n.node.op_type() != "Gather")
    return;
  const std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis").value_or(0), static_cast<int64_t>(data->size()));
  if (!axis || !(*data)[static_cast<size_t>(*axis)].isInt()) return;
  const IntSpan& span = *indices->span;
  // Every index is >= 0 (no wrap from the end), and there is one: limit - 1 < R.
  const Sym count = addSyms(span.limit, span.start, -1);
  if (!span.start.isNonNegative() || !count.isInt() || count.value < 1) return;
  bounds.push_back({span.limit, (*data)[static_cast<size_t>(*axis)].value});
}

void addValueOpRules(OpRules& rules) {
  rules["Constant"] = constantRule;
  rules["Shape"] = shapeRule;
  rules["Identity"] = identityRule;
  rules["Gather"] = gatherRule;
  rules["Slice"] = sliceRule;
  rules["Concat"] = concatRule;
  rules["Unsqueeze"] = unsqueezeRule;
  rules["Squeeze"] = squeezeRule;
  rules["Cast"] = castRule;
  rules["CastLike"] = castLikeRule;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) rules[op] = arithmeticRule;
  rules["Equal"] = equalRule;
  rules["Where"] = whereRule;
  rules["Abs"] = absRule;
  rules["Range"] = rangeRule;
  rules["ConstantOfShape"] = constantOfShapeRule;
  rules["Reshape"] = reshapeRule;
  rules["Expand"] = expandRule;
  rules["Tile"] = tileRule;
  rules["Flatten"] = flattenRule;
  rules["Size"] = sizeRule;
}

}  // namespace onnx_rewrite::symbolic
