//===- AttentionNatives.cc - native functions of the attention rules ----------------===//
//
// What rules/attention.yaml cannot say in the rule language: that a Reshape splits the
// hidden size into [num_heads, head_size] (or merges them back), the head counts and the
// scale an exported attention applied, and the packed Q/K/V weights of
// com.microsoft.Attention.
//
// Head split Reshapes are read from their shape [a, b, N, H]: N and H constants, a and b
// each 0 ("copy the input's dim"), the input's static dim, or that dim read at run time
// (TorchScript's Unsqueeze(Gather(Shape(x), i)), dynamo's Shape(x, start=i, end=i+1)) from
// the input or a value with the same dim, as a constant or a Concat of one-element parts;
// the input has rank 3 and static last dim N * H. Anything else (a -1, allowzero=1, an
// unknown hidden size) is "no": the rules then do not fuse.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/graph/TensorData.h"
#include "runtime/match/DimReads.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

// ---- Reading Reshapes ---------------------------------------------------------------------

/// The live Reshape producing `v` (allowzero absent or 0), or null.
const Node* reshapeOf(const Graph& g, ValueId v) {
  const Node* n = producerOp(g, v, "Reshape");
  if (!n) return nullptr;
  if (const onnx::AttributeProto* a = n->attribute("allowzero"); a && a->i() != 0) return nullptr;
  return n;
}

std::vector<int64_t> slicedDims(const MatchContext& ctx, ValueId p, ValueId& v);

/// The value whose dim `i` the one-element shape part `p` reads at run time: TorchScript's
/// Unsqueeze(Gather(Shape(y), i), [0]), dynamo's Shape(y, start=i, end=i+1), a one-element
/// Slice(Shape(y), [i], [i + 1]), or TensorFlow's tf.shape(y)[i] stacked into a shape
/// (tf2onnx, keras2onnx): Unsqueeze(Squeeze(that Slice, [0]), [0]); else kNoId.
ValueId dimSource(const MatchContext& ctx, ValueId p, int64_t i) {
  const Graph& g = ctx.graph;
  const NodeId id = g.value(p).producer();
  if (id == kNoId || !g.node(id).live() || !g.node(id).domain().empty()) return kNoId;
  const Node& n = g.node(id);
  auto attr = [](const Node& node, const char* name, int64_t absent) {
    const onnx::AttributeProto* a = node.attribute(name);
    return a ? a->i() : absent;
  };
  auto slicedDim = [&](ValueId part) {
    ValueId y = kNoId;
    return slicedDims(ctx, part, y) == std::vector<int64_t>{i} ? y : kNoId;
  };
  if (n.opType() == "Shape")
    return attr(n, "start", 0) == i && n.attribute("end") && attr(n, "end", 0) == i + 1 ? n.input(0)
                                                                                        : kNoId;
  if (n.opType() == "Slice") return slicedDim(p);
  if (n.opType() != "Unsqueeze") return kNoId;
  const std::vector<int64_t> zero{0};
  const auto axes = intsParam(ctx.model, g, id, "axes");
  if (const Node* squeeze = producerOp(g, n.input(0), "Squeeze"))
    return axes == zero && intsParam(ctx.model, g, g.value(n.input(0)).producer(), "axes") == zero
               ? slicedDim(squeeze->input(0))
               : kNoId;
  const Node* gather = g.producerOf(n.input(0));
  if (!axes || *axes != zero || !gather || !gather->live() || gather->opType() != "Gather" ||
      attr(*gather, "axis", 0) != 0)
    return kNoId;
  const onnx::TensorProto* index = constantTensor(g, gather->input(1));
  std::vector<int64_t> at;
  if (!index || index->dims_size() != 0 ||
      !readConstantInts(ctx.model, g, gather->input(1), at, 1) || at[0] != i)
    return kNoId;
  const Node* shape = g.producerOf(gather->input(0));
  if (!shape || !shape->live() || shape->opType() != "Shape" || attr(*shape, "start", 0) != 0 ||
      shape->attribute("end"))
    return kNoId;
  return shape->input(0);
}

/// True when shape part `p`, element `i` of a Reshape's target, is provably one element:
/// typed [1], or a dim read at run time (dimSource). A part of unknown length
/// (Slice(Shape(x), 0, -1) of an x of unknown rank, as in an If branch nothing typed) may
/// hold several: counting it as one would misplace every element after it.
bool oneElement(const MatchContext& ctx, ValueId p, size_t i) {
  const auto dims = staticShape(ctx.graph, p);
  if (dims && dims->size() == 1 && (*dims)[0] == 1) return true;
  if (dims && (dims->size() != 1 || (*dims)[0] >= 0)) return false;  // known to hold more
  return dimSource(ctx, p, static_cast<int64_t>(i)) != kNoId;
}

/// The target shape of a Reshape, element by element.
struct ReshapeTarget {
  std::vector<int64_t> values;  ///< element i when constant, else INT64_MIN
  std::vector<ValueId> parts;   ///< the one-element part computing element i, or kNoId
  /// Element i is dim `sliced_dim[i]` of `sliced[i]`, read as part of a Slice of its Shape
  /// (x.size()[:-1] in GPT-2's Conv1D), else kNoId.
  std::vector<ValueId> sliced;
  std::vector<int64_t> sliced_dim;
};

/// The dims of `v` a shape part `p` = Slice(Shape(v), [a], [b]) reads (axis 0, step 1,
/// v of known rank), or Gather(Shape(v), [i, j, ...]), in order; empty when `p` is neither.
std::vector<int64_t> slicedDims(const MatchContext& ctx, ValueId p, ValueId& v) {
  const Graph& g = ctx.graph;
  // TensorFlow's tensordot reads the free dims as Gather(Shape(v), [0, 1]): the same read.
  if (const Node* gather = producerOp(g, p, "Gather")) {
    const Node* shape = producerOp(g, gather->input(0), "Shape");
    const onnx::AttributeProto* axis = gather->attribute("axis");
    const onnx::TensorProto* index = constantTensor(g, gather->input(1));
    const auto dims = shape ? staticShape(g, shape->input(0)) : std::nullopt;
    std::vector<int64_t> read;
    if (!shape || shape->attribute("start") || shape->attribute("end") || (axis && axis->i()) ||
        !index || index->dims_size() != 1 || !dims ||
        !readConstantInts(ctx.model, g, gather->input(1), read, 8))
      return {};
    const int64_t rank = static_cast<int64_t>(dims->size());
    for (int64_t& d : read) {
      if (d < -rank || d >= rank) return {};
      if (d < 0) d += rank;
    }
    v = shape->input(0);
    return read;
  }
  const Node* slice = producerOp(g, p, "Slice");
  const Node* shape = slice ? producerOp(g, slice->input(0), "Shape") : nullptr;
  if (!shape || shape->attribute("start") || shape->attribute("end")) return {};
  const NodeId id = g.value(p).producer();
  const auto starts = intsParam(ctx.model, g, id, "starts");
  const auto ends = intsParam(ctx.model, g, id, "ends");
  const auto axes = intsParam(ctx.model, g, id, "axes");
  const auto steps = intsParam(ctx.model, g, id, "steps");
  const auto dims = staticShape(g, shape->input(0));
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || !dims ||
      (axes && *axes != std::vector<int64_t>{0}) || (steps && *steps != std::vector<int64_t>{1}))
    return {};
  const int64_t rank = static_cast<int64_t>(dims->size());
  auto clamp = [rank](int64_t i) {
    return std::min(std::max(i < 0 ? i + rank : i, int64_t{0}), rank);
  };
  std::vector<int64_t> read;
  for (int64_t d = clamp((*starts)[0]); d < clamp((*ends)[0]); ++d) read.push_back(d);
  v = shape->input(0);
  return read;
}

/// The target shape of Reshape `n`, of `rank` elements: a constant, or a Concat on axis 0
/// of constants, one-element parts and Slices of a Shape.
std::optional<ReshapeTarget> reshapeTarget(const MatchContext& ctx, const Node& n, size_t rank) {
  ReshapeTarget t;
  t.values.assign(rank, INT64_MIN);
  t.parts.assign(rank, kNoId);
  t.sliced.assign(rank, kNoId);
  t.sliced_dim.assign(rank, -1);
  std::vector<int64_t> all;
  if (readConstantInts(ctx.model, ctx.graph, n.input(1), all, rank)) {
    if (all.size() != rank) return std::nullopt;
    t.values = all;
    return t;
  }
  const Node* concat = ctx.graph.producerOf(n.input(1));
  if (!concat || !concat->live() || concat->opType() != "Concat") return std::nullopt;
  const onnx::AttributeProto* axis = concat->attribute("axis");
  if (!axis || axis->i() != 0) return std::nullopt;
  size_t i = 0;
  for (ValueId part : concat->inputs()) {
    std::vector<int64_t> constant;
    ValueId source = kNoId;
    if (readConstantInts(ctx.model, ctx.graph, part, constant, rank) && !constant.empty()) {
      for (int64_t c : constant) {
        if (i == rank) return std::nullopt;
        t.values[i++] = c;
      }
    } else if (const std::vector<int64_t> read = slicedDims(ctx, part, source); !read.empty()) {
      for (int64_t d : read) {
        if (i == rank) return std::nullopt;
        t.sliced[i] = source;
        t.sliced_dim[i++] = d;
      }
    } else {
      // A computed part must be proven one element.
      if (i == rank || !oneElement(ctx, part, i)) return std::nullopt;
      t.parts[i++] = part;
    }
  }
  if (i != rank) return std::nullopt;
  return t;
}

/// The value whose dim `i` element `i` of target `t` reads at run time, or kNoId.
ValueId elementSource(const MatchContext& ctx, const ReshapeTarget& t, size_t i) {
  if (t.sliced[i] != kNoId) return t.sliced_dim[i] == static_cast<int64_t>(i) ? t.sliced[i] : kNoId;
  return t.parts[i] == kNoId ? kNoId : dimSource(ctx, t.parts[i], static_cast<int64_t>(i));
}

/// Element `i` of a Reshape's target keeps dim `i` of `x` (static dims `dims`): a constant
/// 0 (copy) or x's static size, or computed from dim `i` of x or of a value of the same dim.
bool keepsDim(const MatchContext& ctx, const ReshapeTarget& t, ValueId x,
              const std::vector<int64_t>& dims, size_t i) {
  const int64_t value = t.values[i];
  if (value != INT64_MIN) return value == 0 || (value > 0 && i < dims.size() && dims[i] == value);
  const ValueId source = elementSource(ctx, t, i);
  return source != kNoId && sameDim(ctx.graph, source, static_cast<int>(i), x, static_cast<int>(i));
}

/// The head split of `r` = Reshape(x, [a, b, N, H]) on x of rank 3 with static last dim
/// D = N * H: writes N and H. a and b keep x's first two dims (keepsDim) and N and H are
/// constants, except that one of the four may be anything (-1, as DistilBERT's
/// view(bs, -1, n_heads, dim) writes b, or a size computed at run time, as torch 1.x's
/// GPT-2 computes H = D / N): the other three and D then force it, since a Reshape keeps
/// the number of elements (a model where it does not fails to run; it never computes
/// something else).
bool headSplit(const MatchContext& ctx, ValueId r, int64_t& heads, int64_t& head_size) {
  const Node* n = reshapeOf(ctx.graph, r);
  const std::optional<ReshapeTarget> t = n ? reshapeTarget(ctx, *n, 4) : std::nullopt;
  if (!t) return false;
  const std::vector<int64_t>& shape = t->values;
  const ValueId x = n->input(0);
  const auto dims = staticShape(ctx.graph, x);
  if (!dims || dims->size() != 3 || (*dims)[2] <= 0) return false;
  const int64_t hidden = (*dims)[2];
  const bool a = keepsDim(ctx, *t, x, *dims, 0);
  const bool b = keepsDim(ctx, *t, x, *dims, 1);
  const bool n_known = shape[2] > 0 && hidden % shape[2] == 0;
  const bool h_known = shape[3] > 0 && hidden % shape[3] == 0;
  const int unknown = !a + !b + !n_known + !h_known;
  if (unknown > 1 || (unknown == 1 && !n_known && !h_known)) return false;
  if (n_known && h_known && shape[2] * shape[3] != hidden) return false;
  heads = n_known ? shape[2] : hidden / shape[3];
  head_size = h_known ? shape[3] : hidden / shape[2];
  return true;
}

/// `y` = Reshape(t, s) where s is t's own shape: each element 0 (copy), t's static dim, or
/// that dim read at run time from t or a value with the same dim; one element may be
/// anything (-1 or computed), forced by the others as a Reshape keeps the element count.
bool reshapesToOwnShape(const MatchContext& ctx, ValueArgs args) {
  const Node* n = reshapeOf(ctx.graph, args[0]);
  const onnx::TensorShapeProto* own = n ? valueShape(ctx.graph, n->input(0)) : nullptr;
  if (!own || n->input(0) != args[1]) return false;
  const size_t rank = static_cast<size_t>(own->dim_size());
  const std::optional<ReshapeTarget> t = reshapeTarget(ctx, *n, rank);
  if (!t) return false;
  std::vector<int64_t> dims(rank, -1);
  for (size_t i = 0; i < rank; ++i)
    if (own->dim(static_cast<int>(i)).has_dim_value())
      dims[i] = own->dim(static_cast<int>(i)).dim_value();
  size_t unproven = 0;
  for (size_t i = 0; i < rank; ++i) unproven += !keepsDim(ctx, *t, n->input(0), dims, i);
  return unproven <= 1;
}

/// `p` reads the last dim of `x` at run time as a one-element tensor: torch 1.x's
/// x.size(-1) in a shape, Unsqueeze(Squeeze(Slice(Shape(x), [-1], [end], [0]), [0]), [0]).
bool readsLastDim(const MatchContext& ctx, ValueId p, ValueId x) {
  const Graph& g = ctx.graph;
  const Node* unsq = producerOp(g, p, "Unsqueeze");
  const Node* sq = unsq ? producerOp(g, unsq->input(0), "Squeeze") : nullptr;
  const Node* slice = sq ? producerOp(g, sq->input(0), "Slice") : nullptr;
  const Node* shape = slice ? producerOp(g, slice->input(0), "Shape") : nullptr;
  if (!shape || shape->input(0) != x || shape->attribute("start") || shape->attribute("end"))
    return false;
  const std::vector<int64_t> zero{0};
  const auto starts = intsParam(ctx.model, g, g.value(slice->output(0)).producer(), "starts");
  const auto axes = intsParam(ctx.model, g, g.value(slice->output(0)).producer(), "axes");
  return intsParam(ctx.model, g, g.value(unsq->output(0)).producer(), "axes") == zero &&
         intsParam(ctx.model, g, g.value(sq->output(0)).producer(), "axes") == zero &&
         starts == std::vector<int64_t>{-1} && (!axes || *axes == zero);
}

/// flattens_rows(f, w): f = Reshape(x, s) makes x's rows the rows of a 2-D matrix for a
/// MatMul by w [K, N]: x's static last dim is K, or s = [-1, x.size(-1)] read at run time
/// (the Gemm then forces it to be K).
bool flattensRows(const MatchContext& ctx, ValueArgs args) {
  const Node* n = reshapeOf(ctx.graph, args[0]);
  const auto w = staticShape(ctx.graph, args[1]);
  if (!n || !w || w->size() != 2) return false;
  const ValueId x = n->input(0);
  const onnx::TensorShapeProto* xs = valueShape(ctx.graph, x);
  if (xs && xs->dim_size() >= 1 && xs->dim(xs->dim_size() - 1).has_dim_value())
    return xs->dim(xs->dim_size() - 1).dim_value() == (*w)[0];
  const std::optional<ReshapeTarget> t = reshapeTarget(ctx, *n, 2);
  return t && t->values[0] == -1 && t->parts[1] != kNoId && readsLastDim(ctx, t->parts[1], x);
}

/// The rows [S, I] of a head split r = Reshape(p, [d0, S, N, H]) of p = MatMul(x [T, I], w
/// [I, N*H]) (+ b) on flattened rows: S, N, H constant and positive, d0 anything. nullopt
/// otherwise. The split regroups the T rows T/S at a time, as a view [-1, S, I] of x does.
std::optional<std::pair<int64_t, int64_t>> flatRowsOfHeads(const MatchContext& ctx, ValueId r,
                                                           ValueId w) {
  const Node* n = reshapeOf(ctx.graph, r);
  const std::optional<ReshapeTarget> t = n ? reshapeTarget(ctx, *n, 4) : std::nullopt;
  const auto ws = staticShape(ctx.graph, w);
  if (!t || !ws || ws->size() != 2 || (*ws)[0] <= 0) return std::nullopt;
  const std::vector<int64_t>& v = t->values;
  if (v[1] <= 0 || v[2] <= 0 || v[3] <= 0 || v[2] * v[3] != (*ws)[1]) return std::nullopt;
  return std::make_pair(v[1], (*ws)[0]);
}

/// splits_flat_rows(r, w): flatRowsOfHeads holds.
bool splitsFlatRows(const MatchContext& ctx, ValueArgs args) {
  return flatRowsOfHeads(ctx, args[0], args[1]).has_value();
}

// ---- Predicates ---------------------------------------------------------------------------

bool splitsHeads(const MatchContext& ctx, ValueArgs args) {
  int64_t n = 0, h = 0;
  return headSplit(ctx, args[0], n, h);
}

/// Reads the number and size of the heads a value holds or splits into.
using HeadReader = bool (*)(const MatchContext&, ValueId, int64_t&, int64_t&);

/// The heads `read` finds in `a` are as many as head split `ref` makes, and (`same_size`)
/// of the same size.
bool headsMatch(const MatchContext& ctx, HeadReader read, ValueId a, ValueId ref, bool same_size) {
  int64_t n1 = 0, h1 = 0, n2 = 0, h2 = 0;
  return read(ctx, a, n1, h1) && headSplit(ctx, ref, n2, h2) && n1 == n2 &&
         (!same_size || h1 == h2);
}

bool sameHeads(const MatchContext& ctx, ValueArgs args) {
  return headsMatch(ctx, &headSplit, args[0], args[1], true);
}

bool sameHeadCount(const MatchContext& ctx, ValueArgs args) {
  return headsMatch(ctx, &headSplit, args[0], args[1], false);
}

/// `y` = Reshape(t, [a, b, N * Hv or -1]) where t = [B, S, N, Hv] holds the heads of query
/// q = [B, S, D] transposed back: a and b keep q's first two dims (see keepsDim).
bool mergesInto(const MatchContext& ctx, ValueId y, ValueId q, int64_t heads, int64_t head_size) {
  const Node* n = reshapeOf(ctx.graph, y);
  const std::optional<ReshapeTarget> t = n && q != kNoId ? reshapeTarget(ctx, *n, 3) : std::nullopt;
  if (!t) return false;
  const std::vector<int64_t>& shape = t->values;
  const std::vector<int64_t> dims = staticShape(ctx.graph, q).value_or(std::vector<int64_t>{});
  // As for a split, one of the three may be anything the other two force: -1 (or a
  // computed N * Hv) is the product of the last two dims once a and b keep the first two,
  // and b = -1 is the sequence once a and N * Hv are right. A dim of t read back from t at
  // run time (torch 1.x's a.size(0), a.size(1)) is a 0 spelled out: t's own dim, as 0 is.
  auto ownDim = [&](size_t i) {
    return shape[i] == INT64_MIN && elementSource(ctx, *t, i) == n->input(0);
  };
  const bool a = keepsDim(ctx, *t, q, dims, 0) || ownDim(0);
  const bool b = keepsDim(ctx, *t, q, dims, 1) || ownDim(1);
  const bool c = shape[2] == heads * head_size;
  return a + b + c >= 2;
}

/// fewer_heads(kr, qr): kr splits K into fewer heads than qr splits Q into, of the same
/// size, and a whole number of Q heads per K head (grouped-query attention).
bool fewerHeads(const MatchContext& ctx, ValueArgs args) {
  int64_t kv = 0, kv_size = 0, q = 0, q_size = 0;
  return headSplit(ctx, args[0], kv, kv_size) && headSplit(ctx, args[1], q, q_size) &&
         kv_size == q_size && kv < q && q % kv == 0;
}

/// gqa_head_size(qr): qr splits heads whose size ONNX Runtime's GroupQueryAttention kernel
/// accepts (a multiple of 8; it fails at run time otherwise).
bool gqaHeadSize(const MatchContext& ctx, ValueArgs args) {
  int64_t heads = 0, head_size = 0;
  return headSplit(ctx, args[0], heads, head_size) && head_size % 8 == 0;
}

/// merges_heads(y, vr, q): y merges (mergesInto) the N heads of Hv that vr splits V into.
bool mergesHeads(const MatchContext& ctx, ValueArgs args) {
  int64_t heads = 0, head_size = 0;
  return headSplit(ctx, args[1], heads, head_size) &&
         mergesInto(ctx, args[0], args[2], heads, head_size);
}

/// Head count and head size of `h` = [B, N, L, H] (heads already split and transposed,
/// as RotaryEmbedding or repeat_kv leave them): both static and positive.
bool headsOf(const MatchContext& ctx, ValueId h, int64_t& heads, int64_t& head_size) {
  const auto dims = h == kNoId ? std::nullopt : staticShape(ctx.graph, h);
  if (!dims || dims->size() != 4) return false;
  heads = (*dims)[1];
  head_size = (*dims)[3];
  return heads > 0 && head_size > 0;
}

/// Head count and head size of `kt` = [B, N, H, L] (heads transposed for the scores, as a
/// K cache GPT-2 keeps transposed): both static and positive.
bool keyHeadsOf(const MatchContext& ctx, ValueId kt, int64_t& heads, int64_t& head_size) {
  const auto dims = kt == kNoId ? std::nullopt : staticShape(ctx.graph, kt);
  if (!dims || dims->size() != 4) return false;
  heads = (*dims)[1];
  head_size = (*dims)[2];
  return heads > 0 && head_size > 0;
}

/// key_heads_like(kt, qr): kt = [B, N, H, L] holds as many heads of the same size as the
/// head split qr makes.
bool keyHeadsLike(const MatchContext& ctx, ValueArgs args) {
  return headsMatch(ctx, &keyHeadsOf, args[0], args[1], true);
}

/// heads_like(kh, qr): kh = [B, N, L, H] holds as many heads of the same size as the head
/// split qr makes.
bool headsLike(const MatchContext& ctx, ValueArgs args) {
  return headsMatch(ctx, &headsOf, args[0], args[1], true);
}

/// head_count_like(vh, qr): vh = [B, N, L, Hv] holds as many heads as the split qr makes.
bool headCountLike(const MatchContext& ctx, ValueArgs args) {
  return headsMatch(ctx, &headsOf, args[0], args[1], false);
}

/// merges_heads_of(y, vh, q): y merges (mergesInto) the heads vh = [B, N, L, Hv] hold.
bool mergesHeadsOf(const MatchContext& ctx, ValueArgs args) {
  int64_t heads = 0, head_size = 0;
  return headsOf(ctx, args[1], heads, head_size) &&
         mergesInto(ctx, args[0], args[2], heads, head_size);
}

/// repeats_heads(r, h): r = h, or r = Reshape(Expand(Unsqueeze(h, [2]), [B, G, R, L, H]),
/// [B, G * R, L, H]): Hugging Face's repeat_kv, which gives each of the G heads of h
/// = [B, G, L, H] R consecutive copies (head j of r is head j / R of h, the grouping
/// GroupQueryAttention and ONNX Attention use). The Unsqueeze is the pattern's; the dims are
/// read from the values' shapes.
bool repeatsHeads(const MatchContext& ctx, ValueArgs args) {
  const ValueId r = args[0], h = args[1];
  if (r == kNoId || h == kNoId) return false;
  int64_t groups = 0, size = 0, heads = 0, r_size = 0;
  if (!headsOf(ctx, h, groups, size) || !headsOf(ctx, r, heads, r_size) || size != r_size)
    return false;
  if (r == h) return true;
  const Node* reshape = reshapeOf(ctx.graph, r);
  const Node* expand = reshape ? ctx.graph.producerOf(reshape->input(0)) : nullptr;
  if (!expand || !expand->live() || expand->opType() != "Expand" || !expand->domain().empty())
    return false;
  const ValueId e = expand->output(0);
  const auto dims = staticShape(ctx.graph, e);
  return dims && dims->size() == 5 && (*dims)[1] == groups && (*dims)[2] > 0 &&
         groups * (*dims)[2] == heads && (*dims)[4] == size && sameDim(ctx.graph, e, 0, h, 0) &&
         sameDim(ctx.graph, e, 3, h, 2) && sameDim(ctx.graph, r, 0, h, 0) &&
         sameDim(ctx.graph, r, 2, h, 2);
}

/// splits_qkv(q, qkv): q is output 0 of a three-output Split of rank-3 qkv along its last
/// axis into equal parts, so the three outputs are qkv's columns [0, D), [D, 2D), [2D, 3D):
/// com.microsoft.Attention's packed projection, read from one weight.
bool splitsQkv(const MatchContext& ctx, ValueArgs args) {
  const auto dims = args[1] == kNoId ? std::nullopt : staticShape(ctx.graph, args[1]);
  return dims && dims->size() == 3 && splitsEvenly(ctx.model, ctx.graph, args[0], args[1], 2, 3);
}

/// unstacks(h, p): h is output 0 of a two-output Split of p [2, ...] along axis 0 into
/// [1, 1]: h and the other output are p[0:1] and p[1:2], torch.unbind(past) before its
/// Squeezes.
bool unstacks(const MatchContext& ctx, ValueArgs args) {
  const auto dims = args[1] == kNoId ? std::nullopt : staticShape(ctx.graph, args[1]);
  return dims && !dims->empty() && (*dims)[0] == 2 &&
         splitsEvenly(ctx.model, ctx.graph, args[0], args[1], 0, 2);
}

/// causal_buffer(t): t is a constant [1, .., 1, R, R] whose element (i, j) is nonzero
/// exactly when j <= i (GPT-2's `bias` buffer, torch.tril(ones)): its slice
/// [T - S : T, :T] is the causal mask of S queries behind T - S cached keys, which
/// com.microsoft.Attention's unidirectional=1 applies itself. Buffers above 64 MiB are
/// not read (no fusion).
bool causalBuffer(const MatchContext& ctx, ValueArgs args) {
  const onnx::TensorProto* t = args[0] == kNoId ? nullptr : constantTensor(ctx.graph, args[0]);
  const int rank = t ? t->dims_size() : 0;
  if (rank < 2 || t->dims(rank - 1) != t->dims(rank - 2) || t->dims(rank - 1) <= 0) return false;
  for (int i = 0; i + 2 < rank; ++i)
    if (t->dims(i) != 1) return false;
  const int64_t r = t->dims(rank - 1);
  const size_t element = elementSize(t->data_type());
  if (element == 0) return false;
  TensorBytes bytes;
  try {
    bytes = ctx.model.readTensorData(*t, uint64_t{64} << 20);
  } catch (const std::exception&) {
    return false;  // unreadable or too large: no fusion
  }
  if (bytes.bytes.size() != static_cast<size_t>(r * r) * element) return false;
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      if ((elementAsDouble(bytes, i * r + j) != 0) != (j <= i)) return false;
  return true;
}

// ---- Attribute helpers --------------------------------------------------------------------

/// The value of one-element float constant `v`.
std::optional<double> scalarOf(const MatchContext& ctx, ValueId v) {
  std::vector<double> x;
  const onnx::TensorProto* t = constantTensor(ctx.graph, v);
  if (!t || tensorElementCount(*t) != 1 || !isFloatingType(t->data_type()) ||
      !readConstantDoubles(ctx.model, ctx.graph, v, x, 1))
    return std::nullopt;
  return x[0];
}

/// The factor `x` = Mul(y, c) or Div(y, c) applies to y (c a one-element constant); 1 when
/// `x` is produced otherwise. `inner` receives y (or x itself).
std::optional<double> factorOf(const MatchContext& ctx, ValueId x, ValueId& inner) {
  inner = x;
  const Node* n = ctx.graph.producerOf(x);
  if (!n || !n->live() || !n->domain().empty()) return 1.0;
  if (n->opType() == "Div") {
    const std::optional<double> c = scalarOf(ctx, n->input(1));
    if (!c || *c == 0) return std::nullopt;
    inner = n->input(0);
    return 1.0 / *c;
  }
  if (n->opType() == "Mul") {
    for (int i = 0; i < 2; ++i) {
      if (const std::optional<double> c = scalarOf(ctx, n->input(i))) {
        inner = n->input(1 - i);
        return *c;
      }
    }
    return std::nullopt;
  }
  return 1.0;
}

/// True when `x` is not a Mul or Div by a one-element constant (factorOf peels nothing
/// off it): a scores operand bound as it is must not hide a factor that attentionScale,
/// which reads the graph, would count a second time.
bool unscaled(const MatchContext& ctx, ValueArgs args) {
  ValueId inner = kNoId;
  const std::optional<double> f = factorOf(ctx, args[0], inner);
  return f && inner == args[0];
}

/// The largest magnitude a bool or integer element type holds, or nullopt for others.
std::optional<double> integerTypeBound(int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::BOOL:
      return 1.0;
    case onnx::TensorProto::INT8:
      return 128.0;
    case onnx::TensorProto::UINT8:
      return 255.0;
    case onnx::TensorProto::INT16:
      return 32768.0;
    case onnx::TensorProto::UINT16:
      return 65535.0;
    case onnx::TensorProto::INT32:
      return 2147483648.0;
    case onnx::TensorProto::UINT32:
      return 4294967295.0;
    case onnx::TensorProto::INT64:
      return 9223372036854775808.0;
    case onnx::TensorProto::UINT64:
      return 18446744073709551615.0;
    default:
      return std::nullopt;
  }
}

/// What an activation (the output of MatMul and its kind) is taken to stay below: far
/// below float's overflow, far above any value a working model computes.
constexpr double kActivationBound = 1e15;

/// A bound on the magnitude of v's elements when v holds no infinity or NaN unless the
/// model's activations do (taken as data, below kActivationBound): v is computed from
/// activations and constants through ops that keep finite values finite; nullopt when it
/// may not be (a float graph input: an additive attention mask may hold -inf; a sum of two
/// finfo.min masks). Adds and products are bounded as exact arithmetic would be, so that an
/// overflow of the bounds is caught.
std::optional<double> magnitudeBound(const MatchContext& ctx, ValueId v, int depth) {
  const Graph& g = ctx.graph;
  if (v == kNoId || depth > 32) return std::nullopt;
  if (constantTensor(g, v)) {
    constexpr int64_t kMaxElements = 1 << 20;
    const auto values = constantValues(ctx.model, g, v, kMaxElements);
    if (!values) return std::nullopt;
    double bound = 0;
    for (double x : *values) {
      if (!std::isfinite(x)) return std::nullopt;
      bound = std::max(bound, std::fabs(x));
    }
    return bound;
  }
  const Node* n = g.producerOf(v);
  if (!n || !n->live()) return integerTypeBound(valueElemType(g, v));
  const std::string& op = n->opType();
  auto input = [&](size_t i) { return magnitudeBound(ctx, n->input(i), depth + 1); };
  if (n->domain() == "com.microsoft")
    return op == "FusedMatMul" ? std::optional<double>(kActivationBound) : std::nullopt;
  if (!n->domain().empty()) return std::nullopt;
  if (op == "MatMul" || op == "Gemm" || op == "Einsum") return kActivationBound;
  if (op == "Cast") {
    if (auto bound = integerTypeBound(valueElemType(g, n->input(0)))) return bound;
    return input(0);
  }
  if (op == "Identity" || op == "Transpose" || op == "Reshape" || op == "Expand" ||
      op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Slice" || op == "Gather" ||
      op == "Tile" || op == "Neg" || op == "Abs" || op == "Relu")
    return input(0);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Concat" || op == "Where") {
    // Where's condition (input 0) only chooses; Concat's bound is its inputs' largest.
    const size_t first = op == "Where" ? 1 : 0;
    if (n->inputs().size() <= first) return std::nullopt;
    double bound = op == "Mul" ? 1 : 0;
    for (size_t i = first; i < n->inputs().size(); ++i) {
      const auto b = input(i);
      if (!b) return std::nullopt;
      if (op == "Add" || op == "Sub")
        bound += *b;
      else if (op == "Mul")
        bound *= *b;
      else
        bound = std::max(bound, *b);
    }
    return bound;
  }
  if (op == "Div") {
    const auto d = constantValues(ctx.model, g, n->input(1), 1 << 16);
    if (!d || d->empty()) return std::nullopt;
    double smallest = INFINITY;
    for (double x : *d) smallest = std::min(smallest, std::fabs(x));
    const auto b = input(0);
    if (!b || !(smallest > 0) || !std::isfinite(smallest)) return std::nullopt;
    return *b / smallest;
  }
  return std::nullopt;
}

/// finite_scores(x): Softmax(x) gives NaN only where x holds an infinity or NaN. x is float
/// or double and magnitudeBound keeps it below the value that rounds to infinity.
bool finiteScores(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return false;
  double limit = 0;
  switch (valueElemType(ctx.graph, args[0])) {
    case onnx::TensorProto::FLOAT:
      limit = 3.4028235677973366e38;  // (2 - 2^-24) * 2^127: larger rounds to infinity
      break;
    case onnx::TensorProto::DOUBLE:
      limit = std::numeric_limits<double>::max();
      break;
    default:
      return false;  // fp16's range is too small for the activation bound
  }
  const std::optional<double> bound = magnitudeBound(ctx, args[0], 0);
  return bound && *bound < limit;
}

/// exact_masking(v, s): the fused ops, which add a mask v to the scores s in float, give
/// what the model's masking gives. In float or double they add what the model adds (a fill
/// the model puts in place of scores is exact_fill's question). In float16 the model rounds
/// `scores + mask` (and a fill of -65504 plus a mask overflows): a query row masked whole
/// gets other weights than the fused op's, so only a constant -inf (masked weights 0, a row
/// masked whole NaN, either way) is exact.
bool exactMasking(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId || args[1] == kNoId) return false;
  switch (valueElemType(ctx.graph, args[1])) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
      return true;
    case onnx::TensorProto::FLOAT16: {
      std::vector<double> values;
      if (!readConstantDoubles(ctx.model, ctx.graph, args[0], values, 1 << 16) || values.empty())
        return false;
      return std::all_of(values.begin(), values.end(),
                         [](double x) { return std::isinf(x) && x < 0; });
    }
    default:
      return false;
  }
}

/// keys_length(l, s): l holds the length of the keys the scores s [..., S, T] are of, T, at
/// run time (a dim read of a value with the same dim: Hugging Face slices the mask to
/// key_states.shape[-2], the keys after the cache and repeat_kv). The rewrite then slices
/// the mask to the T it computes, which is that length.
bool keysLength(const MatchContext& ctx, ValueArgs args) {
  const auto rank = valueRank(ctx.graph, args[1]);
  return rank && *rank >= 2 && isDimOf(ctx, args[0], args[1], static_cast<int>(*rank - 1));
}

/// Whether c is, through Casts and Slices that keep column 0 of the last axis, a causal
/// buffer (causal_buffer): then every row of c keeps a key.
bool keepsAKeyPerRow(const MatchContext& ctx, ValueId c) {
  const Graph& g = ctx.graph;
  for (int depth = 0; depth < 8 && c != kNoId; ++depth) {
    const Node* n = g.producerOf(c);
    if (!n || !n->live() || !n->domain().empty()) break;
    if (n->opType() == "Cast") {
      c = n->input(0);
      continue;
    }
    if (n->opType() != "Slice") break;
    const std::optional<int64_t> rank = valueRank(g, n->input(0));
    const NodeId id = g.value(c).producer();
    if (!rank) return false;
    // Only a Slice of the last axis matters: it must start at key 0 and step forward.
    std::vector<int64_t> axes;
    if (findParam(g, id, "axes").kind == ParamRef::Kind::kAbsent) {
      const ParamRef starts = findParam(g, id, "starts");
      const std::optional<int64_t> count =
          starts.kind == ParamRef::Kind::kInput ? valueRank(g, starts.input) : std::nullopt;
      const auto dims =
          starts.kind == ParamRef::Kind::kInput ? staticShape(g, starts.input) : std::nullopt;
      if (starts.kind == ParamRef::Kind::kAttribute)
        for (int i = 0; i < starts.attribute->ints_size(); ++i) axes.push_back(i);
      else if (count == 1 && dims && !dims->empty())
        for (int64_t i = 0; i < (*dims)[0]; ++i) axes.push_back(i);
      else
        return false;
    } else if (!readIntsParam(ctx.model, g, id, "axes", axes)) {
      return false;
    }
    if (!normalizeAxes(axes, *rank)) return false;
    const auto last = std::find(axes.begin(), axes.end(), *rank - 1);
    if (last != axes.end()) {
      const size_t i = static_cast<size_t>(last - axes.begin());
      const auto starts = intsParam(ctx.model, g, id, "starts");
      const auto steps = intsParam(ctx.model, g, id, "steps");
      if (!starts || i >= starts->size() || (*starts)[i] != 0) return false;
      if (findParam(g, id, "steps").kind != ParamRef::Kind::kAbsent &&
          (!steps || i >= steps->size() || (*steps)[i] <= 0))
        return false;  // the columns may not start at key 0
    }
    c = n->input(0);
  }
  return c != kNoId && causalBuffer(ctx, ValueArgs(&c, 1));
}

/// A constant fill that any score and mask vanish into: every element -inf or at most
/// -2^100 (finfo.min): score + fill + mask rounds to what fill + mask is, whatever the row.
bool absorbingFill(const MatchContext& ctx, ValueId fill) {
  std::vector<double> values;
  return readConstantDoubles(ctx.model, ctx.graph, fill, values, 1 << 16) && !values.empty() &&
         std::all_of(values.begin(), values.end(), [](double x) { return x <= kHugeNegative; });
}

/// exact_fill(fill, s, m): the fused op adds `fill` to the scores s where the model's
/// m = Where(c, s, fill) (optionally plus a mask) or Where(Equal(c, 0), fill, s) puts fill in
/// their place; the weights are the same when fill is absorbing (absorbingFill), or when no
/// query row is masked whole: c a causal buffer sliced from column 0 (GPT-2's eager mask,
/// nanoGPT's masked_fill) and no mask added after it. A mask added after a fill of -1e4
/// (transformers 3.x GPT-2: masked_bias and the padding mask both -1e4) can take every key
/// a row keeps (a left-padded prompt's padding tokens): the model then spreads that row's
/// weights evenly over the filled keys, the fused op by their scores. In float16 only -inf
/// absorbs (exact_masking); float16's lowest plus a score is not the fill.
bool exactFill(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId fill = args[0], s = args[1];
  if (fill == kNoId || s == kNoId) return false;
  const int32_t elem = valueElemType(g, s);
  if (elem == onnx::TensorProto::FLOAT16) {
    if (exactMasking(ctx, args)) return true;  // -inf
  } else if (elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE) {
    if (absorbingFill(ctx, fill)) return true;
  } else {
    return false;
  }
  const Node* n = args[2] == kNoId ? nullptr : g.producerOf(args[2]);
  if (!n || !n->live() || !n->domain().empty() || n->opType() != "Where") return false;
  if (n->input(1) == s && n->input(2) == fill) return keepsAKeyPerRow(ctx, n->input(0));
  // masked_fill (nanoGPT): Where(Equal(c, 0), fill, s), c the causal cut, kept where nonzero.
  if (n->input(1) != fill || n->input(2) != s) return false;
  const Node* equal = producerOp(g, n->input(0), "Equal");
  if (!equal) return false;
  for (int side = 0; side < 2; ++side) {
    std::vector<double> zero;
    if (readConstantDoubles(ctx.model, g, equal->input(1 - side), zero, 1) && zero.size() == 1 &&
        zero[0] == 0)
      return keepsAKeyPerRow(ctx, equal->input(side));
  }
  return false;
}

/// swaps_last_two_through_3d(y, x, r): y = Reshape(Transpose(r, [0, 2, 1])) with
/// r = Reshape(x) is x's last two axes swapped: x is [a, b, c, d], r [a*b, c, d] (its last
/// two dims x's, so its first is a*b) and y [a, b, d, c] (torch's math SDPA transposes K
/// for bmm in this 3-D layout).
bool swapsLastTwoThrough3d(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId y = args[0], x = args[1], r = args[2];
  const auto xs = staticShape(g, x);
  const auto rs = staticShape(g, r);
  const auto ys = staticShape(g, y);
  if (!xs || !rs || !ys || xs->size() != 4 || rs->size() != 3 || ys->size() != 4) return false;
  return sameDim(g, r, 1, x, 2) && sameDim(g, r, 2, x, 3) && sameDim(g, y, 0, x, 0) &&
         sameDim(g, y, 1, x, 1) && sameDim(g, y, 2, x, 3) && sameDim(g, y, 3, x, 2);
}

/// unbatches_heads(y, q3, q4, k3, k4, v3, v4): the 3-D attention y = Reshape(MatMul(
/// Softmax(MatMul(q3, k3^T)), v3)) on heads merged into the batch (torch.bmm, as BART,
/// Whisper and CLIP attention compute it: X3 = Reshape(X4) of heads X4 [B, N, L, H] to
/// [B*N, L, H]) is the 4-D attention on q4, k4, v4: each X3 keeps its X4's last two dims
/// (so its first is B*N, elements being counted), k4 and v4 have q4's B and N (so the
/// batches pair up), and y splits the batch back into q4's B and N, its last two dims the
/// 3-D result's [S, Hv].
bool unbatchesHeads(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId y = args[0], q4 = args[2];
  auto rank = [&](ValueId v) {
    const auto dims = staticShape(g, v);
    return dims ? static_cast<int>(dims->size()) : -1;
  };
  if (rank(y) != 4) return false;
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    const ValueId x3 = args[i], x4 = args[i + 1];
    if (rank(x3) != 3 || rank(x4) != 4) return false;
    if (!sameDim(g, x3, 1, x4, 2) || !sameDim(g, x3, 2, x4, 3)) return false;
    if (!sameDim(g, x4, 0, q4, 0) || !sameDim(g, x4, 1, q4, 1)) return false;
  }
  const ValueId v4 = args[6];
  return sameDim(g, y, 0, q4, 0) && sameDim(g, y, 1, q4, 1) && sameDim(g, y, 2, q4, 2) &&
         sameDim(g, y, 3, v4, 3);
}

/// splits_batched_scores(s4, q4, k4): s4 = Reshape(scores [B*N, S, L]) is [B, N, S, L] of
/// q4's B, N and S and k4's L.
bool splitsBatchedScores(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId s4 = args[0], q4 = args[1], k4 = args[2];
  const auto dims = staticShape(g, s4);
  return dims && dims->size() == 4 && sameDim(g, s4, 0, q4, 0) && sameDim(g, s4, 1, q4, 1) &&
         sameDim(g, s4, 2, q4, 2) && sameDim(g, s4, 3, k4, 2);
}

/// merges_batched_scores(t, s4): t = Reshape(s4 + masks) views the scores [B, N, S, L] as
/// [B*N, S, L] (its last two dims s4's). Of s4, not of the sum, whose dims a mask's own
/// names may hide: in a run the model completes the sum is s4's shape (see
/// batched_heads_masked_to_4d).
bool mergesBatchedScores(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId t = args[0], s4 = args[1];
  const auto ts = staticShape(g, t);
  const auto ss = staticShape(g, s4);
  return ts && ss && ts->size() == 3 && ss->size() == 4 && sameDim(g, t, 1, s4, 2) &&
         sameDim(g, t, 2, s4, 3);
}

std::optional<onnx::AttributeProto> floatAttribute(double value) {
  if (!std::isfinite(value) || value <= 0) return std::nullopt;
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(static_cast<float>(value));
  return a;
}

/// attention_scale(s): the factor applied to Q.K^T in the scores `s`: s = MatMul(q', k')
/// scaled by Mul/Div by a constant, where q' and k' may each be Mul/Div by a constant, or
/// s = com.microsoft.FusedMatMul(q', k') with that factor as its alpha.
std::optional<onnx::AttributeProto> attentionScale(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  ValueId mm = kNoId;
  const std::optional<double> outer = factorOf(ctx, args[0], mm);
  const Node* n = outer ? ctx.graph.producerOf(mm) : nullptr;
  // A FusedMatMul is what the MatMul rules made of a scaled product: its alpha is the scale
  // (the pattern requires no transposes).
  const std::optional<double> alpha = n && n->live() ? matMulAlpha(*n) : std::nullopt;
  if (!alpha) return std::nullopt;
  ValueId unused = kNoId;
  const std::optional<double> fq = factorOf(ctx, n->input(0), unused);
  const std::optional<double> fk = factorOf(ctx, n->input(1), unused);
  if (!fq || !fk) return std::nullopt;
  return floatAttribute(*outer * *alpha * *fq * *fk);
}

/// INT: N of an Einsum projection weight w [D, N, H] (tf2onnx's EinsumDense).
std::optional<onnx::AttributeProto> einsumHeads(const MatchContext& ctx, ValueArgs args) {
  const auto w = staticShape(ctx.graph, args[0]);
  if (!w || w->size() != 3 || (*w)[1] <= 0) return std::nullopt;
  return intAttribute((*w)[1]);
}

std::optional<onnx::AttributeProto> attentionNumHeads(const MatchContext& ctx, ValueArgs args) {
  int64_t heads = 0, head_size = 0;
  if (!headSplit(ctx, args[0], heads, head_size)) return std::nullopt;
  return intAttribute(heads);
}

// ---- Merging attention ops (per-head exports) ---------------------------------------------

/// What one attention op computes per head: its Q heads and K/V heads, and the static head
/// sizes of its 3-D query, key and value. ONNX Attention names its head counts q_num_heads
/// and kv_num_heads; com.microsoft.MultiHeadAttention has one num_heads for all three.
struct AttentionHeads {
  int64_t q_heads = 0, kv_heads = 0;
  int64_t q_size = 0, k_size = 0, v_size = 0;
};

/// The static last dim of 3-D `v`: from its shape, or, for a projection a rewrite just
/// made (no shape inferred yet), MatMul(x, w)'s constant 2-D w. 0 when unknown.
int64_t projectedLastDim(const MatchContext& ctx, ValueId v) {
  const std::optional<std::vector<int64_t>> dims = staticShape(ctx.graph, v);
  if (dims && dims->size() == 3 && dims->back() > 0) return dims->back();
  const Node* n = v == kNoId ? nullptr : ctx.graph.producerOf(v);
  if (dims || !n || !n->live() || n->opType() != "MatMul" || !n->domain().empty()) return 0;
  const std::optional<std::vector<int64_t>> w = constantShape(ctx.graph, n->input(1));
  return w && w->size() == 2 && (*w)[1] > 0 ? (*w)[1] : 0;
}

std::optional<AttentionHeads> attentionHeadsOf(const MatchContext& ctx, ValueId y) {
  const Node* n = y == kNoId ? nullptr : ctx.graph.producerOf(y);
  if (!n || !n->live()) return std::nullopt;
  const bool mha = n->domain() == "com.microsoft" && n->opType() == "MultiHeadAttention";
  const bool onnx = n->domain().empty() && n->opType() == "Attention";
  if (!mha && !onnx) return std::nullopt;
  auto count = [&](const char* name) -> int64_t {
    const onnx::AttributeProto* a = n->attribute(name);
    return a && a->type() == onnx::AttributeProto::INT ? a->i() : 0;
  };
  AttentionHeads h;
  h.q_heads = count(mha ? "num_heads" : "q_num_heads");
  h.kv_heads = count(mha ? "num_heads" : "kv_num_heads");
  if (h.q_heads <= 0 || h.kv_heads <= 0) return std::nullopt;
  auto headSize = [&](size_t input, int64_t heads) -> int64_t {
    const int64_t hidden = projectedLastDim(ctx, n->input(input));
    return hidden > 0 && hidden % heads == 0 ? hidden / heads : 0;
  };
  h.q_size = headSize(0, h.q_heads);
  h.k_size = headSize(1, h.kv_heads);
  h.v_size = headSize(2, h.kv_heads);
  if (h.q_size == 0 || h.k_size == 0 || h.v_size == 0) return std::nullopt;
  return h;
}

/// same_head_sizes(ya, yb): two attention ops on 3-D Q, K, V whose heads have the same
/// sizes, so one op with the heads of both (Q/K/V columns side by side) computes both.
bool sameHeadSizes(const MatchContext& ctx, ValueArgs args) {
  const auto a = attentionHeadsOf(ctx, args[0]);
  const auto b = attentionHeadsOf(ctx, args[1]);
  return a && b && a->q_size == b->q_size && a->k_size == b->k_size && a->v_size == b->v_size &&
         a->q_heads * b->kv_heads == b->q_heads * a->kv_heads;
}

std::optional<onnx::AttributeProto> mergedHeads(const MatchContext& ctx, ValueArgs args) {
  const auto a = attentionHeadsOf(ctx, args[0]);
  const auto b = attentionHeadsOf(ctx, args[1]);
  if (!a || !b) return std::nullopt;
  return intAttribute(a->q_heads + b->q_heads);
}

std::optional<onnx::AttributeProto> mergedKvHeads(const MatchContext& ctx, ValueArgs args) {
  const auto a = attentionHeadsOf(ctx, args[0]);
  const auto b = attentionHeadsOf(ctx, args[1]);
  if (!a || !b) return std::nullopt;
  return intAttribute(a->kv_heads + b->kv_heads);
}

// ---- Tensor helpers: packed Q/K/V projections --------------------------------------------

/// stored_inline(a, ...): every argument is a constant whose payload is in the model
/// itself, not in an external data file. Packing reads the weights and writes the packed
/// copy into the model: for weights kept outside (large models) that would read gigabytes
/// and could push the model past protobuf's 2 GB, so such projections stay separate.
bool storedInline(const MatchContext& ctx, ValueArgs args) {
  for (ValueId v : args) {
    const onnx::TensorProto* t = v == kNoId ? nullptr : constantTensor(ctx.graph, v);
    if (!t || t->data_location() == onnx::TensorProto::EXTERNAL) return false;
  }
  return !args.empty();
}

/// The payloads of constants `vs`, all of one element type and rank `rank` with equal
/// leading dims (rank 2: equal rows), or nothing.
std::optional<std::vector<TensorBytes>> readParts(const MatchContext& ctx, ValueArgs vs, int rank) {
  std::vector<TensorBytes> parts;
  for (ValueId v : vs) {
    const onnx::TensorProto* t = v == kNoId ? nullptr : constantTensor(ctx.graph, v);
    if (!t || t->dims_size() != rank || elementSize(t->data_type()) == 0) return std::nullopt;
    const int64_t count = tensorElementCount(*t);
    if (count <= 0) return std::nullopt;
    try {
      parts.push_back(
          ctx.model.readTensorData(*t, static_cast<uint64_t>(count) * elementSize(t->data_type())));
    } catch (const std::exception&) {
      return std::nullopt;  // unreadable external data: no fusion
    }
    const TensorBytes& first = parts.front();
    const TensorBytes& last = parts.back();
    if (last.data_type != first.data_type || (rank == 2 && last.dims[0] != first.dims[0]))
      return std::nullopt;
  }
  return parts;
}

/// columns(w1, w2, ...): [I, D1 + D2 + ...], the columns of w1, then w2, ...: one MatMul
/// computing the projections side by side (qkv_weights: Attention's packed `weights`;
/// concat_columns: the Q, K or V projections of attention heads merged into one op).
std::optional<onnx::TensorProto> columns(const MatchContext& ctx, ValueArgs args) {
  const auto parts = readParts(ctx, args, 2);
  if (!parts) return std::nullopt;
  const size_t element = elementSize(parts->front().data_type);
  const int64_t rows = parts->front().dims[0];
  int64_t cols = 0;
  for (const TensorBytes& p : *parts) cols += p.dims[1];
  std::string data;
  data.reserve(static_cast<size_t>(rows * cols) * element);
  for (int64_t r = 0; r < rows; ++r)
    for (const TensorBytes& p : *parts) {
      const size_t row_bytes = static_cast<size_t>(p.dims[1]) * element;
      data.append(p.bytes, static_cast<size_t>(r) * row_bytes, row_bytes);
    }
  onnx::TensorProto t;
  t.set_data_type(parts->front().data_type);
  t.add_dims(rows);
  t.add_dims(cols);
  t.set_raw_data(std::move(data));
  return t;
}

/// flat_rows_shape(r, w): int64 [-1, S, I], the view of the flattened rows x [T, I] that
/// splits_flat_rows(r, w) regroups.
std::optional<onnx::TensorProto> flatRowsShape(const MatchContext& ctx, ValueArgs args) {
  const auto rows = flatRowsOfHeads(ctx, args[0], args[1]);
  if (!rows) return std::nullopt;
  return int64Vector({-1, rows->first, rows->second});
}

/// qkv_bias(bq, bk, bv): the three 1-D biases one after the other.
std::optional<onnx::TensorProto> qkvBias(const MatchContext& ctx, ValueArgs args) {
  const auto parts = readParts(ctx, args, 1);
  if (!parts) return std::nullopt;
  std::string data;
  int64_t count = 0;
  for (const TensorBytes& p : *parts) {
    data += p.bytes;
    count += p.dims[0];
  }
  onnx::TensorProto t;
  t.set_data_type(parts->front().data_type);
  t.add_dims(count);
  t.set_raw_data(std::move(data));
  return t;
}

}  // namespace

NativeFamily attentionNatives() {
  NativeFamily f;
  f.predicates = {
      {"splits_heads", 1, &splitsHeads,
       "r = Reshape(x, [B, S, N, H]) of a rank-3 x whose static last dim is N*H; B and S "
       "constant (0 or x's static dim) or read from x's shape"},
      {"same_heads", 2, &sameHeads, "a and b split heads (splits_heads) into the same N and H"},
      {"same_head_count", 2, &sameHeadCount,
       "a and b split heads (splits_heads) into the same number of heads N"},
      {"stored_inline", kVariadic, &storedInline,
       "every argument is a constant stored in the model, not as external data"},
      {"merges_heads", 3, &mergesHeads,
       "y = Reshape(t, [B, S, N*Hv or -1]) where vr splits V into N heads of Hv and B, S are "
       "query q's first dims"},
      {"fewer_heads", 2, &fewerHeads,
       "kr splits heads into fewer heads of the same size than qr, a whole number of Q "
       "heads per K head"},
      {"gqa_head_size", 1, &gqaHeadSize,
       "qr splits heads (splits_heads) of a size that is a multiple of 8 (GroupQueryAttention's "
       "kernel requires it)"},
      {"heads_like", 2, &headsLike,
       "kh = [B, N, L, H] holds the number N and size H of heads the split qr makes (static)"},
      {"reshapes_to_own_shape", 2, &reshapesToOwnShape,
       "y = Reshape(t, s) where s is t's shape: each element 0, t's static dim or that dim "
       "read at run time, but for one the others force"},
      {"splits_flat_rows", 2, &splitsFlatRows,
       "r = Reshape(p, [d0, S, N, H]) splits the heads of p = MatMul(x, w) (+ b) on flattened "
       "rows: S, N, H constant and positive, N*H w's static dim 1"},
      {"flattens_rows", 2, &flattensRows,
       "f = Reshape(x, s) flattens x's rows for a MatMul by w [K, N]: x's static last dim is "
       "K, or s = [-1, x.size(-1)] read at run time"},
      {"key_heads_like", 2, &keyHeadsLike,
       "kt = [B, N, H, L] holds the number N and size H of heads the split qr makes (static)"},
      {"head_count_like", 2, &headCountLike,
       "vh = [B, N, L, Hv] holds the number N of heads the split qr makes (static)"},
      {"merges_heads_of", 3, &mergesHeadsOf,
       "y = Reshape(t, [B, S, N*Hv or -1]) merging the heads of vh = [B, N, L, Hv]; B, S are "
       "query q's first dims"},
      {"same_head_sizes", 2, &sameHeadSizes,
       "ya and yb are attention ops (MultiHeadAttention, Attention) on 3-D Q, K, V with static "
       "last dims whose heads have equal sizes"},
      {"splits_qkv", 2, &splitsQkv,
       "q is output 0 of a three-output Split of rank-3 qkv along its last axis into equal "
       "parts of its static last dim"},
      {"unstacks", 2, &unstacks,
       "h is output 0 of a two-output Split of p [2, ...] along axis 0 into [1, 1] (or equal "
       "halves)"},
      {"causal_buffer", 1, &causalBuffer,
       "t is a constant [1, .., 1, R, R] whose element (i, j) is nonzero exactly when j <= i "
       "(torch.tril(ones))"},
      {"unbatches_heads", 7, &unbatchesHeads,
       "y = Reshape(3-D attention on q3, k3, v3) is the 4-D attention on q4, k4, v4 [B, N, "
       "L, H]: each X3 = Reshape(X4) merges B and N (its last two dims X4's), k4 and v4 have "
       "q4's B and N, and y is [B, N, S, Hv] (q4's B, N, S and v4's Hv)"},
      {"splits_batched_scores", 3, &splitsBatchedScores,
       "s4 is [B, N, S, L] of q4's B, N, S and k4's L (q4, k4 heads [B, N, L, H])"},
      {"merges_batched_scores", 2, &mergesBatchedScores,
       "t = Reshape(scores s4 + masks) views s4's [B, N, S, L] as [B*N, S, L] (t's last two "
       "dims s4's)"},
      {"swaps_last_two_through_3d", 3, &swapsLastTwoThrough3d,
       "y = Reshape(Transpose(r, [0, 2, 1])) of r = Reshape(x): x [a, b, c, d], r [a*b, c, "
       "d], y [a, b, d, c], which is x with its last two axes swapped"},
      {"keys_length", 2, &keysLength,
       "l holds the scores s's last dim (the keys' length) at run time: a dim read of a value "
       "with that dim, through integer casts, (un)squeezes and + 0"},
      {"exact_masking", 2, &exactMasking,
       "the scores s are float or double, or the mask or fill v is a constant of -inf only: "
       "the fused ops add v to the scores in float, where a float16 model rounds (a query "
       "row masked whole would differ)"},
      {"exact_fill", 3, &exactFill,
       "fill absorbs score and mask (-inf, or at most -2^100 in float), or the masked scores "
       "m are Where(c, s, fill) or Where(Equal(c, 0), fill, s), no mask added after, with c "
       "a causal buffer sliced from key 0: every query row keeps a key"},
      {"finite_scores", 1, &finiteScores,
       "x (float or double) holds no infinity or NaN by construction: computed from "
       "activations (MatMul and its kind, taken to stay below 1e15) and finite constants "
       "through shape ops, Add/Sub/Mul, Div by a nonzero constant, Where and casts of "
       "booleans and integers, with a bound below overflow; a float graph input is not (a "
       "mask may hold -inf)"},
      {"unscaled", 1, &unscaled,
       "x is not a Mul or Div by a one-element constant (a scores operand whose factor "
       "attention_scale would count)"},
      {"repeats_heads", 2, &repeatsHeads,
       "r is h = [B, G, L, H] or its repeat_kv Reshape(Expand(Unsqueeze(h, 2), [B, G, R, L, "
       "H]), [B, G*R, L, H]) (static G, R, H)"},
  };
  f.attribute_helpers = {
      {"attention_scale", 1, &attentionScale,
       "FLOAT: the product of the constant factors (Mul c, Div 1/c) on Q.K^T, Q and K in "
       "the scores s"},
      {"einsum_heads", 1, &einsumHeads,
       "INT: N of a static Einsum projection weight w [D, N, H] (tf2onnx)"},
      {"attention_num_heads", 1, &attentionNumHeads,
       "INT: N of the head split r = Reshape(x, [_, _, N, H]) (see splits_heads)"},
      {"merged_heads", 2, &mergedHeads,
       "INT: the query heads of attention ops ya and yb together (num_heads or q_num_heads)"},
      {"merged_kv_heads", 2, &mergedKvHeads,
       "INT: the key/value heads of attention ops ya and yb together (num_heads or "
       "kv_num_heads)"},
  };
  f.tensor_helpers = {
      {"qkv_weights", 3, &columns,
       "[I, Dq+Dk+Dv]: the columns of the constant 2-D weights wq, wk, wv side by side"},
      {"concat_columns", kVariadic, &columns,
       "[I, D1+D2+...]: the columns of constant 2-D weights with equal rows, side by side"},
      {"flat_rows_shape", 2, &flatRowsShape,
       "int64 [-1, S, I]: the rows of flattened x [T, I] that splits_flat_rows(r, w) regroups"},
      {"qkv_bias", 3, &qkvBias, "the constant 1-D biases bq, bk, bv one after the other"},
  };
  return f;
}

}  // namespace onnx_rewrite
