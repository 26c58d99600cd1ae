//===- ExporterModels.h - whole transformer models as exporters emit them -===//
//
// Small whole transformer models with seeded random weights, built directly as
// onnx::ModelProto in the node forms torch.onnx emits: the TorchScript exporter
// (opset 14-17: shape arithmetic with Shape/Gather/Unsqueeze/Concat, scalars as
// Constant nodes, Linear as MatMul then Add(bias, .), consecutive Transposes
// merged, LayerNorm decomposed below opset 17 and LayerNormalization from 17,
// rsqrt as Div(1, Sqrt)) and the dynamo exporter (opset 18+: onnxscript's
// torchlib decompositions after its optimizer: Shape with start/end, Reduce* and
// Unsqueeze axes as inputs, scalars as initializers, scaled_dot_product_attention
// as Mul(q, sqrt(scale)) . Mul(Transpose(k), sqrt(scale)), halves by Split, RoPE
// cos/sin computed from inv_freq and position_ids).
//
// Families (Hugging Face transformers' modules, vocabulary-free unless `embeddings`: the
// model starts at the hidden states):
//   bert   post-LN encoder, erf GELU, additive padding mask from attention_mask; with
//          `embeddings`, BertEmbeddings first (word + token type + position Gathers, Add,
//          LayerNorm; position ids sliced from the registered position_ids buffer)
//   gpt2   pre-LN decoder, Conv1D as Reshape/Gemm/Reshape, gelu_new (tanh, Pow 3),
//          causal mask as Where on a slice of the tril buffer (or an Add)
//   llama  RMSNorm, rotate_half RoPE, grouped KV heads (repeat_kv), SwiGLU MLP; with
//          `qk_norm`, Qwen3's per-head RMSNorm of Q and K (Gemma3's after the transpose)
//   phi    LayerNorm, partial rotary (first rotary_dim dims), parallel attention
//          and MLP, gelu_new
//   heads  the GPT of Karpathy's "Let's build GPT" (gpt.py): pre-LN, attention as one
//          module per head (own K/Q/V Linears and tril buffer, masked_fill -inf),
//          heads concatenated then projected, ReLU MLP; no mask or position inputs
//   t5     T5's encoder stack: pre-norm T5LayerNorm (RMSNorm without mean subtraction or
//          bias), unscaled attention plus the relative position bias (computed once in
//          layer 0 from its bucket Gather, the padding mask added to it, shared by every
//          layer), DenseReluDense FFN, final_layer_norm; with `embeddings`, the shared
//          token embedding Gather first
//   vit    ViTModel's encoder: pre-LN (layernorm_before / layernorm_after), attention
//          without any mask (SDPA with scale=None from transformers 4.41, eager before),
//          erf GELU, final layernorm; with `embeddings`, ViTEmbeddings first (patch Conv,
//          flatten(2).transpose(1, 2), the cls token expanded to the batch and concatenated
//          in front, + position_embeddings): a static sequence of kVitPatches + 1
// Below opset 14 only bert, t5 and vit are built (TorchScript at opsets 11-13: Unsqueeze,
// Squeeze and Reduce* axes as attributes).
// `unoptimized` dynamo exports are what torch 2.4's exporter leaves when no optimizer runs:
// an Identity per parameter read and per module (and torchlib function) output, e.g. one
// reading RMSNorm's Reciprocal and one for .contiguous() between the merge's Transpose and
// Reshape, literals as Constant nodes, and SDPA's scale computed at run time from the
// query's head size (1 / sqrt(q.size(-1)), as torchlib writes it). The module functions are
// inlined (no FunctionProtos).
// Value_info carries every intermediate shape with the symbolic dims batch and seq,
// as the exporters leave it (ONNX shape inference with data propagation).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::testing {

enum class ModelFamily { kBert, kGpt2, kLlama, kPhi, kHeads, kT5, kVit };

/// vit with `embeddings`: pixel_values [batch, 3, kVitImage, kVitImage] cut into
/// kVitPatch-sized patches, kVitPatches of them (plus the cls token: the sequence).
constexpr int kVitImage = 8, kVitPatch = 4, kVitPatches = 4;
/// kTf2onnx: TensorFlow's BERT (google-research/bert's modeling.py, the ONNX model zoo's
/// BERT-SQuAD) converted by tf2onnx; bert only, opsets 10-15, a static sequence of
/// kTfSequence tokens (TensorFlow 1 graphs fix max_seq_length), an int32 input_mask, and
/// the batch named as tf2onnx names unknown dims: unk__0 (hidden_states), unk__1
/// (attention_mask), unk__2 (the output).
enum class Exporter { kTorchScript, kDynamo, kTf2onnx };
constexpr int kTfSequence = 8;

/// How future positions are masked. GPT-2: kWhere or kAdd. LLaMA and Phi: kSdpa, or else
/// the additive attention_mask input HF prepares once. heads: kWhere only (per head, in
/// both exporters' forms).
enum class CausalMask {
  kWhere,  ///< per layer: Where(Slice(tril buffer), scores, finfo.min) (eager attention)
  kAdd,    ///< once: an additive [batch, 1, seq, seq] mask, per layer Add (SDPA)
  /// per layer: scaled_dot_product_attention(is_causal=True) without attention_mask (HF's
  /// sdpa attention when nothing is padded), as torch.onnx writes it:
  /// Add(scores, Where(Equal(Trilu(Expand(1, [L, S]), upper=0), 0), -inf, 0)) with L and S
  /// read from the Q and K heads (llama, phi; gpt2 without padding_mask, as GPT2SdpaAttention
  /// and nanoGPT's flash path run it).
  kSdpa,
  /// llama, phi (dynamo): a boolean attention_mask input [batch, 1, seq, seq] (causal and
  /// padding together, True where a key may be read, as transformers >= 4.53's sdpa_mask
  /// gives SDPA), per layer torchlib's boolean-mask SDPA: Add(scores, Where(mask, 0, -inf)),
  /// and the weights guarded, Where(IsNaN(p), 0, p), since a query row masked whole is NaN.
  kBool,
  /// gpt2, llama, phi: once, from the int64 [batch, seq] attention_mask,
  /// AttentionMaskConverter(is_causal=True).to_4d as traced (_prepare_4d_causal_attention_mask
  /// and its _for_sdpa twin, transformers 4.36 to 4.37 for LLaMA/Mistral/Phi, to 4.47 for
  /// GPT-2): _make_causal_mask's full((S, S), finfo.min) masked_fill'ed with 0 where
  /// arange < (arange + 1).view(S, 1), expanded to [batch, 1, S, S], then masked_fill'ed
  /// with finfo.min where _expand_mask's padding mask is set. Per layer SDPA with that mask
  /// (in TorchScript torch's SDPA symbolic; the model's default attention then).
  kTo4d,
};

/// bert and vit: how transformers computes self-attention.
enum class AttentionImpl {
  /// BertSelfAttention / ViTSelfAttention: MatMul(q, k^T), Div by sqrt(head_dim), Softmax.
  /// bert's mask: get_extended_attention_mask's (1 - m[:, None, None, :]) * finfo.min. In
  /// dynamo exports bert's scores are torchlib's SDPA form all the same.
  kEager,
  /// BertSdpaSelfAttention / ViTSdpaSelfAttention (transformers 4.41 and later, their
  /// default): scaled_dot_product_attention with scale=None, as torch's SDPA symbolic
  /// (TorchScript, opset 14 and later) or torchlib writes it. bert's mask:
  /// _prepare_4d_attention_mask_for_sdpa, i.e. AttentionMaskConverter._expand_mask:
  /// inv = 1 - m[:, None, None, :].expand(b, 1, seq, seq).float(), then
  /// inv.masked_fill(inv.bool(), finfo.min).
  kSdpa,
};

/// How LLaMA/Phi get the RoPE cos/sin.
enum class RopeCache {
  kGather,    ///< Gather(cos_cached [max_pos, d], position_ids) + Unsqueeze(1) (HF <= 4.37)
  kComputed,  ///< cos(inv_freq @ position_ids) per forward (HF >= 4.38 LlamaRotaryEmbedding)
};

/// What to build. Zero means "the family's default" where noted.
struct ExporterModelSpec {
  ModelFamily family = ModelFamily::kLlama;
  Exporter exporter = Exporter::kTorchScript;
  int opset = 0;  ///< 0: 17 for TorchScript, 18 for dynamo
  int layers = 2;
  int hidden = 32;
  int heads = 4;
  int kv_heads = 0;    ///< 0: heads / 2 for llama (grouped), heads otherwise
  int head_dim = 0;    ///< 0: hidden / heads
  int rotary_dim = 0;  ///< 0: head_dim / 2 for phi, head_dim for llama; unused otherwise
  int ffn = 0;         ///< 0: 4 * hidden (llama: 2 * hidden, SwiGLU)
  int max_positions = 64;
  /// bert and t5: start from input_ids (and bert's token_type_ids) through the embedding
  /// layer instead of from hidden_states.
  /// vit: start from pixel_values through the patch embeddings.
  bool embeddings = false;
  /// bert with embeddings: RobertaEmbeddings as transformers 4.x writes it and optimum
  /// exports it: no token_type_ids input (the registered buffer of zeros sliced to the
  /// sequence and expanded to the batch), position ids counted from the padding index 1,
  /// create_position_ids_from_input_ids = (cumsum(ids != 1) + 0) * (ids != 1) + 1, a
  /// position table of max_positions + 2 rows, LayerNorm eps 1e-5.
  bool roberta = false;
  int vocab = 0;  ///< 0: 100 (with embeddings)
  /// bert and vit: transformers' attn_implementation. Unset: vit kSdpa (kEager below
  /// opset 14, where torch has no SDPA symbolic), bert kEager.
  std::optional<AttentionImpl> attention;
  /// dynamo only: keep the Identity nodes and Constant literals no optimizer removed.
  bool unoptimized = false;
  /// gpt2; unset: kWhere for TorchScript, kAdd for dynamo; or kTo4d, or kSdpa without a
  /// padding mask (GPT2SdpaAttention's is_causal when no attention_mask is given). llama, phi:
  /// kSdpa, kBool, kTo4d or the attention_mask input (any other value). heads: kWhere (unset or
  /// set).
  std::optional<CausalMask> causal_mask;
  /// llama and phi; unset: kGather for TorchScript, kComputed for dynamo.
  std::optional<RopeCache> rope_cache;
  /// llama and phi (kComputed, no cache): false exports without a position_ids input, as
  /// torch.onnx.export(model, (hidden_states, attention_mask)) does: transformers then
  /// computes cache_position = arange(0, seq) and position_ids = cache_position.unsqueeze(0),
  /// [1, seq], one row for the whole batch.
  bool position_ids_input = true;
  /// kComputed: transformers >= 4.45's attention_scaling, cos * f and sin * f before the
  /// cast to x's dtype (1.0 for the default RoPE; YaRN's and LongRoPE's factor otherwise,
  /// e.g. Phi-3.5's 1.19). 0: no Mul (older transformers, or folded by an optimizer).
  float rope_scaling = 0.0f;
  /// gpt2 (TorchScript, kWhere), llama and phi (not kSdpa): the decoding graph with a KV
  /// cache, as transformers >= 4.36 (separate key and value caches, DynamicCache) is
  /// exported with past_key_values: per layer past_key_i / past_value_i [batch, kv_heads,
  /// past, head_dim] concatenated in front of the new K (after RoPE) and V heads on axis 2,
  /// the results also returned as present_key_i / present_value_i [batch, kv_heads, total,
  /// head_dim]; attention_mask covers all total = past + seq keys.
  bool past = false;
  /// llama and phi with an attention_mask (not kSdpa or kBool): every layer slices the mask
  /// to the length of its keys, attention_mask[:, :, :, :key_states.shape[-2]], as
  /// transformers 4.38 to 4.47's eager and sdpa attention do (key_states after the cache
  /// and repeat_kv).
  bool mask_sliced_by_keys = false;
  /// gpt2 with past: one stacked cache per layer, past_i [2, batch, heads, past, head_dim]
  /// (K at 0, V at 1), and present_i = stack(K, V) [2, batch, heads, total, head_dim], as
  /// ONNX Runtime's GPT-2 export (its MyGPT2Model wrapper) and PyTorch 1.x's exports of
  /// transformers 2.x-3.x feed the cache.
  bool stacked_past = false;
  /// gpt2 with the kWhere causal mask: false drops the attention_mask input and its
  /// additive (1 - mask) * finfo.min, as PyTorch 1.6's GPT-2 decoding graph has none. bert
  /// and t5: false drops the input, and the model builds its mask from ones (exported
  /// without attention_mask: transformers' torch.ones(batch, seq)).
  bool padding_mask = true;
  /// With past: the step is exported for one new token, a static sequence length of 1
  /// (hidden_states [batch, 1, hidden], position_ids [batch, 1]).
  bool one_token = false;
  /// Without past, for the families and forms `past` is built for: the first step of a
  /// decoder with a KV cache, as optimum exports decoder_model.onnx: attention_mask is
  /// int64[batch, seq] and builds the additive mask as with past, the past length a literal 0
  /// (llama, phi), and the new K (after RoPE) and V heads are returned as present_key_i /
  /// present_value_i (declared [batch, kv_heads, total, head_dim], as with past, though total
  /// is seq here); GPT-2 keeps K as heads (its present) and transposes it after.
  bool presents = false;
  /// optimum's decoder_model_merged.onnx (merge_decoders) of the `presents` model and the
  /// `past` model of this spec (neither flag need be set; `one_token` is not built): the main
  /// graph holds the inputs of both (attention_mask int64[batch, total]) and the input
  /// use_cache_branch bool[1], the weights of both deduplicated (each tensor of rank 2 or
  /// more, or a rank-1 non-integer one, once, renamed "<name>_merged_1"), and one If node:
  /// then_branch "with_past" is the past model's nodes, else_branch "no_past" the presents
  /// model's. The branches declare no inputs and no value_info (every intermediate is
  /// untyped), keep their scalar and 1-D integer initializers, read the rest from the main
  /// graph, and return last_hidden_state and the presents under the If's output names. Feed
  /// the no_past branch (use_cache_branch false) past = 0 and total = seq.
  bool merged = false;
  /// llama: Qwen3's (and Gemma3's) normalized Q and K: each head of Q and K goes through its
  /// own RMSNorm (q_norm, k_norm, weight [head_dim]) between the head split and the transpose,
  /// q_norm(q_proj(x).view(B, S, -1, head_dim)).transpose(1, 2), before RoPE.
  bool qk_norm = false;
  /// With qk_norm: Gemma3's placement, the norm on the transposed [B, N, S, H] heads,
  /// q_norm(q_proj(x).view(B, S, -1, head_dim).transpose(1, 2)).
  bool qk_norm_after_transpose = false;
  /// llama dynamo with SDPA's is_causal and fewer K/V heads: transformers >= 4.48
  /// calls SDPA with enable_gqa=True (torch >= 2.5, no attention_mask) instead of repeat_kv,
  /// and torchlib repeats the K/V heads itself: Reshape(Expand(Unsqueeze(k, 2), [B, G,
  /// Div(N, G), L, H]), [B, N, L, H]), each size read with Shape(x, start, end) of q or k.
  bool sdpa_gqa = false;
  uint64_t seed = 1;
};

/// The spec with every default filled in; throws std::invalid_argument on bad sizes.
ExporterModelSpec resolved(const ExporterModelSpec& spec);

/// The model. Inputs: hidden_states float[batch, seq, hidden] (heads, vit: only it), or with
/// `embeddings` input_ids int64[batch, seq] (bert: and token_type_ids int64[batch, seq]; vit:
/// pixel_values float[batch, 3, kVitImage, kVitImage] instead);
/// bert, gpt2 and t5 add attention_mask int64[batch, seq] (1 keep, 0 pad); llama and phi add
/// attention_mask float[batch, 1, seq, seq] (additive, causal and padding combined as HF prepares
/// it once for all layers; not with CausalMask::kSdpa) and position_ids int64[batch, seq]. Output
/// last_hidden_state float[batch, seq, hidden]. Weights are initializers.
/// With `past`: attention_mask is int64[batch, total] for every family (llama and phi build
/// the additive [batch, 1, seq, total] mask from it once, causal by cache position
/// past + i, as HF >= 4.38's _update_causal_mask), then the past_key_i/past_value_i inputs;
/// the present_key_i/present_value_i outputs follow last_hidden_state. Feed it with the
/// symbolic dims batch, seq, past and total = past + seq. With `presents`: attention_mask
/// int64[batch, seq], no past inputs, the presents after last_hidden_state. `merged`: see
/// ExporterModelSpec::merged.
onnx::ModelProto makeExporterModel(const ExporterModelSpec& spec);

/// The If node of a `merged` model and its then (with past) and else (no past) branches.
struct MergedBranches {
  const onnx::NodeProto* if_node = nullptr;
  const onnx::GraphProto* with_past = nullptr;
  const onnx::GraphProto* no_past = nullptr;
};
/// The branches of the first If node of `model`'s main graph; null members when it has none.
MergedBranches mergedBranches(const onnx::ModelProto& model);

/// Fused ops the shipped rules should leave in the model (in each branch of a `merged` one).
struct ExpectedFusions {
  int attention = 0;         ///< one per layer (any of the attention ops)
  int layer_norm = 0;        ///< LayerNormalization
  int skip_layer_norm = 0;   ///< com.microsoft.SkipLayerNormalization
  int simplified_norm = 0;   ///< SimplifiedLayerNormalization / RMSNormalization
  int skip_simplified = 0;   ///< com.microsoft.SkipSimplifiedLayerNormalization
  int rotary = 0;            ///< RotaryEmbedding: one for Q and one for K per layer
  int gelu = 0;              ///< Gelu / BiasGelu / FastGelu / QuickGelu (SiLU)
  int embed_layer_norm = 0;  ///< com.microsoft.EmbedLayerNormalization
};
ExpectedFusions expectedFusions(const ExporterModelSpec& spec);

/// Names used on the command line and in test names: bert, gpt2, llama, phi, heads, t5, vit;
/// torchscript, dynamo. parse* return false for an unknown name.
const char* familyName(ModelFamily family);
const char* exporterName(Exporter exporter);
bool parseFamily(const std::string& name, ModelFamily* family);
bool parseExporter(const std::string& name, Exporter* exporter);

/// compare.js options that keep the integer inputs valid: attention_mask and token_type_ids
/// in {0, 1}, input_ids below vocab, position_ids below max_positions ("--int-range
/// NAME=LO:HI ..."); "" for heads and vit, which have no integer inputs. For a `merged` model, also
/// use_cache_branch (a bool, 0:1 false or 1:2 true) with `use_cache`; unset, it is random.
std::string oracleIntRanges(const ExporterModelSpec& spec,
                            std::optional<bool> use_cache = std::nullopt);

}  // namespace onnx_rewrite::testing
