//===- NativeHelpers.cc - named C++ functions rules may call --------------===//
//
// The registry is a function-local static (so registrations from other units'
// static initialisers find it constructed) that registers the built-ins when it
// is first built.
//
//===----------------------------------------------------------------------===//
#include "runtime/match/NativeHelpers.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

template <typename Fn>
using Table = std::map<std::string, NativeFunction<Fn>, std::less<>>;

// ---- Built-ins ---------------------------------------------------------------------------

thread_local std::vector<int64_t> tls_axes;

/// The axes `a` stands for (see last_axis), into tls_axes.
bool axesOf(const MatchContext& ctx, ValueId a) {
  if (readConstantInts(ctx.model, ctx.graph, a, tls_axes, 64)) return true;
  const NodeId p = ctx.graph.value(a).producer();
  if (p == kNoId || !ctx.graph.node(p).live()) return false;
  if (findParam(ctx.graph, p, "axes").kind != ParamRef::Kind::kAbsent)
    return readIntsParam(ctx.model, ctx.graph, p, "axes", tls_axes);
  const onnx::AttributeProto* axis = ctx.graph.node(p).attribute("axis");
  if (!axis || axis->type() != onnx::AttributeProto::INT) return false;
  tls_axes.assign(1, axis->i());
  return true;
}

bool lastAxis(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId || args[1] == kNoId) return false;
  const std::optional<int64_t> rank = valueRank(ctx.graph, args[1]);
  if (!rank || *rank == 0 || !axesOf(ctx, args[0])) return false;
  return tls_axes.size() == 1 && normalizeAxis(tls_axes[0], *rank) == *rank - 1;
}

/// The first axis of the trailing axes the Reduce* node producing `r` reduces, counted in
/// `x`'s rank (its input is x or, as in a norm, an elementwise function of x), if it
/// reduces exactly axes k..rank-1: its axes (attribute or input) normalized, or, absent,
/// every axis (unless noop_with_empty_axes makes it an identity).
std::optional<int64_t> firstReducedAxis(const MatchContext& ctx, ValueId r, ValueId x) {
  if (r == kNoId || x == kNoId) return std::nullopt;
  const NodeId p = ctx.graph.value(r).producer();
  if (p == kNoId || !ctx.graph.node(p).live()) return std::nullopt;
  const std::optional<int64_t> rank = valueRank(ctx.graph, x);
  if (!rank || *rank == 0) return std::nullopt;
  if (findParam(ctx.graph, p, "axes").kind == ParamRef::Kind::kAbsent) {
    if (intParam(ctx.model, ctx.graph, p, "noop_with_empty_axes", 0).value_or(1) != 0)
      return std::nullopt;
    return 0;
  }
  if (!readIntsParam(ctx.model, ctx.graph, p, "axes", tls_axes) || tls_axes.empty())
    return std::nullopt;
  std::vector<bool> reduced(static_cast<size_t>(*rank), false);
  for (int64_t a : tls_axes) {
    const std::optional<int64_t> n = normalizeAxis(a, *rank);
    if (!n || reduced[static_cast<size_t>(*n)]) return std::nullopt;
    reduced[static_cast<size_t>(*n)] = true;
  }
  const int64_t first = *rank - static_cast<int64_t>(tls_axes.size());
  for (int64_t i = first; i < *rank; ++i)
    if (!reduced[static_cast<size_t>(i)]) return std::nullopt;
  return first;
}

bool reducesTrailingAxes(const MatchContext& ctx, ValueArgs args) {
  return firstReducedAxis(ctx, args[0], args[1]).has_value();
}

/// fits_normalized_shape(w, r, x): w has no more axes than the trailing axes r reduces x
/// over, so it broadcasts into the normalized shape as a norm's scale must (ONNX's
/// RMSNormalization), not into x's leading axes as well.
bool fitsNormalizedShape(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> first = firstReducedAxis(ctx, args[1], args[2]);
  const std::optional<int64_t> w_rank = valueRank(ctx.graph, args[0]);
  const std::optional<int64_t> x_rank = valueRank(ctx.graph, args[2]);
  return first && w_rank && x_rank && *w_rank <= *x_rank - *first;
}

std::optional<onnx::AttributeProto> firstReducedAxisAttr(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> first = firstReducedAxis(ctx, args[0], args[1]);
  if (!first) return std::nullopt;
  return intAttribute(*first);
}

/// One dim of a value: static, symbolic (a dim_param) or unknown.
struct Dim {
  bool is_static = false;
  int64_t value = 0;
  const std::string* param = nullptr;
  bool known() const { return is_static || param; }
  bool operator==(const Dim& o) const {
    return known() && is_static == o.is_static &&
           (is_static ? value == o.value : o.param && *param == *o.param);
  }
};

/// Dim `i` of `v` (negative: from the end) if `v`'s rank is known (and equals `rank` when
/// `rank` >= 0).
bool dimOf(const Graph& g, ValueId v, int64_t i, Dim& out, int64_t rank = -1) {
  out = Dim{};
  if (v == kNoId) return false;
  if (const onnx::TensorProto* t = constantTensor(g, v)) {
    const int64_t r = t->dims_size();
    if ((rank >= 0 && r != rank) || i >= r || i < -r) return false;
    out.is_static = true;
    out.value = t->dims(static_cast<int>(i < 0 ? i + r : i));
    return true;
  }
  const onnx::TensorShapeProto* shape = valueShape(g, v);
  if (!shape) return false;
  const int64_t r = shape->dim_size();
  if ((rank >= 0 && r != rank) || i >= r || i < -r) return false;
  const auto& d = shape->dim(static_cast<int>(i < 0 ? i + r : i));
  if (d.has_dim_value()) {
    out.is_static = true;
    out.value = d.dim_value();
  } else if (d.has_dim_param() && !d.dim_param().empty()) {
    out.param = &d.dim_param();
  }
  return true;
}

bool lastDimOf(const MatchContext& ctx, ValueArgs args) {
  Dim v, x;
  if (!dimOf(ctx.graph, args[0], 0, v, 1)) return false;
  if (dimOf(ctx.graph, args[1], -1, x)) return v == x;
  // x's shape is unknown (no value_info, shape inference skipped for opset 18+): a static
  // v longer than 1 can only broadcast against a last dim of that size, while a length-1 v
  // could be broadcasting, which the fused op would not do.
  return v.is_static && v.value > 1;
}

bool sameElemType(const MatchContext& ctx, ValueArgs args) {
  if (args.size() < 2) return false;
  const int32_t first = valueElemType(ctx.graph, args[0]);
  if (first == onnx::TensorProto::UNDEFINED) return false;
  for (size_t i = 1; i < args.size(); ++i)
    if (valueElemType(ctx.graph, args[i]) != first) return false;
  return true;
}

bool staticLastDim(const MatchContext& ctx, ValueArgs args) {
  Dim x;
  return dimOf(ctx.graph, args[0], -1, x) && x.is_static && x.value > 0;
}

/// The most elements ones_of_last_dim builds (64 MiB of float): a declared last dim beyond
/// it (a hostile model's 2^62) would be filled until memory runs out; no fusion instead.
constexpr int64_t kMaxOnesElements = int64_t{1} << 24;

std::optional<onnx::TensorProto> onesOfLastDim(const MatchContext& ctx, ValueArgs args) {
  Dim x;
  if (!dimOf(ctx.graph, args[0], -1, x) || !x.is_static || x.value <= 0 ||
      x.value > kMaxOnesElements)
    return std::nullopt;
  onnx::TensorProto t;
  const int32_t type = valueElemType(ctx.graph, args[0]);
  t.set_data_type(type);
  t.add_dims(x.value);
  for (int64_t i = 0; i < x.value; ++i) {
    switch (type) {
      case onnx::TensorProto::FLOAT:
        t.add_float_data(1.0f);
        break;
      case onnx::TensorProto::DOUBLE:
        t.add_double_data(1.0);
        break;
      case onnx::TensorProto::FLOAT16:
        t.add_int32_data(0x3c00);
        break;
      case onnx::TensorProto::BFLOAT16:
        t.add_int32_data(0x3f80);
        break;
      default:
        return std::nullopt;
    }
  }
  return t;
}

std::optional<onnx::AttributeProto> elemTypeOf(const MatchContext& ctx, ValueArgs args) {
  const int32_t type =
      args[0] == kNoId ? onnx::TensorProto::UNDEFINED : valueElemType(ctx.graph, args[0]);
  if (type == onnx::TensorProto::UNDEFINED) return std::nullopt;
  return intAttribute(type);
}

std::optional<onnx::AttributeProto> numHeadsFromShape(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  std::vector<int64_t> shape;
  if (!readConstantInts(ctx.model, ctx.graph, args[0], shape, 4) || shape.size() != 4 ||
      shape[2] <= 0)
    return std::nullopt;
  return intAttribute(shape[2]);
}

std::optional<onnx::TensorProto> staticShapeTensor(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  const auto dims = staticShape(ctx.graph, args[0]);
  if (!dims || std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; }))
    return std::nullopt;
  return int64Vector(*dims);
}

// ---- The registry ------------------------------------------------------------------------

class Registry {
 public:
  static Registry& get() {
    static Registry registry;
    return registry;
  }

  template <typename Fn>
  bool add(Table<Fn>& table, NativeFunction<Fn> entry) {
    if (entry.name.empty() || !entry.fn) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    std::string name = entry.name;
    return table.emplace(std::move(name), std::move(entry)).second;
  }

  template <typename Fn>
  const NativeFunction<Fn>* find(const Table<Fn>& table, std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
  }

  template <typename Fn>
  std::vector<std::string> names(const Table<Fn>& table) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& entry : table) out.push_back(entry.first);
    return out;
  }

  Table<NativePredicateFn> predicates;
  Table<AttributeHelperFn> attribute_helpers;
  Table<TensorHelperFn> tensor_helpers;

 private:
  Registry() {
    add(predicates, NativePredicate{"last_axis", 2, &lastAxis,
                                    "a's axes (constant, axes or axis of its producer) name "
                                    "exactly the last axis of x"});
    add(predicates, NativePredicate{"last_dim_of", 2, &lastDimOf,
                                    "v is 1-D and its dim is x's last dim (the same static "
                                    "size or the same symbol); if x's shape is unknown, v's "
                                    "static size is > 1"});
    add(predicates, NativePredicate{"same_elem_type", kVariadic, &sameElemType,
                                    "the values have one known element type (fused ops such "
                                    "as SkipLayerNormalization take one type T)"});
    add(predicates, NativePredicate{"static_last_dim", 1, &staticLastDim,
                                    "x's last dim is a static, positive size"});
    add(predicates, NativePredicate{"fits_normalized_shape", 3, &fitsNormalizedShape,
                                    "w has at most as many axes as the trailing axes r "
                                    "reduces x over (a norm scale's rank)"});
    add(predicates, NativePredicate{"reduces_trailing_axes", 2, &reducesTrailingAxes,
                                    "r is a reduction of x over its last axes k..rank-1 (all "
                                    "of them when its axes are absent); x's rank known"});
    add(attribute_helpers,
        AttributeHelper{"first_reduced_axis", 2, &firstReducedAxisAttr,
                        "INT: the first of the trailing axes r reduces x over (see "
                        "reduces_trailing_axes)"});
    add(attribute_helpers,
        AttributeHelper{"elem_type_of", 1, &elemTypeOf,
                        "INT: x's element type (a Cast's `to` that gives x's type; CastLike "
                        "before opset 15)"});
    add(attribute_helpers,
        AttributeHelper{"num_heads_from_shape", 1, &numHeadsFromShape,
                        "INT: element 2 of a constant [batch, seq, heads, head_size] shape"});
    add(tensor_helpers, TensorHelper{"static_shape", 1, &staticShapeTensor,
                                     "INT64 1-D tensor of x's dims, all static"});
    add(tensor_helpers,
        TensorHelper{"ones_of_last_dim", 1, &onesOfLastDim,
                     "1-D tensor of ones as long as x's static last dim, of x's element type "
                     "(float, double, float16, bfloat16)"});
    for (NativeFamily family :
         {attentionNatives(), rotaryNatives(), geluNatives(), embedNatives(), canonicalNatives()}) {
      for (auto& entry : family.predicates) add(predicates, std::move(entry));
      for (auto& entry : family.attribute_helpers) add(attribute_helpers, std::move(entry));
      for (auto& entry : family.tensor_helpers) add(tensor_helpers, std::move(entry));
    }
  }

  std::mutex mutex_;
};

}  // namespace

onnx::TensorProto int64Vector(const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

std::optional<onnx::AttributeProto> intAttribute(int64_t value) {
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

bool registerNativePredicate(NativePredicate predicate) {
  Registry& r = Registry::get();
  return r.add(r.predicates, std::move(predicate));
}

bool registerAttributeHelper(AttributeHelper helper) {
  Registry& r = Registry::get();
  return r.add(r.attribute_helpers, std::move(helper));
}

bool registerTensorHelper(TensorHelper helper) {
  Registry& r = Registry::get();
  return r.add(r.tensor_helpers, std::move(helper));
}

const NativePredicate* findNativePredicate(std::string_view name) {
  Registry& r = Registry::get();
  return r.find(r.predicates, name);
}

const AttributeHelper* findAttributeHelper(std::string_view name) {
  Registry& r = Registry::get();
  return r.find(r.attribute_helpers, name);
}

const TensorHelper* findTensorHelper(std::string_view name) {
  Registry& r = Registry::get();
  return r.find(r.tensor_helpers, name);
}

std::vector<std::string> nativePredicateNames() {
  Registry& r = Registry::get();
  return r.names(r.predicates);
}

std::vector<std::string> attributeHelperNames() {
  Registry& r = Registry::get();
  return r.names(r.attribute_helpers);
}

std::vector<std::string> tensorHelperNames() {
  Registry& r = Registry::get();
  return r.names(r.tensor_helpers);
}

}  // namespace onnx_rewrite
