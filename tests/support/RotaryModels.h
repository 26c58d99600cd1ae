//===- RotaryModels.h - rotary embeddings as exporters emit them ---------===//
//
// Builders of small models in ONNX text format for the rotary rules
// (rules/rotary.yaml): Hugging Face LLaMA's
//
//   y = x * cos_cache[pos].unsqueeze(1) + rotate_half(x) * sin_cache[pos].unsqueeze(1)
//
// on x: float[B, 2, S, 8] (two heads of 8), pos: int64[B, S], caches [16, 8] built as
// Concat(freqs, freqs) like transformers' buffers. The halves of rotate_half are taken
// by Slice with constant bounds (dynamo, constant-folded TorchScript), by Slice with
// bounds computed from Shape(x) (TorchScript), or by Split (dynamo's chunk). cos and sin
// come from the caches, or are computed per forward pass from inv_freq and position_ids
// (transformers >= 4.38). Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace onnx_rewrite::testing {

/// A rotate-half rotary embedding of x (and of k too, as in a LLaMA layer).
struct RotarySpec {
  int opset = 17;
  /// How rotate_half takes the halves of x.
  enum class Halves {
    kSliceConstant,  ///< Slice(x, [0], [4], [-1]) / Slice(x, [4], [INT64_MAX], [-1])
    kSliceShape,     ///< bounds Unsqueeze(Div(Gather(Shape(x), -1), 2)), as TorchScript
    kSplit,          ///< Split(x) into two halves on the last axis
  } halves = Halves::kSliceConstant;
  bool cache_slice = false;  ///< transformers 4.3x: cos_cached[:seq_len] before the Gather
  bool cache_4d = false;  ///< transformers 4.31: [1, 1, 16, 8] caches, sliced on axis 2, squeezed
  bool cache_4d_squeeze_0_0 = false;  ///< ... squeezed as .squeeze(0).squeeze(0), not (1) then (0)
  bool with_k = false;           ///< also rotate k with the same cos and sin (Q and K of a layer)
  bool cache_input = false;      ///< the caches are graph inputs, not constants
  bool halves_differ = false;    ///< the caches' rows do not repeat their first half
  bool neg_first_half = false;   ///< Concat(Neg(x1), x2): the wrong half negated
  bool sin_other_pos = false;    ///< sin gathered with other position ids than cos
  bool swap_cos_sin = false;     ///< x * sin + rotate_half(x) * cos
  std::string slice_step = "1";  ///< steps of the half slices
  std::string end = "9223372036854775807";  ///< end of the second half
  std::string half;                         ///< bound between the halves ("": rotary_dim / 2)
  /// Phi: only the first `rotary_dim` of the 8 dims rotate (Slice, rotary, Concat the rest).
  int rotary_dim = 8;
  std::string rotary_end;          ///< the partial rotary's split point ("": rotary_dim)
  std::string shape_index = "-1";  ///< the Gather index into Shape(x)
  std::string split;               ///< Split sizes (opset < 18; "": halves)
  std::string heads = "2";         ///< dim 1 of x ("N": symbolic)
  std::string pos_dims = "B, S";
  std::string pos_type = "int64";
  /// transformers >= 4.38: cos/sin = Concat(freqs, freqs).cos()/.sin() with freqs =
  /// Transpose(Expand(inv_freq, [B, 1, 1]) @ Cast(Unsqueeze(pos, 1)), [0, 2, 1]).
  bool computed = false;
  /// How the computed form reads B for the Expand: dynamo Shape(pos, start=0, end=1) or
  /// TorchScript Unsqueeze(Gather(Shape(pos), 0), 0).
  /// kGatherExpandWhere: TorchScript's Gather form, with the shape as torch's `expand`
  /// symbolic writes a size holding -1: Where(Equal(size, -1), ones, size) of [B, -1, 1].
  enum class BatchDim {
    kShapeSlice,
    kGather,
    kGatherExpandWhere
  } batch_dim = BatchDim::kShapeSlice;
  bool freq_input = false;  ///< computed: inv_freq is a graph input, not a constant
  /// computed: no pos input; the positions are arange(0, S * step, step).unsqueeze(0),
  /// [1, S], with S read from q ("": pos is an input).
  std::string arange_step;
  bool sin_other_freq = false;  ///< computed: sin from other frequencies than cos
  bool freq_other_pos = false;  ///< computed: the angles use pos2, the caller passes pos
  /// computed, transformers >= 4.45: cos/sin times attention_scaling ("": no Mul) and
  /// cast to x's dtype (float: a no-op Cast TorchScript keeps).
  std::string scaling;
  bool scale_cos_only = false;  ///< with scaling: only cos is multiplied (not HF's form)
  bool cast_tables = false;
  /// computed: x is float16 and cos/sin are cast to it (needs cast_tables).
  bool fp16 = false;
  /// x is 3-D [B, S, H] (one head, e.g. before the head split) and cos/sin are the
  /// gathered [B, S, H] rows, without the Unsqueeze.
  bool three_d = false;
  /// computed, with static batch 2 (x and pos): the Expand of inv_freq to the batch folded
  /// into a [2, H/2, 1] constant, as onnxsim leaves it; `folded_rows_differ`: its second row
  /// other frequencies (not an expand).
  bool folded_expand = false;
  bool folded_rows_differ = false;
};

/// `v` as ONNX text writes a float.
inline std::string rotaryFloat(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// inv_freq[i] = 10000^(-2i / dim) in float, as transformers computes it ([dim / 2] values).
inline std::string rotaryInvFreq(int dim, double factor = 1.0) {
  std::string out;
  for (int i = 0; i < dim / 2; ++i) {
    const float v = std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(dim));
    out += (out.empty() ? "" : ", ") + rotaryFloat(v * factor);
  }
  return out;
}

/// A [16, dim] cache: f(p * inv_freq[j mod dim/2]) (j < dim), as Concat(freqs, freqs).f();
/// with `differ`, the second half uses other frequencies.
inline std::string rotaryCache(int dim, bool use_sin, bool differ) {
  std::string out;
  for (int p = 0; p < 16; ++p)
    for (int j = 0; j < dim; ++j) {
      const int i = j % (dim / 2);
      double inv_freq = std::pow(10000.0, -2.0 * i / dim);
      if (differ && j >= dim / 2) inv_freq *= 1.5;
      const double angle = p * inv_freq;
      out += (out.empty() ? "" : ", ") + rotaryFloat(use_sin ? std::sin(angle) : std::cos(angle));
    }
  return out;
}

inline std::string rotaryModel(const RotarySpec& s) {
  using H = RotarySpec::Halves;
  const bool split_attr = s.opset >= 18;
  const bool partial = s.rotary_dim < 8;
  const std::string r = std::to_string(s.rotary_dim);
  const std::string half = s.half.empty() ? std::to_string(s.rotary_dim / 2) : s.half;
  std::string inits = "int64[1] zero = {0}, int64[1] axis_last = {-1}, int64[1] step = {" +
                      s.slice_step + "}, int64[1] half = {" + half + "}, int64[1] end = {" + s.end +
                      "}, int64[1] axis1 = {1}, int64[1] axis0 = {0}, int64 two = {2}, " +
                      "int64 shape_index = {" + s.shape_index + "}, int64 seq_index = {1}";
  if (s.halves == H::kSplit && !split_attr)
    inits += ", int64[2] split = {" + (s.split.empty() ? half + ", " + half : s.split) + "}";
  const std::string freq_type = "float[1, " + std::to_string(s.rotary_dim / 2) + ", 1]";
  if (s.computed) {
    inits += ", int64[1] one = {1}, int64 batch_index = {0}";
    if (!s.scaling.empty()) inits += ", float scaling = {" + s.scaling + "}";
    if (s.folded_expand)
      inits += ", float[2, " + std::to_string(s.rotary_dim / 2) + ", 1] inv_freq = {" +
               rotaryInvFreq(s.rotary_dim) + ", " +
               rotaryInvFreq(s.rotary_dim, s.folded_rows_differ ? 1.5 : 1.0) + "}";
    else if (!s.freq_input)
      inits += ", " + freq_type + " inv_freq = {" + rotaryInvFreq(s.rotary_dim) + "}";
    if (s.sin_other_freq)
      inits += ", " + freq_type + " inv_freq2 = {" + rotaryInvFreq(s.rotary_dim, 1.5) + "}";
  } else if (!s.cache_input) {
    const std::string dims = (s.cache_4d ? "1, 1, 16, " : "16, ") + r;
    inits += ", float[" + dims + "] cos_cache = {" +
             rotaryCache(s.rotary_dim, false, s.halves_differ) + "}, float[" + dims +
             "] sin_cache = {" + rotaryCache(s.rotary_dim, true, s.halves_differ) + "}";
    if (s.cache_4d) inits += ", int64[1] axis2 = {2}";
  }
  if (partial)
    inits += ", int64[1] rotary_end = {" + (s.rotary_end.empty() ? r : s.rotary_end) +
             "}, int64[2] partial_split = {" + r + ", " + std::to_string(8 - s.rotary_dim) + "}";

  std::string body;
  // cos and sin, shared by every rotary of the layer.
  std::string cc = "cos_cache", sc = "sin_cache";
  auto freqs = [&](const std::string& inv, const std::string& p, const std::string& out) {
    return out + "_inv = " +
           (s.folded_expand ? "Identity(" + inv + ")" : "Expand(" + inv + ", freq_shape)") + "\n" +
           out + "_pos = Unsqueeze(" + p + ", axis1)\n" + out + "_posf = Cast <to = 1> (" + out +
           "_pos)\n" + out + "_t = MatMul(" + out + "_inv, " + out + "_posf)\n" + out +
           " = Transpose <perm = [0, 2, 1]> (" + out + "_t)\n";
  };
  if (s.computed && !s.folded_expand) {
    body += s.batch_dim == RotarySpec::BatchDim::kShapeSlice
                ? "batch = Shape <start = 0, end = 1> (pos)\n"
                : "pos_shape = Shape(pos)\nbatch_0 = Gather(pos_shape, batch_index)\n"
                  "batch = Unsqueeze(batch_0, axis0)\n";
    if (s.batch_dim == RotarySpec::BatchDim::kGatherExpandWhere) {
      inits +=
          ", int64[1] minus_one = {-1}, int64[3] minus_ones = {-1, -1, -1}"
          ", int64[3] ones3 = {1, 1, 1}";
      body += "size = Concat <axis = 0> (batch, minus_one, one)\n";
      body += "size_neg = Equal(size, minus_ones)\nfreq_shape = Where(size_neg, ones3, size)\n";
    } else {
      body += "freq_shape = Concat <axis = 0> (batch, one, one)\n";
    }
  }
  if (s.computed) {
    body += freqs("inv_freq", s.freq_other_pos ? "pos2" : "pos", "freqs");
    // Cos/Sin, then the optional Mul(., attention_scaling) and Cast of transformers 4.45.
    auto table = [&](const std::string& op, const std::string& emb, const std::string& out) {
      std::string b = out + "_t = " + op + "(" + emb + ")\n", v = out + "_t";
      if (!s.scaling.empty() && (op == "Cos" || !s.scale_cos_only))
        b += out + "_m = Mul(" + v + ", scaling)\n", v = out + "_m";
      if (s.cast_tables)
        b += out + "_c = Cast <to = " + (s.fp16 ? "10" : "1") + "> (" + v + ")\n", v = out + "_c";
      return b + out + " = Unsqueeze(" + v + ", axis1)\n";
    };
    body += "emb = Concat <axis = -1> (freqs, freqs)\n" + table("Cos", "emb", "cos");
    if (s.sin_other_freq)
      body += freqs("inv_freq2", "pos", "freqs2") + "emb2 = Concat <axis = -1> (freqs2, freqs2)\n";
    body += table("Sin", s.sin_other_freq ? "emb2" : "emb", "sin");
  } else {
    if (s.cache_slice) {
      body +=
          "pos_shape = Shape(pos)\nseq_len = Gather(pos_shape, seq_index)\n"
          "seq_end = Unsqueeze(seq_len, axis0)\n"
          "cos_rows = Slice(cos_cache, zero, seq_end, axis0, step)\n"
          "sin_rows = Slice(sin_cache, zero, seq_end, axis0, step)\n";
      cc = "cos_rows";
      sc = "sin_rows";
    }
    if (s.cache_4d) {
      // transformers 4.31: cos_cached[:, :, :seq_len, ...].squeeze(1).squeeze(0)
      const std::string first = s.cache_4d_squeeze_0_0 ? "axis0" : "axis1";
      body +=
          "pos_shape = Shape(pos)\nseq_len = Gather(pos_shape, seq_index)\n"
          "seq_end = Unsqueeze(seq_len, axis0)\n"
          "cos_rows = Slice(cos_cache, zero, seq_end, axis2, step)\n"
          "sin_rows = Slice(sin_cache, zero, seq_end, axis2, step)\n"
          "cos_s1 = Squeeze(cos_rows, " +
          first +
          ")\ncos_2d = Squeeze(cos_s1, axis0)\n"
          "sin_s1 = Squeeze(sin_rows, " +
          first + ")\nsin_2d = Squeeze(sin_s1, axis0)\n";
      cc = "cos_2d";
      sc = "sin_2d";
    }
    // 3-D x [B, S, H]: cos = cos_cache[pos] is already [B, S, H], no Unsqueeze.
    const std::string cg = s.three_d ? "cos" : "cos_g", sg = s.three_d ? "sin" : "sin_g";
    body += cg + " = Gather <axis = 0> (" + cc + ", pos)\n";
    body += sg + " = Gather <axis = 0> (" + sc + ", " + (s.sin_other_pos ? "pos2" : "pos") + ")\n";
    if (!s.three_d) body += "cos = Unsqueeze(cos_g, axis1)\nsin = Unsqueeze(sin_g, axis1)\n";
  }

  auto rotary = [&](const std::string& x, const std::string& y) {
    std::string b;
    const std::string x1 = x + "_1", x2 = x + "_2";
    switch (s.halves) {
      case H::kSliceConstant:
        b += x1 + " = Slice(" + x + ", zero, half, axis_last, step)\n";
        b += x2 + " = Slice(" + x + ", half, end, axis_last, step)\n";
        break;
      case H::kSliceShape:
        // One Shape/Gather/Div chain per bound, as TorchScript traces x.shape[-1] // 2 twice.
        for (const char* k : {"a", "b"}) {
          const std::string p = x + "_" + k;
          b += p + "_shape = Shape(" + x + ")\n" + p + "_dim = Gather(" + p +
               "_shape, shape_index)\n" + p + "_half = Div(" + p + "_dim, two)\n" + p +
               "_bound = Unsqueeze(" + p + "_half, axis0)\n";
        }
        b += x1 + " = Slice(" + x + ", zero, " + x + "_a_bound, axis_last, step)\n";
        b += x2 + " = Slice(" + x + ", " + x + "_b_bound, end, axis_last, step)\n";
        break;
      case H::kSplit:
        b += split_attr ? x1 + ", " + x2 + " = Split <axis = -1, num_outputs = 2> (" + x + ")\n"
                        : x1 + ", " + x2 + " = Split <axis = -1> (" + x + ", split)\n";
        break;
    }
    const std::string neg = s.neg_first_half ? x1 : x2;
    const std::string keep = s.neg_first_half ? x2 : x1;
    b += x + "_neg = Neg(" + neg + ")\n";
    b += x + "_rot = Concat <axis = -1> (" + x + "_neg, " + keep + ")\n";
    const std::string c = s.swap_cos_sin ? "sin" : "cos", si = s.swap_cos_sin ? "cos" : "sin";
    b += x + "_c = Mul(" + x + ", " + c + ")\n";
    b += x + "_s = Mul(" + x + "_rot, " + si + ")\n";
    b += y + " = Add(" + x + "_c, " + x + "_s)\n";
    return b;
  };
  // Phi: rotate the first rotary_dim dims, pass the rest through.
  auto rope = [&](const std::string& x, const std::string& y) {
    if (!partial) return rotary(x, y);
    if (s.halves == H::kSplit)  // dynamo: one Split into the rotated part and the rest
      return x + "r, " + x + "p = Split <axis = -1> (" + x + ", partial_split)\n" +
             rotary(x + "r", y + "r") + y + " = Concat <axis = -1> (" + y + "r, " + x + "p)\n";
    return x + "r = Slice(" + x + ", zero, rotary_end, axis_last, step)\n" + x + "p = Slice(" + x +
           ", rotary_end, end, axis_last, step)\n" + rotary(x + "r", y + "r") + y +
           " = Concat <axis = -1> (" + y + "r, " + x + "p)\n";
  };
  body += rope("q", "yq");
  if (s.with_k) body += rope("k", "yk");

  const std::string elem = s.fp16 ? "float16" : "float";
  const std::string batch = s.folded_expand ? "2" : "B";
  const std::string x_type =
      s.three_d ? elem + "[" + batch + ", S, 8]" : elem + "[" + batch + ", " + s.heads + ", S, 8]";
  std::string inputs = x_type + " q";
  if (s.with_k) inputs += ", " + x_type + " k";
  if (s.arange_step.empty()) {
    inputs += ", " + s.pos_type + "[" + s.pos_dims + "] pos";
  } else {
    inits += ", int64 range_start = {0}, int64 range_step = {" + s.arange_step +
             "}, int64 seq_dim = {2}";
    std::string limit = "seq_s", prefix = "q_shape = Shape(q)\nseq_s = Gather(q_shape, seq_dim)\n";
    if (s.arange_step != "1") prefix += "range_end = Mul(seq_s, range_step)\n", limit = "range_end";
    body = prefix + "pos_r = Range(range_start, " + limit +
           ", range_step)\npos = Unsqueeze(pos_r, axis0)\n" + body;
  }
  if (s.sin_other_pos || s.freq_other_pos)
    inputs += ", " + s.pos_type + "[" + s.pos_dims + "] pos2";
  if (s.computed && s.freq_input) inputs += ", " + freq_type + " inv_freq";
  if (s.cache_input) inputs += ", float[16, " + r + "] cos_cache, float[16, " + r + "] sin_cache";
  std::string outputs = x_type + " yq";
  if (s.with_k) outputs += ", " + x_type + " yk";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nrotary (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

/// GPT-J's interleaved rotary (rotate_every_two):
///
///   x1 = x[..., ::2]; x2 = x[..., 1::2]
///   rot = torch.stack((-x2, x1), dim=-1).flatten(-2)   [.., H/2, 2] -> [.., H]
///   y = x * cos + rot * sin
///
/// with cos/sin gathered from constant [16, 8] caches whose columns are repeat_interleave'd
/// (each value twice in a row). GPT-J rotates the heads before permuting them, in
/// [B, S, N, H] (cos.unsqueeze(2)); the [B, N, S, H] layout (cos.unsqueeze(1)) is the
/// other one models use.
struct InterleavedRotarySpec {
  int opset = 17;
  bool bsnh = true;  ///< x is [B, S, N, H] (GPT-J); false: [B, N, S, H]
  /// How flatten(-2) gives the Reshape its shape.
  enum class Flatten {
    kConstant,     ///< a constant [0, 0, 0, -1] (constant-folded)
    kTorchScript,  ///< Concat(Slice(Shape(stacked), [0], [3], [0]), [-1])
    kDynamo,       ///< Concat(Shape(stacked, start=0, end=3), [-1])
  } flatten = Flatten::kConstant;
  bool with_k = false;
  std::string end = "9223372036854775807";  ///< end of both strided Slices
  std::string step = "2";                   ///< step of both strided Slices
  std::string odd_start = "1";              ///< start of x[..., 1::2]
  bool pairs_differ = false;                ///< the caches' columns are not pairs
  bool stack_x1_first = false;              ///< stack((x1, -x2)): not a rotation by +angle
  std::string flat_shape = "0, 0, 0, -1";   ///< kConstant's shape
  std::string heads = "2";                  ///< N ("N": symbolic)
  /// GPT-J: only the first rotary_dim of the 8 dims rotate (x[..., :d], then cat the rest).
  int rotary_dim = 8;
};

/// A [16, dim] cache f(p * inv_freq[j / 2]): each value twice in a row (repeat_interleave).
inline std::string interleavedRotaryCache(int dim, bool use_sin, bool differ) {
  std::string out;
  for (int p = 0; p < 16; ++p)
    for (int j = 0; j < dim; ++j) {
      double inv_freq = std::pow(10000.0, -2.0 * (j / 2) / dim);
      if (differ && j % 2 == 1) inv_freq *= 1.5;
      const double angle = p * inv_freq;
      out += (out.empty() ? "" : ", ") + rotaryFloat(use_sin ? std::sin(angle) : std::cos(angle));
    }
  return out;
}

inline std::string interleavedRotaryModel(const InterleavedRotarySpec& s) {
  using F = InterleavedRotarySpec::Flatten;
  std::string inits = "int64[1] zero = {0}, int64[1] odd = {" + s.odd_start +
                      "}, int64[1] end = {" + s.end + "}, int64[1] axis_last = {-1}, " +
                      "int64[1] step = {" + s.step + "}, int64[1] minus_one = {-1}, " +
                      "int64[1] three = {3}, int64[1] axis = {" + (s.bsnh ? "2" : "1") + "}";
  if (s.flatten == F::kConstant) inits += ", int64[4] flat = {" + s.flat_shape + "}";
  const std::string r = std::to_string(s.rotary_dim);
  inits += ", float[16, " + r + "] cos_cache = {" +
           interleavedRotaryCache(s.rotary_dim, false, s.pairs_differ) + "}, float[16, " + r +
           "] sin_cache = {" + interleavedRotaryCache(s.rotary_dim, true, s.pairs_differ) + "}";
  const bool partial = s.rotary_dim < 8;
  if (partial) inits += ", int64[1] rotary_end = {" + r + "}, int64[1] one = {1}";
  std::string body =
      "cos_g = Gather <axis = 0> (cos_cache, pos)\ncos = Unsqueeze(cos_g, axis)\n"
      "sin_g = Gather <axis = 0> (sin_cache, pos)\nsin = Unsqueeze(sin_g, axis)\n";
  auto rotary = [&](const std::string& x, const std::string& y) {
    std::string b = x + "_1 = Slice(" + x + ", zero, end, axis_last, step)\n" + x + "_2 = Slice(" +
                    x + ", odd, end, axis_last, step)\n" + x + "_neg = Neg(" + x + "_2)\n" + x +
                    "_n = Unsqueeze(" + x + "_neg, minus_one)\n" + x + "_p = Unsqueeze(" + x +
                    "_1, minus_one)\n";
    b += x + "_st = Concat <axis = -1> (" +
         (s.stack_x1_first ? x + "_p, " + x + "_n" : x + "_n, " + x + "_p") + ")\n";
    std::string shape = "flat";
    if (s.flatten == F::kTorchScript) {
      b += x + "_sh = Shape(" + x + "_st)\n" + x + "_lead = Slice(" + x +
           "_sh, zero, three, zero)\n" + x + "_flat = Concat <axis = 0> (" + x +
           "_lead, minus_one)\n";
      shape = x + "_flat";
    } else if (s.flatten == F::kDynamo) {
      b += x + "_lead = Shape <start = 0, end = 3> (" + x + "_st)\n" + x +
           "_flat = Concat <axis = 0> (" + x + "_lead, minus_one)\n";
      shape = x + "_flat";
    }
    b += x + "_rot = Reshape(" + x + "_st, " + shape + ")\n";
    b += x + "_c = Mul(" + x + ", cos)\n" + x + "_s = Mul(" + x + "_rot, sin)\n" + y + " = Add(" +
         x + "_c, " + x + "_s)\n";
    return b;
  };
  // GPT-J's partial rotary: rotate x[..., :d], then cat x[..., d:] back.
  auto rope = [&](const std::string& x, const std::string& y) {
    if (!partial) return rotary(x, y);
    return x + "r = Slice(" + x + ", zero, rotary_end, axis_last, one)\n" + x + "p = Slice(" + x +
           ", rotary_end, end, axis_last, one)\n" + rotary(x + "r", y + "r") + y +
           " = Concat <axis = -1> (" + y + "r, " + x + "p)\n";
  };
  body += rope("q", "yq");
  if (s.with_k) body += rope("k", "yk");
  const std::string x_type =
      s.bsnh ? "float[B, S, " + s.heads + ", 8]" : "float[B, " + s.heads + ", S, 8]";
  std::string inputs = x_type + " q";
  if (s.with_k) inputs += ", " + x_type + " k";
  inputs += ", int64[B, S] pos";
  std::string outputs = x_type + " yq";
  if (s.with_k) outputs += ", " + x_type + " yk";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nrotary (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
