//===- EmbedNatives.cc - native functions of the embedding rules -----------===//
//
// rules/embed_layer_norm.yaml fuses BERT's embedding sum (word + position (+ segment)
// Gathers, then LayerNormalization) into com.microsoft.EmbedLayerNormalization. Without a
// position_ids input that op looks up row s of the position table for token s of every
// sequence, so the rule may drop the graph's position ids only when they provably are
// [0, 1, ..., S - 1] for ids of shape [B, S]. Exporters compute them in many ways (a
// constant, Range over the sequence length read from Shape(input_ids), a Slice of the
// arange buffer Hugging Face registers, Expand to the ids' shape, old torch's
// NonZero(ConstantOfShape) arange); the proof walks those chains here. Anything else
// keeps its position ids, passed to the fused op as its position_ids input. See
// docs/dsl.md.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/OpId.h"
#include "runtime/graph/TensorData.h"
#include "runtime/match/DimReads.h"
#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {
namespace {

/// Position tables are read whole to check their values; larger constants are not proofs.
constexpr size_t kMaxPositionElements = size_t{1} << 20;

/// Reads integer constant `v` (at most kMaxPositionElements elements).
std::optional<std::vector<int64_t>> ints(const MatchContext& ctx, ValueId v) {
  std::vector<int64_t> values;
  if (v == kNoId || !readConstantInts(ctx.model, ctx.graph, v, values, kMaxPositionElements))
    return std::nullopt;
  return values;
}

/// Every row of the `rows` x `cols` values is 0, 1, ..., cols - 1.
bool rowsAreAranges(const std::vector<int64_t>& values, int64_t cols) {
  if (cols <= 0 || values.size() % static_cast<size_t>(cols) != 0) return false;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != static_cast<int64_t>(i % static_cast<size_t>(cols))) return false;
  return true;
}

/// The constant `v` of rank 1 or 2 whose rows each are 0, 1, ..., n - 1: its dims, else
/// nullopt.
std::optional<std::vector<int64_t>> arangeConstant(const MatchContext& ctx, ValueId v) {
  const auto dims = constantShape(ctx.graph, v);
  const auto values = dims ? ints(ctx, v) : std::nullopt;
  if (!values || dims->empty() || dims->size() > 2 || !rowsAreAranges(*values, dims->back()))
    return std::nullopt;
  return dims;
}

/// `v` is Slice(buffer, 0, S) along the last axis of a constant arange buffer of rank
/// `rank`, [M] or [1, M] (Hugging Face's position_ids buffer[:, :seq_length]), with S dim 1
/// of `ids`. M >= 2,
/// so that a sequence longer than the buffer fails in the graph as it does in the fused op
/// rather than broadcasting one position.
bool isSlicedArange(const MatchContext& ctx, ValueId v, ValueId ids, size_t rank) {
  const Node* slice = producerOp(ctx.graph, v, "Slice");
  if (!slice) return false;
  const auto dims = arangeConstant(ctx, slice->input(0));
  if (!dims || dims->size() != rank || (rank == 2 && (*dims)[0] != 1) || dims->back() < 2)
    return false;
  const NodeId id = ctx.graph.value(v).producer();
  const int64_t last = static_cast<int64_t>(rank) - 1;
  const auto p = prefixSlice(ctx.model, ctx.graph, id, last + 1);
  if (!p || p->axes != std::vector<int64_t>{last}) return false;
  if (p->ends.kind == ParamRef::Kind::kInput) return isDimOf(ctx, p->ends.input, ids, 1);
  std::vector<int64_t> end;
  const auto seq = staticDim(ctx.graph, ids, 1);
  return readIntsParam(ctx.model, ctx.graph, id, "ends", end) && end.size() == 1 && seq &&
         end[0] == *seq;
}

/// `t` (ConstantOfShape's value) has one element, and it is not zero.
bool nonzeroScalar(const MatchContext& ctx, const onnx::TensorProto& t) {
  if (tensorElementCount(t) != 1 || elementSize(t.data_type()) == 0) return false;
  try {
    const TensorBytes bytes = ctx.model.readTensorData(t, elementSize(t.data_type()));
    return elementAsDouble(bytes, 0) != 0.0;
  } catch (const ModelError&) {
    return false;  // unreadable: no proof
  }
}

/// `v` is the 1-D [0, 1, ..., S - 1] with S dim 1 of `ids`: Range(0, S, 1); old torch's
/// arange Squeeze(Transpose(NonZero(ConstantOfShape([S], nonzero))), [1]); a constant; a
/// Slice of an arange buffer; through integer Casts.
bool isArangeRow(const MatchContext& ctx, ValueId v, ValueId ids) {
  const Graph& g = ctx.graph;
  v = throughIntCasts(g, v);
  if (const Node* range = producerOp(g, v, "Range"))
    return isScalarConstant(ctx.model, g, range->input(0), 0.0, 0.0) &&
           isScalarConstant(ctx.model, g, range->input(2), 1.0, 0.0) &&
           isDimOf(ctx, range->input(1), ids, 1);
  if (const Node* squeeze = producerOp(g, v, "Squeeze")) {
    const auto axes = intsParam(ctx.model, g, g.value(v).producer(), "axes");
    const Node* transpose = producerOp(g, squeeze->input(0), "Transpose");
    const Node* nonzero = transpose ? producerOp(g, transpose->input(0), "NonZero") : nullptr;
    const Node* fill = nonzero ? producerOp(g, nonzero->input(0), "ConstantOfShape") : nullptr;
    if (!axes || *axes != std::vector<int64_t>{1} || !fill) return false;
    // NonZero of a 1-D tensor is [1, S]; the default perm transposes it to [S, 1]. An
    // absent value fills zeros, whose NonZero is empty.
    const onnx::AttributeProto* perm = transpose->attribute("perm");
    const onnx::AttributeProto* value = fill->attribute("value");
    if (perm && !(perm->ints_size() == 2 && perm->ints(0) == 1 && perm->ints(1) == 0)) return false;
    if (!value || !value->has_t() || !nonzeroScalar(ctx, value->t())) return false;
    return valueRank(g, fill->input(0)) == 1 && isDimOf(ctx, fill->input(0), ids, 1);
  }
  if (isSlicedArange(ctx, v, ids, 1)) return true;
  const auto dims = arangeConstant(ctx, v);
  const auto seq = staticDim(g, ids, 1);
  return dims && dims->size() == 1 && seq && (*dims)[0] == *seq;
}

/// Shape `s` (a 2-element shape an Expand broadcasts to) gives [B, S] or [1, S] for ids
/// [B, S] when broadcast with [1, S]: Shape(ids), Concat(B or 1, S or 1), a constant of
/// those, or Where(Equal(r, c), k, r) of r = s' or Reshape(s', [-1]) with c all negative
/// (dims never are, so the Where keeps s').
bool isIdsShape(const MatchContext& ctx, ValueId s, ValueId ids) {
  const Graph& g = ctx.graph;
  if (const Node* shape = producerOp(g, s, "Shape")) {
    const ValueId x = shape->input(0);
    return wholeShape(*shape) && valueRank(g, x) == 2 && sameDim(g, x, 0, ids, 0) &&
           sameDim(g, x, 1, ids, 1);
  }
  auto dimOrOne = [&](ValueId part, int axis) {
    const auto c = ints(ctx, part);
    if (c && c->size() == 1 && (*c)[0] == 1) return true;
    return isDimOf(ctx, part, ids, axis);
  };
  if (const Node* concat = producerOp(g, s, "Concat")) {
    return concat->inputs().size() == 2 && dimOrOne(concat->input(0), 0) &&
           dimOrOne(concat->input(1), 1);
  }
  if (producerOp(g, s, "Where")) {
    const std::optional<ValueId> kept = throughExpandSizeGuard(ctx, s);
    return kept && isIdsShape(ctx, *kept, ids);
  }
  const auto c = ints(ctx, s);
  const auto batch = staticDim(g, ids, 0);
  const auto seq = staticDim(g, ids, 1);
  return c && c->size() == 2 && ((*c)[0] == 1 || (batch && (*c)[0] == *batch)) &&
         ((*c)[1] == 1 || (seq && (*c)[1] == *seq));
}

/// Predicate embed_positions(pos, ids): for ids [B, S], pos holds each token's index in its
/// sequence, [S], [1, S] or [B, S]: an arange row (isArangeRow), Unsqueeze of one on axis
/// 0, Expand of such a [1, S] to the ids' shape (isIdsShape), or a constant [1, S] or
/// [B, S] (static S, and B) whose rows are 0 .. S - 1; through integer Casts.
bool embedPositions(const MatchContext& ctx, ValueArgs args) {
  const ValueId ids = args[1];
  if (args[0] == kNoId || ids == kNoId || valueRank(ctx.graph, ids) != 2) return false;
  const Graph& g = ctx.graph;
  ValueId v = throughIntCasts(g, args[0]);
  if (const Node* expand = producerOp(g, v, "Expand")) {
    if (!isIdsShape(ctx, expand->input(1), ids)) return false;
    v = throughIntCasts(g, expand->input(0));
  }
  if (const Node* unsqueeze = producerOp(g, v, "Unsqueeze")) {
    const auto axes = intsParam(ctx.model, g, g.value(v).producer(), "axes");
    return axes && *axes == std::vector<int64_t>{0} && isArangeRow(ctx, unsqueeze->input(0), ids);
  }
  if (isArangeRow(ctx, v, ids) || isSlicedArange(ctx, v, ids, 2)) return true;
  const auto dims = arangeConstant(ctx, v);
  const auto batch = staticDim(g, ids, 0);
  const auto seq = staticDim(g, ids, 1);
  return dims && dims->size() == 2 && seq && (*dims)[1] == *seq &&
         ((*dims)[0] == 1 || (batch && (*dims)[0] == *batch));
}

/// Predicate position_ids_of(pos, ids): pos is an integer [B, S] or [1, S] tensor for ids
/// [B, S] (the fused op's position_ids input, which broadcasts a first dim of 1).
bool positionIdsOf(const MatchContext& ctx, ValueArgs args) {
  const Graph& g = ctx.graph;
  const ValueId pos = args[0];
  const ValueId ids = args[1];
  if (pos == kNoId || ids == kNoId || valueRank(g, pos) != 2 || valueRank(g, ids) != 2)
    return false;
  const int32_t type = valueElemType(g, pos);
  if (type != onnx::TensorProto::INT32 && type != onnx::TensorProto::INT64) return false;
  if (const auto dims = constantShape(g, pos)) {
    // A constant has no symbolic dims: the ids' must be static and equal.
    const auto batch = staticDim(g, ids, 0);
    const auto seq = staticDim(g, ids, 1);
    return seq && (*dims)[1] == *seq && ((*dims)[0] == 1 || (batch && (*dims)[0] == *batch));
  }
  return sameDim(g, pos, 1, ids, 1) && (sameDim(g, pos, 0, ids, 0) || staticDim(g, pos, 0) == 1);
}

/// Constant position embeddings are read whole; larger ones (over 256 MiB) are not fused.
constexpr uint64_t kMaxTableBytes = uint64_t{1} << 28;

/// The embeddings added for the positions, already looked up and stored as a constant
/// (constant folding of a graph with static shapes): `pe` [S, H] or [b, S, H] with b 1 or
/// the ids' batch, S the ids' static dim 1, H `word`'s dim 1, of a floating type, every
/// batch equal. Their bytes, or nullopt.
std::optional<TensorBytes> positionEmbeddings(const MatchContext& ctx, ValueArgs args) {
  const ValueId pe = args[0];
  const ValueId ids = args[1];
  const ValueId word = args[2];
  const onnx::TensorProto* t = pe == kNoId ? nullptr : constantTensor(ctx.graph, pe);
  if (!t || ids == kNoId || word == kNoId) return std::nullopt;
  const int64_t seq = staticDim(ctx.graph, ids, 1).value_or(-1);
  const int64_t hidden = staticDim(ctx.graph, word, 1).value_or(-1);
  if (seq < 0 || hidden < 0 || !isFloatingType(t->data_type()) || t->dims_size() < 2 ||
      t->dims_size() > 3 || t->dims(t->dims_size() - 2) != seq ||
      t->dims(t->dims_size() - 1) != hidden)
    return std::nullopt;
  const int64_t batches = t->dims_size() == 3 ? t->dims(0) : 1;
  const auto batch = staticDim(ctx.graph, ids, 0);
  if (batches != 1 && (!batch || batches != *batch)) return std::nullopt;
  try {
    TensorBytes bytes = ctx.model.readTensorData(*t, kMaxTableBytes);
    const size_t table = static_cast<size_t>(seq * hidden) * elementSize(bytes.data_type);
    if (table == 0 || bytes.bytes.size() != table * static_cast<size_t>(batches))
      return std::nullopt;
    for (int64_t b = 1; b < batches; ++b)
      if (bytes.bytes.compare(static_cast<size_t>(b) * table, table, bytes.bytes, 0, table) != 0)
        return std::nullopt;
    return bytes;
  } catch (const ModelError&) {
    return std::nullopt;  // unreadable: not fused
  }
}

/// Predicate constant_position_embeddings(pe, ids, word): see positionEmbeddings.
bool constantPositionEmbeddings(const MatchContext& ctx, ValueArgs args) {
  return positionEmbeddings(ctx, args).has_value();
}

/// Tensor helper position_table(pe, ids, word): the first batch of pe, [S, H]: the table
/// EmbedLayerNormalization reads row s of for token s.
std::optional<onnx::TensorProto> positionTable(const MatchContext& ctx, ValueArgs args) {
  std::optional<TensorBytes> bytes = positionEmbeddings(ctx, args);
  if (!bytes) return std::nullopt;
  const int64_t seq = bytes->dims[bytes->dims.size() - 2];
  const int64_t hidden = bytes->dims.back();
  onnx::TensorProto t;
  t.set_data_type(bytes->data_type);
  t.add_dims(seq);
  t.add_dims(hidden);
  bytes->bytes.resize(static_cast<size_t>(seq * hidden) * elementSize(bytes->data_type));
  t.set_raw_data(std::move(bytes->bytes));
  return t;
}

}  // namespace

NativeFamily embedNatives() {
  NativeFamily f;
  f.predicates.push_back({"embed_positions", 2, &embedPositions,
                          "for ids [B, S], pos is provably each token's index in its sequence "
                          "([S], [1, S] or [B, S] of 0 .. S - 1): Range(0, S, 1), a Slice of "
                          "an arange buffer, NonZero(ConstantOfShape) or a constant, optionally "
                          "unsqueezed and expanded to the ids' shape, S read from the ids' shape"});
  f.predicates.push_back({"position_ids_of", 2, &positionIdsOf,
                          "pos is an int32 or int64 [B, S] or [1, S] tensor for ids [B, S] "
                          "(EmbedLayerNormalization's position_ids)"});
  f.predicates.push_back({"constant_position_embeddings", 3, &constantPositionEmbeddings,
                          "pe is a constant floating-point [S, H] or [b, S, H] (b 1 or the "
                          "ids' static batch, every batch equal) with S the ids' static dim 1 "
                          "and H word's dim 1: position embeddings looked up in advance"});
  f.tensor_helpers.push_back({"position_table", 3, &positionTable,
                              "the first batch [S, H] of constant_position_embeddings(pe, ids, "
                              "word): the position table of positions 0 .. S - 1"});
  return f;
}

}  // namespace onnx_rewrite
