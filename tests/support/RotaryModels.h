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
// bounds computed from Shape(x) (TorchScript), or by Split (dynamo's chunk). Negative
// tests flip exactly one field.
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
  bool cache_slice = false;      ///< transformers 4.3x: cos_cached[:seq_len] before the Gather
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
};

/// `v` as ONNX text writes a float.
inline std::string rotaryFloat(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
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
  if (!s.cache_input)
    inits += ", float[16, " + r + "] cos_cache = {" +
             rotaryCache(s.rotary_dim, false, s.halves_differ) + "}, float[16, " + r +
             "] sin_cache = {" + rotaryCache(s.rotary_dim, true, s.halves_differ) + "}";
  if (partial)
    inits += ", int64[1] rotary_end = {" + (s.rotary_end.empty() ? r : s.rotary_end) +
             "}, int64[2] partial_split = {" + r + ", " + std::to_string(8 - s.rotary_dim) + "}";

  std::string body;
  // cos and sin, shared by every rotary of the layer.
  std::string cc = "cos_cache", sc = "sin_cache";
  if (s.cache_slice) {
    body +=
        "pos_shape = Shape(pos)\nseq_len = Gather(pos_shape, seq_index)\n"
        "seq_end = Unsqueeze(seq_len, axis0)\n"
        "cos_rows = Slice(cos_cache, zero, seq_end, axis0, step)\n"
        "sin_rows = Slice(sin_cache, zero, seq_end, axis0, step)\n";
    cc = "cos_rows";
    sc = "sin_rows";
  }
  body += "cos_g = Gather <axis = 0> (" + cc + ", pos)\ncos = Unsqueeze(cos_g, axis1)\n";
  body += "sin_g = Gather <axis = 0> (" + sc + ", " + (s.sin_other_pos ? "pos2" : "pos") +
          ")\nsin = Unsqueeze(sin_g, axis1)\n";

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

  const std::string x_type = "float[B, " + s.heads + ", S, 8]";
  std::string inputs = x_type + " q";
  if (s.with_k) inputs += ", " + x_type + " k";
  inputs += ", " + s.pos_type + "[" + s.pos_dims + "] pos";
  if (s.sin_other_pos) inputs += ", " + s.pos_type + "[" + s.pos_dims + "] pos2";
  if (s.cache_input) inputs += ", float[16, " + r + "] cos_cache, float[16, " + r + "] sin_cache";
  std::string outputs = x_type + " yq";
  if (s.with_k) outputs += ", " + x_type + " yk";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nrotary (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
