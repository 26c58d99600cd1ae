//===- NewerOpsetSchemas.cc - shape inference for opsets ONNX 1.12 lacks --===//
#include "runtime/io/NewerOpsetSchemas.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

namespace onnx_rewrite {
namespace {

/// Reduce* from opset 18: axes is the optional input 1, `noop_with_empty_axes` an attribute.
void inferReduceWithAxesInput(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int64_t rank = in.dim_size();
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  std::set<int64_t> axes;
  if (ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr) {
    const onnx::TensorProto* data = ctx.getInputData(1);
    if (!data) return;  // axes computed at run time: the rank is all we could say
    for (int64_t a : onnx::ParseData<int64_t>(data)) {
      if (a < -rank || a >= rank) return;
      axes.insert(a < 0 ? a + rank : a);
    }
  }
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  if (axes.empty() && noop) {
    *out = in;
    return;
  }
  for (int64_t i = 0; i < rank; ++i) {
    const bool reduced = axes.empty() || axes.count(i) != 0;
    if (!reduced)
      *out->add_dim() = in.dim(static_cast<int>(i));
    else if (keepdims)
      out->add_dim()->set_dim_value(1);
  }
}

/// Output `out` has input 0's type and shape.
void likeInput0(onnx::InferenceContext& ctx, size_t out) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, out);
}

/// Output 0 has input 0's type and shape (normalizations, rotary embedding, activations).
void inferLikeInput0(onnx::InferenceContext& ctx) { likeInput0(ctx, 0); }

/// ONNX Runtime's LayerNormalization (below opset 17) and SimplifiedLayerNormalization:
/// output 0 has input 0's shape and the scale's (input 1's) element type.
void inferScaleTypedNorm(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

/// com.microsoft.Skip(Simplified)LayerNormalization: output 0 and the residual sum (output
/// 3) have input 0's shape.
void inferSkipLayerNorm(onnx::InferenceContext& ctx) {
  for (size_t out : {size_t{0}, size_t{3}})
    if (out < ctx.getNumOutputs()) likeInput0(ctx, out);
}

/// com.microsoft.EmbedLayerNormalization: output 0 (and the sum, output 2) [B, S, H] of the
/// ids [B, S] and the word table [V, H] of its element type; mask_index (output 1) int32 [B].
void inferEmbedLayerNorm(onnx::InferenceContext& ctx) {
  for (size_t out : {size_t{0}, size_t{2}}) {
    if (out >= ctx.getNumOutputs()) continue;
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, out);
    if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 2)) continue;
    const auto& ids = ctx.getInputType(0)->tensor_type().shape();
    const auto& word = ctx.getInputType(2)->tensor_type().shape();
    if (ids.dim_size() != 2 || word.dim_size() != 2) continue;
    auto* shape = ctx.getOutputType(out)->mutable_tensor_type()->mutable_shape();
    shape->Clear();
    *shape->add_dim() = ids.dim(0);
    *shape->add_dim() = ids.dim(1);
    *shape->add_dim() = word.dim(1);
  }
  if (ctx.getNumOutputs() > 1) {
    auto* mask = ctx.getOutputType(1)->mutable_tensor_type();
    mask->set_elem_type(onnx::TensorProto::INT32);
    if (onnx::hasInputShape(ctx, 0)) {
      const auto& ids = ctx.getInputType(0)->tensor_type().shape();
      if (ids.dim_size() == 2) {
        mask->mutable_shape()->Clear();
        *mask->mutable_shape()->add_dim() = ids.dim(0);
      }
    }
  }
}

/// Static dims of `shape` (-1 where unknown).
std::vector<int64_t> dimsOf(const onnx::TensorShapeProto& shape) {
  std::vector<int64_t> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

/// Output 0 is [input0 dims but the last, `last`] (`last` < 0: unknown).
void setLikeInput0WithLast(onnx::InferenceContext& ctx, int64_t last) {
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  out->Clear();
  for (int i = 0; i + 1 < in.dim_size(); ++i) *out->add_dim() = in.dim(i);
  auto* d = out->add_dim();
  if (last >= 0) d->set_dim_value(last);
}

/// Output `out` of an attention op, a present cache: the past cache of input `past`, of
/// rank `rank` with its sequence axis second to last ([B, N, P, H], or
/// com.microsoft.Attention's stacked [2, B, N, P, H]), with the S new positions of the
/// query (input 0, [B, S, D]) behind it, as ONNX Runtime's buffer without
/// past_present_share_buffer (which rules do not set).
void inferPresent(onnx::InferenceContext& ctx, size_t past, size_t out, int rank) {
  if (out >= ctx.getNumOutputs() || ctx.getNumInputs() <= past || !ctx.getInputType(past)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, past, out);
  if (!onnx::hasInputShape(ctx, past) || !onnx::hasInputShape(ctx, 0)) return;
  const auto& p = ctx.getInputType(past)->tensor_type().shape();
  const auto& q = ctx.getInputType(0)->tensor_type().shape();
  if (p.dim_size() != rank || q.dim_size() != 3) return;
  auto* shape = ctx.getOutputType(out)->mutable_tensor_type()->mutable_shape();
  *shape = p;
  auto* total = shape->mutable_dim(rank - 2);
  total->Clear();
  if (p.dim(rank - 2).has_dim_value() && q.dim(1).has_dim_value())
    total->set_dim_value(p.dim(rank - 2).dim_value() + q.dim(1).dim_value());
}

/// present_key and present_value (outputs 1, 2) from past_key and past_value [B, N, P, H]
/// (inputs `past`, `past + 1`).
void inferCachePresents(onnx::InferenceContext& ctx, size_t past) {
  inferPresent(ctx, past, 1, 4);
  inferPresent(ctx, past + 1, 2, 4);
}

/// com.microsoft.MultiHeadAttention: the output is [B, S, v hidden] for a 3-D query, with
/// value [B, L, Dv] or heads [B, N, L, H] (then N * H).
void inferMultiHeadAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  // With past_key/past_value (inputs 6, 7), present_key and present_value (outputs 1, 2).
  inferCachePresents(ctx, 6);
  if (!onnx::hasInputShape(ctx, 0) || ctx.getNumInputs() < 3 || !ctx.getInputType(2) ||
      !onnx::hasInputShape(ctx, 2))
    return;
  if (ctx.getInputType(0)->tensor_type().shape().dim_size() != 3) return;
  const std::vector<int64_t> v = dimsOf(ctx.getInputType(2)->tensor_type().shape());
  if (v.size() == 3) setLikeInput0WithLast(ctx, v[2]);
  if (v.size() == 4) setLikeInput0WithLast(ctx, v[1] > 0 && v[3] > 0 ? v[1] * v[3] : -1);
}

/// com.microsoft.GroupQueryAttention: output 0 like the query (Q, K and V apart, as rules
/// emit it); with past_key/past_value (inputs 3, 4: [B, G, P, H]) present_key/present_value
/// (outputs 1, 2) are [B, G, P + S, H], the cache with the S new positions behind it (ONNX
/// Runtime's buffer without past_present_share_buffer, which rules do not set).
void inferGroupQueryAttention(onnx::InferenceContext& ctx) {
  likeInput0(ctx, 0);
  inferCachePresents(ctx, 3);
}

/// ONNX Attention (opset 23): 3-D Q [B, S, Dq], V [B, L, Dv] give [B, S, q_num_heads * Dv /
/// kv_num_heads]; 4-D Q [B, Nq, S, H], V [B, Nkv, L, Hv] give [B, Nq, S, Hv].
void inferAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 2)) return;
  const auto& q = ctx.getInputType(0)->tensor_type().shape();
  const std::vector<int64_t> v = dimsOf(ctx.getInputType(2)->tensor_type().shape());
  if (q.dim_size() == 4 && v.size() == 4) {
    setLikeInput0WithLast(ctx, v[3]);
    return;
  }
  if (q.dim_size() != 3 || v.size() != 3) return;
  const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", 0);
  const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  const bool known = q_heads > 0 && kv_heads > 0 && v[2] > 0 && v[2] % kv_heads == 0;
  setLikeInput0WithLast(ctx, known ? q_heads * (v[2] / kv_heads) : -1);
}

/// com.microsoft.Attention: [B, S, v hidden], the last of qkv_hidden_sizes or a third of
/// the packed weights' columns; with past (input 4, [2, B, N, P, H]) present (output 1).
void inferPackedAttention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  inferPresent(ctx, 4, 1, 5);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  if (ctx.getInputType(0)->tensor_type().shape().dim_size() != 3) return;
  const std::vector<int64_t> w = dimsOf(ctx.getInputType(1)->tensor_type().shape());
  int64_t hidden = w.size() == 2 && w[1] > 0 && w[1] % 3 == 0 ? w[1] / 3 : -1;
  if (const onnx::AttributeProto* sizes = ctx.getAttribute("qkv_hidden_sizes");
      sizes && sizes->ints_size() == 3)
    hidden = sizes->ints(2);
  setLikeInput0WithLast(ctx, hidden);
}

/// com.microsoft.FusedMatMul: MatMul of A and B, each read with axis 0 behind its batch
/// axes when transBatchA/B say so, then transposed in its last two axes when transA/transB
/// say so. Like ONNX Runtime's inference it rejects a rank-0 input: a rule
/// that drops a broadcasting Mul in front of it must not leave a scalar there.
void inferFusedMatMul(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  onnx::TensorShapeProto a = ctx.getInputType(0)->tensor_type().shape();
  onnx::TensorShapeProto b = ctx.getInputType(1)->tensor_type().shape();
  if (a.dim_size() == 0 || b.dim_size() == 0)
    fail_shape_inference("Input tensors of wrong rank (0).");
  // transBatchA/B read axis 0 as the last batch axis: [d0, d1.., M, K] as [d1.., d0, K].
  auto batchLast = [](onnx::TensorShapeProto& s) {
    for (int i = 0; i + 2 < s.dim_size(); ++i) s.mutable_dim()->SwapElements(i, i + 1);
  };
  const bool trans_batch_a = onnx::getAttribute(ctx, "transBatchA", 0) != 0;
  const bool trans_batch_b = onnx::getAttribute(ctx, "transBatchB", 0) != 0;
  // As ONNX Runtime's kernel requires (MatMulComputeHelper).
  if ((trans_batch_a || trans_batch_b) && (a.dim_size() < 3 || a.dim_size() != b.dim_size()))
    fail_shape_inference("transBatchA or transBatchB needs inputs of equal rank >= 3.");
  if (trans_batch_a) batchLast(a);
  if (trans_batch_b) batchLast(b);
  auto swapLastTwo = [](onnx::TensorShapeProto& s) {
    if (s.dim_size() >= 2) s.mutable_dim()->SwapElements(s.dim_size() - 2, s.dim_size() - 1);
  };
  if (onnx::getAttribute(ctx, "transA", 0) != 0) swapLastTwo(a);
  if (onnx::getAttribute(ctx, "transB", 0) != 0) swapLastTwo(b);
  // MatMul's rules: a 1-D A is a row [1, K] whose M axis is dropped, a 1-D B a column.
  const bool a_vector = a.dim_size() == 1, b_vector = b.dim_size() == 1;
  if (a_vector) {
    *a.add_dim() = a.dim(0);
    a.mutable_dim(0)->Clear();
    a.mutable_dim(0)->set_dim_value(1);
  }
  if (b_vector) b.add_dim()->set_dim_value(1);
  const auto& k_a = a.dim(a.dim_size() - 1);
  const auto& k_b = b.dim(b.dim_size() - 2);
  if (k_a.has_dim_value() && k_b.has_dim_value() && k_a.dim_value() != k_b.dim_value())
    fail_shape_inference("Incompatible dimensions for matrix multiplication");
  onnx::TensorShapeProto batch_a, batch_b;
  for (int i = 0; i + 2 < a.dim_size(); ++i) *batch_a.add_dim() = a.dim(i);
  for (int i = 0; i + 2 < b.dim_size(); ++i) *batch_b.add_dim() = b.dim(i);
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  onnx::bidirectionalBroadcastShapeInference(batch_a, batch_b, *out);
  if (!a_vector) *out->add_dim() = a.dim(a.dim_size() - 2);
  if (!b_vector) *out->add_dim() = b.dim(b.dim_size() - 1);
}

/// Slice whose starts or ends are computed at run time: ONNX 1.12 gives up on the whole
/// shape, but the rank never changes, nor do the dims of axes it does not slice.
void inferSliceKeepingRank(const onnx::InferenceFunction& base, onnx::InferenceContext& ctx) {
  base(ctx);
  onnx::TypeProto_Tensor* out = ctx.getOutputType(0)->mutable_tensor_type();
  if (out->has_shape() || !onnx::hasInputShape(ctx, 0)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int64_t rank = in.dim_size();
  std::set<int64_t> sliced;
  const onnx::TensorProto* axes = ctx.getNumInputs() > 3 ? ctx.getInputData(3) : nullptr;
  if (axes && axes->data_type() == onnx::TensorProto::INT64) {
    for (int64_t a : onnx::ParseData<int64_t>(axes)) sliced.insert(a < 0 ? a + rank : a);
  } else if (axes && axes->data_type() == onnx::TensorProto::INT32) {
    for (int32_t a : onnx::ParseData<int32_t>(axes)) sliced.insert(a < 0 ? a + rank : a);
  } else {
    for (int64_t i = 0; i < rank; ++i) sliced.insert(i);  // axes unknown: any may be sliced
  }
  auto* shape = out->mutable_shape();
  for (int64_t i = 0; i < rank; ++i) {
    if (sliced.count(i))
      shape->add_dim();
    else
      *shape->add_dim() = in.dim(static_cast<int>(i));
  }
}

/// Einsum with an explicit output ("abc,cde->abde"): ONNX 1.12 infers only the rank (tf2onnx
/// writes its projections and attention this way). Each output letter takes the dim the
/// inputs give that letter; two inputs that disagree on a static size leave it unknown, and
/// an ellipsis leaves the whole shape to ONNX's inference.
void inferEinsumDims(const onnx::InferenceFunction& base, onnx::InferenceContext& ctx) {
  base(ctx);
  const onnx::AttributeProto* attr = ctx.getAttribute("equation");
  if (!attr || !attr->has_s()) return;
  std::string equation;
  for (char c : attr->s())
    if (c != ' ') equation += c;
  const size_t arrow = equation.find("->");
  if (arrow == std::string::npos || equation.find('.') != std::string::npos) return;
  std::vector<std::string> terms(1);
  for (char c : equation.substr(0, arrow)) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (terms.size() != ctx.getNumInputs()) return;
  std::map<char, onnx::TensorShapeProto::Dimension> dims;
  std::set<char> conflicting;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!onnx::hasInputShape(ctx, i)) continue;
    const auto& shape = ctx.getInputType(i)->tensor_type().shape();
    if (shape.dim_size() != static_cast<int>(terms[i].size())) return;  // a malformed node
    for (size_t j = 0; j < terms[i].size(); ++j) {
      const auto& d = shape.dim(static_cast<int>(j));
      auto [it, fresh] = dims.emplace(terms[i][j], d);
      if (fresh) continue;
      // A broadcast 1 against a size, or two different sizes: not one dim to give.
      const bool same = (it->second.has_dim_value() && d.has_dim_value() &&
                         it->second.dim_value() == d.dim_value()) ||
                        (it->second.has_dim_param() && d.has_dim_param() &&
                         it->second.dim_param() == d.dim_param());
      if (!same) conflicting.insert(terms[i][j]);
    }
  }
  const std::string out = equation.substr(arrow + 2);
  auto* shape = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  if (shape->dim_size() != static_cast<int>(out.size())) return;
  for (size_t j = 0; j < out.size(); ++j) {
    auto it = dims.find(out[j]);
    auto* d = shape->mutable_dim(static_cast<int>(j));
    if (it == dims.end() || conflicting.count(out[j]) || d->has_dim_value()) continue;
    *d = it->second;
  }
}

/// A copy of an older schema with a new version, optional extra inputs and inference.
onnx::OpSchema derive(const onnx::OpSchema& base, int since, onnx::InferenceFunction fn) {
  onnx::OpSchema s = base;
  s.SinceVersion(since);
  s.TypeAndShapeInferenceFunction(std::move(fn));
  return s;
}

/// A minimal schema for an op ONNX 1.12 does not have: shape inference reads only the
/// inference function and the input/output counts.
onnx::OpSchema fresh(const char* name, int since, int min_inputs, int max_inputs, int outputs,
                     onnx::InferenceFunction fn, const char* domain = onnx::ONNX_DOMAIN) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(domain).SinceVersion(since);
  for (int i = 0; i < max_inputs; ++i)
    s.Input(i, "in" + std::to_string(i), "", "T",
            i < min_inputs ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  for (int i = 0; i < outputs; ++i)
    s.Output(i, "out" + std::to_string(i), "", "T",
             i == 0 ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  s.TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "any tensor");
  s.TypeAndShapeInferenceFunction(std::move(fn));
  s.Finalize();
  return s;
}

/// ONNX Runtime's normalizations in the ONNX domain: x (T), scale and bias (V), Y (V) and
/// the statistics (U), as its schema types them.
onnx::OpSchema scaleTypedNorm(const char* name, int max_inputs, int outputs) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(onnx::ONNX_DOMAIN).SinceVersion(1);
  for (int i = 0; i < max_inputs; ++i)
    s.Input(i, "in" + std::to_string(i), "", i == 0 ? "T" : "V",
            i < 2 ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  for (int i = 0; i < outputs; ++i)
    s.Output(i, "out" + std::to_string(i), "", i == 0 ? "V" : "U",
             i == 0 ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  for (const char* type : {"T", "U", "V"})
    s.TypeConstraint(type, onnx::OpSchema::all_tensor_types(), "any tensor");
  s.TypeAndShapeInferenceFunction(inferScaleTypedNorm);
  s.Finalize();
  return s;
}

struct Tables {
  std::map<std::string, onnx::OpSchema> changed;  // Reduce* 18 and the new ops
  /// Slice 10, 11 and 13 by since_version, keeping the rank when ONNX's inference cannot.
  std::map<int, onnx::OpSchema> slices;
  /// Einsum 12, with the dims of an explicit output.
  std::optional<onnx::OpSchema> einsum;
  /// ONNX Runtime's ops that rules emit (com.microsoft, and SimplifiedLayerNormalization in
  /// the ONNX domain), so shapes are inferred again past a fused op.
  std::map<std::string, onnx::OpSchema> contrib;
  onnx::OpSchema simplified_layer_norm;
  onnx::OpSchema layer_norm_before_17;  ///< ONNX Runtime's, in the ONNX domain
  /// Ops whose output shapes after opset 17 depend on inputs or attributes the opset-17
  /// schema does not know: no schema, so their outputs stay untyped instead of wrong.
  std::set<std::string> unsafe = {
      "Pad",        "Resize",     "AveragePool",   "GroupNormalization", "Col2Im", "CenterCropPad",
      "DeformConv", "AffineGrid", "TensorScatter", "ImageDecoder",       "DFT"};
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
      // Written out, not derived from 17's: Finalize on a copy of a finalized schema counts
      // its inputs and outputs twice.
      onnx::OpSchema s;
      s.SetName(op).SetDomain(onnx::ONNX_DOMAIN).SinceVersion(18);
      s.Input(0, "data", "", "T");
      s.Input(1, "axes", "", "tensor(int64)", onnx::OpSchema::Optional);
      s.Output(0, "reduced", "", "T");
      s.Attr("keepdims", "", onnx::AttributeProto::INT, static_cast<int64_t>(1));
      s.Attr("noop_with_empty_axes", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
      s.TypeConstraint("T", onnx::OpSchema::all_numeric_types(), "");
      s.TypeAndShapeInferenceFunction(inferReduceWithAxesInput);
      s.Finalize();
      t.changed.emplace(op, std::move(s));
    }
    t.changed.emplace("Gelu", fresh("Gelu", 20, 1, 1, 1, inferLikeInput0));
    t.changed.emplace("Mish", fresh("Mish", 18, 1, 1, 1, inferLikeInput0));
    t.changed.emplace("RMSNormalization", fresh("RMSNormalization", 23, 2, 2, 1, inferLikeInput0));
    t.changed.emplace("RotaryEmbedding", fresh("RotaryEmbedding", 23, 3, 4, 1, inferLikeInput0));
    t.changed.emplace("Attention", fresh("Attention", 23, 3, 7, 4, inferAttention));
    for (int since : {10, 11, 13}) {
      const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema("Slice", since, "");
      if (!base || base->SinceVersion() != since) continue;
      onnx::InferenceFunction fn = base->GetTypeAndShapeInferenceFunction();
      t.slices.emplace(since, derive(*base, since, [fn](onnx::InferenceContext& ctx) {
                         inferSliceKeepingRank(fn, ctx);
                       }));
    }
    if (const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema("Einsum", 12, "");
        base && base->SinceVersion() == 12) {
      onnx::InferenceFunction fn = base->GetTypeAndShapeInferenceFunction();
      t.einsum = derive(*base, 12, [fn](onnx::InferenceContext& ctx) { inferEinsumDims(fn, ctx); });
    }
    const char* ms = "com.microsoft";
    auto contrib = [&](const char* name, int min_inputs, int max_inputs, int outputs,
                       onnx::InferenceFunction fn) {
      t.contrib.emplace(name, fresh(name, 1, min_inputs, max_inputs, outputs, fn, ms));
    };
    contrib("MultiHeadAttention", 1, 10, 4, inferMultiHeadAttention);
    contrib("Attention", 2, 10, 4, inferPackedAttention);
    contrib("GroupQueryAttention", 7, 16, 4, inferGroupQueryAttention);
    contrib("RotaryEmbedding", 4, 4, 1, inferLikeInput0);
    contrib("SkipLayerNormalization", 3, 5, 4, inferSkipLayerNorm);
    contrib("SkipSimplifiedLayerNormalization", 3, 4, 4, inferSkipLayerNorm);
    contrib("Gelu", 1, 1, 1, inferLikeInput0);
    contrib("FastGelu", 1, 2, 1, inferLikeInput0);
    contrib("BiasGelu", 2, 2, 1, inferLikeInput0);
    contrib("QuickGelu", 1, 1, 1, inferLikeInput0);
    contrib("FusedMatMul", 2, 2, 1, inferFusedMatMul);
    {
      // Integer ids (T1) and float tables (T) as ONNX Runtime's schema types them.
      onnx::OpSchema e;
      e.SetName("EmbedLayerNormalization").SetDomain(ms).SinceVersion(1);
      const char* types[] = {"T1", "T1", "T", "T", "T", "T", "T", "T1", "T1"};
      for (int i = 0; i < 9; ++i)
        e.Input(i, "in" + std::to_string(i), "", types[i],
                i == 1 || i == 4 || i >= 7 ? onnx::OpSchema::Optional : onnx::OpSchema::Single);
      e.Output(0, "output", "", "T");
      e.Output(1, "mask_index", "", "T1", onnx::OpSchema::Optional);
      e.Output(2, "embedding_sum", "", "T", onnx::OpSchema::Optional);
      e.TypeConstraint("T", {"tensor(float)", "tensor(float16)"}, "");
      e.TypeConstraint("T1", {"tensor(int32)"}, "");
      e.TypeAndShapeInferenceFunction(inferEmbedLayerNorm);
      e.Finalize();
      t.contrib.emplace("EmbedLayerNormalization", std::move(e));
    }
    t.simplified_layer_norm = scaleTypedNorm("SimplifiedLayerNormalization", 2, 2);
    t.layer_norm_before_17 = scaleTypedNorm("LayerNormalization", 3, 3);
    return t;
  }();
  return t;
}

}  // namespace

NewerOpsetSchemas::NewerOpsetSchemas() { tables(); }

const NewerOpsetSchemas& inferenceSchemas() {
  static const NewerOpsetSchemas registry;
  return registry;
}

const onnx::OpSchema* NewerOpsetSchemas::GetSchema(const std::string& key,
                                                   const int maxInclusiveVersion,
                                                   const std::string& spelled) const {
  // ONNX's registry knows its ops under "" only; nodes may say "ai.onnx".
  static const std::string kOnnx;
  const bool onnx_domain = spelled.empty() || spelled == "ai.onnx";
  const std::string& domain = onnx_domain ? kOnnx : spelled;
  const Tables& t = tables();
  if (domain == "com.microsoft") {
    auto it = t.contrib.find(key);
    return it == t.contrib.end() ? nullptr : &it->second;
  }
  if (onnx_domain && key == "Slice") {
    const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema(
        key, std::min(maxInclusiveVersion, kOnnxRegistryOpset), domain);
    auto it = base ? t.slices.find(base->SinceVersion()) : t.slices.end();
    return it == t.slices.end() ? base : &it->second;
  }
  if (onnx_domain && key == "Einsum" && maxInclusiveVersion >= 12 && t.einsum) return &*t.einsum;
  if (onnx_domain && key == "SimplifiedLayerNormalization") return &t.simplified_layer_norm;
  if (onnx_domain && key == "LayerNormalization" && maxInclusiveVersion < 17)
    return &t.layer_norm_before_17;
  if (!onnx_domain || maxInclusiveVersion <= kOnnxRegistryOpset)
    return onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
  auto changed = t.changed.find(key);
  if (changed != t.changed.end())
    return maxInclusiveVersion >= changed->second.SinceVersion()
               ? &changed->second
               : onnx::OpSchemaRegistry::Schema(key, kOnnxRegistryOpset, domain);
  if (t.unsafe.count(key)) return nullptr;
  return onnx::OpSchemaRegistry::Schema(key, kOnnxRegistryOpset, domain);
}

}  // namespace onnx_rewrite
