//===- AttentionModels.h - attention subgraphs as exporters emit them ----===//
//
// Builders of small self-attention models in ONNX text format, in the shapes torch.onnx
// gives Hugging Face BERT (BertSelfAttention: Q/K/V MatMul + Add, Reshape [0, 0, N, H],
// Transpose, K transposed [0, 2, 3, 1], Div by sqrt(H), Add of a [B, 1, 1, S] mask),
// GPT-2 (GPT2Attention: one Q/K/V projection Split in three, Where with a causal slice of
// a tril buffer and finfo.min, then the padding mask's Add) and Whisper (Q and K each
// scaled by H^-1/4). Hidden size 8, 2 heads of 4. Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace onnx_rewrite::testing {

/// `rows` x `cols` deterministic weights in [-0.5, 0.5), as an ONNX text tensor body.
inline std::string attentionWeights(int rows, int cols, int seed) {
  std::string out = "{";
  for (int i = 0; i < rows * cols; ++i) {
    const int x = (i * 37 + seed * 101 + (i / cols) * 11) % 97;
    out += (i ? ", " : "") + std::to_string((x - 48) / 97.0);
  }
  return out + "}";
}

/// One self-attention block on x: float[B, S, 8].
struct AttentionSpec {
  int opset = 14;
  /// How Q, K and V are projected: three MatMul + Add (BERT) or one MatMul + Add Split in
  /// three along the last axis (GPT-2's Conv1D).
  enum class Projection { kSeparate, kSplit } projection = Projection::kSeparate;
  /// Where the scale is applied: Div of the scores by sqrt(H) (BERT, GPT-2), Mul of the
  /// scores by 1/sqrt(H), Mul of Q and of K by H^-1/4 (Whisper), or nowhere (T5).
  enum class Scale { kDiv, kMul, kQAndK, kNone } scale = Scale::kDiv;
  /// The mask: none, Add of a float[B, 1, 1, S] input (BERT), Where(causal, scores, fill)
  /// (GPT-2 without padding mask), or that Where followed by the mask's Add.
  enum class Mask { kNone, kAdd, kCausal, kCausalAdd } mask = Mask::kAdd;
  bool k_two_transposes = false;  ///< K: Transpose [0, 2, 1, 3] then [0, 1, 3, 2]
  /// Cross attention: K and V projected from a second input enc: float[B, L, 8] (and the
  /// mask float[B, 1, 1, L]).
  bool cross = false;
  /// The Reshape shapes: constants, or computed with dynamic batch and sequence as
  /// TorchScript (Unsqueeze(Gather(Shape(x), i), [0])) or dynamo (Shape(x, start=i,
  /// end=i+1), opset >= 15) write them, concatenated with the constant head dims.
  enum class Shapes { kConstant, kTorchScript, kDynamo } shapes = Shapes::kConstant;
  /// GPT-2 eager (TorchScript): the causal slice's lengths are dim 2 of the V and Q heads,
  /// Unsqueeze(Gather(Shape(heads), 2)); otherwise dim 1 of x, a length no head reads.
  bool causal_from_heads = false;
  // ---- one field per condition a negative test breaks ----
  std::string softmax_axis = "-1";
  std::string q_shape = "0, 0, 2, 4";  ///< Q's head split
  std::string k_shape = "0, 0, 2, 4";  ///< K's head split
  std::string out_shape = "0, 0, 8";   ///< the merge of the heads
  std::string v_perm = "0, 2, 1, 3";
  std::string out_perm = "0, 2, 1, 3";  ///< the heads transposed back
  std::string scale_value;              ///< empty: the right one for `scale`
  std::string fill = "-3.4028234663852886e38";
  bool scale_is_input = false;  ///< the scale a graph input (not constant)
  bool wk_is_input = false;     ///< K's projection weight a graph input (not constant)
  bool leak_scores = false;     ///< also output the scores (an intermediate used outside)
};

inline std::string attentionModel(const AttentionSpec& s) {
  using S = AttentionSpec;
  std::string body, inits;
  std::string inputs = "float[B, S, 8] x";
  if (s.cross) inputs += ", float[B, L, 8] enc";
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  // Projections.
  if (s.projection == S::Projection::kSeparate) {
    for (const char* p : {"q", "k", "v"}) {
      const std::string n(p);
      const int seed = n == "q" ? 1 : n == "k" ? 2 : 3;
      if (n == "k" && s.wk_is_input)
        inputs += ", float[8, 8] wk";
      else
        init("float[8, 8] w" + n + " = " + attentionWeights(8, 8, seed));
      init("float[8] b" + n + " = " + attentionWeights(1, 8, seed + 10));
      const std::string from = s.cross && n != "q" ? "enc" : "x";
      body += n + "m = MatMul(" + from + ", w" + n + ")\n" + n + " = Add(b" + n + ", " + n + "m)\n";
    }
  } else {
    init("float[8, 24] wqkv = " + attentionWeights(8, 24, 4));
    init("float[24] bqkv = " + attentionWeights(1, 24, 5));
    init("int64[3] qkv_split = {8, 8, 8}");
    body += "qkvm = MatMul(x, wqkv)\nqkv = Add(qkvm, bqkv)\n";
    body += "q, k, v = Split <axis = 2> (qkv, qkv_split)\n";
  }
  // Head split.
  if (s.shapes == S::Shapes::kConstant) {
    init("int64[4] q_shape = {" + s.q_shape + "}");
    init("int64[4] k_shape = {" + s.k_shape + "}");
    init("int64[4] v_shape = {0, 0, 2, 4}");
    init("int64[3] out_shape = {" + s.out_shape + "}");
  } else {
    init("int64[1] heads = {2}");
    init("int64[1] head_size = {4}");
    init("int64[1] hidden = {8}");
    init("int64 i0 = {0}");
    init("int64 i1 = {1}");
    init("int64[1] ax0 = {0}");
    // dim i of v as a 1-element tensor, named n.
    auto dim = [&](const std::string& n, const std::string& v, int i) {
      const std::string is = std::to_string(i);
      if (s.shapes == S::Shapes::kDynamo)
        body +=
            n + " = Shape <start = " + is + ", end = " + std::to_string(i + 1) + "> (" + v + ")\n";
      else
        body += n + "_s = Shape(" + v + ")\n" + n + "_g = Gather <axis = 0> (" + n + "_s, i" + is +
                ")\n" + n + " = Unsqueeze(" + n + "_g, ax0)\n";
    };
    for (const char* p : {"q", "k", "v"}) {
      const std::string n(p);
      dim(n + "_b", n, 0);
      dim(n + "_t", n, 1);
      body += n + "_shape = Concat <axis = 0> (" + n + "_b, " + n + "_t, heads, head_size)\n";
    }
    dim("x_b", "x", 0);
    dim("x_t", "x", 1);
    body += "out_shape = Concat <axis = 0> (x_b, x_t, hidden)\n";
  }
  body += "qr = Reshape(q, q_shape)\nqh = Transpose <perm = [0, 2, 1, 3]> (qr)\n";
  body += "kr = Reshape(k, k_shape)\n";
  body +=
      s.k_two_transposes
          ? "kh = Transpose <perm = [0, 2, 1, 3]> (kr)\nkt = Transpose <perm = [0, 1, 3, 2]> (kh)\n"
          : "kt = Transpose <perm = [0, 2, 3, 1]> (kr)\n";
  body += "vr = Reshape(v, v_shape)\nvh = Transpose <perm = [" + s.v_perm + "]> (vr)\n";
  // Scores.
  auto scaleConst = [&](const std::string& name, const std::string& value) {
    if (s.scale_is_input)
      inputs += ", float " + name;
    else
      init("float " + name + " = {" + (s.scale_value.empty() ? value : s.scale_value) + "}");
  };
  switch (s.scale) {
    case S::Scale::kDiv:
      scaleConst("scale", "2.0");
      body += "qk = MatMul(qh, kt)\nsc = Div(qk, scale)\n";
      break;
    case S::Scale::kMul:
      scaleConst("scale", "0.5");
      body += "qk = MatMul(qh, kt)\nsc = Mul(qk, scale)\n";
      break;
    case S::Scale::kQAndK:
      scaleConst("scale", "0.70710678118654757");
      body += "qs = Mul(qh, scale)\nks = Mul(kt, scale)\nsc = MatMul(qs, ks)\n";
      break;
    case S::Scale::kNone:
      body += "sc = MatMul(qh, kt)\n";
      break;
  }
  // Masks.
  std::string last = "sc";
  if (s.mask == S::Mask::kCausal || s.mask == S::Mask::kCausalAdd) {
    // GPT-2: causal_mask = bias[:, :, key_length - query_length : key_length, :key_length]
    // of a [1, 1, 16, 16] tril buffer, lengths read from the hidden states' shape.
    std::string tril;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j)
        tril += std::string(tril.empty() ? "" : ", ") + (j <= i ? "1" : "0");
    init("bool[1, 1, 16, 16] tril = {" + tril + "}");
    init("int64[1] one = {1}");
    init("int64[1] zero = {0}");
    init("int64[1] ax2 = {2}");
    init("int64[1] ax3 = {3}");
    init("float fill = {" + s.fill + "}");
    if (s.causal_from_heads) {
      init("int64 i2 = {2}");
      init("int64[1] ax0c = {0}");
      body +=
          "vl_s = Shape(vh)\nvl_g = Gather <axis = 0> (vl_s, i2)\nlen = Unsqueeze(vl_g, ax0c)\n";
      body +=
          "ql_s = Shape(qh)\nql_g = Gather <axis = 0> (ql_s, i2)\nqlen = Unsqueeze(ql_g, ax0c)\n";
      body += "start = Sub(len, qlen)\n";
    } else {
      body += "xs = Shape(x)\nlen = Slice(xs, one, ax2)\nstart = Sub(len, len)\n";
    }
    // TorchScript writes the steps (1) too.
    body += "rows = Slice(tril, start, len, ax2, one)\ncausal = Slice(rows, zero, len, ax3, one)\n";
    body += "w = Where(causal, sc, fill)\n";
    last = "w";
  }
  if (s.mask == S::Mask::kAdd || s.mask == S::Mask::kCausalAdd) {
    inputs += s.cross ? ", float[B, 1, 1, L] mask" : ", float[B, 1, 1, S] mask";
    body += "sm = Add(" + last + ", mask)\n";
    last = "sm";
  }
  body += "p = Softmax <axis = " + s.softmax_axis + "> (" + last + ")\n";
  body += "o = MatMul(p, vh)\not = Transpose <perm = [" + s.out_perm + "]> (o)\n";
  body += "y = Reshape(ot, out_shape)\n";
  std::string outputs = "float[B, S, 8] y";
  if (s.leak_scores) outputs += ", float[B, 2, S, S] sc";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nattn (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
