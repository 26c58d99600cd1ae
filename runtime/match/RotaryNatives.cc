//===- RotaryNatives.cc - native functions of the rotary rules ----------------===//
//
// rules/rotary.yaml fuses the rotate-half form of RoPE into RotaryEmbedding. What its
// pattern cannot say by itself lives here: that a Slice bound is half of the head size,
// that a Slice runs to the end, that the cos/sin caches of a Hugging Face export
// (Concat(freqs, freqs), so [max_pos, head_dim]) repeat their first half, and the
// [max_pos, head_dim / 2] caches ONNX Runtime wants instead, also built from the
// inverse frequencies of cos/sin computed per forward pass (transformers >= 4.38) when the
// user states the maximum position (ModelAssumptions::max_positions). See docs/dsl.md.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/graph/Model.h"
#include "runtime/graph/ModelError.h"
#include "runtime/graph/OpId.h"
#include "runtime/graph/TensorData.h"
#include "runtime/match/GeneratedSupport.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

/// Caches are read whole; larger ones (over 1 GiB) are not fused.
constexpr uint64_t kMaxCacheBytes = uint64_t{1} << 30;

/// The static last dim of `x`, if its shape is known and that dim is static.
std::optional<int64_t> staticLastDim(const Graph& g, ValueId x) {
  if (x == kNoId) return std::nullopt;
  const auto dims = staticShape(g, x);
  if (!dims || dims->empty() || dims->back() <= 0) return std::nullopt;
  return dims->back();
}

/// pos [B, S] gives one position per token of x: B is x's dim 0 and S its dim -2 (the
/// sequence of [B, N, S, H] heads and of a 3-D [B, S, H] x).
bool positionsOf(const MatchContext& ctx, ValueArgs args) {
  const onnx::TensorShapeProto* pos = valueShape(ctx.graph, args[0]);
  return pos && pos->dim_size() == 2 && sameDim(ctx.graph, args[0], 0, args[1], 0) &&
         sameDim(ctx.graph, args[0], 1, args[1], -2);
}

/// The one element of integer constant `v`.
std::optional<int64_t> oneInt(const MatchContext& ctx, ValueId v) {
  std::vector<int64_t> values;
  if (v == kNoId || !readConstantInts(ctx.model, ctx.graph, v, values, 1) || values.size() != 1)
    return std::nullopt;
  return values[0];
}

bool halfLastDim(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> half = oneInt(ctx, args[0]);
  const std::optional<int64_t> dim = staticLastDim(ctx.graph, args[1]);
  return half && dim && *dim % 2 == 0 && *half == *dim / 2;
}

bool sliceToEnd(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> end = oneInt(ctx, args[0]);
  if (!end) return false;
  // Exporters write "to the end" as INT64_MAX (TorchScript) or the dim itself (dynamo).
  if (*end >= std::numeric_limits<int32_t>::max()) return true;
  const std::optional<int64_t> dim = staticLastDim(ctx.graph, args[1]);
  return dim && *end >= *dim;
}

bool sliceUnitSteps(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return false;
  static const OpId kSlice = OpId::get("", "Slice");
  static const OpId kSqueeze = OpId::get("", "Squeeze");
  // Through the Squeezes of a [1, 1, max_pos, H] cache sliced before them.
  ValueId v = args[0];
  for (NodeId sq = producerIf(ctx.graph, v, kSqueeze); sq != kNoId;
       sq = producerIf(ctx.graph, v, kSqueeze))
    v = ctx.graph.node(sq).inputs()[0];
  const NodeId slice = producerIf(ctx.graph, v, kSlice);
  if (slice == kNoId) return true;  // an optional Slice that is absent
  if (findParam(ctx.graph, slice, "steps").kind == ParamRef::Kind::kAbsent) return true;
  std::vector<int64_t> steps;
  if (!readIntsParam(ctx.model, ctx.graph, slice, "steps", steps)) return false;
  for (int64_t s : steps)
    if (s != 1) return false;
  return true;
}

bool splitHalves(const MatchContext& ctx, ValueArgs args) {
  const auto dims = args[1] == kNoId ? std::nullopt : staticShape(ctx.graph, args[1]);
  return dims && !dims->empty() &&
         splitsEvenly(ctx.model, ctx.graph, args[0], args[1],
                      static_cast<int64_t>(dims->size()) - 1, 2);
}

/// A constant floating-point cache [rows, cols] with an even number of columns, read
/// whole; [1, .., 1, rows, cols] (transformers 4.31's cos_cached[None, None]) is read as
/// [rows, cols].
std::optional<TensorBytes> readCache(const MatchContext& ctx, ValueId v) {
  if (v == kNoId) return std::nullopt;
  const onnx::TensorProto* t = constantTensor(ctx.graph, v);
  const int rank = t ? t->dims_size() : 0;
  if (!t || rank < 2 || t->dims(rank - 2) <= 0 || t->dims(rank - 1) <= 0 ||
      t->dims(rank - 1) % 2 != 0 || !isFloatingType(t->data_type()))
    return std::nullopt;
  for (int i = 0; i < rank - 2; ++i)
    if (t->dims(i) != 1) return std::nullopt;
  try {
    TensorBytes bytes = ctx.model.readTensorData(*t, kMaxCacheBytes);
    const size_t element = elementSize(bytes.data_type);
    if (element == 0 || bytes.dims.size() != static_cast<size_t>(rank) ||
        bytes.bytes.size() != static_cast<size_t>(bytes.elementCount()) * element)
      return std::nullopt;
    bytes.dims = {t->dims(rank - 2), t->dims(rank - 1)};
    return bytes;
  } catch (const ModelError&) {
    return std::nullopt;  // unreadable or too large: no fusion
  }
}

bool rotaryCache(const MatchContext& ctx, ValueArgs args) {
  const std::optional<TensorBytes> cache = readCache(ctx, args[0]);
  if (!cache) return false;
  const size_t row = static_cast<size_t>(cache->dims[1]) * elementSize(cache->data_type);
  const size_t half = row / 2;
  const char* data = cache->bytes.data();
  for (int64_t r = 0; r < cache->dims[0]; ++r, data += row)
    if (std::memcmp(data, data + half, half) != 0) return false;
  return true;
}

/// rotary_cache(c), and `rows` (what the Gather reads) is c's [rows, cols]: c is 2-D and
/// `rows` is c or a Slice of it, or c is [1, 1, rows, cols] and `rows` is it squeezed twice
/// (after a Slice).
bool rotaryCacheRows(const MatchContext& ctx, ValueArgs args) {
  if (!rotaryCache(ctx, args) || args[1] == kNoId) return false;
  static const OpId kSqueeze = OpId::get("", "Squeeze");
  int squeezes = 0;
  for (ValueId v = args[1]; producerIf(ctx.graph, v, kSqueeze) != kNoId; ++squeezes)
    v = ctx.graph.node(producerIf(ctx.graph, v, kSqueeze)).inputs()[0];
  return constantTensor(ctx.graph, args[0])->dims_size() - squeezes == 2;
}

std::optional<onnx::TensorProto> rotaryHalfCache(const MatchContext& ctx, ValueArgs args) {
  const std::optional<TensorBytes> cache = readCache(ctx, args[0]);
  if (!cache) return std::nullopt;
  const size_t row = static_cast<size_t>(cache->dims[1]) * elementSize(cache->data_type);
  const size_t half = row / 2;
  std::string out;
  out.reserve(half * static_cast<size_t>(cache->dims[0]));
  for (int64_t r = 0; r < cache->dims[0]; ++r)
    out.append(cache->bytes, static_cast<size_t>(r) * row, half);
  onnx::TensorProto t;
  t.set_data_type(cache->data_type);
  t.add_dims(cache->dims[0]);
  t.add_dims(cache->dims[1] / 2);
  t.set_raw_data(std::move(out));
  return t;
}

/// Twice the columns of 2-D cache `c`: the rotary dim of an ORT-layout cache. A constant's
/// dims, or a computed cache's inferred shape (rows as many as the positions read, columns
/// static: rotary_embedding_computed_runtime's).
std::optional<int64_t> rotaryDimOfCache(const Graph& g, ValueId c) {
  if (c == kNoId) return std::nullopt;
  if (const auto dims = constantShape(g, c)) {
    if (dims->size() != 2 || (*dims)[1] <= 0) return std::nullopt;
    return 2 * (*dims)[1];
  }
  const onnx::TensorShapeProto* shape = valueShape(g, c);
  if (!shape || shape->dim_size() != 2 || !shape->dim(1).has_dim_value() ||
      shape->dim(1).dim_value() <= 0)
    return std::nullopt;
  return 2 * shape->dim(1).dim_value();
}

bool rotaryDimOf(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> d = oneInt(ctx, args[0]);
  const std::optional<int64_t> dim = rotaryDimOfCache(ctx.graph, args[1]);
  return d && dim && *d == *dim;
}

bool rotarySplit(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return false;
  static const OpId kSplit = OpId::get("", "Split");
  const NodeId split = producerIf(ctx.graph, args[0], kSplit);
  const std::optional<int64_t> rot = rotaryDimOfCache(ctx.graph, args[1]);
  const std::optional<int64_t> dim = staticLastDim(ctx.graph, args[2]);
  if (split == kNoId || ctx.graph.node(split).outputs().size() != 2 || !rot || !dim || *rot >= *dim)
    return false;
  std::vector<int64_t> sizes;
  return readIntsParam(ctx.model, ctx.graph, split, "split", sizes) && sizes.size() == 2 &&
         sizes[0] == *rot && sizes[1] == *dim - *rot;
}

std::optional<onnx::AttributeProto> rotaryDimAttr(const MatchContext& ctx, ValueArgs args) {
  const std::optional<int64_t> dim = rotaryDimOfCache(ctx.graph, args[0]);
  if (!dim) return std::nullopt;
  return intAttribute(*dim);
}

std::optional<onnx::AttributeProto> rotaryNumHeads(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  const auto dims = staticShape(ctx.graph, args[0]);
  if (!dims || dims->size() != 4 || (*dims)[1] <= 0) return std::nullopt;
  return intAttribute((*dims)[1]);
}

bool rotaryPairsCache(const MatchContext& ctx, ValueArgs args) {
  const std::optional<TensorBytes> cache = readCache(ctx, args[0]);
  if (!cache) return false;
  const size_t element = elementSize(cache->data_type);
  const char* data = cache->bytes.data();
  const size_t values = static_cast<size_t>(cache->elementCount());
  for (size_t i = 0; i < values; i += 2, data += 2 * element)
    if (std::memcmp(data, data + element, element) != 0) return false;
  return true;
}

std::optional<onnx::TensorProto> rotaryPairsHalfCache(const MatchContext& ctx, ValueArgs args) {
  const std::optional<TensorBytes> cache = readCache(ctx, args[0]);
  if (!cache) return std::nullopt;
  const size_t element = elementSize(cache->data_type);
  const size_t values = static_cast<size_t>(cache->elementCount());
  std::string out;
  out.reserve(values / 2 * element);
  for (size_t i = 0; i < values; i += 2) out.append(cache->bytes, i * element, element);
  onnx::TensorProto t;
  t.set_data_type(cache->data_type);
  t.add_dims(cache->dims[0]);
  t.add_dims(cache->dims[1] / 2);
  t.set_raw_data(std::move(out));
  return t;
}

bool flatPairsShape(const MatchContext& ctx, ValueArgs args) {
  std::vector<int64_t> shape;
  if (args[0] == kNoId || !readConstantInts(ctx.model, ctx.graph, args[0], shape, 4) ||
      shape.size() != 4)
    return false;
  const auto dims = staticShape(ctx.graph, args[1]);
  if (!dims || dims->size() != 4 || (*dims)[3] <= 0) return false;
  // The pairs [.., H/2, 2] become [.., H]: the leading dims kept (0 or the same static
  // size), the last merged (-1 or H).
  for (size_t i = 0; i < 3; ++i)
    if (shape[i] != 0 && (shape[i] != (*dims)[i] || (*dims)[i] <= 0)) return false;
  return shape[3] == -1 || shape[3] == (*dims)[3];
}

/// The static dims 2 and 3 (N and H) of a 4-D [B, S, N, H] x.
std::optional<std::pair<int64_t, int64_t>> bsnhHeads(const Graph& g, ValueId x) {
  const auto dims = x == kNoId ? std::nullopt : staticShape(g, x);
  if (!dims || dims->size() != 4 || (*dims)[2] <= 0 || (*dims)[3] <= 0) return std::nullopt;
  return std::make_pair((*dims)[2], (*dims)[3]);
}

std::optional<onnx::AttributeProto> rotaryNumHeadsBsnh(const MatchContext& ctx, ValueArgs args) {
  const auto heads = bsnhHeads(ctx.graph, args[0]);
  if (!heads) return std::nullopt;
  return intAttribute(heads->first);
}

std::optional<onnx::TensorProto> rotaryHeadsShape(const MatchContext& ctx, ValueArgs args) {
  const auto heads = bsnhHeads(ctx.graph, args[0]);
  if (!heads) return std::nullopt;
  return int64Vector({0, 0, heads->first, heads->second});
}

bool maxPositionsKnown(const MatchContext& ctx, ValueArgs) {
  return ctx.model.assumptions().max_positions > 0;
}

/// The inverse frequencies of constant float32 `f` of shape [1, n, 1] (n >= 1), or of
/// [b, n, 1] whose b rows are equal: the Expand to the batch that a constant folder (onnxsim
/// with static shapes) computed already.
std::optional<std::vector<float>> readInvFreq(const MatchContext& ctx, ValueId f) {
  if (f == kNoId) return std::nullopt;
  const onnx::TensorProto* t = constantTensor(ctx.graph, f);
  if (!t || t->data_type() != onnx::TensorProto::FLOAT || t->dims_size() != 3 || t->dims(0) < 1 ||
      t->dims(1) <= 0 || t->dims(2) != 1)
    return std::nullopt;
  try {
    const TensorBytes bytes = ctx.model.readTensorData(*t, kMaxCacheBytes);
    const size_t n = static_cast<size_t>(t->dims(1));
    const size_t rows = static_cast<size_t>(t->dims(0));
    if (rows > kMaxCacheBytes / sizeof(float) / n || bytes.bytes.size() != rows * n * sizeof(float))
      return std::nullopt;
    std::vector<float> out(n);
    std::memcpy(out.data(), bytes.bytes.data(), n * sizeof(float));
    for (size_t r = 1; r < rows; ++r)
      if (std::memcmp(out.data(), bytes.bytes.data() + r * n * sizeof(float), n * sizeof(float)))
        return std::nullopt;
    for (float v : out)
      if (!std::isfinite(v)) return std::nullopt;
    return out;
  } catch (const ModelError&) {
    return std::nullopt;
  }
}

bool rotaryInvFreq(const MatchContext& ctx, ValueArgs args) {
  const std::optional<std::vector<float>> inv = readInvFreq(ctx, args[0]);
  const std::optional<int64_t> dim = staticLastDim(ctx.graph, args[1]);
  return inv && dim && static_cast<int64_t>(inv->size()) * 2 == *dim;
}

/// The element type of table `t` (the value the per-layer Unsqueeze reads): the `to` of
/// the Cast computing it (fp16 models cast cos/sin to x's type), else float.
int32_t tableType(const Graph& g, ValueId t) {
  static const OpId kCast = OpId::get("", "Cast");
  const NodeId cast = t == kNoId ? kNoId : producerIf(g, t, kCast);
  if (cast == kNoId) return onnx::TensorProto::FLOAT;
  for (const auto& a : g.node(cast).proto().attribute())
    if (a.name() == "to") return static_cast<int32_t>(a.i());
  return onnx::TensorProto::UNDEFINED;
}

/// A float tensor of `dims` holding `values` (row-major) as raw data.
onnx::TensorProto floatTensor(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return t;
}

/// [max_positions, n] table of f(float(p) * inv_freq[i]) in the element type of `t` (float,
/// or float16 rounded to nearest even as the graph's Cast does): the angle rounded to
/// float as the graph's MatMul(inv_freq, Cast(position_ids, float)) computes it, so the
/// cache rows are the values the graph would have computed at those positions.
std::optional<onnx::TensorProto> positionTable(const MatchContext& ctx, ValueId f, ValueId t,
                                               ValueId factor, float (*fn)(float)) {
  const int64_t rows = ctx.model.assumptions().max_positions;
  const std::optional<std::vector<float>> inv = readInvFreq(ctx, f);
  const int32_t type = tableType(ctx.graph, t);
  if (rows <= 0 || !inv || (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16))
    return std::nullopt;
  // attention_scaling: the graph multiplies the float table by it; without one, 1.
  float scale = 1.0f;
  if (factor != kNoId) {
    const std::optional<std::vector<double>> v = constantValues(ctx.model, ctx.graph, factor, 1);
    if (!v || v->size() != 1 || !std::isfinite((*v)[0])) return std::nullopt;
    scale = static_cast<float>((*v)[0]);  // a float32 constant: exact
  }
  const uint64_t cols = inv->size();
  if (static_cast<uint64_t>(rows) > kMaxCacheBytes / sizeof(float) / cols) return std::nullopt;
  std::vector<float> table;
  table.reserve(static_cast<size_t>(rows) * cols);
  for (int64_t p = 0; p < rows; ++p)
    for (float w : *inv) table.push_back(fn(static_cast<float>(p) * w) * scale);
  const std::vector<int64_t> dims = {rows, static_cast<int64_t>(cols)};
  if (type == onnx::TensorProto::FLOAT16) {
    gen::Literal values;
    values.kind = gen::Literal::Kind::kFloats;
    values.floats.assign(table.begin(), table.end());  // exact: float -> double
    return gen::literalTensor(values, type, dims);
  }
  return floatTensor(dims, table);
}

/// inv_freq as the float [1, n] row that multiplies a [rows, 1] column of positions: the same
/// n floats the graph's MatMul reads (one row of a folded [B, n, 1] Expand).
std::optional<onnx::TensorProto> rotaryInvFreqRow(const MatchContext& ctx, ValueArgs args) {
  const std::optional<std::vector<float>> inv = readInvFreq(ctx, args[0]);
  if (!inv) return std::nullopt;
  return floatTensor({1, static_cast<int64_t>(inv->size())}, *inv);
}

float cosOf(float a) { return std::cos(a); }
float sinOf(float a) { return std::sin(a); }

std::optional<onnx::TensorProto> rotaryCosFromFreq(const MatchContext& ctx, ValueArgs args) {
  return positionTable(ctx, args[0], args[1], args.size() > 2 ? args[2] : kNoId, &cosOf);
}

std::optional<onnx::TensorProto> rotarySinFromFreq(const MatchContext& ctx, ValueArgs args) {
  return positionTable(ctx, args[0], args[1], args.size() > 2 ? args[2] : kNoId, &sinOf);
}

}  // namespace

NativeFamily rotaryNatives() {
  NativeFamily f;
  f.predicates.push_back(
      {"positions_of", 2, &positionsOf, "pos is [B, S] with x's batch dim 0 and sequence dim -2"});
  f.predicates.push_back({"half_last_dim", 2, &halfLastDim,
                          "v is a one-element integer constant equal to half of x's static, "
                          "even last dim"});
  f.predicates.push_back({"slice_to_end", 2, &sliceToEnd,
                          "v is a one-element integer constant reaching the end of x's last "
                          "dim: >= its static size, or >= INT32_MAX"});
  f.predicates.push_back({"slice_unit_steps", 1, &sliceUnitSteps,
                          "v is not computed by a Slice (looking through Squeezes), or by "
                          "one whose steps are absent or all 1"});
  f.predicates.push_back({"split_halves", 2, &splitHalves,
                          "v is output 0 of a two-output Split into equal halves of x's "
                          "static, even last dim"});
  f.predicates.push_back({"rotary_cache", 1, &rotaryCache,
                          "c is a constant floating-point [rows, cols] (or [1, 1, rows, cols]) "
                          "cache, cols even, whose rows repeat their first half "
                          "(Concat(freqs, freqs))"});
  f.predicates.push_back({"rotary_cache_rows", 2, &rotaryCacheRows,
                          "rotary_cache(c), and rows (what the Gather reads) is c's [rows, "
                          "cols]: c is 2-D, or [1, 1, rows, cols] squeezed twice"});
  f.predicates.push_back({"rotary_dim_of", 2, &rotaryDimOf,
                          "d is a one-element integer constant equal to twice the columns of "
                          "2-D cache c (the dims a [max_pos, dim / 2] cache rotates)"});
  f.predicates.push_back({"rotary_split", 3, &rotarySplit,
                          "v is output 0 of a two-output Split of x's static last dim into "
                          "[rotary dim of cache c, the rest]"});
  f.predicates.push_back({"rotary_pairs_cache", 1, &rotaryPairsCache,
                          "c is a constant 2-D floating-point [rows, cols] cache, cols even, "
                          "whose columns come in equal pairs (repeat_interleave(freqs, 2))"});
  f.predicates.push_back({"flat_pairs_shape", 2, &flatPairsShape,
                          "s is a constant 4-element shape merging the last two dims of "
                          "x's pairs: [0 or x's dim i for i < 3, -1 or x's static last dim]"});
  f.predicates.push_back({"max_positions_known", 1, &maxPositionsKnown,
                          "constant caches need --max-positions N (Options::max_positions): "
                          "the largest position id, which the graph cannot state when "
                          "position_ids is an input (without it, "
                          "rotary_embedding_computed_runtime computes the caches when the "
                          "model runs)"});
  f.predicates.push_back({"rotary_inv_freq", 2, &rotaryInvFreq,
                          "f is a constant float32 [1, H / 2, 1] (inv_freq[None, :, None]), "
                          "or [B, H / 2, 1] of equal rows (its Expand folded), with H x's "
                          "static, even last dim"});
  f.attribute_helpers.push_back(
      {"rotary_dim_of_cache", 1, &rotaryDimAttr,
       "INT: twice the columns of 2-D cache c (constant, or computed with static columns)"});
  f.attribute_helpers.push_back({"rotary_num_heads_bsnh", 1, &rotaryNumHeadsBsnh,
                                 "INT: the static dim 2 of a 4-D [B, S, N, H] x"});
  f.attribute_helpers.push_back(
      {"rotary_num_heads", 1, &rotaryNumHeads, "INT: the static dim 1 of a 4-D [B, N, S, H] x"});
  f.tensor_helpers.push_back({"rotary_half_cache", 1, &rotaryHalfCache,
                              "the first half of every row of constant 2-D cache c: [rows, "
                              "cols / 2], c's element type"});
  f.tensor_helpers.push_back({"rotary_pairs_half_cache", 1, &rotaryPairsHalfCache,
                              "the even columns of constant 2-D cache c: [rows, cols / 2], c's "
                              "element type"});
  f.tensor_helpers.push_back({"rotary_heads_shape", 1, &rotaryHeadsShape,
                              "int64 [0, 0, N, H] of a 4-D [B, S, N, H] x with static N, H"});
  f.tensor_helpers.push_back({"rotary_inv_freq_row", 1, &rotaryInvFreqRow,
                              "float [1, n]: the inv_freq of rotary_inv_freq(f, x), one row"});
  f.tensor_helpers.push_back({"rotary_cos_from_freq", 2, &rotaryCosFromFreq,
                              "[max_positions, n]: cos(float(p) * f[i]) of constant float32 "
                              "inv_freq f [1, n, 1], as float, or float16 when table t is "
                              "Cast to it"});
  f.tensor_helpers.push_back({"rotary_scaled_cos_from_freq", 3, &rotaryCosFromFreq,
                              "rotary_cos_from_freq(f, t) times the one-element float "
                              "constant s (attention_scaling), in float before any cast"});
  f.tensor_helpers.push_back({"rotary_sin_from_freq", 2, &rotarySinFromFreq,
                              "[max_positions, n]: sin(float(p) * f[i]) of constant float32 "
                              "inv_freq f [1, n, 1], as float, or float16 when table t is "
                              "Cast to it"});
  f.tensor_helpers.push_back({"rotary_scaled_sin_from_freq", 3, &rotarySinFromFreq,
                              "rotary_sin_from_freq(f, t) times the one-element float "
                              "constant s (attention_scaling), in float before any cast"});
  return f;
}

}  // namespace onnx_rewrite
