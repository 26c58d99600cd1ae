//===- Gpt2PastModels.h - GPT-2 attention with a key/value cache --------===//
//
// One GPT-2 attention block with past, in ONNX text format, as torch.onnx (TorchScript,
// opsets 10-13) exports transformers 2.x-3.x GPT2Attention: one Q/K/V projection split in
// three, heads [B, N, S, H], the cached K and V (past: [2, B, N, P, H]) concatenated in
// front of the new ones, present = stack(K, V) as an output, scores divided by sqrt(H),
// the causal slice of a tril buffer by the scores' own lengths (nd, ns = w.size(-2),
// w.size(-1)), Where(slice, w, fill), the padding mask's Add, Softmax, V, merge; or, as
// transformers 4.x writes it, the slice by the lengths of the Q heads and the K heads.
// Hidden size 8, 2 heads of 4. Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tests/support/AttentionModels.h"

namespace onnx_rewrite::testing {

struct Gpt2PastSpec {
  int opset = 11;
  /// transformers 2.x keeps K transposed in the cache ([B, N, H, P] after
  /// past[0].transpose(-2, -1)) and concatenates on the last axis; 3.x keeps K as heads,
  /// concatenates on axis -2 and transposes after.
  bool k_cached_transposed = true;
  /// The padding mask: Add of (1 - attention_mask[B, T]) * -10000 unsqueezed to [B, 1, 1, T].
  bool padding_mask = true;
  /// transformers 4.x: the causal slice reads the lengths of the Q heads and of the
  /// concatenated K heads (query.size(-2), key.size(-2)) instead of the scores' own.
  bool causal_by_heads = false;
  /// With causal_by_heads: each size read as Gather(Shape(heads), index) of this index
  /// ("2", or "-2" when the exporter does not know the rank), as torch >= 1.13 traces
  /// x.size(-2), instead of torch 1.x's Squeeze(Slice(Shape, -2, -1)). Empty: the Slice.
  std::string size_index;
  /// The causal buffer's element type: float (gpt2) or uint8 (ORT's tools); bool needs no Cast.
  std::string tril_type = "float";
  /// One new token per step (x: [B, 1, 8]), as a decoding graph exported with past is fed.
  bool one_token = false;
  /// x is the new hidden states plus their positions' embedding: Gather(wpe [16, 8],
  /// Range(P, P + S)), the position ids transformers builds from the past length.
  bool position_embedding = false;
  /// The merge Reshape's target read at run time from the context heads, as torch 1.x
  /// writes a.size(0), a.size(1), a.size(-2) * a.size(-1), instead of a constant.
  bool merge_shape_computed = false;
  /// The cache's halves taken by Split(past, [1, 1]) and Squeezes instead of Gathers.
  bool past_split = false;
  // ---- one field per condition a negative test breaks ----
  /// finfo.min, as transformers 4.x fills (2.x-3.x's masked_bias of -1e4 is exact only
  /// without the padding mask after it: exact_fill).
  std::string fill = "-3.4028234663852886e38";
  std::string rows_start = "d";  ///< the causal rows start at ns - nd
  std::string softmax_axis = "3";
  bool tril_above_diagonal = false;  ///< the buffer holds a 1 at (0, 1): not tril(ones)
  std::string past_k_index = "i0";   ///< the past half K is read from
  bool new_heads_first = false;      ///< K and V concatenated as Concat(new, cache)
};

inline std::string gpt2PastModel(const Gpt2PastSpec& s) {
  const bool attrs = s.opset < 13;  // Split/Squeeze/Unsqueeze parameters as attributes
  std::string body, inits;
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  auto unsqueeze = [&](const std::string& out, const std::string& in) {
    body += onAxis0("Unsqueeze", s.opset, out, in);
  };
  auto squeeze = [&](const std::string& out, const std::string& in) {
    body += onAxis0("Squeeze", s.opset, out, in);
  };
  init("float[8, 24] wqkv = " + attentionWeights(8, 24, 4));
  init("float[24] bqkv = " + attentionWeights(1, 24, 5));
  init("int64[4] head_shape = {0, 0, 2, 4}");
  init("int64[3] out_shape = {0, 0, 8}");
  init("int64 i0 = {0}");
  init("int64 i1 = {1}");
  init("int64[1] ax0 = {0}");
  init("int64[1] one = {1}");
  init("int64[1] zero = {0}");
  init("int64[1] ax2 = {2}");
  init("int64[1] ax3 = {3}");
  init("int64[1] last = {-1}");
  init("int64[1] second_last = {-2}");
  init("int64[1] big = {9223372036854775807}");
  init("float scale = {2.0}");
  init("float fill = {" + s.fill + "}");
  init("float f_one = {1.0}");
  init("float f_mask = {-10000.0}");
  std::string tril;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      tril += std::string(tril.empty() ? "" : ", ") +
              (j <= i || (s.tril_above_diagonal && i == 0 && j == 1)
                   ? (s.tril_type == "float" ? "1.0" : "1")
                   : (s.tril_type == "float" ? "0.0" : "0"));
  init(s.tril_type + "[1, 1, 16, 16] tril = {" + tril + "}");

  const std::string seq = s.one_token ? "1" : "S";
  std::string x = "x";
  if (s.position_embedding) {
    init("float[16, 8] wpe = " + attentionWeights(16, 8, 6));
    body += "past_shape = Shape(past)\npast_len_1 = Slice(past_shape, second_last, last, zero)\n";
    squeeze("past_len", "past_len_1");
    body += "x_shape = Shape(x)\nnew_len = Gather <axis = 0> (x_shape, i1)\n";
    body += "total_len = Add(past_len, new_len)\n";
    body += "positions = Range(past_len, total_len, i1)\n";
    unsqueeze("position_ids", "positions");
    body += "position_embeds = Gather(wpe, position_ids)\nxp = Add(x, position_embeds)\n";
    x = "xp";
  }
  body += "qkvm = MatMul(" + x + ", wqkv)\nqkv = Add(qkvm, bqkv)\n";
  if (attrs) {
    body += "q, k, v = Split <axis = 2, split = [8, 8, 8]> (qkv)\n";
  } else {
    init("int64[3] qkv_split = {8, 8, 8}");
    body += "q, k, v = Split <axis = 2> (qkv, qkv_split)\n";
  }
  body += "qr = Reshape(q, head_shape)\nqh = Transpose <perm = [0, 2, 1, 3]> (qr)\n";
  body += "kr = Reshape(k, head_shape)\nvr = Reshape(v, head_shape)\n";
  body += "vh = Transpose <perm = [0, 2, 1, 3]> (vr)\n";
  if (s.past_split) {
    // torch.unbind as the ONNX Runtime tests write it: Split in [1, 1], then Squeezes.
    if (attrs) {
      body += "sk, sv = Split <axis = 0, split = [1, 1]> (past)\n";
    } else {
      init("int64[2] halves = {1, 1}");
      body += "sk, sv = Split <axis = 0> (past, halves)\n";
    }
    squeeze("pk", "sk");
    squeeze("pv", "sv");
  } else {
    body += "pk = Gather <axis = 0> (past, " + s.past_k_index + ")\n";
    body += "pv = Gather <axis = 0> (past, i1)\n";
  }
  body += s.new_heads_first ? "vc = Concat <axis = -2> (vh, pv)\n"
                            : "vc = Concat <axis = -2> (pv, vh)\n";
  if (s.k_cached_transposed) {
    body += "kt_new = Transpose <perm = [0, 2, 3, 1]> (kr)\n";
    body += "pk_t = Transpose <perm = [0, 1, 3, 2]> (pk)\n";
    body += "kt = Concat <axis = -1> (pk_t, kt_new)\n";
    body += "kc = Transpose <perm = [0, 1, 3, 2]> (kt)\n";
  } else {
    body += "kh = Transpose <perm = [0, 2, 1, 3]> (kr)\n";
    body += s.new_heads_first ? "kc = Concat <axis = -2> (kh, pk)\n"
                              : "kc = Concat <axis = -2> (pk, kh)\n";
    body += "kt = Transpose <perm = [0, 1, 3, 2]> (kc)\n";
  }
  unsqueeze("pres_k", "kc");
  unsqueeze("pres_v", "vc");
  body += "present = Concat <axis = 0> (pres_k, pres_v)\n";
  body += "qk = MatMul(qh, kt)\nw = Div(qk, scale)\n";
  if (s.causal_by_heads && !s.size_index.empty()) {
    init("int64 size_i = {" + s.size_index + "}");
    body += "q_shape = Shape(qh)\nnd = Gather <axis = 0> (q_shape, size_i)\n";
    body += "k_shape = Shape(kc)\nns = Gather <axis = 0> (k_shape, size_i)\n";
  } else if (s.causal_by_heads) {
    // query_length, key_length = query.size(-2), key.size(-2).
    body += "q_shape = Shape(qh)\nnd_1 = Slice(q_shape, second_last, last, zero)\n";
    squeeze("nd", "nd_1");
    body += "k_shape = Shape(kc)\nns_1 = Slice(k_shape, second_last, last, zero)\n";
    squeeze("ns", "ns_1");
  } else {
    // nd, ns = w.size(-2), w.size(-1): two Shape nodes, each length unsqueezed apart.
    body += "w_shape1 = Shape(w)\nns_1 = Slice(w_shape1, last, big, zero)\n";
    squeeze("ns", "ns_1");
    body += "w_shape2 = Shape(w)\nnd_1 = Slice(w_shape2, second_last, last, zero)\n";
    squeeze("nd", "nd_1");
  }
  body += "d0 = Sub(ns, nd)\n";
  unsqueeze("d", "d0");
  unsqueeze("ns_a", "ns");
  unsqueeze("ns_b", "ns");
  body += "rows = Slice(tril, " + s.rows_start + ", ns_a, ax2, one)\n";
  body += "b = Slice(rows, zero, ns_b, ax3, one)\n";
  std::string cond = "b";
  if (s.tril_type != "bool") {
    body += "bc = Cast <to = 9> (b)\n";
    cond = "bc";
  }
  body += "wc = Where(" + cond + ", w, fill)\n";
  std::string last = "wc";
  std::string inputs = "float[B, " + seq + ", 8] x, float[2, B, 2, P, 4] past";
  if (s.padding_mask) {
    inputs += ", float[B, T] attention_mask";
    // attention_mask.unsqueeze(1).unsqueeze(2): [B, 1, 1, T].
    body +=
        attrs
            ? "am1 = Unsqueeze <axes = [1]> (attention_mask)\nam2 = Unsqueeze <axes = [2]> (am1)\n"
            : "am1 = Unsqueeze(attention_mask, one)\nam2 = Unsqueeze(am1, ax2)\n";
    body += "am3 = Sub(f_one, am2)\nam4 = Mul(am3, f_mask)\nwm = Add(wc, am4)\n";
    last = "wm";
  }
  body += "p = Softmax <axis = " + s.softmax_axis + "> (" + last + ")\n";
  body += "o = MatMul(p, vc)\not = Transpose <perm = [0, 2, 1, 3]> (o)\n";
  if (s.merge_shape_computed) {
    body += "ot_shape = Shape(ot)\nm_b = Gather <axis = 0> (ot_shape, i0)\n";
    body += "m_s = Gather <axis = 0> (ot_shape, i1)\n";
    body +=
        "m_n1 = Slice(ot_shape, second_last, last, zero)\nm_h1 = Slice(ot_shape, last, big, "
        "zero)\n";
    squeeze("m_n", "m_n1");
    squeeze("m_h", "m_h1");
    body += "m_d = Mul(m_n, m_h)\n";
    unsqueeze("m_b1", "m_b");
    unsqueeze("m_s1", "m_s");
    unsqueeze("m_d1", "m_d");
    body += "merge_shape = Concat <axis = 0> (m_b1, m_s1, m_d1)\ny = Reshape(ot, merge_shape)\n";
  } else {
    body += "y = Reshape(ot, out_shape)\n";
  }
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\ngpt2_past (" +
         inputs + ") => (float[B, " + seq + ", 8] y, float[2, B, 2, T, 4] present)\n<" + inits +
         ">\n{\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
