//===- RotaryNatives.cc - native functions of the rotary rules ----------------===//
//
// rules/rotary.yaml fuses the rotate-half form of RoPE into RotaryEmbedding. What its
// pattern cannot say by itself lives here: that a Slice bound is half of the head size,
// that a Slice runs to the end, that the cos/sin caches of a Hugging Face export
// (Concat(freqs, freqs), so [max_pos, head_dim]) repeat their first half, and the
// [max_pos, head_dim / 2] caches ONNX Runtime wants instead. See docs/dsl.md.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/OpId.h"
#include "runtime/graph/TensorData.h"
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
  const NodeId slice = producerIf(ctx.graph, args[0], kSlice);
  if (slice == kNoId) return true;  // an optional Slice that is absent
  if (findParam(ctx.graph, slice, "steps").kind == ParamRef::Kind::kAbsent) return true;
  std::vector<int64_t> steps;
  if (!readIntsParam(ctx.model, ctx.graph, slice, "steps", steps)) return false;
  for (int64_t s : steps)
    if (s != 1) return false;
  return true;
}

bool splitHalves(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return false;
  static const OpId kSplit = OpId::get("", "Split");
  const NodeId split = producerIf(ctx.graph, args[0], kSplit);
  const std::optional<int64_t> dim = staticLastDim(ctx.graph, args[1]);
  if (split == kNoId || ctx.graph.node(split).outputs().size() != 2 || !dim || *dim % 2 != 0)
    return false;
  // No `split`: equal parts (opset 13-17) or num_outputs=2 of an even dim (18+).
  if (findParam(ctx.graph, split, "split").kind == ParamRef::Kind::kAbsent) return true;
  std::vector<int64_t> sizes;
  return readIntsParam(ctx.model, ctx.graph, split, "split", sizes) && sizes.size() == 2 &&
         sizes[0] == *dim / 2 && sizes[1] == *dim / 2;
}

/// A constant 2-D floating-point cache [rows, cols] with an even number of columns, read
/// whole.
std::optional<TensorBytes> readCache(const MatchContext& ctx, ValueId v) {
  if (v == kNoId) return std::nullopt;
  const onnx::TensorProto* t = constantTensor(ctx.graph, v);
  if (!t || t->dims_size() != 2 || t->dims(0) <= 0 || t->dims(1) <= 0 || t->dims(1) % 2 != 0 ||
      !isFloatingType(t->data_type()))
    return std::nullopt;
  try {
    TensorBytes bytes = ctx.model.readTensorData(*t, kMaxCacheBytes);
    const size_t element = elementSize(bytes.data_type);
    if (element == 0 || bytes.dims.size() != 2 ||
        bytes.bytes.size() != static_cast<size_t>(bytes.elementCount()) * element)
      return std::nullopt;
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

/// Twice the columns of constant 2-D cache `c`: the rotary dim of an ORT-layout cache.
std::optional<int64_t> rotaryDimOfCache(const Graph& g, ValueId c) {
  const auto dims = c == kNoId ? std::nullopt : constantShape(g, c);
  if (!dims || dims->size() != 2 || (*dims)[1] <= 0) return std::nullopt;
  return 2 * (*dims)[1];
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
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(*dim);
  return a;
}

std::optional<onnx::AttributeProto> rotaryNumHeads(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId) return std::nullopt;
  const auto dims = staticShape(ctx.graph, args[0]);
  if (!dims || dims->size() != 4 || (*dims)[1] <= 0) return std::nullopt;
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::INT);
  a.set_i((*dims)[1]);
  return a;
}

}  // namespace

NativeFamily rotaryNatives() {
  NativeFamily f;
  f.predicates.push_back({"half_last_dim", 2, &halfLastDim,
                          "v is a one-element integer constant equal to half of x's static, "
                          "even last dim"});
  f.predicates.push_back({"slice_to_end", 2, &sliceToEnd,
                          "v is a one-element integer constant reaching the end of x's last "
                          "dim: >= its static size, or >= INT32_MAX"});
  f.predicates.push_back({"slice_unit_steps", 1, &sliceUnitSteps,
                          "v is not computed by a Slice, or by one whose steps are absent or "
                          "all 1"});
  f.predicates.push_back({"split_halves", 2, &splitHalves,
                          "v is output 0 of a two-output Split into equal halves of x's "
                          "static, even last dim"});
  f.predicates.push_back({"rotary_cache", 1, &rotaryCache,
                          "c is a constant 2-D floating-point [rows, cols] cache, cols even, "
                          "whose rows repeat their first half (Concat(freqs, freqs))"});
  f.predicates.push_back({"rotary_dim_of", 2, &rotaryDimOf,
                          "d is a one-element integer constant equal to twice the columns of "
                          "constant 2-D cache c (the dims a [max_pos, dim / 2] cache rotates)"});
  f.predicates.push_back({"rotary_split", 3, &rotarySplit,
                          "v is output 0 of a two-output Split of x's static last dim into "
                          "[rotary dim of cache c, the rest]"});
  f.attribute_helpers.push_back(
      {"rotary_dim_of_cache", 1, &rotaryDimAttr, "INT: twice the columns of constant 2-D cache c"});
  f.attribute_helpers.push_back(
      {"rotary_num_heads", 1, &rotaryNumHeads, "INT: the static dim 1 of a 4-D [B, N, S, H] x"});
  f.tensor_helpers.push_back({"rotary_half_cache", 1, &rotaryHalfCache,
                              "the first half of every row of constant 2-D cache c: [rows, "
                              "cols / 2], c's element type"});
  return f;
}

}  // namespace onnx_rewrite
