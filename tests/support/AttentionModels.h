//===- AttentionModels.h - attention subgraphs as exporters emit them ----===//
//
// Builders of small self-attention models in ONNX text format, in the shapes torch.onnx
// gives Hugging Face BERT (BertSelfAttention: Q/K/V MatMul + Add, Reshape [0, 0, N, H],
// Transpose, K transposed [0, 2, 3, 1], Div by sqrt(H), Add of a [B, 1, 1, S] mask),
// GPT-2 (GPT2Attention: one Q/K/V projection Split in three, Where with a causal slice of
// a tril buffer and finfo.min, then the padding mask's Add) and Whisper (Q and K each
// scaled by H^-1/4), and LLaMA/Phi (RotaryEmbedding on the Q and K heads, repeat_kv of
// grouped K/V heads, an additive [B, 1, S, S] mask or SDPA's is_causal mask). Hidden size 8,
// 2 heads of 4, unless a spec says otherwise. Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

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

/// `out = op(in)` on axis 0 for op Squeeze or Unsqueeze: the axes an attribute before opset
/// 13, from 13 the input ax0, which the model defines as int64[1] {0}.
inline std::string onAxis0(const std::string& op, int opset, const std::string& out,
                           const std::string& in) {
  return opset < 13 ? out + " = " + op + " <axes = [0]> (" + in + ")\n"
                    : out + " = " + op + "(" + in + ", ax0)\n";
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
  /// (GPT-2 without padding mask), that Where followed by the mask's Add, or masked_fill as
  /// nanoGPT writes it, Where(Equal(tril[:, :, :S, :S], 0), fill, scores) of a float tril.
  /// ... or DistilBERT's (transformers 4.x MultiHeadSelfAttention): the [B, T] mask input
  /// compared with 0, reshaped to [B, 1, 1, T], expanded to the scores' shape and
  /// scores.masked_fill(mask, finfo.min): Where(Expand(Reshape(Equal(mask, 0)), Shape(s)),
  /// fill, s).
  /// ... or BERT's own (get_extended_attention_mask) of an attention_mask[B, S] input:
  /// Mul(Sub(1.0, Cast(Unsqueeze(Unsqueeze(attention_mask, 1), 2), float)), fill), added.
  /// ... or BART's SDPA export: a bool[B, 1, S, S] mask as Where(mask, 0, fill), added.
  enum class Mask {
    kNone,
    kAdd,
    kCausal,
    kCausalAdd,
    kMaskedFill,
    kDistilBert,
    kPadding,
    kBoolWhere
  } mask = Mask::kAdd;
  /// kPadding: where the Cast to float is: after the Unsqueezes (torch.onnx), before them,
  /// or nowhere (attention_mask is float then).
  enum class PaddingCast { kAfter, kBefore, kNone } padding_cast = PaddingCast::kAfter;
  std::string padding_type = "int64";  ///< kPadding: attention_mask's element type
  bool padding_one_unsqueeze = false;  ///< kPadding: one Unsqueeze of axes [1, 2] (onnxsim)
  std::string padding_shape = "B, S";  ///< kPadding: attention_mask's dims
  // kPadding, for negative tests: the constant the mask is subtracted from; the second
  // Unsqueeze's axis (2: the keys).
  std::string padding_one = "1.0";
  std::string padding_axis = "2";
  /// kDistilBert and kPadding: no mask input; the model builds its mask from ones of x's
  /// [B, S] (transformers' `torch.ones(input_shape)` when no attention_mask is given):
  /// ConstantOfShape(Shape(x)[0:2], 1.0) as TorchScript writes it, or `ones_value` there.
  bool mask_ones = false;
  std::string ones_value = "1.0";
  /// DistilBERT scales q (q / sqrt(H)) before the product and splits heads with
  /// view(bs, -1, n_heads, dim): a -1 in the split shapes.
  bool scale_q_first = false;
  bool k_two_transposes = false;  ///< K: Transpose [0, 2, 1, 3] then [0, 1, 3, 2]
  /// K: Transpose [0, 2, 1, 3], then K^T through bmm's 3-D layout as torch's math SDPA
  /// writes it (BART's SDPA export, transformers >= 4.49): Reshape to [B*N, S, H] (dims read
  /// at run time), Transpose [0, 2, 1], Reshape to [B, N, H, S].
  bool k_transpose_3d = false;
  /// The attention weights guarded as torchlib's SDPA and BART's SDPA export guard them:
  /// Where(IsNaN(p), 0, p).
  bool nan_guard = false;
  /// Cross attention: K and V projected from a second input enc: float[B, L, 8] (and the
  /// mask float[B, 1, 1, L]).
  bool cross = false;
  /// The Reshape shapes: constants, or computed with dynamic batch and sequence as
  /// TorchScript (Unsqueeze(Gather(Shape(x), i), [0])) or dynamo (Shape(x, start=i,
  /// end=i+1), opset >= 15) write them, concatenated with the constant head dims.
  enum class Shapes { kConstant, kTorchScript, kDynamo } shapes = Shapes::kConstant;
  /// With computed shapes: B and T read once from x (nanoGPT's `B, T, C = x.size()`) and
  /// shared by every view and the masked_fill slice, instead of read from each value viewed.
  bool shared_dims = false;
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
    if (s.shared_dims) {
      dim("x_b", "x", 0);
      dim("x_t", "x", 1);
    }
    for (const char* p : {"q", "k", "v"}) {
      const std::string n(p), from = s.shared_dims ? "x" : n;
      if (!s.shared_dims) {
        dim(n + "_b", n, 0);
        dim(n + "_t", n, 1);
      }
      body += n + "_shape = Concat <axis = 0> (" + from + "_b, " + from + "_t, heads, head_size)\n";
    }
    if (!s.shared_dims) {
      dim("x_b", "x", 0);
      dim("x_t", "x", 1);
    }
    body += "out_shape = Concat <axis = 0> (x_b, x_t, hidden)\n";
  }
  body += "qr = Reshape(q, q_shape)\nqh = Transpose <perm = [0, 2, 1, 3]> (qr)\n";
  body += "kr = Reshape(k, k_shape)\n";
  if (s.k_transpose_3d) {
    init("int64[1] kd0 = {0}");
    init("int64[1] kd1 = {1}");
    init("int64[1] kd2 = {2}");
    init("int64[1] kd3 = {3}");
    init("int64[1] kd4 = {4}");
    body += "kh = Transpose <perm = [0, 2, 1, 3]> (kr)\nkh_s = Shape(kh)\n";
    body += "kh_b = Slice(kh_s, kd0, kd1)\nkh_n = Slice(kh_s, kd1, kd2)\n";
    body += "kh_l = Slice(kh_s, kd2, kd3)\nkh_h = Slice(kh_s, kd3, kd4)\nkh_bn = Mul(kh_b, kh_n)\n";
    body += "k3_shape = Concat <axis = 0> (kh_bn, kh_l, kh_h)\nk3 = Reshape(kh, k3_shape)\n";
    body += "k3t = Transpose <perm = [0, 2, 1]> (k3)\n";
    body += "kt_shape = Concat <axis = 0> (kh_b, kh_n, kh_h, kh_l)\nkt = Reshape(k3t, kt_shape)\n";
  } else {
    body += s.k_two_transposes ? "kh = Transpose <perm = [0, 2, 1, 3]> (kr)\nkt = Transpose <perm "
                                 "= [0, 1, 3, 2]> (kh)\n"
                               : "kt = Transpose <perm = [0, 2, 3, 1]> (kr)\n";
  }
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
      body += s.scale_q_first ? "qd = Div(qh, scale)\nsc = MatMul(qd, kt)\n"
                              : "qk = MatMul(qh, kt)\nsc = Div(qk, scale)\n";
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
  if (s.mask == S::Mask::kMaskedFill) {
    // nanoGPT: att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf')), the buffer
    // torch.tril(torch.ones(16, 16)).view(1, 1, 16, 16).
    std::string tril;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j)
        tril += std::string(tril.empty() ? "" : ", ") + (j <= i ? "1.0" : "0.0");
    init("float[1, 1, 16, 16] tril = {" + tril + "}");
    init("int64[1] one = {1}");
    init("int64[1] zero = {0}");
    init("int64[1] ax2 = {2}");
    init("int64[1] ax3 = {3}");
    init("float f_zero = {0.0}");
    init("float fill = {" + s.fill + "}");
    // T as nanoGPT reads it: the shared x.size(1), or x's shape sliced.
    const bool shared = s.shared_dims && s.shapes != S::Shapes::kConstant;
    const std::string len = shared ? "x_t" : "len";
    if (!shared) body += "xs = Shape(x)\nlen = Slice(xs, one, ax2)\n";
    body += "rows = Slice(tril, zero, " + len + ", ax2, one)\nsq = Slice(rows, zero, " + len +
            ", ax3, one)\n";
    body += "masked = Equal(sq, f_zero)\nw = Where(masked, fill, sc)\n";
    last = "w";
  }
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
  // The mask of ones a model builds when no attention_mask is given.
  auto onesMask = [&](const std::string& name) {
    init("int64[1] ones_start = {0}");
    init("int64[1] ones_end = {2}");
    body += "ones_shape = Slice(x_shape_all, ones_start, ones_end)\n";
    body = "x_shape_all = Shape(x)\n" + body;
    body += name + " = ConstantOfShape <value = float[1] {" + s.ones_value + "}> (ones_shape)\n";
  };
  if (s.mask == S::Mask::kDistilBert) {
    if (s.mask_ones)
      onesMask("mask");
    else
      inputs += ", float[B, S] mask";
    init("float f_zero = {0.0}");
    init("float fill = {" + s.fill + "}");
    init("int64[4] mask_shape = {0, 1, 1, -1}");
    body += "masked2 = Equal(mask, f_zero)\nmasked4 = Reshape(masked2, mask_shape)\n";
    body +=
        "sc_shape = Shape(sc)\nmasked = Expand(masked4, sc_shape)\nw = Where(masked, fill, sc)\n";
    last = "w";
  }
  if (s.mask == S::Mask::kPadding) {
    const bool cast = s.padding_cast != S::PaddingCast::kNone;
    if (s.mask_ones)
      onesMask("attention_mask");
    else
      inputs += ", " + (cast ? s.padding_type : std::string("float")) + "[" + s.padding_shape +
                "] attention_mask";
    init("float pad_one = {" + s.padding_one + "}");
    init("float fill = {" + s.fill + "}");
    std::string m = "attention_mask";
    if (s.padding_cast == S::PaddingCast::kBefore)
      body += "am_f = Cast <to = 1> (" + m + ")\n", m = "am_f";
    if (s.padding_one_unsqueeze) {
      init("int64[2] pad_axes = {1, " + s.padding_axis + "}");
      body += "am_4 = Unsqueeze(" + m + ", pad_axes)\n";
    } else {
      init("int64[1] pad_ax1 = {1}");
      init("int64[1] pad_ax2 = {" + s.padding_axis + "}");
      body += "am_3 = Unsqueeze(" + m + ", pad_ax1)\nam_4 = Unsqueeze(am_3, pad_ax2)\n";
    }
    m = "am_4";
    if (s.padding_cast == S::PaddingCast::kAfter)
      body += "am_c = Cast <to = 1> (" + m + ")\n", m = "am_c";
    body += "inv = Sub(pad_one, " + m + ")\npad = Mul(inv, fill)\nsm = Add(" + last + ", pad)\n";
    last = "sm";
  }
  if (s.mask == S::Mask::kBoolWhere) {
    inputs += ", bool[B, 1, S, S] mask";
    init("float w_zero = {0.0}");
    init("float fill = {" + s.fill + "}");
    body += "mf = Where(mask, w_zero, fill)\nsm = Add(" + last + ", mf)\n";
    last = "sm";
  }
  if (s.mask == S::Mask::kAdd || s.mask == S::Mask::kCausalAdd) {
    inputs += s.cross ? ", float[B, 1, 1, L] mask" : ", float[B, 1, 1, S] mask";
    body += "sm = Add(" + last + ", mask)\n";
    last = "sm";
  }
  body += "p = Softmax <axis = " + s.softmax_axis + "> (" + last + ")\n";
  std::string weights = "p";
  if (s.nan_guard) {
    init("float g_zero = {0.0}");
    body += "p_nan = IsNaN(p)\npg = Where(p_nan, g_zero, p)\n";
    weights = "pg";
  }
  body += "o = MatMul(" + weights + ", vh)\not = Transpose <perm = [" + s.out_perm + "]> (o)\n";
  body += "y = Reshape(ot, out_shape)\n";
  std::string outputs = "float[B, S, 8] y";
  if (s.leak_scores) outputs += ", float[B, 2, S, S] sc";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nattn (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

/// One LLaMA/Phi self-attention block on x: float[B, S, 2 * head_size], 2 query heads,
/// rotate-half RoPE on the Q and K heads from [16, rot] cos/sin caches gathered by pos:
/// int64[B, S], K and V with `kv_heads` heads (repeat_kv to 2 when 1), value_info on
/// repeat_kv's values as the exporters leave it.
struct RopeAttentionSpec {
  int opset = 17;
  int kv_heads = 2;
  int head_size = 4;  ///< 8 or more for GroupQueryAttention (its kernel wants multiples of 8)
  /// TorchScript (halves by Slice, K transposed then MatMul, Div by sqrt(H)) or dynamo
  /// (halves by Split, SDPA's Mul of Q and of K^T by H^-1/4).
  bool dynamo = false;
  bool bias = false;  ///< the projections have biases (Phi)
  /// Phi: only the first half of each head rotates, the rest is concatenated back.
  bool partial = false;
  /// repeat_kv's Expand and Reshape shapes read B and S from the K/V heads at run time
  /// (TorchScript's Unsqueeze(Gather(Shape(h), i)), dynamo's Shape(h, start, end)), not
  /// constants.
  bool repeat_shapes_from_heads = false;
  /// kSdpaCausal: scaled_dot_product_attention(is_causal=True) as torch.onnx writes it,
  /// Add(scores, Where(Equal(Trilu(Expand(1, [L, S])), 0), -inf, 0)) with L and S read
  /// from the Q and K heads' shapes.
  /// kMaskedFill: scores.masked_fill(masked, finfo.min), masked a bool[S, S] input.
  enum class Mask { kNone, kAdd, kCausal, kSdpaCausal, kMaskedFill } mask = Mask::kAdd;
  // ---- one field per condition a negative test breaks ----
  std::string v_perm = "0, 2, 1, 3";
  std::string kt_perm = "0, 1, 3, 2";
  std::string out_perm = "0, 2, 1, 3";
  std::string softmax_axis = "-1";
  std::string repeat_axis = "2";  ///< the Unsqueeze of repeat_kv
  std::string tril_upper = "0";   ///< kSdpaCausal: Trilu's `upper`
  bool scale_is_input = false;    ///< the scale a graph input (not constant)
  bool leak_scores = false;       ///< also output the scores
  bool rotate_k_only = false;     ///< Q is not rotated
  bool rotate_q_only = false;     ///< K is not rotated
};

inline std::string ropeAttentionModel(const RopeAttentionSpec& s) {
  const int g = s.kv_heads, hs = s.head_size, hidden = 2 * hs, kvd = hs * g;
  const int rot = s.partial ? hs / 2 : hs;
  const std::string h_str = std::to_string(hs), d_str = std::to_string(hidden);
  std::string body, inits, infos;
  std::string inputs = "float[B, S, " + d_str + "] x, int64[B, S] pos";
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return std::string(buf);
  };
  // Caches [16, rot]: each row Concat(freqs, freqs) as transformers builds them.
  std::string cos, sin;
  for (int p = 0; p < 16; ++p)
    for (int i = 0; i < rot; ++i) {
      const float inv = std::pow(10000.0f, -2.0f * static_cast<float>(i % (rot / 2)) / rot);
      const float angle = static_cast<float>(p) * inv;
      cos += (cos.empty() ? "" : ", ") + num(std::cos(angle));
      sin += (sin.empty() ? "" : ", ") + num(std::sin(angle));
    }
  init("float[16, " + std::to_string(rot) + "] cos_cache = {" + cos + "}");
  init("float[16, " + std::to_string(rot) + "] sin_cache = {" + sin + "}");
  init("int64[1] ax1 = {1}");
  init("int64[1] ax_rep = {" + s.repeat_axis + "}");
  body += "cg = Gather(cos_cache, pos)\ncos = Unsqueeze(cg, ax1)\n";
  body += "sg = Gather(sin_cache, pos)\nsin = Unsqueeze(sg, ax1)\n";
  // Projections and head splits.
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p);
    const int width = n == "q" ? hidden : kvd, heads = n == "q" ? 2 : g;
    const int seed = n == "q" ? 1 : n == "k" ? 2 : 3;
    init("float[" + d_str + ", " + std::to_string(width) + "] w" + n + " = " +
         attentionWeights(hidden, width, seed));
    body += n + "m = MatMul(x, w" + n + ")\n";
    std::string proj = n + "m";
    if (s.bias) {
      init("float[" + std::to_string(width) + "] b" + n + " = " +
           attentionWeights(1, width, seed + 10));
      body += n + "a = Add(b" + n + ", " + n + "m)\n";
      proj = n + "a";
    }
    init("int64[4] " + n + "_shape = {0, 0, " + std::to_string(heads) + ", " + h_str + "}");
    const std::string perm = n == "v" ? s.v_perm : "0, 2, 1, 3";
    body += n + "r = Reshape(" + proj + ", " + n + "_shape)\n" + n + "h = Transpose <perm = [" +
            perm + "]> (" + n + "r)\n";
  }
  // rotate_half RoPE on the first `rot` dims of a [B, heads, S, hs] value.
  auto rope = [&](const std::string& n) {
    const std::string h = n + "h";
    std::string xr = h, pass;
    if (s.partial) {
      if (s.dynamo) {
        body += n + "xr, " + n + "xp = Split <axis = -1> (" + h + ", part)\n";
      } else {
        body += n + "xr = Slice(" + h + ", zero, rdim, ax3, one)\n";
        body += n + "xp = Slice(" + h + ", rdim, end, ax3, one)\n";
      }
      xr = n + "xr";
      pass = n + "xp";
    }
    if (s.dynamo) {
      body += n + "1, " + n + "2 = Split <axis = -1> (" + xr + ", half)\n";
    } else {
      body += n + "1 = Slice(" + xr + ", zero, mid, ax3, one)\n";
      body += n + "2 = Slice(" + xr + ", mid, end, ax3, one)\n";
    }
    body += n + "n = Neg(" + n + "2)\n" + n + "rot = Concat <axis = -1> (" + n + "n, " + n + "1)\n";
    body += n + "_cos = Mul(" + xr + ", cos)\n" + n + "_sin = Mul(" + n + "rot, sin)\n";
    body += n + "e" + (pass.empty() ? "" : "0") + " = Add(" + n + "_cos, " + n + "_sin)\n";
    if (!pass.empty()) body += n + "e = Concat <axis = -1> (" + n + "e0, " + pass + ")\n";
    return n + "e";
  };
  init("int64[1] zero = {0}");
  init("int64[1] one = {1}");
  init("int64[1] rdim = {" + std::to_string(rot) + "}");
  init("int64[1] ax3 = {3}");
  init("int64[1] end = {9223372036854775807}");
  init("int64[1] mid = {" + std::to_string(rot / 2) + "}");
  init("int64[2] half = {" + std::to_string(rot / 2) + ", " + std::to_string(rot / 2) + "}");
  init("int64[2] part = {" + std::to_string(rot) + ", " + std::to_string(hs - rot) + "}");
  const std::string q = s.rotate_k_only ? "qh" : rope("q");
  std::string k = s.rotate_q_only ? "kh" : rope("k"), v = "vh";
  // repeat_kv: x[:, :, None].expand(B, G, R, S, hs).reshape(B, 2, S, hs).
  if (g < 2) {
    const std::string rep = std::to_string(2 / g), gs = std::to_string(g);
    if (!s.repeat_shapes_from_heads) {
      init("int64[5] rep_shape = {1, 1, " + rep + ", 1, 1}");
      init("int64[4] heads_shape = {0, 2, -1, " + h_str + "}");
    } else {
      init("int64[1] c_g = {" + gs + "}");
      init("int64[1] c_rep = {" + rep + "}");
      init("int64[1] c_n = {2}");
      init("int64[1] c_h = {" + h_str + "}");
      init("int64 i0 = {0}");
      init("int64 i2 = {2}");
      init("int64[1] ax0 = {0}");
    }
    for (const std::string n : {"k", "v"}) {
      const std::string from = n == "k" ? k : v;
      std::string rep_shape = "rep_shape", heads_shape = "heads_shape";
      if (s.repeat_shapes_from_heads) {
        // dims 0 and 2 of the heads, as the exporter reads them.
        for (const std::string i : {"0", "2"}) {
          const std::string d = n + "d" + i;
          if (s.dynamo)
            body += d + " = Shape <start = " + i + ", end = " + std::to_string(std::stoi(i) + 1) +
                    "> (" + from + ")\n";
          else
            body += d + "_s = Shape(" + from + ")\n" + d + "_g = Gather <axis = 0> (" + d +
                    "_s, i" + i + ")\n" + d + " = Unsqueeze(" + d + "_g, ax0)\n";
        }
        rep_shape = n + "_rep_shape";
        heads_shape = n + "_heads_shape";
        body += rep_shape + " = Concat <axis = 0> (" + n + "d0, c_g, c_rep, " + n + "d2, c_h)\n";
        body += heads_shape + " = Concat <axis = 0> (" + n + "d0, c_n, " + n + "d2, c_h)\n";
      }
      body += n + "u = Unsqueeze(" + from + ", ax_rep)\n" + n + "x = Expand(" + n + "u, " +
              rep_shape + ")\n" + n + "rep = Reshape(" + n + "x, " + heads_shape + ")\n";
      infos += ", float[B, " + gs + ", " + rep + ", S, " + h_str + "] " + n + "x, float[B, 2, S, " +
               h_str + "] " + n + "rep";
      (n == "k" ? k : v) = n + "rep";
    }
  }
  // Scores.
  auto scaleConst = [&](const std::string& name, const std::string& value) {
    if (s.scale_is_input)
      inputs += ", float " + name;
    else
      init("float " + name + " = {" + value + "}");
  };
  body += "kt = Transpose <perm = [" + s.kt_perm + "]> (" + k + ")\n";
  if (s.dynamo) {
    scaleConst("scale", num(1.0 / std::sqrt(std::sqrt(static_cast<double>(hs)))));
    body += "qs = Mul(" + q + ", scale)\nks = Mul(kt, scale)\nsc = MatMul(qs, ks)\n";
  } else {
    scaleConst("scale", num(std::sqrt(static_cast<double>(hs))));
    body += "qk = MatMul(" + q + ", kt)\nsc = Div(qk, scale)\n";
  }
  std::string last = "sc";
  if (s.mask == RopeAttentionSpec::Mask::kAdd) {
    inputs += ", float[B, 1, S, S] mask";
    body += "sm = Add(sc, mask)\n";
    last = "sm";
  } else if (s.mask == RopeAttentionSpec::Mask::kCausal) {
    inputs += ", bool[S, S] causal";
    init("float fill = {-3.4028234663852886e38}");
    body += "sm = Where(causal, sc, fill)\n";
    last = "sm";
  } else if (s.mask == RopeAttentionSpec::Mask::kMaskedFill) {
    inputs += ", bool[S, S] masked";
    init("float fill = {-3.4028234663852886e38}");
    body += "sm = Where(masked, fill, sc)\n";
    last = "sm";
  } else if (s.mask == RopeAttentionSpec::Mask::kSdpaCausal) {
    init("float f_one = {1.0}");
    init("float f_zero = {0.0}");
    init("float fill = {-3.4028234663852886e38}");
    init("int64[1] m2 = {-2}");
    init("int64[1] m1 = {-1}");
    // torchlib: Slice(Shape(x), [-2], [-1]); after its optimizer Shape(x, start, end).
    for (const auto& [n, from] : {std::pair<std::string, std::string>{"ql", q}, {"kl", k}}) {
      if (s.dynamo)
        body += n + " = Shape <start = -2, end = -1> (" + from + ")\n";
      else
        body += n + "_s = Shape(" + from + ")\n" + n + " = Slice(" + n + "_s, m2, m1)\n";
    }
    body += "lens = Concat <axis = 0> (ql, kl)\nones = Expand(f_one, lens)\n";
    body += "tri = Trilu <upper = " + s.tril_upper + "> (ones)\n";
    body += "eqz = Equal(tri, f_zero)\ncmask = Where(eqz, fill, f_zero)\n";
    body += "sm = Add(sc, cmask)\n";
    last = "sm";
  }
  body += "p = Softmax <axis = " + s.softmax_axis + "> (" + last + ")\n";
  body += "o = MatMul(p, " + v + ")\not = Transpose <perm = [" + s.out_perm + "]> (o)\n";
  init("int64[3] out_shape = {0, 0, " + d_str + "}");
  body += "y = Reshape(ot, out_shape)\n";
  std::string outputs = "float[B, S, " + d_str + "] y";
  if (s.leak_scores) outputs += ", float[B, 2, S, S] sc";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) +
         ", \"com.microsoft\" : 1]>\nattn (" + inputs + ") => (" + outputs + ") <" + inits + infos +
         "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
