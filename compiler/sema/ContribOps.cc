//===- ContribOps.cc - the ONNX Runtime contrib ops rules emit, in C++ ----===//
//
// Each signature was read from ONNX Runtime's schema sources (bert_defs.cc,
// contrib_defs.cc) and ContribOperators.md, then checked against the ONNX
// Runtime the oracle tests run (onnxruntime-node 1.30): a model using the op was
// loaded, and ORT's schema checker confirmed the input and output count range,
// which inputs may be left empty, and every attribute's name and type, and
// rejected an unknown attribute (except where ORT allows unchecked attributes).
// docs/target-ops.md records the result per op.
//
// Defaults: where ORT's schema gives a default it is used. Where the schema has
// none but its documentation states the value the kernel applies ("Default value
// is 0"), that value is used so absent attributes match as the kernel reads them;
// docs/target-ops.md marks those. Attributes whose default is computed (scale =
// 1/sqrt(head_size)) have none.
//
//===----------------------------------------------------------------------===//
#include "compiler/sema/ContribOps.h"

#include <string>
#include <utility>

namespace onnx_rewrite {
namespace {

ir::Literal i(int64_t v) { return ir::Literal{ir::Literal::Kind::kInt, {v}, {}, {}}; }
ir::Literal f(double v) { return ir::Literal{ir::Literal::Kind::kFloat, {}, {v}, {}}; }
ir::Literal s(std::string v) {
  return ir::Literal{ir::Literal::Kind::kString, {}, {}, {std::move(v)}};
}

/// Parameters from names, '?' marking optional ones.
std::vector<ir::OpDecl::Param> params(std::initializer_list<const char*> names) {
  std::vector<ir::OpDecl::Param> out;
  for (std::string name : names) {
    ir::OpDecl::Param p;
    if (!name.empty() && name.back() == '?') {
      p.optional = true;
      name.pop_back();
    }
    p.name = name;
    out.push_back(std::move(p));
  }
  return out;
}

ir::OpDecl::Attr attr(std::string name, std::string type, std::optional<ir::Literal> def = {}) {
  return ir::OpDecl::Attr{std::move(name), std::move(type), false, std::move(def)};
}

ir::OpDecl::Attr required(std::string name, std::string type) {
  return ir::OpDecl::Attr{std::move(name), std::move(type), true, std::nullopt};
}

ir::OpDecl decl(std::string domain, std::string op, std::initializer_list<const char*> inputs,
                std::initializer_list<const char*> outputs, std::vector<ir::OpDecl::Attr> attrs,
                std::string doc) {
  ir::OpDecl d;
  d.domain = std::move(domain);
  d.op = std::move(op);
  d.since_version = 1;
  d.inputs = params(inputs);
  d.outputs = params(outputs);
  d.attrs = std::move(attrs);
  d.doc = std::move(doc);
  d.loc = ir::SourceLoc{"compiler/sema/ContribOps.cc", 0, 0};
  return d;
}

constexpr const char* kMs = "com.microsoft";

}  // namespace

std::vector<ir::OpDecl> contribOpDecls() {
  std::vector<ir::OpDecl> ops;

  // ---- Activations -------------------------------------------------------------------
  ops.push_back(decl(kMs, "Gelu", {"X"}, {"Y"}, {}, "GELU with the exact erf formula."));
  ops.push_back(decl(kMs, "FastGelu", {"X", "bias?"}, {"Y"}, {},
                     "GELU with the tanh approximation, after adding an optional bias."));
  ops.push_back(decl(kMs, "BiasGelu", {"A", "B"}, {"C"}, {}, "Exact GELU of A plus a 1-D bias B."));
  ops.push_back(decl(kMs, "QuickGelu", {"X"}, {"Y"}, {attr("alpha", "float", f(1.702))},
                     "x * Sigmoid(alpha * x)."));

  // ---- Normalisation -----------------------------------------------------------------
  ops.push_back(decl(kMs, "SkipLayerNormalization", {"input", "skip", "gamma", "beta?", "bias?"},
                     {"output", "mean?", "inv_std_var?", "input_skip_bias_sum?"},
                     {attr("epsilon", "float", f(1e-12))},
                     "LayerNormalization of input + skip (+ bias); output 3 is that sum."));
  ops.push_back(decl(kMs, "EmbedLayerNormalization",
                     {"input_ids", "segment_ids?", "word_embedding", "position_embedding",
                      "segment_embedding?", "gamma", "beta", "mask?", "position_ids?"},
                     {"output", "mask_index", "embedding_sum?"},
                     {attr("epsilon", "float", f(1e-12)), attr("mask_index_type", "int")},
                     "LayerNormalization of word + position (+ segment) embeddings looked up by "
                     "int32 ids; output 1 counts the ones of each mask row."));
  ops.push_back(decl(kMs, "SkipSimplifiedLayerNormalization", {"input", "skip", "gamma", "bias?"},
                     {"output", "mean?", "inv_std_var?", "input_skip_bias_sum?"},
                     {attr("epsilon", "float", f(1e-12))},
                     "RMS normalisation of input + skip (+ bias); output 3 is that sum."));
  // ONNX Runtime registers these two in the ONNX domain "", since version 1.
  ops.push_back(decl("", "SimplifiedLayerNormalization", {"X", "scale"}, {"Y", "inv_std_var?"},
                     {attr("axis", "int", i(-1)), attr("epsilon", "float", f(1e-5)),
                      attr("stash_type", "int", i(1))},
                     "RMS normalisation (ONNX Runtime op in the ONNX domain)."));
  ops.push_back(decl("", "LayerNormalization", {"X", "scale", "B?"}, {"Y", "mean?", "inv_std_var?"},
                     {attr("axis", "int", i(-1)), attr("epsilon", "float", f(1e-5)),
                      attr("stash_type", "int", i(1))},
                     "ONNX Runtime's LayerNormalization below opset 17, where ONNX has none."));

  // ---- Rotary embedding and attention ------------------------------------------------
  ops.push_back(decl(kMs, "RotaryEmbedding", {"input", "position_ids", "cos_cache", "sin_cache"},
                     {"output"},
                     {attr("interleaved", "int", i(0)), attr("is_packed_batching", "int", i(0)),
                      attr("num_heads", "int", i(0)), attr("rotary_embedding_dim", "int", i(0)),
                      attr("scale", "float", f(1.0))},
                     "RoPE; note the input order differs from ONNX's RotaryEmbedding-23."));
  ops.push_back(decl(
      kMs, "Attention",
      {"input", "weights", "bias?", "mask_index?", "past?", "attention_bias?",
       "past_sequence_length?"},
      {"output", "present?"},
      {required("num_heads", "int"), attr("do_rotary", "int", i(0)),
       attr("mask_filter_value", "float", f(-10000.0)), attr("past_present_share_buffer", "int"),
       attr("qkv_hidden_sizes", "ints"), attr("rotary_embedding_dim", "int"),
       attr("scale", "float"), attr("unidirectional", "int", i(0))},
      "Self-attention with the Q/K/V projection (merged weights) included."));
  ops.push_back(decl(kMs, "MultiHeadAttention",
                     {"query", "key?", "value?", "bias?", "key_padding_mask?", "attention_bias?",
                      "past_key?", "past_value?", "past_sequence_length?", "cache_indirection?"},
                     {"output", "present_key?", "present_value?", "qk?"},
                     {required("num_heads", "int"), attr("mask_filter_value", "float", f(-10000.0)),
                      attr("scale", "float"), attr("unidirectional", "int", i(0))},
                     "Multi-head self or cross attention on projected Q, K, V."));
  ops.push_back(decl(
      kMs, "GroupQueryAttention",
      {"query", "key?", "value?", "past_key?", "past_value?", "seqlens_k", "total_sequence_length",
       "cos_cache?", "sin_cache?", "position_ids?", "attention_bias?", "head_sink?", "k_scale?",
       "v_scale?", "q_norm_weight?", "k_norm_weight?"},
      {"output", "present_key?", "present_value?", "output_qk?"},
      {required("kv_num_heads", "int"), required("num_heads", "int"), attr("causal", "int", i(1)),
       attr("do_rotary", "int", i(0)), attr("k_quant_type", "string", s("NONE")),
       attr("kv_cache_bit_width", "int"), attr("local_window_size", "int", i(-1)),
       attr("qk_norm_epsilon", "float", f(1e-6)), attr("qk_output", "int", i(0)),
       attr("rotary_interleaved", "int", i(0)), attr("scale", "float"),
       attr("sliding_window_cache", "int", i(0)), attr("smooth_softmax", "int", i(-1)),
       attr("softcap", "float", f(0.0)), attr("v_quant_type", "string", s("NONE"))},
      "Grouped-query attention with a KV cache; seqlens_k and total_sequence_length are int32."));

  // ---- MatMul ------------------------------------------------------------------------
  ops.push_back(decl(
      kMs, "FusedMatMul", {"A", "B"}, {"Y"},
      {attr("alpha", "float", f(1.0)), attr("transA", "int", i(0)), attr("transB", "int", i(0)),
       attr("transBatchA", "int", i(0)), attr("transBatchB", "int", i(0))},
      "alpha * MatMul(A, B) with either operand transposed."));
  return ops;
}

}  // namespace onnx_rewrite
