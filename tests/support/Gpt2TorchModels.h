//===- Gpt2TorchModels.h - GPT-2 as torch 1.x exports it, shapes computed --===//
//
// One GPT-2 layer (embeddings, ln_1, attention, residual) in ONNX text format, as
// torch.onnx (TorchScript, opsets 11-13) exports transformers' GPT2Model: every shape is
// computed at run time, so ONNX's own inference leaves everything after the embeddings
// unsized. position_ids = arange(0, seq).unsqueeze(0).view(-1, seq):
//   Reshape(Unsqueeze(Range(0, Gather(Shape(ids), 1), 1), 0),
//           Concat([-1], Unsqueeze(Gather(Shape(ids), 1), 0)));
// Conv1D c_attn is x.view(-1, x.size(-1)) @ W + b viewed back as
// Concat(Unsqueeze(Gather(Shape(x), 0)), Unsqueeze(Gather(Shape(x), 1)), [24]), then Split
// in Q, K, V; heads [0, 0, 2, -1]; the causal slice of a tril buffer by the scores' own
// lengths; Where(mask, w, -10000); Softmax; merge [0, 0, -1]; c_proj the same way as c_attn.
// With past, position_ids start at the cache's length (Range(P, P + S)) and K, V are the
// cache's heads followed by the new ones.
// Hidden size 8, 2 heads of 4, vocabulary 20, 16 positions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tests/support/AttentionModels.h"

namespace onnx_rewrite::testing {

struct Gpt2TorchSpec {
  /// Opset 11 gives Split/Squeeze/Unsqueeze parameters as attributes, 13 as inputs.
  int opset = 11;
  /// With a key/value cache (transformers 3.x): past [2, batch, 2, past_len, 4] in front of
  /// the new K and V heads, present as a second output, and the position ids
  /// arange(past_len, past_len + seq_len), past_len read from past's shape.
  bool past = false;
};

inline std::string gpt2TorchModel(const Gpt2TorchSpec& s) {
  const bool attrs = s.opset < 13;
  std::string body, inits;
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  auto unsqueeze = [&](const std::string& out, const std::string& in) {
    body += onAxis0("Unsqueeze", s.opset, out, in);
  };
  auto squeeze = [&](const std::string& out, const std::string& in) {
    body += onAxis0("Squeeze", s.opset, out, in);
  };
  // x.view(-1, x.size(-1)) @ w + b, viewed back as [x.size(0), x.size(1), cols].
  auto conv1d = [&](const std::string& out, const std::string& x, const std::string& w,
                    const std::string& cols, const std::string& tag) {
    body +=
        tag + "_s0 = Shape(" + x + ")\n" + tag + "_b = Gather <axis = 0> (" + tag + "_s0, i0)\n";
    body +=
        tag + "_s1 = Shape(" + x + ")\n" + tag + "_t = Gather <axis = 0> (" + tag + "_s1, i1)\n";
    unsqueeze(tag + "_bu", tag + "_b");
    unsqueeze(tag + "_tu", tag + "_t");
    body += tag + "_out_shape = Concat <axis = 0> (" + tag + "_bu, " + tag + "_tu, " + cols + ")\n";
    body += tag + "_s2 = Shape(" + x + ")\n" + tag + "_last1 = Slice(" + tag +
            "_s2, last, big, zero)\n";
    squeeze(tag + "_last", tag + "_last1");
    unsqueeze(tag + "_lastu", tag + "_last");
    body += tag + "_flat_shape = Concat <axis = 0> (minus_one, " + tag + "_lastu)\n";
    body += tag + "_flat = Reshape(" + x + ", " + tag + "_flat_shape)\n";
    body += tag + "_mm = Gemm(" + tag + "_flat, " + w + ", " + w + "_bias)\n";
    body += out + " = Reshape(" + tag + "_mm, " + tag + "_out_shape)\n";
  };
  init("float[20, 8] wte = " + attentionWeights(20, 8, 1));
  init("float[16, 8] wpe = " + attentionWeights(16, 8, 2));
  init("float[8] ln_g = " + attentionWeights(1, 8, 3));
  init("float[8] ln_b = " + attentionWeights(1, 8, 6));
  init("float[8, 24] c_attn = " + attentionWeights(8, 24, 4));
  init("float[24] c_attn_bias = " + attentionWeights(1, 24, 5));
  init("float[8, 8] c_proj = " + attentionWeights(8, 8, 7));
  init("float[8] c_proj_bias = " + attentionWeights(1, 8, 8));
  init("int64 i0 = {0}");
  init("int64 i1 = {1}");
  init("int64 start = {0}");
  init("int64 step = {1}");
  init("int64[1] ax0 = {0}");
  init("int64[1] zero = {0}");
  init("int64[1] one = {1}");
  init("int64[1] ax2 = {2}");
  init("int64[1] ax3 = {3}");
  init("int64[1] last = {-1}");
  init("int64[1] second_last = {-2}");
  init("int64[1] minus_one = {-1}");
  init("int64[1] big = {9223372036854775807}");
  init("int64[1] c24 = {24}");
  init("int64[1] c8 = {8}");
  init("int64[2] flat_ids = {-1, 0}");
  init("int64[4] head_shape = {0, 0, 2, -1}");
  init("int64[3] merge_shape = {0, 0, -1}");
  init("float scale = {2.0}");
  init("float fill = {-10000.0}");
  std::string tril;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      tril += std::string(tril.empty() ? "" : ", ") + (j <= i ? "1.0" : "0.0");
  init("float[1, 1, 16, 16] tril = {" + tril + "}");

  // Embeddings with the position ids computed from the ids' length (and the past's).
  body += "ids_shape = Shape(ids)\nseq = Gather <axis = 0> (ids_shape, i1)\n";
  unsqueeze("seq_u", "seq");
  body += "pos_shape = Concat <axis = 0> (minus_one, seq_u)\n";
  if (s.past) {
    body += "pk = Gather <axis = 0> (past, i0)\npv = Gather <axis = 0> (past, i1)\n";
    body += "pk_shape = Shape(pk)\npast_len_1 = Slice(pk_shape, second_last, last, zero)\n";
    squeeze("past_len", "past_len_1");
    body += "pos_end = Add(seq, past_len)\npos_range = Range(past_len, pos_end, step)\n";
  } else {
    body += "pos_range = Range(start, seq, step)\n";
  }
  unsqueeze("pos_1", "pos_range");
  body += "pos = Reshape(pos_1, pos_shape)\n";
  body += "ids_flat = Reshape(ids, flat_ids)\n";
  body += "tok = Gather <axis = 0> (wte, ids_flat)\npe = Gather <axis = 0> (wpe, pos)\n";
  body += "h = Add(tok, pe)\n";
  body += "ln = LayerNormalization <axis = -1, epsilon = 0.00001> (h, ln_g, ln_b)\n";
  // Attention.
  conv1d("qkv", "ln", "c_attn", "c24", "attn");
  if (attrs) {
    body += "q, k, v = Split <axis = 2, split = [8, 8, 8]> (qkv)\n";
  } else {
    init("int64[3] qkv_split = {8, 8, 8}");
    body += "q, k, v = Split <axis = 2> (qkv, qkv_split)\n";
  }
  body += "kr = Reshape(k, head_shape)\n";
  if (s.past) {
    // present = stack(K heads, V heads), each the cache followed by the new heads.
    body += "kh = Transpose <perm = [0, 2, 1, 3]> (kr)\nkc = Concat <axis = -2> (pk, kh)\n";
    body += "kt = Transpose <perm = [0, 1, 3, 2]> (kc)\n";
  } else {
    body += "kt = Transpose <perm = [0, 2, 3, 1]> (kr)\n";
  }
  body += "qr = Reshape(q, head_shape)\nqh = Transpose <perm = [0, 2, 1, 3]> (qr)\n";
  body += "qk = MatMul(qh, kt)\nw = Div(qk, scale)\n";
  body += "w_shape1 = Shape(w)\nns_1 = Slice(w_shape1, last, big, zero)\n";
  squeeze("ns", "ns_1");
  unsqueeze("ns_a", "ns");
  unsqueeze("ns_b", "ns");
  body += "w_shape2 = Shape(w)\nnd_1 = Slice(w_shape2, second_last, last, zero)\n";
  squeeze("nd", "nd_1");
  body += "d0 = Sub(ns, nd)\n";
  unsqueeze("d", "d0");
  body += "rows = Slice(tril, d, ns_a, ax2, one)\nb = Slice(rows, zero, ns_b, ax3, one)\n";
  body += "bc = Cast <to = 9> (b)\nwc = Where(bc, w, fill)\n";
  body += "p = Softmax <axis = 3> (wc)\n";
  body += "vr = Reshape(v, head_shape)\nvh = Transpose <perm = [0, 2, 1, 3]> (vr)\n";
  std::string values = "vh";
  if (s.past) {
    body += "vc = Concat <axis = -2> (pv, vh)\n";
    unsqueeze("pres_k", "kc");
    unsqueeze("pres_v", "vc");
    body += "present = Concat <axis = 0> (pres_k, pres_v)\n";
    values = "vc";
  }
  body += "o = MatMul(p, " + values + ")\not = Transpose <perm = [0, 2, 1, 3]> (o)\n";
  body += "merged = Reshape(ot, merge_shape)\n";
  conv1d("a", "merged", "c_proj", "c8", "proj");
  body += "y = Add(h, a)\n";
  const std::string inputs = s.past
                                 ? "int64[batch, seq_len] ids, float[2, batch, 2, past_len, 4] past"
                                 : "int64[batch, seq_len] ids";
  const std::string outputs =
      s.past ? "float[batch, seq_len, 8] y, float[2, batch, 2, total_len, 4] present"
             : "float[batch, seq_len, 8] y";
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\ngpt2_torch (" +
         inputs + ") => (" + outputs + ")\n<" + inits + ">\n{\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
