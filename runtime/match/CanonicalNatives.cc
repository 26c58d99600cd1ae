//===- CanonicalNatives.cc - what canonicalization proves of a value ------===//
//
// A model exported without its attention_mask input still builds the mask, from ones of
// the input's shape (transformers' `torch.ones(input_shape)`): a ConstantOfShape or an
// Expand of 1.0, then the mask arithmetic of the model: (1 - mask) * finfo.min, a zero
// everywhere; or masked_fill(mask == 0, ...), which fills nothing. The attention rules
// cannot tell such a mask from a real one, and a fused op would carry a mask that does
// nothing (ONNX Runtime's own tests build DistilBERT over a constant mask of ones).
// uniformValue follows a value back through constants, ConstantOfShape, the ops that only
// move or repeat elements, and elementwise arithmetic and comparisons of such values, to
// the one value every element has, rounded as the model's element type rounds it; the
// canonicalization rules then drop the Where that never chooses and the Add of a zero.
// It also reads a static dim out of Shape (Gather(Shape(t), i)), so that a scale computed
// from a head size at run time, as torchlib's SDPA does before constant folding, becomes
// the constant the attention rules read.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/TensorData.h"
#include "runtime/match/DimReads.h"
#include "runtime/match/GeneratedSupport.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

using onnx::TensorProto;

/// Constants larger than this are not read to see whether they are uniform.
constexpr int64_t kMaxUniformElements = 1 << 16;
constexpr int kMaxDepth = 24;

/// `x` as an element of type `elem` holds it, when that is exact enough to reason with:
/// float rounds to nearest (and overflows to infinity), double is x, integers and bool must
/// hold x exactly, within their type's range (a cast or a sum outside it wraps, or is
/// undefined), float16 only its small integers. Nullopt otherwise.
std::optional<double> roundTo(int32_t elem, double x) {
  if (std::isnan(x)) return std::nullopt;
  auto integer = [&](double lo, double hi) -> std::optional<double> {
    if (x == std::trunc(x) && x >= lo && x <= hi) return x;
    return std::nullopt;
  };
  switch (elem) {
    case TensorProto::DOUBLE:
      return x;
    case TensorProto::FLOAT:
      if (std::fabs(x) >= 3.4028235677973366e38) return std::copysign(INFINITY, x);
      return static_cast<double>(static_cast<float>(x));
    case TensorProto::FLOAT16:
      if (x == std::trunc(x) && std::fabs(x) <= 2048) return x;
      return std::nullopt;
    case TensorProto::BOOL:
      if (x == 0 || x == 1) return x;
      return std::nullopt;
    case TensorProto::INT64:
      return integer(-9007199254740992.0, 9007199254740992.0);  // exact in a double
    case TensorProto::INT32:
      return integer(-2147483648.0, 2147483647.0);
    case TensorProto::INT16:
      return integer(-32768, 32767);
    case TensorProto::INT8:
      return integer(-128, 127);
    case TensorProto::UINT8:
      return integer(0, 255);
    default:
      return std::nullopt;
  }
}

/// True for the floating-point element types the analysis reasons about.
bool isFloating(int32_t elem) {
  return elem == TensorProto::FLOAT || elem == TensorProto::DOUBLE || elem == TensorProto::FLOAT16;
}

/// x cast to numeric type `target` (not bool): float to integer truncates toward zero.
std::optional<double> castTo(int32_t target, double x) {
  return roundTo(target, isFloating(target) ? x : std::trunc(x));
}

/// The value every element of constant tensor `t` has (its bytes all alike), else nullopt.
std::optional<double> uniformTensor(Model& model, const TensorProto& t) {
  const size_t element = elementSize(t.data_type());
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxUniformElements) return std::nullopt;
    count *= d;
  }
  if (element == 0 || count == 0 || count > kMaxUniformElements) return std::nullopt;
  try {
    const TensorBytes bytes = model.readTensorData(t, static_cast<uint64_t>(count) * element);
    for (int64_t i = 1; i < count; ++i)
      if (std::memcmp(bytes.bytes.data(), bytes.bytes.data() + i * element, element) != 0)
        return std::nullopt;
    return roundTo(t.data_type(), elementAsDouble(bytes, 0));
  } catch (const ModelError&) {
    return std::nullopt;  // unreadable: nothing proven
  }
}

std::optional<double> uniformValue(const MatchContext& ctx, ValueId v, int depth);

std::optional<double> arithmetic(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return b == 0 ? std::nullopt : std::optional<double>(a / b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "Greater") return a > b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  if (op == "Xor") return (a != 0) != (b != 0);
  return std::nullopt;
}

/// The dims Shape(t, start, end) node `shape` reads (-1 where not static), or nullopt.
std::optional<std::vector<int64_t>> shapeOutput(const MatchContext& ctx, const Node& shape) {
  std::optional<std::vector<int64_t>> dims = staticShape(ctx.graph, shape.input(0));
  if (!dims) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims->size());
  auto clamp = [&](int64_t a) {
    return std::min(std::max(a < 0 ? a + rank : a, int64_t{0}), rank);
  };
  const onnx::AttributeProto* start_attr = shape.attribute("start");
  const onnx::AttributeProto* end_attr = shape.attribute("end");
  const int64_t start = clamp(start_attr ? start_attr->i() : 0);
  const int64_t end = std::max(start, clamp(end_attr ? end_attr->i() : rank));
  return std::vector<int64_t>(dims->begin() + start, dims->begin() + end);
}

/// What Shape node `shape`'s output holds everywhere: its dims when they are all one static
/// size (Shape(t, start=-1) of a static last dim).
std::optional<double> uniformDims(const MatchContext& ctx, const Node& shape) {
  const std::optional<std::vector<int64_t>> dims = shapeOutput(ctx, shape);
  if (!dims || dims->empty() || (*dims)[0] < 0) return std::nullopt;
  for (int64_t d : *dims)
    if (d != (*dims)[0]) return std::nullopt;
  return static_cast<double>((*dims)[0]);
}

/// Dim `i` of `t` read by Gather(Shape(t, start, end), i) when it is static: the one value a
/// one-element index picks.
std::optional<double> gatheredDim(const MatchContext& ctx, const Node& shape, ValueId index) {
  const std::optional<std::vector<double>> i = constantValues(ctx.model, ctx.graph, index, 1);
  const std::optional<std::vector<int64_t>> dims = shapeOutput(ctx, shape);
  if (!i || i->size() != 1 || !dims) return std::nullopt;
  const int64_t length = static_cast<int64_t>(dims->size());
  int64_t k = static_cast<int64_t>((*i)[0]);
  if (k < 0) k += length;
  if (k < 0 || k >= length || (*dims)[static_cast<size_t>(k)] < 0) return std::nullopt;
  return static_cast<double>((*dims)[static_cast<size_t>(k)]);
}

/// What Slice(Shape(t, start, end), starts, ends[, axes, steps]) node `slice` holds
/// everywhere, with one constant bound each, axis 0 and step 1 (TorchScript's
/// x.size()[-1:], as its SDPA scale reads the head size): the dims it keeps when they are
/// all one static size. An empty slice holds nothing to prove.
std::optional<double> slicedDims(const MatchContext& ctx, const Node& shape, const Node& slice) {
  const std::optional<std::vector<int64_t>> dims = shapeOutput(ctx, shape);
  if (!dims) return std::nullopt;
  auto one = [&](size_t i) -> std::optional<double> {
    if (i >= slice.inputs().size() || slice.input(i) == kNoId) return std::nullopt;
    const std::optional<std::vector<double>> v =
        constantValues(ctx.model, ctx.graph, slice.input(i), 1);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  };
  const std::optional<double> start = one(1), end = one(2);
  if (!start || !end) return std::nullopt;
  if (slice.inputs().size() > 3 && slice.input(3) != kNoId && one(3) != 0.0 && one(3) != -1.0)
    return std::nullopt;
  if (slice.inputs().size() > 4 && slice.input(4) != kNoId && one(4) != 1.0) return std::nullopt;
  // Clamped in double: torch's "to the end" is INT64_MAX, which no int64 cast survives.
  const double length = static_cast<double>(dims->size());
  auto clamp = [&](double x) { return std::min(std::max(x < 0 ? x + length : x, 0.0), length); };
  const size_t lo = static_cast<size_t>(clamp(*start)), hi = static_cast<size_t>(clamp(*end));
  if (lo >= hi || (*dims)[lo] < 0) return std::nullopt;
  for (size_t i = lo; i < hi; ++i)
    if ((*dims)[i] != (*dims)[lo]) return std::nullopt;
  return static_cast<double>((*dims)[lo]);
}

/// What `n`'s output `out` holds everywhere, by its op.
std::optional<double> uniformOutput(const MatchContext& ctx, const Node& n, ValueId out,
                                    int depth) {
  const std::string& op = n.opType();
  auto input = [&](size_t i) -> std::optional<double> {
    if (i >= n.inputs().size()) return std::nullopt;
    return uniformValue(ctx, n.input(i), depth + 1);
  };
  const int32_t elem = valueElemType(ctx.graph, out);
  if (op == "ConstantOfShape") {
    const onnx::AttributeProto* value = n.attribute("value");
    if (!value) return 0.0;  // float 0 by default
    if (!value->has_t()) return std::nullopt;
    return uniformTensor(ctx.model, value->t());
  }
  if (op == "Shape") return uniformDims(ctx, n);
  if (op == "Gather" && n.inputs().size() == 2)
    if (const Node* shape = ctx.graph.producerOf(n.input(0));
        shape && shape->live() && shape->opType() == "Shape" && shape->domain().empty())
      return gatheredDim(ctx, *shape, n.input(1));
  if (op == "Slice" && n.inputs().size() >= 3)
    if (const Node* shape = ctx.graph.producerOf(n.input(0));
        shape && shape->live() && shape->opType() == "Shape" && shape->domain().empty())
      return slicedDims(ctx, *shape, n);
  // Ops that only move, pick or repeat elements (their other inputs are shapes, axes or
  // indices; on inputs they reject the model fails as well).
  if (op == "Identity" || op == "Reshape" || op == "Expand" || op == "Unsqueeze" ||
      op == "Squeeze" || op == "Flatten" || op == "Transpose" || op == "Slice" || op == "Tile" ||
      op == "Gather")
    return input(0);
  if (op == "Concat") {
    std::optional<double> all;
    for (size_t i = 0; i < n.inputs().size(); ++i) {
      const std::optional<double> x = input(i);
      if (!x || (all && *all != *x)) return std::nullopt;
      all = x;
    }
    return all;
  }
  if (op == "Where") {
    if (const std::optional<double> c = input(0)) return *c != 0 ? input(1) : input(2);
    const std::optional<double> a = input(1), b = input(2);
    if (a && b && *a == *b) return a;
    return std::nullopt;
  }
  if (op == "Cast") {
    const std::optional<double> x = input(0);
    if (!x) return std::nullopt;
    const onnx::AttributeProto* to = n.attribute("to");
    if (!to) return std::nullopt;
    const int32_t target = static_cast<int32_t>(to->i());
    if (target == TensorProto::BOOL) return *x != 0 ? 1.0 : 0.0;
    return castTo(target, *x);
  }
  if (op == "CastLike" && n.inputs().size() == 2) {
    const std::optional<double> x = input(0);
    const int32_t target = valueElemType(ctx.graph, n.input(1));
    if (!x || target == TensorProto::BOOL) return std::nullopt;
    return castTo(target, *x);
  }
  // Square root and reciprocal are correctly rounded in double, so rounding that to float
  // again gives what a float kernel gives (IEEE 754 requires both correctly rounded).
  if (op == "Sqrt") {
    const std::optional<double> x = input(0);
    if (!x || *x < 0) return std::nullopt;
    return roundTo(elem, std::sqrt(*x));
  }
  if (op == "Reciprocal") {
    const std::optional<double> x = input(0);
    if (!x || *x == 0) return std::nullopt;
    return roundTo(elem, 1.0 / *x);
  }
  if (op == "Not") {
    const std::optional<double> x = input(0);
    if (!x) return std::nullopt;
    return *x != 0 ? 0.0 : 1.0;
  }
  if (op == "Neg") {
    const std::optional<double> x = input(0);
    if (!x) return std::nullopt;
    return roundTo(elem, -*x);
  }
  if (n.inputs().size() != 2) return std::nullopt;
  const std::optional<double> a = input(0);
  if (!a) return std::nullopt;
  const std::optional<double> b = input(1);
  if (!b) return std::nullopt;
  const bool integer_div = op == "Div" && !isFloating(elem);
  const std::optional<double> r = arithmetic(op, *a, *b);
  if (!r || (integer_div && *r != std::trunc(*r))) return std::nullopt;
  const bool logical = op != "Add" && op != "Sub" && op != "Mul" && op != "Div";
  return logical ? r : roundTo(elem, *r);
}

std::optional<double> uniformValue(const MatchContext& ctx, ValueId v, int depth) {
  if (v == kNoId || depth > kMaxDepth) return std::nullopt;
  if (const TensorProto* t = constantTensor(ctx.graph, v)) return uniformTensor(ctx.model, *t);
  const Node* n = ctx.graph.producerOf(v);
  if (!n || !n->live() || !n->domain().empty()) return std::nullopt;
  return uniformOutput(ctx, *n, v, depth);
}

/// never_true(c): every element of c is false (0), by construction.
bool neverTrue(const MatchContext& ctx, ValueArgs args) {
  const std::optional<double> c = uniformValue(ctx, args[0], 0);
  return c && *c == 0;
}

/// always_true(c): every element of c is true (nonzero), by construction.
bool alwaysTrue(const MatchContext& ctx, ValueArgs args) {
  const std::optional<double> c = uniformValue(ctx, args[0], 0);
  return c && *c != 0;
}

/// all_zero(z): every element of z is 0 (or -0), by construction.
bool allZero(const MatchContext& ctx, ValueArgs args) {
  const std::optional<double> z = uniformValue(ctx, args[0], 0);
  return z && *z == 0;
}

/// The one element of floating-point value `v` of at most one element, when it is computed
/// (not a constant itself) from constants and static dims alone.
std::optional<double> constantDerivedScalar(const MatchContext& ctx, ValueId v) {
  const onnx::TensorShapeProto* shape = valueShape(ctx.graph, v);
  const int32_t elem = valueElemType(ctx.graph, v);
  if (!shape || shape->dim_size() > 1 || constantTensor(ctx.graph, v)) return std::nullopt;
  if (shape->dim_size() == 1 && (!shape->dim(0).has_dim_value() || shape->dim(0).dim_value() != 1))
    return std::nullopt;
  if (elem != TensorProto::FLOAT && elem != TensorProto::DOUBLE) return std::nullopt;
  return uniformValue(ctx, v, 0);
}

/// computed_from_constants(y): see constantDerivedScalar; and y is the whole computation,
/// not a part of a reader that is one too (that reader is folded instead, taking y with it).
bool computedFromConstants(const MatchContext& ctx, ValueArgs args) {
  if (!constantDerivedScalar(ctx, args[0])) return false;
  for (const Use& u : ctx.graph.value(args[0]).uses()) {
    if (u.input == kSubgraphUse) continue;
    const Node& reader = ctx.graph.node(u.node);
    if (reader.outputs().size() == 1 && constantDerivedScalar(ctx, reader.output(0))) return false;
  }
  return true;
}

/// The tensor of element type `elem` and `dims` whose one element is x, built as a rewrite's
/// tensor literals are (float16 rounded to nearest even).
std::optional<onnx::TensorProto> scalarTensor(int32_t elem, std::vector<int64_t> dims, double x) {
  gen::Literal value;
  value.kind = gen::Literal::Kind::kFloat;
  value.floats = {x};
  return gen::literalTensor(value, elem, dims);
}

/// Constant `v` of one numeric element: its tensor and that element, else nullopt.
std::optional<std::pair<const onnx::TensorProto*, double>> oneElementConstant(
    const MatchContext& ctx, ValueId v) {
  const onnx::TensorProto* t = constantTensor(ctx.graph, v);
  std::vector<double> value;
  if (!t || tensorElementCount(*t) != 1 ||
      !readConstantDoubles(ctx.model, ctx.graph, v, value, 1) || value.size() != 1)
    return std::nullopt;
  return std::make_pair(t, value[0]);
}

/// constant_scalar(y): the constant computed_from_constants(y) proved, of y's type and shape.
std::optional<onnx::TensorProto> constantScalar(const MatchContext& ctx, ValueArgs args) {
  const std::optional<double> x = constantDerivedScalar(ctx, args[0]);
  if (!x) return std::nullopt;
  const auto rank = static_cast<size_t>(valueShape(ctx.graph, args[0])->dim_size());
  return scalarTensor(valueElemType(ctx.graph, args[0]), std::vector<int64_t>(rank, 1), *x);
}

/// y = Cast(c) of a one-element constant c as a constant of y's type and c's shape, when the
/// value is computed exactly as the Cast would: to float or double from a floating c or an
/// integer of at most 2^24; to float16 only from float or float16 (one rounding, as the
/// kernel's). Nullopt otherwise (other types, bool, a c that cannot be read).
std::optional<onnx::TensorProto> castScalarConstant(const MatchContext& ctx, ValueId y) {
  const Node* cast = producerOp(ctx.graph, y, "Cast");
  const int32_t to = valueElemType(ctx.graph, y);
  if (!cast || !valueShape(ctx.graph, y) || !isFloating(to)) return std::nullopt;
  const auto c = oneElementConstant(ctx, cast->input(0));
  if (!c) return std::nullopt;
  const auto [tensor, x] = *c;
  const int32_t from = tensor->data_type();
  if (from == TensorProto::BOOL) return std::nullopt;
  if (!isFloating(from) && std::fabs(x) > 16777216.0) return std::nullopt;
  if (to == TensorProto::FLOAT16 && from != TensorProto::FLOAT && from != TensorProto::FLOAT16)
    return std::nullopt;
  return scalarTensor(to, {tensor->dims().begin(), tensor->dims().end()}, x);
}

/// negated(c): -c of the one-element float, double or float16 constant c, of c's type and
/// shape (a sign flip: exact).
std::optional<onnx::TensorProto> negated(const MatchContext& ctx, ValueArgs args) {
  const auto c = oneElementConstant(ctx, args[0]);
  if (!c || !isFloating(c->first->data_type())) return std::nullopt;
  return scalarTensor(c->first->data_type(), {c->first->dims().begin(), c->first->dims().end()},
                      -c->second);
}

/// cast_of_scalar(y): see castScalarConstant.
bool castOfScalar(const MatchContext& ctx, ValueArgs args) {
  return castScalarConstant(ctx, args[0]).has_value();
}

/// cast_scalar(y): the constant cast_of_scalar(y) proved y to hold.
std::optional<onnx::TensorProto> castScalar(const MatchContext& ctx, ValueArgs args) {
  return castScalarConstant(ctx, args[0]);
}

/// same_shape(a, b): a and b have one known rank and every dim alike (see sameDim).
bool sameShape(const MatchContext& ctx, ValueArgs args) {
  const onnx::TensorShapeProto* a = valueShape(ctx.graph, args[0]);
  const onnx::TensorShapeProto* b = valueShape(ctx.graph, args[1]);
  if (!a || !b || a->dim_size() != b->dim_size()) return false;
  for (int i = 0; i < a->dim_size(); ++i)
    if (!sameDim(ctx.graph, args[0], i, args[1], i)) return false;
  return true;
}

/// slices_whole(y): y = Slice(x, starts, ends, axes, steps) takes every axis it slices
/// whole: starts 0, steps 1 (or absent), and each end x's own dim on that axis, read at run
/// time from a value with the same dim (Hugging Face's attention_mask[..., :key.shape[-2]]
/// when the mask is as long as the keys) or a constant at least x's static size.
bool slicesWhole(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const Node* slice = producerOp(g, args[0], "Slice");
  if (!slice) return false;
  const ValueId x = slice->input(0);
  const NodeId id = g.value(args[0]).producer();
  const auto rank = valueRank(g, x);
  const auto p = rank ? prefixSlice(ctx.model, g, id, *rank) : std::nullopt;
  if (!p || p->axes.empty()) return false;
  std::vector<int64_t> ends;
  if (!readIntsParam(ctx.model, g, id, "ends", ends)) {
    // A computed end is one dim read: one sliced axis.
    return p->ends.kind == ParamRef::Kind::kInput && p->axes.size() == 1 &&
           isDimOf(ctx, p->ends.input, x, static_cast<int>(p->axes[0]));
  }
  if (ends.size() != p->axes.size()) return false;
  for (size_t i = 0; i < ends.size(); ++i) {
    const auto size = staticDim(g, x, static_cast<size_t>(p->axes[i]));
    if (!size || ends[i] < *size) return false;
  }
  return true;
}

bool zeroOrHuge(double x) { return x == 0 || x <= kHugeNegative; }

/// True when every element of float `v` is 0 or at most -2^100, by construction: constants,
/// ConstantOfShape, Where of two such values, Where(Cast(x, bool), such a value, x) (x where
/// it is 0: Hugging Face's masked_fill(inverted.bool(), finfo.min)), sums of such values,
/// and element moves of one (Expand, Reshape, Unsqueeze, Squeeze, Transpose, Slice, Tile,
/// Concat, float casts).
bool zeroOrHugeValue(const MatchContext& ctx, ValueId v, int depth) {
  if (v == kNoId || depth > kMaxDepth) return false;
  const int32_t elem = valueElemType(ctx.graph, v);
  if (elem != TensorProto::FLOAT && elem != TensorProto::DOUBLE) return false;
  if (constantTensor(ctx.graph, v)) {
    std::vector<double> values;
    return readConstantDoubles(ctx.model, ctx.graph, v, values, 1 << 16) &&
           std::all_of(values.begin(), values.end(), zeroOrHuge);
  }
  const Node* n = ctx.graph.producerOf(v);
  if (!n || !n->live() || !n->domain().empty() || n->inputs().empty()) return false;
  const std::string& op = n->opType();
  auto input = [&](size_t i) {
    return i < n->inputs().size() && zeroOrHugeValue(ctx, n->input(i), depth + 1);
  };
  if (op == "ConstantOfShape") {
    const onnx::AttributeProto* value = n->attribute("value");
    if (!value) return true;  // zeros
    const std::optional<double> x =
        value->has_t() ? uniformTensor(ctx.model, value->t()) : std::nullopt;
    return x && zeroOrHuge(*x);
  }
  if (op == "Where" && n->inputs().size() == 3) {
    if (input(1) && input(2)) return true;
    // Where(Cast(x, bool), c, x): x is taken only where it is 0.
    const Node* cast = ctx.graph.producerOf(n->input(0));
    const onnx::AttributeProto* to = cast ? cast->attribute("to") : nullptr;
    return cast && cast->live() && cast->domain().empty() && cast->opType() == "Cast" && to &&
           to->i() == TensorProto::BOOL && cast->input(0) == n->input(2) && input(1);
  }
  if (op == "Add" && n->inputs().size() == 2) return input(0) && input(1);
  if (op == "Concat") {
    for (size_t i = 0; i < n->inputs().size(); ++i)
      if (!input(i)) return false;
    return true;
  }
  if (op == "Cast") return input(0);  // float or double in (checked there) and out
  if (op == "Expand" || op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" ||
      op == "Transpose" || op == "Slice" || op == "Tile" || op == "Identity")
    return input(0);
  return false;
}

/// zero_or_masked(m): see zeroOrHugeValue.
bool zeroOrMasked(const MatchContext& ctx, ValueArgs args) {
  return zeroOrHugeValue(ctx, args[0], 0);
}

}  // namespace

/// matmul_equation(y): y = Einsum(x, w) of two inputs whose equation is a MatMul by a 2-D w,
/// "p...c,cd->p...d" (tf2onnx's tf.tensordot of a Dense on a 3-D input from opset 12,
/// "abc,cd->abd"): distinct letters, c x's last and w's first, d w's last.
bool matmulEquation(const MatchContext& ctx, ValueArgs args) {
  const Node* n = producerOp(ctx.graph, args[0], "Einsum");
  const onnx::AttributeProto* a = n ? n->attribute("equation") : nullptr;
  if (!a || n->inputs().size() != 2) return false;
  std::string e;
  for (char ch : a->s())
    if (ch != ' ') e += ch;
  const size_t comma = e.find(','), arrow = e.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) return false;
  const std::string x = e.substr(0, comma), w = e.substr(comma + 1, arrow - comma - 1),
                    y = e.substr(arrow + 2);
  if (x.size() < 2 || w.size() != 2 || y.size() != x.size()) return false;
  std::string seen;
  for (char ch : x + w.substr(1)) {
    if (ch < 'a' || ch > 'z' || seen.find(ch) != std::string::npos) return false;
    seen += ch;
  }
  return w[0] == x.back() && y == x.substr(0, x.size() - 1) + w[1];
}

/// expands_to_length(s, e): Expand target s is [b, l] with l the same dim as e: a Concat on
/// axis 0 of two one-element parts, possibly behind the exporters' wrappers of expand's
/// sizes (TorchScript's guard against -1, throughExpandSizeGuard; torchlib's Abs(s)).
bool expandsToLength(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const Node* abs = producerOp(g, args[0], "Abs");
  const std::optional<ValueId> s = abs ? abs->input(0) : throughExpandSizeGuard(ctx, args[0]);
  const Node* concat = s ? producerOp(g, *s, "Concat") : nullptr;
  const onnx::AttributeProto* axis = concat ? concat->attribute("axis") : nullptr;
  if (!concat || !axis || axis->i() != 0 || concat->inputs().size() != 2) return false;
  for (ValueId part : concat->inputs()) {
    const auto dims = staticShape(g, part);
    if (!dims || dims->size() != 1 || (*dims)[0] != 1) return false;
  }
  return sameDimRead(ctx, concat->input(1), args[1]);
}

NativeFamily canonicalNatives() {
  NativeFamily f;
  f.predicates = {
      {"never_true", 1, &neverTrue,
       "c is false everywhere by construction: constants, ConstantOfShape, element moves "
       "(Reshape, Expand, Unsqueeze, Slice, ...) and elementwise arithmetic, comparisons and "
       "casts of such values"},
      {"always_true", 1, &alwaysTrue, "c is true everywhere by construction (see never_true)"},
      {"all_zero", 1, &allZero, "z is 0 everywhere by construction (see never_true)"},
      {"expands_to_length", 2, &expandsToLength,
       "Expand target s is [b, l], l the same dim as e: a Concat of two one-element parts, "
       "or that stacked behind TorchScript's Where(Equal(s, -1), 1, s) or torchlib's Abs(s)"},
      {"matmul_equation", 1, &matmulEquation,
       "y = Einsum(x, w) of two inputs whose equation is a MatMul by a 2-D w: "
       "\"p...c,cd->p...d\" in distinct lowercase letters"},
      {"same_shape", 2, &sameShape,
       "a and b have the same known rank and every dim alike: equal static sizes or one "
       "symbol"},
      {"slices_whole", 1, &slicesWhole,
       "y = Slice(x, ...) takes every axis it slices whole: starts 0, steps 1, each end x's "
       "dim on that axis (read at run time from a value with the same dim, or a constant "
       "at least its static size)"},
      {"zero_or_masked", 1, &zeroOrMasked,
       "every element of the float or double m is 0 or at most -2^100 (finfo.min, -inf) by "
       "construction: constants, ConstantOfShape, Where of such values or Where(Cast(x, "
       "bool), such a value, x), their sums and element moves"},
      {"computed_from_constants", 1, &computedFromConstants,
       "y, a float or double of one element and no constant itself, is computed from "
       "constants and static dims read out of a Shape alone (Gather, casts, arithmetic, "
       "Sqrt, Reciprocal; see never_true)"},
      {"cast_of_scalar", 1, &castOfScalar,
       "y = Cast(c) of a one-element constant c to float, double or float16, a value the "
       "rewrite computes as the Cast does (float16 from float or float16 only; integers up "
       "to 2^24)"},
  };
  f.tensor_helpers = {
      {"constant_scalar", 1, &constantScalar,
       "the constant of y's type and shape that computed_from_constants(y) proved y to hold"},
      {"negated", 1, &negated, "-c, of the one-element float constant c's type and shape"},
      {"cast_scalar", 1, &castScalar,
       "the constant of y's type and shape that cast_of_scalar(y) proved y to hold"},
  };
  return f;
}

}  // namespace onnx_rewrite
