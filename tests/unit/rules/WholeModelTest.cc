//===- WholeModelTest.cc - the shipped rules on whole transformer models ---===//
//
// Every family of tests/support/ExporterModels.h (BERT, GPT-2, LLaMA, Phi, gpt.py's
// per-head attention, T5's encoder) in the forms of both torch.onnx exporters, fused with
// all shipped rules (the `_mask_index` cases with the opt-in packed_attention_mask_index
// too). Each model must first run in ONNX Runtime as generated; after fusion it
// must hold exactly the fused ops the model calls for (one attention op per layer, its
// norms, its EmbedLayerNormalization, two RotaryEmbeddings per layer in RoPE models, its
// Gelus) and compute the same outputs. The
// fusion checks are one test per rule family, so a failure names the family that missed.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/api/Rewrite.h"
#include "tests/support/ExporterModels.h"
#include "tests/support/FunctionModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::AttentionImpl;
using testing::CausalMask;
using testing::Exporter;
using testing::ExporterModelSpec;
using testing::ModelFamily;
using testing::RopeCache;

struct WholeModelCase {
  std::string name;
  ExporterModelSpec spec;
  /// Opt-in rules the case runs too (--enable, Options::filter.enable); empty: none.
  std::string enable = "";
  /// Run without max_positions: computed cos/sin become caches computed at run time.
  bool runtime_caches = false;
};

WholeModelCase makeCase(ModelFamily family, Exporter exporter, const std::string& suffix = "",
                        void (*edit)(ExporterModelSpec&) = nullptr) {
  ExporterModelSpec s;
  s.family = family;
  s.exporter = exporter;
  if (edit) edit(s);
  return {std::string(testing::familyName(family)) + "_" + testing::exporterName(exporter) + suffix,
          s};
}

const ModelFamily kFamilies[] = {ModelFamily::kBert, ModelFamily::kGpt2,  ModelFamily::kLlama,
                                 ModelFamily::kPhi,  ModelFamily::kHeads, ModelFamily::kT5,
                                 ModelFamily::kVit};

std::vector<WholeModelCase> wholeModelCases() {
  std::vector<WholeModelCase> cases;
  for (ModelFamily f : kFamilies)
    for (Exporter e : {Exporter::kTorchScript, Exporter::kDynamo}) cases.push_back(makeCase(f, e));
  // TorchScript below opset 17 writes LayerNorm out (ReduceMean ... Add).
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset14",
                           [](ExporterModelSpec& s) { s.opset = 14; }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_opset14",
                           [](ExporterModelSpec& s) { s.opset = 14; }));
  cases.push_back(makeCase(ModelFamily::kHeads, Exporter::kTorchScript, "_opset14",
                           [](ExporterModelSpec& s) { s.opset = 14; }));
  // The SDPA-style additive causal mask in a TorchScript export.
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_add_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kAdd; }));
  // Dynamo exports of older transformers still Gather from cos/sin caches.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_gather_cache",
                           [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kGather; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_gather_cache",
                           [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kGather; }));
  // Computed cos/sin at opset 20 as well (18 and 23 are the cases above and below).
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_opset20",
                           [](ExporterModelSpec& s) { s.opset = 20; }));
  // TorchScript exports of transformers >= 4.38 compute cos/sin per forward pass too.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_computed_cache",
                           [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kComputed; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kTorchScript, "_computed_cache",
                           [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kComputed; }));
  // HF's sdpa attention without padding: SDPA is_causal=True, no attention_mask input.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_sdpa_causal",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_causal",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_sdpa_causal",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa; }));
  // GPT-2's SDPA attention without attention_mask (transformers 4.39-4.47; nanoGPT's flash
  // path alike): is_causal, its mask built from the Q and K heads' lengths.
  cases.push_back(makeCase(
      ModelFamily::kGpt2, Exporter::kTorchScript, "_sdpa_causal",
      [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa, s.padding_mask = false; }));
  cases.push_back(makeCase(
      ModelFamily::kGpt2, Exporter::kDynamo, "_sdpa_causal",
      [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa, s.padding_mask = false; }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kDynamo, "_sdpa_causal_opset23",
                           [](ExporterModelSpec& s) {
                             s.causal_mask = CausalMask::kSdpa, s.padding_mask = false;
                             s.opset = 23;
                           }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_causal_opset23",
                           [](ExporterModelSpec& s) {
                             s.opset = 23;
                             s.causal_mask = CausalMask::kSdpa;
                           }));
  // The causal and padding mask built in the graph from the int64 attention_mask by
  // AttentionMaskConverter.to_4d (transformers 4.36-4.37 decoders, GPT-2's SDPA to 4.47),
  // read by SDPA (TorchScript's symbolic with its run-time scale).
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_to4d_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kTo4d; }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kDynamo, "_to4d_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kTo4d; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_to4d_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kTo4d; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_to4d_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kTo4d; }));
  // ... and with past (the zeros of the cached positions in front of the causal part):
  // GPT-2's SDPA decoding step (transformers 4.39-4.47), LLaMA's and Phi's (4.36-4.37).
  cases.push_back(
      makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_past_to4d_mask",
               [](ExporterModelSpec& s) { s.past = true, s.causal_mask = CausalMask::kTo4d; }));
  cases.push_back(
      makeCase(ModelFamily::kGpt2, Exporter::kDynamo, "_past_to4d_mask",
               [](ExporterModelSpec& s) { s.past = true, s.causal_mask = CausalMask::kTo4d; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_past_one_token_to4d_mask",
                           [](ExporterModelSpec& s) {
                             s.past = true, s.one_token = true, s.causal_mask = CausalMask::kTo4d;
                           }));
  cases.push_back(
      makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_past_to4d_mask",
               [](ExporterModelSpec& s) { s.past = true, s.causal_mask = CausalMask::kTo4d; }));
  // transformers >= 4.53 give SDPA a boolean mask; torchlib writes it as -inf and guards
  // the weights against NaN (a row masked whole).
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_bool_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kBool; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_bool_mask",
                           [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kBool; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_bool_mask_opset23",
                           [](ExporterModelSpec& s) {
                             s.opset = 23;
                             s.causal_mask = CausalMask::kBool;
                           }));
  // Standard ONNX Attention, RMSNormalization and RotaryEmbedding exist from opset 23.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_opset23",
                           [](ExporterModelSpec& s) { s.opset = 23; }));
  // Per-head attention where the standard Attention op exists as well.
  cases.push_back(makeCase(ModelFamily::kHeads, Exporter::kDynamo, "_opset23",
                           [](ExporterModelSpec& s) { s.opset = 23; }));
  // One layer: the model's last norm reads the attention's residual directly, where the
  // causal cut of nanoGPT's tril buffer (of a length only the fused op sizes) left the
  // exporter's value_info an unknown dim that a later round of inference must fill.
  cases.push_back(makeCase(ModelFamily::kHeads, Exporter::kDynamo, "_one_layer",
                           [](ExporterModelSpec& s) { s.layers = 1; }));
  cases.push_back(makeCase(ModelFamily::kHeads, Exporter::kTorchScript, "_one_layer",
                           [](ExporterModelSpec& s) { s.layers = 1; }));
  // BERT's GELU is the ONNX Gelu op from opset 20 in dynamo exports.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_opset20",
                           [](ExporterModelSpec& s) { s.opset = 20; }));
  // Opset 10, the oldest torch export the model zoo keeps (BERT-SQuAD), with and without
  // the embeddings.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset10",
                           [](ExporterModelSpec& s) { s.opset = 10; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset10_embeddings",
                           [](ExporterModelSpec& s) { s.opset = 10, s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kT5, Exporter::kTorchScript, "_opset10",
                           [](ExporterModelSpec& s) { s.opset = 10; }));
  // RoBERTa as optimum exports transformers 4.x's: no token_type_ids input, positions
  // counted from the padding index.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_roberta",
                           [](ExporterModelSpec& s) { s.embeddings = s.roberta = true; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_roberta",
                           [](ExporterModelSpec& s) { s.embeddings = s.roberta = true; }));
  // TensorFlow's BERT through tf2onnx (the model zoo's BERT-SQuAD at opset 10; 13 is
  // tf2onnx's default today): the encoder on flattened rows, TensorFlow's LayerNorm and
  // tanh GELU.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTf2onnx));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTf2onnx, "_opset10",
                           [](ExporterModelSpec& s) { s.opset = 10; }));
  // BERT from input_ids: its embeddings become one EmbedLayerNormalization, whether the
  // LayerNorm is written out (opset 11) or one op (17, 18).
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset11_embeddings",
                           [](ExporterModelSpec& s) { s.opset = 11, s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_embeddings",
                           [](ExporterModelSpec& s) { s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_embeddings",
                           [](ExporterModelSpec& s) { s.embeddings = true; }));
  // T5's encoder (its opset 17 and 18 forms are the loop above) at opset 11, and from
  // input_ids (its first RMSNorm reads the embedding Gather).
  cases.push_back(makeCase(ModelFamily::kT5, Exporter::kTorchScript, "_opset11",
                           [](ExporterModelSpec& s) { s.opset = 11; }));
  cases.push_back(makeCase(ModelFamily::kT5, Exporter::kDynamo, "_embeddings",
                           [](ExporterModelSpec& s) { s.embeddings = true; }));
  // ViT (the loop above: SDPA with scale=None, whose TorchScript symbolic computes the scale
  // from Shape(q)[-1:] at run time) with eager attention, at opset 11 (eager only), and
  // from pixel_values: the patch Conv, the cls token and the position embeddings.
  cases.push_back(makeCase(ModelFamily::kVit, Exporter::kTorchScript, "_eager",
                           [](ExporterModelSpec& s) { s.attention = AttentionImpl::kEager; }));
  cases.push_back(
      makeCase(ModelFamily::kVit, Exporter::kDynamo, "_eager_opset20",
               [](ExporterModelSpec& s) { s.attention = AttentionImpl::kEager, s.opset = 20; }));
  cases.push_back(makeCase(ModelFamily::kVit, Exporter::kTorchScript, "_opset11",
                           [](ExporterModelSpec& s) { s.opset = 11; }));
  cases.push_back(makeCase(ModelFamily::kVit, Exporter::kTorchScript, "_opset14_embeddings",
                           [](ExporterModelSpec& s) { s.opset = 14, s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kVit, Exporter::kDynamo, "_embeddings",
                           [](ExporterModelSpec& s) { s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kVit, Exporter::kDynamo, "_opset23",
                           [](ExporterModelSpec& s) { s.opset = 23; }));
  // BERT's SDPA attention (transformers 4.41 and later): the padding mask by
  // _prepare_4d_attention_mask_for_sdpa (Where(bool(1 - m), finfo.min, 1 - m) expanded to
  // [batch, 1, seq, seq]), TorchScript's SDPA symbolic computing the scale from the head size.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_sdpa",
                           [](ExporterModelSpec& s) { s.attention = AttentionImpl::kSdpa; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_sdpa",
                           [](ExporterModelSpec& s) { s.attention = AttentionImpl::kSdpa; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset14_sdpa_embeddings",
                           [](ExporterModelSpec& s) {
                             s.attention = AttentionImpl::kSdpa, s.opset = 14, s.embeddings = true;
                           }));
  cases.push_back(makeCase(
      ModelFamily::kBert, Exporter::kTorchScript, "_sdpa_no_mask_input",
      [](ExporterModelSpec& s) { s.attention = AttentionImpl::kSdpa, s.padding_mask = false; }));
  // Exported without attention_mask: the model builds its mask from ones, a zero once
  // (1 - ones) * finfo.min, which canonicalization drops (BERT's attention then has no
  // mask); T5's zero widens its position bias to the batch, so that Add stays.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_no_mask_input",
                           [](ExporterModelSpec& s) { s.padding_mask = false; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_no_mask_input",
                           [](ExporterModelSpec& s) { s.padding_mask = false; }));
  cases.push_back(
      makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_no_mask_input_embeddings",
               [](ExporterModelSpec& s) { s.padding_mask = false, s.embeddings = true; }));
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset11_no_mask_input",
                           [](ExporterModelSpec& s) { s.padding_mask = false, s.opset = 11; }));
  cases.push_back(makeCase(ModelFamily::kT5, Exporter::kTorchScript, "_no_mask_input",
                           [](ExporterModelSpec& s) { s.padding_mask = false; }));
  // torch 2.4's dynamo export without its optimizer: Identity nodes everywhere (one reads
  // RMSNorm's Reciprocal), literals as Constant nodes. It must fuse as the optimized one.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_unoptimized",
                           [](ExporterModelSpec& s) { s.unoptimized = true; }));
  cases.push_back(makeCase(ModelFamily::kT5, Exporter::kDynamo, "_unoptimized",
                           [](ExporterModelSpec& s) { s.unoptimized = true; }));
  cases.push_back(
      makeCase(ModelFamily::kBert, Exporter::kDynamo, "_embeddings_unoptimized",
               [](ExporterModelSpec& s) { s.embeddings = true, s.unoptimized = true; }));
  // transformers 4.38 and later slice the prepared mask to the keys' length in every layer,
  // attention_mask[:, :, :, :key_states.shape[-2]] (after repeat_kv): slice_whole drops the
  // slice of a mask as long as the keys, and the attention fuses as without it.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_mask_sliced",
                           [](ExporterModelSpec& s) { s.mask_sliced_by_keys = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_mask_sliced",
                           [](ExporterModelSpec& s) { s.mask_sliced_by_keys = true; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kTorchScript, "_mask_sliced",
                           [](ExporterModelSpec& s) { s.mask_sliced_by_keys = true; }));
  // With a cache the keys are P + S long and the mask as long as attention_mask (total):
  // the slice stays, and the attention rules take it as a mask cut to the keys' length,
  // which they cut again from the T they compute (GroupQueryAttention for one token).
  cases.push_back(
      makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_past_mask_sliced",
               [](ExporterModelSpec& s) { s.past = true, s.mask_sliced_by_keys = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_past_one_token_mask_sliced",
                           [](ExporterModelSpec& s) {
                             s.past = true, s.one_token = true, s.mask_sliced_by_keys = true;
                           }));
  // Decoding steps with a KV cache (issue 13): past_key_i/past_value_i concatenated in front
  // of the new K (after RoPE) and V heads, the Concats returned as present outputs.
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_past",
                           [](ExporterModelSpec& s) { s.past = true; }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_past_opset14",
                           [](ExporterModelSpec& s) { s.past = true, s.opset = 14; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_past",
                           [](ExporterModelSpec& s) { s.past = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_past",
                           [](ExporterModelSpec& s) { s.past = true; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_past",
                           [](ExporterModelSpec& s) { s.past = true; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kTorchScript, "_past",
                           [](ExporterModelSpec& s) { s.past = true; }));
  // ONNX Runtime's GPT-2 export: one stacked cache past_i [2, ...] and present_i = stack(K, V)
  // per layer become com.microsoft.Attention with past and present.
  // Without a padding mask (PyTorch 1.6's decoding graph); with one, ONNX Runtime's
  // Attention cannot take it beside past, and MultiHeadAttention takes the core.
  cases.push_back(makeCase(
      ModelFamily::kGpt2, Exporter::kTorchScript, "_stacked_past",
      [](ExporterModelSpec& s) { s.past = true, s.stacked_past = true, s.padding_mask = false; }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_stacked_past_opset14",
                           [](ExporterModelSpec& s) {
                             s.past = true, s.stacked_past = true, s.padding_mask = false;
                             s.opset = 14;
                           }));
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_stacked_past_padded",
                           [](ExporterModelSpec& s) { s.past = true, s.stacked_past = true; }));
  // From opset 23 ONNX's Attention takes the concatenated heads (the standard op preferred).
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_past_opset23",
                           [](ExporterModelSpec& s) { s.past = true, s.opset = 23; }));
  // The step exported for one new token (static S = 1): LLaMA's grouped heads become
  // GroupQueryAttention on the cache.
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_past_one_token",
                           [](ExporterModelSpec& s) { s.past = true, s.one_token = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_past_one_token",
                           [](ExporterModelSpec& s) { s.past = true, s.one_token = true; }));
  // BERT's padding mask as Attention's mask_index (opt-in: it assumes a 0/1 attention_mask,
  // which oracleIntRanges feeds), with its LayerNorms written out or its embeddings fused.
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript, "_opset11_mask_index",
                           [](ExporterModelSpec& s) { s.opset = 11; }));
  cases.back().enable = "mask_index";
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kTorchScript,
                           "_opset11_embeddings_mask_index",
                           [](ExporterModelSpec& s) { s.opset = 11, s.embeddings = true; }));
  cases.back().enable = "mask_index";
  cases.push_back(makeCase(ModelFamily::kBert, Exporter::kDynamo, "_mask_index"));
  cases.back().enable = "mask_index";
  // The first step of a decoder with a cache (optimum's decoder_model.onnx, the else branch
  // of a merged decoder, MergedDecoderTest.cc): HF's 2-D attention_mask, the new K/V heads
  // returned as presents.
  cases.push_back(makeCase(ModelFamily::kGpt2, Exporter::kTorchScript, "_presents",
                           [](ExporterModelSpec& s) { s.presents = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_presents",
                           [](ExporterModelSpec& s) { s.presents = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_presents",
                           [](ExporterModelSpec& s) { s.presents = true; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_presents",
                           [](ExporterModelSpec& s) { s.presents = true; }));
  // Qwen3's normalized Q and K (q_norm, k_norm: an RMSNorm per head between the head split
  // and the transpose): the norms fuse on the [B, S, N, H] heads and stay; the attention
  // takes the normalized heads merged back. GroupQueryAttention without and with a cache,
  // MultiHeadAttention for a head size its kernel does not take and for a step of symbolic
  // length, ONNX's Attention from opset 23.
  const auto qwen3 = [](ExporterModelSpec& s) { s.qk_norm = true; };
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_qk_norm", qwen3));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm", qwen3));
  cases.push_back(
      makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm_sdpa_causal",
               [](ExporterModelSpec& s) { s.qk_norm = true, s.causal_mask = CausalMask::kSdpa; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_qk_norm_head_dim6",
                           [](ExporterModelSpec& s) { s.qk_norm = true, s.head_dim = 6; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_qk_norm_past",
                           [](ExporterModelSpec& s) { s.qk_norm = true, s.past = true; }));
  cases.push_back(
      makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm_past_one_token",
               [](ExporterModelSpec& s) { s.qk_norm = true, s.past = true, s.one_token = true; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm_opset23",
                           [](ExporterModelSpec& s) { s.qk_norm = true, s.opset = 23; }));
  // Gemma3 normalizes the transposed [B, N, S, H] heads instead.
  const auto gemma3 = [](ExporterModelSpec& s) { s.qk_norm = s.qk_norm_after_transpose = true; };
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_qk_norm_heads", gemma3));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm_heads", gemma3));
  cases.push_back(makeCase(
      ModelFamily::kLlama, Exporter::kTorchScript, "_qk_norm_heads_head_dim6",
      [](ExporterModelSpec& s) { s.qk_norm = s.qk_norm_after_transpose = true, s.head_dim = 6; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm_heads_past_one_token",
                           [](ExporterModelSpec& s) {
                             s.qk_norm = s.qk_norm_after_transpose = true;
                             s.past = true, s.one_token = true;
                           }));
  // transformers >= 4.45 scale the computed cos and sin by attention_scaling (YaRN's and
  // LongRoPE's factor; Phi-3.5's 1.19): the factor goes into RotaryEmbedding's caches.
  cases.push_back(makeCase(
      ModelFamily::kLlama, Exporter::kTorchScript, "_rope_scaling",
      [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kComputed, s.rope_scaling = 1.19f; }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_rope_scaling",
                           [](ExporterModelSpec& s) { s.rope_scaling = 1.19f; }));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_rope_scaling_one",
                           [](ExporterModelSpec& s) { s.rope_scaling = 1.0f; }));
  // Exported without a position_ids input: positions arange(0, seq).unsqueeze(0), [1, seq],
  // become ONNX Runtime's one-element position_ids [0].
  const auto no_positions = [](ExporterModelSpec& s) {
    s.rope_cache = RopeCache::kComputed, s.position_ids_input = false;
  };
  cases.push_back(
      makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_no_position_ids", no_positions));
  cases.push_back(
      makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_no_position_ids", no_positions));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_no_position_ids_sdpa_causal",
                           [](ExporterModelSpec& s) {
                             s.position_ids_input = false, s.causal_mask = CausalMask::kSdpa;
                           }));
  cases.push_back(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_no_position_ids", no_positions));
  // transformers >= 4.48 give SDPA enable_gqa=True when there is no attention_mask: torchlib
  // repeats the K/V heads itself (sizes read at run time, the repeat count a Div).
  const auto sdpa_gqa = [](ExporterModelSpec& s) {
    s.causal_mask = CausalMask::kSdpa, s.sdpa_gqa = true;
  };
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_gqa", sdpa_gqa));
  cases.push_back(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_gqa_opset23",
                           [](ExporterModelSpec& s) {
                             s.causal_mask = CausalMask::kSdpa, s.sdpa_gqa = true;
                             s.opset = 23;
                           }));
  // Without max_positions (the command's default): the computed cos/sin caches are computed
  // when the model runs, and every rotary and attention fuses as with constant caches.
  const auto runtime = [&cases](WholeModelCase c) {
    c.name += "_runtime_caches";
    c.runtime_caches = true;
    cases.push_back(c);
  };
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo));
  runtime(makeCase(ModelFamily::kPhi, Exporter::kDynamo));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kTorchScript, "_computed_cache",
                   [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kComputed; }));
  runtime(makeCase(ModelFamily::kPhi, Exporter::kTorchScript, "_computed_cache",
                   [](ExporterModelSpec& s) { s.rope_cache = RopeCache::kComputed; }));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_causal",
                   [](ExporterModelSpec& s) { s.causal_mask = CausalMask::kSdpa; }));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_past_one_token",
                   [](ExporterModelSpec& s) { s.past = true, s.one_token = true; }));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_opset23",
                   [](ExporterModelSpec& s) { s.opset = 23; }));
  runtime(makeCase(ModelFamily::kPhi, Exporter::kDynamo, "_rope_scaling",
                   [](ExporterModelSpec& s) { s.rope_scaling = 1.19f; }));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_no_position_ids", no_positions));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_qk_norm",
                   [](ExporterModelSpec& s) { s.qk_norm = true; }));
  runtime(makeCase(ModelFamily::kLlama, Exporter::kDynamo, "_sdpa_gqa", sdpa_gqa));
  return cases;
}

/// gtest prints the case by name rather than as bytes.
void PrintTo(const WholeModelCase& c, std::ostream* os) { *os << c.name; }

/// How many ops of each kind (op types as testing::opTypes spells them) `ops` has.
int count(const std::vector<std::string>& ops, const std::set<std::string>& kinds) {
  int n = 0;
  for (const std::string& op : ops) n += kinds.count(op) ? 1 : 0;
  return n;
}

const std::vector<std::string> kDims = {"batch=2", "seq=6"};
/// A decoding step with a cache: 3 cached tokens and 2 new ones, or 1 new one.
const std::vector<std::vector<std::string>> kPastDims = {{"batch=2", "seq=2", "past=3", "total=5"},
                                                         {"batch=2", "seq=1", "past=3", "total=4"}};

class WholeModel : public ::testing::TestWithParam<WholeModelCase> {
 protected:
  const ExporterModelSpec& spec() const { return GetParam().spec; }

  /// The case's model, generated once: a case's checks all read the same one, and each
  /// generation (and rewrite, below) costs the sanitizer build several times the check.
  const onnx::ModelProto& model() const {
    static std::map<std::string, onnx::ModelProto> made;
    auto it = made.find(GetParam().name);
    if (it == made.end())
      it = made.emplace(GetParam().name, testing::makeExporterModel(spec())).first;
    return it->second;
  }

  /// The symbolic dims to run the model with: one set, or the decoding steps with past.
  std::vector<std::vector<std::string>> dimSets() const {
    if (spec().one_token) return {{"batch=2", "past=3", "total=4"}};
    if (spec().exporter == Exporter::kTf2onnx) return {{"unk__0=2", "unk__1=2"}};
    return spec().past ? kPastDims : std::vector<std::vector<std::string>>{kDims};
  }

  /// The model after every shipped rule (rewritten once per case); its op types.
  std::vector<std::string> fused(onnx::ModelProto* out = nullptr) const {
    static std::map<std::string, onnx::ModelProto> done;
    auto it = done.find(GetParam().name);
    if (it == done.end()) {
      onnx::ModelProto m = model();
      rewrite(m, testing::shippedRules(), options());
      it = done.emplace(GetParam().name, std::move(m)).first;
    }
    if (out) *out = it->second;
    return testing::opTypes(it->second);
  }

  std::string summary(const std::vector<std::string>& ops) const {
    std::map<std::string, int> histogram;
    for (const std::string& op : ops) ++histogram[op];
    std::string s = "ops after fusion:";
    for (const auto& [op, n] : histogram) s += " " + op + "x" + std::to_string(n);
    return s;
  }

  testing::ExpectedFusions expected() const { return testing::expectedFusions(spec()); }

  /// The options every case runs with: the models' position_ids stay below max_positions
  /// (oracleIntRanges), which constant computed-RoPE caches need stated (unless the case
  /// runs without, for caches computed at run time); the case's opt-in rules.
  Options options() const {
    Options o;
    o.max_positions = GetParam().runtime_caches ? 0 : testing::resolved(spec()).max_positions;
    o.filter.enable = GetParam().enable;
    return o;
  }
};

// ---- the generated models are valid ------------------------------------------------------

TEST_P(WholeModel, RunsInOrtAsGenerated) {
  onnx::ModelProto m = model();
  for (const auto& dims : dimSets()) {
    testing::OracleVerdict v = testing::compareInOrt(m, m, dims, testing::oracleIntRanges(spec()));
    EXPECT_TRUE(v.equal) << ::testing::PrintToString(dims) << ": " << v.report;
  }
}

TEST_P(WholeModel, KeepsBatchAndSeqSymbolicInValueInfo) {
  // ONNX's inference (1.12), which the generator runs in place of torch.onnx's, leaves every
  // Reshape to a computed shape unsized below opset 13: the rules must fuse without them.
  if (testing::resolved(spec()).opset < 13) GTEST_SKIP() << "unsized Reshapes below opset 13";
  if (spec().exporter == Exporter::kTf2onnx) GTEST_SKIP() << "tf2onnx's rows [-1, hidden]";
  if (spec().roberta && spec().exporter == Exporter::kTorchScript)
    GTEST_SKIP() << "the buffered token types' Expand is unsized to ONNX's inference";
  onnx::ModelProto m = model();
  std::map<std::string, const onnx::ValueInfoProto*> info;
  for (const auto& v : m.graph().value_info()) info[v.name()] = &v;
  for (const auto& v : m.graph().output()) info[v.name()] = &v;  // a first step's V heads
  int reshapes = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Reshape" && n.op_type() != "Transpose") continue;
    auto it = info.find(n.output(0));
    ASSERT_NE(it, info.end()) << n.name() << " has no value_info";
    const auto& shape = it->second->type().tensor_type().shape();
    if (shape.dim_size() < 3) continue;          // Conv1D's [batch * seq, hidden] view
    if (shape.dim(0).has_dim_value()) continue;  // a table's (T5's position bias [N, S, S])
    EXPECT_EQ(shape.dim(0).dim_param(), "batch") << n.name();
    ++reshapes;
  }
  EXPECT_GT(reshapes, 0);
}

TEST_P(WholeModel, IsDeterministicForASeed) {
  EXPECT_EQ(testing::serialize(model()), testing::serialize(testing::makeExporterModel(spec())));
  ExporterModelSpec other = spec();
  other.seed += 1;
  EXPECT_NE(testing::serialize(model()), testing::serialize(testing::makeExporterModel(other)));
}

// The TorchScript and dynamo forms of a family draw the same weights for a seed, so they
// must compute the same function: a check on both forms' construction (eager attention vs
// SDPA, Slice vs Split halves, cached vs computed cos/sin, Div(1, Sqrt) vs Reciprocal).
TEST(WholeModelForms, TorchScriptAndDynamoComputeTheSame) {
  for (ModelFamily f : kFamilies) {
    ExporterModelSpec ts, dynamo;
    ts.family = dynamo.family = f;
    dynamo.exporter = Exporter::kDynamo;
    // No padding: GPT-2's two causal masks differ (like HF's eager and SDPA paths) on rows
    // whose every visible key is padded, which the per-layer Where leaves uniform over the
    // visible keys and the merged mask over all keys.
    testing::OracleVerdict v = testing::compareInOrt(
        testing::makeExporterModel(ts), testing::makeExporterModel(dynamo), kDims,
        f == ModelFamily::kGpt2 ? "--int-range attention_mask=1:2" : testing::oracleIntRanges(ts));
    EXPECT_TRUE(v.equal) << testing::familyName(f) << ": " << v.report;
  }
}

TEST(WholeModelForms, RejectsSpecsNoExporterEmits) {
  auto rejects = [](void (*edit)(ExporterModelSpec&)) {
    ExporterModelSpec s;
    edit(s);
    EXPECT_THROW(testing::makeExporterModel(s), std::invalid_argument);
  };
  rejects([](ExporterModelSpec& s) { s.opset = 18; });  // TorchScript stops at 17
  rejects([](ExporterModelSpec& s) { s.exporter = Exporter::kDynamo, s.opset = 17; });
  rejects([](ExporterModelSpec& s) { s.kv_heads = 3; });  // 4 heads in groups of 3
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kBert, s.roberta = true; });
  rejects([](ExporterModelSpec& s) { s.exporter = Exporter::kTf2onnx; });  // llama
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kBert, s.exporter = Exporter::kTf2onnx, s.embeddings = true;
  });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kBert, s.exporter = Exporter::kTf2onnx, s.opset = 16;
  });
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kBert, s.kv_heads = 2; });
  rejects([](ExporterModelSpec& s) { s.rotary_dim = 3; });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kHeads, s.exporter = Exporter::kDynamo;
    s.causal_mask = CausalMask::kAdd;  // gpt.py masks per head
  });
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kHeads, s.head_dim = 6; });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kGpt2, s.exporter = Exporter::kDynamo;
    s.causal_mask = CausalMask::kWhere;  // eager attention is TorchScript's
  });
  rejects([](ExporterModelSpec& s) { s.opset = 11; });  // llama's forms start at opset 14
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kBert, s.opset = 9; });
  rejects([](ExporterModelSpec& s) { s.embeddings = true; });   // llama has none here
  rejects([](ExporterModelSpec& s) { s.unoptimized = true; });  // TorchScript has no optimizer
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kT5, s.causal_mask = CausalMask::kAdd;  // an encoder
  });
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kBert, s.past = true; });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kVit, s.causal_mask = CausalMask::kWhere;  // an encoder
  });
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kVit, s.padding_mask = false; });
  rejects([](ExporterModelSpec& s) { s.attention = AttentionImpl::kEager; });  // llama's is fixed
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kVit, s.opset = 11, s.attention = AttentionImpl::kSdpa;  // from 14
  });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kGpt2, s.exporter = Exporter::kDynamo, s.past = true;
  });
  rejects([](ExporterModelSpec& s) {
    s.past = true, s.causal_mask = CausalMask::kSdpa;  // is_causal is top-left aligned
  });
  rejects([](ExporterModelSpec& s) { s.one_token = true; });  // a step with past
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kBert, s.presents = true; });
  rejects([](ExporterModelSpec& s) { s.family = ModelFamily::kT5, s.merged = true; });
  rejects([](ExporterModelSpec& s) { s.presents = true, s.past = true; });  // the first step
  rejects([](ExporterModelSpec& s) { s.merged = true, s.past = true, s.one_token = true; });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kGpt2, s.exporter = Exporter::kDynamo, s.merged = true;
  });
  rejects([](ExporterModelSpec& s) { s.merged = true, s.causal_mask = CausalMask::kSdpa; });
  rejects([](ExporterModelSpec& s) { s.presents = true, s.causal_mask = CausalMask::kTo4d; });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kGpt2, s.causal_mask = CausalMask::kSdpa;  // is_causal: no mask
  });
  rejects([](ExporterModelSpec& s) {
    s.family = ModelFamily::kBert, s.causal_mask = CausalMask::kTo4d;  // an encoder
  });
  rejects(
      [](ExporterModelSpec& s) { s.family = ModelFamily::kGpt2, s.mask_sliced_by_keys = true; });
  rejects([](ExporterModelSpec& s) {
    s.mask_sliced_by_keys = true, s.causal_mask = CausalMask::kSdpa;  // no mask to slice
  });
}

// The TorchScript and dynamo forms of a decoder with past compute the same step (eager
// attention vs SDPA, cached vs computed cos/sin), and return the same present K/V.
TEST(WholeModelForms, TorchScriptAndDynamoComputeTheSameStepWithPast) {
  for (ModelFamily f : {ModelFamily::kLlama, ModelFamily::kPhi}) {
    ExporterModelSpec ts, dynamo;
    ts.family = dynamo.family = f;
    ts.past = dynamo.past = true;
    dynamo.exporter = Exporter::kDynamo;
    for (const auto& dims : kPastDims) {
      testing::OracleVerdict v =
          testing::compareInOrt(testing::makeExporterModel(ts), testing::makeExporterModel(dynamo),
                                dims, testing::oracleIntRanges(ts));
      EXPECT_TRUE(v.equal) << testing::familyName(f) << ": " << v.report;
    }
  }
}

// Every layer returns its caches as present outputs, each the Concat of the past in front of
// the new heads on the sequence axis (2).
TEST(WholeModelForms, PastModelsReturnPresentsAfterTheCache) {
  for (ModelFamily f : {ModelFamily::kGpt2, ModelFamily::kLlama, ModelFamily::kPhi}) {
    ExporterModelSpec s;
    s.family = f;
    s.past = true;
    const onnx::ModelProto m = testing::makeExporterModel(s);
    std::vector<std::string> outputs;
    for (const auto& o : m.graph().output()) outputs.push_back(o.name());
    EXPECT_EQ(outputs,
              (std::vector<std::string>{"last_hidden_state", "present_key_0", "present_value_0",
                                        "present_key_1", "present_value_1"}))
        << testing::familyName(f);
    int concats = 0;
    for (const auto& n : m.graph().node())
      if (n.op_type() == "Concat" && n.output(0).rfind("present_", 0) == 0) {
        ++concats;
        EXPECT_EQ(n.input(0).rfind("past_", 0), 0u) << n.name();
        ASSERT_EQ(n.attribute_size(), 1);
        EXPECT_EQ(n.attribute(0).i(), 2) << n.name();
      }
    EXPECT_EQ(concats, 4) << testing::familyName(f);
  }
}

// The first step returns the new K (after RoPE) and V heads of every layer as its presents:
// no Concat, no cache read, and the same function in both exporters' forms.
TEST(WholeModelForms, FirstStepModelsReturnTheNewHeadsAsPresents) {
  for (ModelFamily f : {ModelFamily::kGpt2, ModelFamily::kLlama, ModelFamily::kPhi}) {
    ExporterModelSpec s;
    s.family = f;
    s.presents = true;
    const onnx::ModelProto m = testing::makeExporterModel(s);
    std::vector<std::string> inputs, outputs;
    for (const auto& in : m.graph().input()) inputs.push_back(in.name());
    for (const auto& o : m.graph().output()) outputs.push_back(o.name());
    EXPECT_EQ(outputs,
              (std::vector<std::string>{"last_hidden_state", "present_key_0", "present_value_0",
                                        "present_key_1", "present_value_1"}))
        << testing::familyName(f);
    EXPECT_EQ(inputs[1], "attention_mask");
    EXPECT_EQ(m.graph().input(1).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
    for (const std::string& in : inputs) EXPECT_NE(in.rfind("past_", 0), 0u) << in;
    // Phi's partial rotary concatenates the pass-through dims on the last axis, never on
    // the sequence axis (2) a cache extends.
    for (const auto& n : m.graph().node()) {
      if (n.output(0).rfind("present_", 0) != 0 || n.op_type() != "Concat") continue;
      const onnx::AttributeProto* axis = testing::attribute(n, "axis");
      ASSERT_NE(axis, nullptr);
      EXPECT_NE(axis->i(), 2) << testing::familyName(f) << ": " << n.name();
    }
    if (f == ModelFamily::kGpt2) continue;  // its dynamo form is not built with a cache
    ExporterModelSpec dynamo = s;
    dynamo.exporter = Exporter::kDynamo;
    testing::OracleVerdict v = testing::compareInOrt(m, testing::makeExporterModel(dynamo), kDims,
                                                     testing::oracleIntRanges(s));
    EXPECT_TRUE(v.equal) << testing::familyName(f) << ": " << v.report;
  }
}

// The unoptimized export computes what the optimized one does, with its no-ops in the graph.
TEST(WholeModelForms, UnoptimizedDynamoExportComputesTheSameWithIdentities) {
  for (ModelFamily f : {ModelFamily::kLlama, ModelFamily::kT5}) {
    ExporterModelSpec optimized;
    optimized.family = f;
    optimized.exporter = Exporter::kDynamo;
    ExporterModelSpec raw = optimized;
    raw.unoptimized = true;
    const onnx::ModelProto m = testing::makeExporterModel(raw);
    const auto ops = testing::opTypes(m);
    EXPECT_GT(count(ops, {"Identity"}), 0) << testing::familyName(f);
    EXPECT_GT(count(ops, {"Constant"}), 0) << testing::familyName(f);
    testing::OracleVerdict v = testing::compareInOrt(testing::makeExporterModel(optimized), m,
                                                     kDims, testing::oracleIntRanges(optimized));
    EXPECT_TRUE(v.equal) << testing::familyName(f) << ": " << v.report;
  }
}

/// The model of `s` fused by the shipped rules, told the max_positions its position_ids
/// stay below (oracleIntRanges), which computed RoPE caches need stated.
onnx::ModelProto fusedModel(const ExporterModelSpec& s) {
  onnx::ModelProto m = testing::makeExporterModel(s);
  Options options;
  options.max_positions = testing::resolved(s).max_positions;
  rewrite(m, testing::shippedRules(), options);
  return m;
}

/// The op types left after the shipped rules fuse the model of `s`, sorted, without the
/// Constant nodes (an unoptimized export's literals stay as such).
std::vector<std::string> sortedFusedOps(const ExporterModelSpec& s) {
  std::vector<std::string> ops;
  for (const std::string& op : testing::opTypes(fusedModel(s)))
    if (op != "Constant") ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

// ONNX's RotaryEmbedding (opset 23) takes position_ids [B, S] only, which positions computed
// as arange(0, seq).unsqueeze(0), one row for the batch, are not: without position_ids it
// takes [B, S, H/2] caches of each token's own angles, computed when the model runs (with
// or without max_positions), and every rotary and attention fuses.
TEST(WholeModelForms, ArangePositionsRotateByCachesOfTheirOwnAnglesAtOpset23) {
  ExporterModelSpec s;
  s.exporter = Exporter::kDynamo;
  s.opset = 23;
  s.position_ids_input = false;
  const onnx::ModelProto fused = fusedModel(s);
  const std::vector<std::string> ops = testing::opTypes(fused);
  EXPECT_EQ(count(ops, {"RotaryEmbedding"}), 2 * testing::resolved(s).layers);
  EXPECT_EQ(count(ops, {"Attention"}), testing::resolved(s).layers);
  for (const auto& node : fused.graph().node())
    if (node.op_type() == "RotaryEmbedding") {
      EXPECT_EQ(node.input_size(), 3) << "no position_ids";
    }
  testing::OracleVerdict v = testing::compareInOrt(testing::makeExporterModel(s), fused, kDims,
                                                   testing::oracleIntRanges(s));
  EXPECT_TRUE(v.equal) << v.report;
}

// Once canonicalized, the unoptimized export is the optimized one: the same ops remain after
// fusion, except the Constant nodes its literals stay.
TEST(WholeModelForms, UnoptimizedDynamoExportFusesToTheOptimizedOnesOps) {
  for (ModelFamily f : {ModelFamily::kLlama, ModelFamily::kT5, ModelFamily::kBert}) {
    ExporterModelSpec optimized;
    optimized.family = f;
    optimized.exporter = Exporter::kDynamo;
    optimized.embeddings = f == ModelFamily::kBert;
    ExporterModelSpec raw = optimized;
    raw.unoptimized = true;
    EXPECT_EQ(sortedFusedOps(raw), sortedFusedOps(optimized)) << testing::familyName(f);
  }
}

// transformers 4.38 and later slice the mask to the keys' length read after repeat_kv, a
// value the attention rules replace: without slice_whole, LLaMA's attention fused only as
// MultiHeadAttention on the repeated K/V heads, and Phi's kept the repeat. With it, both
// fuse exactly as the export without the slice (ORT parity: the parametrized cases).
TEST(WholeModelForms, MaskSlicedToTheKeysFusesAsTheUnslicedExport) {
  for (ModelFamily f : {ModelFamily::kLlama, ModelFamily::kPhi})
    for (Exporter e : {Exporter::kTorchScript, Exporter::kDynamo}) {
      ExporterModelSpec plain;
      plain.family = f;
      plain.exporter = e;
      ExporterModelSpec sliced = plain;
      sliced.mask_sliced_by_keys = true;
      EXPECT_EQ(sortedFusedOps(sliced), sortedFusedOps(plain))
          << testing::familyName(f) << " " << testing::exporterName(e);
    }
}

// A first step whose presents are declared [batch, N, total, H]: the keys' length is then
// 'total', which the mask's 'seq' cannot be proven equal to, so the slice stays and the
// attention cuts the mask again (without the declared dims slice_whole drops it: fewer ops,
// which is why this is not a WholeModel case, whose checks include that comparison).
TEST(WholeModelForms, FirstStepWithTheMaskSlicedToDeclaredPresentsFusesOneAttentionPerLayer) {
  for (Exporter e : {Exporter::kTorchScript, Exporter::kDynamo}) {
    ExporterModelSpec s;
    s.family = ModelFamily::kPhi;
    s.exporter = e;
    s.presents = true;
    s.mask_sliced_by_keys = true;
    const onnx::ModelProto fused = fusedModel(s);
    const std::vector<std::string> ops = testing::opTypes(fused);
    EXPECT_EQ(count(ops, {"com.microsoft::MultiHeadAttention"}), 2) << testing::exporterName(e);
    EXPECT_EQ(count(ops, {"Softmax"}), 0) << testing::exporterName(e);
    testing::OracleVerdict v = testing::compareInOrt(testing::makeExporterModel(s), fused, kDims,
                                                     testing::oracleIntRanges(s));
    EXPECT_TRUE(v.equal) << testing::exporterName(e) << ": " << v.report;
  }
}

// torch 2.1-2.3's dynamo exports: the model a function, each op a torchlib function call.
// Inlined first, as ONNX Runtime does at load, they fuse to the ops of the flat export
// (whose value_info withLocalFunctions drops, as the values now live in a function body),
// and compute the same; without inlining (Options::inline_functions false) nothing fuses
// across the calls.
TEST(WholeModelForms, ExportsMadeOfLocalFunctionsFuseAsTheFlatExport) {
  for (ModelFamily f : {ModelFamily::kLlama, ModelFamily::kBert, ModelFamily::kGpt2}) {
    ExporterModelSpec s;
    s.family = f;
    s.exporter = f == ModelFamily::kGpt2 ? Exporter::kTorchScript : Exporter::kDynamo;
    s.embeddings = f == ModelFamily::kBert;
    Options options;
    options.max_positions = testing::resolved(s).max_positions;
    auto sortedFusedOps = [&](onnx::ModelProto m, const Options& o) {
      Result r = rewrite(m, testing::shippedRules(), o);
      std::vector<std::string> ops = testing::opTypes(m);
      std::sort(ops.begin(), ops.end());
      return std::make_pair(ops, m);
    };
    onnx::ModelProto flat = testing::makeExporterModel(s);
    flat.mutable_graph()->clear_value_info();
    const onnx::ModelProto nested = testing::withLocalFunctions(flat);
    ASSERT_EQ(testing::opTypes(nested), std::vector<std::string>{"pkg.torch.modules::Model"});
    auto [nested_ops, fused] = sortedFusedOps(nested, options);
    EXPECT_EQ(nested_ops, sortedFusedOps(flat, options).first) << testing::familyName(f);
    EXPECT_EQ(fused.functions_size(), 0) << testing::familyName(f);
    EXPECT_LT(nested_ops.size(), testing::opTypes(flat).size()) << testing::familyName(f);
    testing::OracleVerdict v =
        testing::compareInOrt(nested, fused, kDims, testing::oracleIntRanges(s));
    EXPECT_TRUE(v.equal) << testing::familyName(f) << ": " << v.report;

    Options kept = options;
    kept.inline_functions = false;
    auto [kept_ops, unfused] = sortedFusedOps(nested, kept);
    EXPECT_EQ(kept_ops, std::vector<std::string>{"pkg.torch.modules::Model"});
    EXPECT_EQ(unfused.functions_size(), nested.functions_size());
  }
}

// The scores' constant factor counted once: torchlib's SDPA scales Q and K^T apart by
// H^-1/4. When the rule's K^T check fails on the Mul's input and passes on its output, the
// scores fragment must not take the Mul's output as K^T itself: attention_scale, which reads
// the factors off the graph, would count that factor a second time. The model's value_info
// sets that up (K^T's head size a symbol, the scaled K^T's static), and only
// multi_head_attention_kv_given runs (packed_attention, which checks no K^T shape, would
// take the whole block first).
TEST(WholeModelForms, ScaledKeyHeadsAreNeverScaledTwice) {
  ExporterModelSpec s;
  s.family = ModelFamily::kBert;
  s.exporter = Exporter::kDynamo;
  s.embeddings = true;
  const ExporterModelSpec r = testing::resolved(s);
  onnx::ModelProto m = testing::makeExporterModel(s);
  onnx::GraphProto& g = *m.mutable_graph();
  g.clear_value_info();
  auto declare = [&](const std::string& name, std::vector<std::string> dims) {
    onnx::ValueInfoProto& v = *g.add_value_info();
    v.set_name(name);
    auto& t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) {
      auto& dim = *t.mutable_shape()->add_dim();
      if (std::isdigit(static_cast<unsigned char>(d[0])))
        dim.set_dim_value(std::stoll(d));
      else
        dim.set_dim_param(d);
    }
  };
  int scaled_keys = 0;
  for (const onnx::NodeProto& n : g.node()) {
    if (n.op_type() != "Mul") continue;
    const onnx::NodeProto* t = nullptr;
    for (const onnx::NodeProto& p : g.node())
      if (p.output(0) == n.input(0) && p.op_type() == "Transpose") t = &p;
    const onnx::AttributeProto* perm = t ? testing::attribute(*t, "perm") : nullptr;
    if (!perm || perm->ints_size() != 4 || perm->ints(2) != 3) continue;
    const std::string heads = std::to_string(r.heads);
    declare(t->output(0), {"batch", heads, "head_size", "seq"});
    declare(n.output(0), {"batch", heads, std::to_string(r.hidden / r.heads), "seq"});
    ++scaled_keys;
  }
  ASSERT_EQ(scaled_keys, r.layers) << "one scaled K^T per layer";
  onnx::ModelProto fused = m;
  Options only_kv_given;
  only_kv_given.filter.only = "^multi_head_attention_kv_given$";
  rewrite(fused, testing::shippedRules(), only_kv_given);
  testing::OracleVerdict v = testing::compareInOrt(m, fused, kDims, testing::oracleIntRanges(s));
  EXPECT_TRUE(v.equal) << v.report;
}

// An Identity reads RMSNorm's Reciprocal in torch 2.4's unoptimized exports: the form the
// canonicalization rules exist for.
TEST(WholeModelForms, UnoptimizedRmsNormReadsItsReciprocalThroughAnIdentity) {
  ExporterModelSpec s;
  s.exporter = Exporter::kDynamo;
  s.unoptimized = true;
  const onnx::ModelProto m = testing::makeExporterModel(s);
  std::set<std::string> reciprocals;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Reciprocal") reciprocals.insert(n.output(0));
  int read = 0;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Identity" && reciprocals.count(n.input(0))) ++read;
  EXPECT_EQ(read, static_cast<int>(reciprocals.size()));
  EXPECT_GT(read, 0);
}

// ---- fused-op counts, one test per rule family ---------------------------------------------

TEST_P(WholeModel, FusesOneAttentionPerLayer) {
  const auto ops = fused();
  std::set<std::string> kinds = {"com.microsoft::Attention", "com.microsoft::MultiHeadAttention",
                                 "com.microsoft::GroupQueryAttention"};
  if (spec().opset >= 23) kinds.insert("Attention");
  EXPECT_EQ(count(ops, kinds), expected().attention) << summary(ops);
  EXPECT_EQ(count(ops, {"Softmax"}), 0) << summary(ops);
}

// With a cache, LLaMA's attention is GroupQueryAttention on past_key/past_value only for a
// one-token step: ONNX Runtime's kernel refuses S > 1 with a cache unless the batch is 1,
// so steps of symbolic length are MultiHeadAttention on the concatenated K/V heads (as
// GPT-2's and Phi's), the presents still computed by their Concats. From opset 23 the
// standard Attention takes the concatenated heads.
// GPT-2's stacked cache without a padding mask is com.microsoft.Attention with past, whose
// present output is the model's present_i itself.
TEST_P(WholeModel, FusesAttentionOnTheCacheIntoTheOpThatRunsEveryStep) {
  if (!spec().past) GTEST_SKIP() << "no cache";
  onnx::ModelProto out;
  const auto ops = fused(&out);
  const bool packed = spec().stacked_past && !spec().padding_mask;
  const std::string kind = testing::resolved(spec()).opset >= 23 ? "Attention"
                           : spec().one_token && spec().family == ModelFamily::kLlama
                               ? "com.microsoft::GroupQueryAttention"
                           : packed ? "com.microsoft::Attention"
                                    : "com.microsoft::MultiHeadAttention";
  for (const char* op : {"Attention", "com.microsoft::GroupQueryAttention",
                         "com.microsoft::MultiHeadAttention", "com.microsoft::Attention"})
    EXPECT_EQ(count(ops, {op}), op == kind ? expected().attention : 0)
        << op << ": " << summary(ops);
  if (!packed) return;
  int presents = 0;
  for (const auto& n : out.graph().node())
    if (n.op_type() == "Attention" && n.domain() == "com.microsoft") {
      ASSERT_EQ(n.output_size(), 2) << n.name();
      EXPECT_EQ(n.output(1), "present_" + std::to_string(presents++)) << n.name();
    }
  EXPECT_EQ(count(ops, {"Concat", "Gather", "Split", "Transpose"}), 0) << summary(ops);
}

// With --enable mask_index, each layer's Attention reads the raw [batch, seq] attention_mask
// (expanded to its input's [batch, seq], cast to int32) as its mask_index, with finfo.min as
// mask_filter_value: never EmbedLayerNormalization's 1-D mask_index (which would also
// assume right padding), and no attention_bias. The padding mask BERT computes once for all
// layers is gone. The counts of every fused op are the other tests'.
TEST_P(WholeModel, PassesThePaddingMaskAsMaskIndexWhenEnabled) {
  if (GetParam().enable != "mask_index") GTEST_SKIP() << "mask_index not enabled";
  onnx::ModelProto m;
  const auto ops = fused(&m);
  std::map<std::string, const onnx::NodeProto*> producers;
  for (const onnx::NodeProto& n : m.graph().node())
    for (const std::string& out : n.output()) producers[out] = &n;
  int attention = 0;
  for (const onnx::NodeProto& n : m.graph().node()) {
    if (n.op_type() != "Attention" || n.domain() != "com.microsoft") continue;
    ++attention;
    ASSERT_EQ(n.input_size(), 4) << "input, weights, bias, mask_index; no attention_bias";
    const onnx::NodeProto* cast = producers[n.input(3)];
    ASSERT_NE(cast, nullptr) << n.input(3);
    ASSERT_EQ(cast->op_type(), "Cast");
    const onnx::AttributeProto* to = testing::attribute(*cast, "to");
    ASSERT_NE(to, nullptr);
    EXPECT_EQ(to->i(), onnx::TensorProto::INT32);
    const onnx::NodeProto* expand = producers[cast->input(0)];
    ASSERT_NE(expand, nullptr) << cast->input(0);
    EXPECT_EQ(expand->op_type(), "Expand") << "to x's [batch, seq]";
    EXPECT_EQ(expand->input(0), "attention_mask");
    const onnx::AttributeProto* fill = testing::attribute(n, "mask_filter_value");
    ASSERT_NE(fill, nullptr);
    EXPECT_FLOAT_EQ(fill->f(), std::numeric_limits<float>::lowest());
  }
  EXPECT_EQ(attention, expected().attention) << summary(ops);
  // The mask's (1 - m) * finfo.min, and the attention_bias shapes: one Expand per layer,
  // the mask's to [batch, seq].
  EXPECT_EQ(count(ops, {"Sub", "Mul", "Unsqueeze", "Concat"}), 0) << summary(ops);
  EXPECT_EQ(count(ops, {"Expand"}), expected().attention) << summary(ops);
}

TEST_P(WholeModel, FusesEveryNorm) {
  const auto ops = fused();
  const auto e = expected();
  EXPECT_EQ(count(ops, {"LayerNormalization"}), e.layer_norm) << summary(ops);
  EXPECT_EQ(count(ops, {"com.microsoft::SkipLayerNormalization"}), e.skip_layer_norm)
      << summary(ops);
  EXPECT_EQ(count(ops, {"SimplifiedLayerNormalization", "RMSNormalization"}), e.simplified_norm)
      << summary(ops);
  EXPECT_EQ(count(ops, {"com.microsoft::SkipSimplifiedLayerNormalization"}), e.skip_simplified)
      << summary(ops);
  EXPECT_EQ(count(ops, {"ReduceMean"}), 0) << summary(ops);
}

TEST_P(WholeModel, FusesRotaryForQueryAndKey) {
  const auto ops = fused();
  EXPECT_EQ(count(ops, {"com.microsoft::RotaryEmbedding", "RotaryEmbedding"}), expected().rotary)
      << summary(ops);
  EXPECT_EQ(count(ops, {"Neg"}), 0) << summary(ops);
}

TEST_P(WholeModel, FusesTheEmbeddingsIntoEmbedLayerNormalization) {
  const auto ops = fused();
  EXPECT_EQ(count(ops, {"com.microsoft::EmbedLayerNormalization"}), expected().embed_layer_norm)
      << summary(ops);
}

// Canonicalization leaves no Identity an exporter wrote, however many it wrote.
TEST_P(WholeModel, KeepsNoIdentity) {
  const auto ops = fused();
  EXPECT_EQ(count(ops, {"Identity"}), 0) << summary(ops);
}

// BERT exported without attention_mask: the mask it builds from ones is zero everywhere and
// goes with its Add; nothing of it stays beside the fused attention. From input_ids the
// exporter's value_info loses seq past the position_ids slice (an unk__ dim): the Add of
// the zero cannot be proven not to widen the scores, so it stays, and the attention fuses
// with it.
TEST_P(WholeModel, DropsTheMaskOfOnesItBuildsWithoutAMaskInput) {
  if (spec().padding_mask || spec().family != ModelFamily::kBert || spec().embeddings)
    GTEST_SKIP() << "not BERT from hidden states without attention_mask";
  const auto ops = fused();
  EXPECT_EQ(count(ops, {"ConstantOfShape", "Expand", "Sub", "Mul", "Where"}), 0) << summary(ops);
}

TEST_P(WholeModel, FusesEveryGelu) {
  const auto ops = fused();
  EXPECT_EQ(count(ops, {"com.microsoft::Gelu", "com.microsoft::BiasGelu", "com.microsoft::FastGelu",
                        "com.microsoft::QuickGelu", "Gelu"}),
            expected().gelu)
      << summary(ops);
  EXPECT_EQ(count(ops, {"Erf", "Tanh", "Sigmoid"}), 0) << summary(ops);
}

// ONNX's default domain may be spelled "ai.onnx" in imports and nodes (ONNX Runtime reads
// both alike): every rule and native helper must see the same model.
TEST_P(WholeModel, FusesTheSameWhenTheOnnxDomainIsSpelledAiOnnx) {
  onnx::ModelProto m = model();
  for (onnx::OperatorSetIdProto& o : *m.mutable_opset_import())
    if (o.domain().empty()) o.set_domain("ai.onnx");
  for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node())
    if (n.domain().empty()) n.set_domain("ai.onnx");
  rewrite(m, testing::shippedRules(), options());
  std::vector<std::string> ops = testing::opTypes(m), plain = fused();
  std::sort(ops.begin(), ops.end());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(ops, plain) << summary(ops);
}

// ---- numerics ------------------------------------------------------------------------------

// Four seeds: a query row whose every visible key is padded (where the targets' masking
// differs most from Softmax's) comes only from some draws of attention_mask.
// Real exports do not all carry value_info (tf2onnx's, hand-built graphs, an optimizer
// that dropped them) or shaped outputs: our inference alone must size what the rules need
// (a cache's length P + S, which a present output's dim would otherwise name).
TEST_P(WholeModel, FusesTheSameWithoutTheExportersValueInfo) {
  onnx::ModelProto bare = model();
  bare.mutable_graph()->clear_value_info();
  for (onnx::ValueInfoProto& out : *bare.mutable_graph()->mutable_output())
    out.mutable_type()->mutable_tensor_type()->clear_shape();
  Result r = rewrite(bare, testing::shippedRules(), options());
  std::vector<std::string> without = testing::opTypes(bare);
  std::vector<std::string> with = fused();
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  EXPECT_EQ(without, with) << summary(without);
}

TEST_P(WholeModel, FusedModelComputesTheSameInOrt) {
  onnx::ModelProto before = model();
  onnx::ModelProto after;
  fused(&after);
  for (const auto& dims : dimSets()) {
    testing::OracleVerdict v =
        testing::compareInOrt(before, after, dims, testing::oracleIntRanges(spec()) + " --runs 4");
    EXPECT_TRUE(v.equal) << ::testing::PrintToString(dims) << ": " << v.report;
  }
}

// ---- inference rounds -------------------------------------------------------------------

// Per-head attention slices its causal mask by a length read at run time, so inference loses
// the sequence dim past each attention; once the heads are one MultiHeadAttention, inference
// sizes its output and the next layer's residual Adds fuse into SkipLayerNormalization.
TEST(InferenceRounds, InferShapesAgainPastFusedOpsUntilNothingNewFuses) {
  ExporterModelSpec s;
  s.family = ModelFamily::kHeads;
  s.layers = 3;
  const onnx::ModelProto model = testing::makeExporterModel(s);
  onnx::ModelProto rounds = model;
  const Result r = rewrite(rounds, testing::shippedRules());
  EXPECT_EQ(r.inference_rounds, 2);
  EXPECT_NE(r.toJson().find("\"inference_rounds\": 2"), std::string::npos);
  const auto ops = testing::opTypes(rounds);
  EXPECT_EQ(count(ops, {"com.microsoft::SkipLayerNormalization"}), 6)
      << ::testing::PrintToString(ops);
  EXPECT_EQ(count(ops, {"com.microsoft::MultiHeadAttention"}), 3) << ::testing::PrintToString(ops);

  onnx::ModelProto one = model;
  Options options;
  options.max_inference_rounds = 1;
  EXPECT_EQ(rewrite(one, testing::shippedRules(), options).inference_rounds, 1);
  EXPECT_LT(count(testing::opTypes(one), {"com.microsoft::SkipLayerNormalization"}), 6)
      << "without a second round the residuals past the first attention stay unfused";

  onnx::ModelProto untouched = model;
  options.max_inference_rounds = 0;
  EXPECT_THROW(rewrite(untouched, testing::shippedRules(), options), std::invalid_argument);
  EXPECT_EQ(untouched.SerializeAsString(), model.SerializeAsString());
}

TEST(InferenceRounds, OneRoundWhenFusedOpsKeepTheirShapes) {
  ExporterModelSpec s;
  s.family = ModelFamily::kBert;
  onnx::ModelProto model = testing::makeExporterModel(s);
  EXPECT_EQ(rewrite(model, testing::shippedRules()).inference_rounds, 1);
}

INSTANTIATE_TEST_SUITE_P(Exporters, WholeModel, ::testing::ValuesIn(wholeModelCases()),
                         [](const ::testing::TestParamInfo<WholeModelCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace onnx_rewrite
