//===- HeadsModels.h - attention exported one head module at a time -------===//
//
// Builders of small attention models in ONNX text format, in the shape torch.onnx gives a
// "per-head module" (Karpathy's nanoGPT lecture, gpt.py): every head is its own module
// with bias-free key/query/value Linears of [hidden, head_size] and its own tril buffer,
// and the heads' outputs are concatenated. Per head h:
//
//   q, k, v = MatMul(x, Wq_h), MatMul(x, Wk_h), MatMul(x, Wv_h)
//   s2 = Mul(MatMul(q, Transpose(k, [0, 2, 1])), head_size**-0.5)
//   m = Where(Equal(tril[:T, :T], 0), -inf, s2)
//   o_h = MatMul(Softmax(m, -1), v)
//
// and y = Concat(o_0, ..., o_{N-1}, axis=-1). 4 heads of 4 on hidden 16 unless a spec says
// otherwise. Negative tests flip exactly one field, which breaks the last head only (unless
// its comment says otherwise).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include <onnx/onnx_pb.h>

#include "tests/support/AttentionModels.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite::testing {

/// `heads` attention heads on x: float[B, S, hidden], each its own module.
struct HeadsSpec {
  int heads = 4;
  int hidden = 16;
  int head_size = 4;
  int opset = 17;
  /// false (with heads == 1): a lone head, y = o_0 without the Concat.
  bool concat = true;
  /// kMaskedFill: Where(masked, fill, s2) as masked_fill writes it. kCausalWhere:
  /// Where(keep, s2, fill) with keep true on and below the diagonal, as GPT-2 writes it.
  /// kAdd: Add(s2, Where(masked, fill, 0)), the additive float mask torch.onnx builds for
  /// SDPA from a boolean attn_mask.
  enum class Mask { kNone, kMaskedFill, kCausalWhere, kAdd } mask = Mask::kMaskedFill;
  /// kTrilSlice: masked = Equal(tril[:T, :T], 0) (keep: Equal(., 1)) of a float
  /// [max_positions, max_positions] tril buffer, T read from x's shape at run time.
  /// kConstant: masked (keep) a bool [S, S] initializer, S then the number static_seq.
  enum class MaskSource { kTrilSlice, kConstant } mask_source = MaskSource::kTrilSlice;
  int max_positions = 16;
  int static_seq = 5;
  /// kPerHeadTorchScript: each head reads T through its own Unsqueeze(Gather(Shape(x), 1),
  /// [0]), its small constants are Constant nodes and it has its own tril initializer (equal
  /// contents). kSharedDynamo: one Shape(x, start=1, end=2) read by all heads, constants
  /// and one tril as initializers the heads share.
  enum class ShapeChain {
    kPerHeadTorchScript,
    kSharedDynamo
  } shape_chain = ShapeChain::kPerHeadTorchScript;
  /// kMul: Mul(s, head_size**-0.5). kDiv: Div(s, sqrt(head_size)). kQAndK: Mul(q, c) and
  /// Mul(kt, c) before the MatMul, c = head_size**-0.25 (the dynamo exporter's SDPA).
  enum class Scale { kMul, kDiv, kNone, kQAndK } scale = Scale::kMul;
  /// The masked scores' value. The text format has no -inf: headsModel() writes finfo.min
  /// for it and parsedHeadsModel() sets the real value.
  float fill = -std::numeric_limits<float>::infinity();
  // ---- one field per condition a negative test breaks ----
  bool last_head_scale_differs = false;      ///< its scale factor 0.5 * the others'
  bool last_head_mask_differs = false;       ///< its tril all ones (its constant no mask)
  bool last_head_size_differs = false;       ///< head_size / 2 (its scale follows it)
  bool last_head_reads_other_input = false;  ///< its q projects x2: float[B, S, hidden]
  bool weights_are_inputs = false;           ///< every head's Wq a graph input
  int concat_axis = -1;
  int softmax_axis = -1;           ///< the last head's Softmax
  bool scores_escape = false;      ///< the last head's s2 also a graph output
  std::string k_perm = "0, 2, 1";  ///< the last head's K transpose; "0, 1, 2" needs S == head_size
};

namespace heads_detail {

inline std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// An `n` x `n` body of 0/1 (`one`/`zero` as written), 1 where `on(i, j)`.
template <typename Pred>
std::string square(int n, const char* one, const char* zero, Pred on) {
  std::string out;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      out += std::string(out.empty() ? "" : ", ") + (on(i, j) ? one : zero);
  return out;
}

}  // namespace heads_detail

inline std::string headsModel(const HeadsSpec& s) {
  using S = HeadsSpec;
  using heads_detail::number;
  using heads_detail::square;
  if (!s.concat && s.heads != 1) throw std::invalid_argument("headsModel: no Concat needs 1 head");
  const bool torchscript = s.shape_chain == S::ShapeChain::kPerHeadTorchScript;
  const bool constant_mask = s.mask_source == S::MaskSource::kConstant;
  const std::string seq = constant_mask ? std::to_string(s.static_seq) : "S";
  const std::string hidden = std::to_string(s.hidden);
  std::string body, inits;
  std::string inputs = "float[B, " + seq + ", " + hidden + "] x";
  if (s.last_head_reads_other_input) inputs += ", float[B, " + seq + ", " + hidden + "] x2";
  auto init = [&](const std::string& text) { inits += (inits.empty() ? "" : ", ") + text; };
  // Everything is emitted at its first use, so nodes stay in topological order. TorchScript
  // values are per head (prefixed), dynamo's shared: `defined` keeps the shared ones single.
  std::set<std::string> defined;
  auto scoped = [&](const std::string& p, const std::string& name) {
    return (torchscript ? p : "") + name;
  };
  auto constant = [&](const std::string& p, const std::string& name, const std::string& type,
                      const std::string& value) {
    const std::string full = scoped(p, name);
    if (!defined.insert(full).second) return full;
    if (torchscript)
      body += full + " = Constant <value = " + type + " {" + value + "}> ()\n";
    else
      init(type + " " + full + " = {" + value + "}");
    return full;
  };
  // Buffers are initializers in both exports.
  auto buffer = [&](const std::string& p, const std::string& name, const std::string& type,
                    const std::string& value) {
    const std::string full = scoped(p, name);
    if (defined.insert(full).second) init(type + " " + full + " = {" + value + "}");
    return full;
  };
  // T, the run-time sequence length, as int64[1].
  auto length = [&](const std::string& p) {
    const std::string t = scoped(p, "t");
    if (!defined.insert(t).second) return t;
    if (torchscript) {
      body += p + "shape = Shape(x)\n";
      const std::string i1 = constant(p, "i1", "int64", "1");
      body += p + "tg = Gather <axis = 0> (" + p + "shape, " + i1 + ")\n";
      const std::string ax0 = constant(p, "ax0", "int64[1]", "0");
      body += t + " = Unsqueeze(" + p + "tg, " + ax0 + ")\n";
    } else {
      body += t + " = Shape <start = 1, end = 2> (x)\n";
    }
    return t;
  };
  const std::string fill_text =
      std::isfinite(s.fill) ? number(s.fill) : std::string("-3.4028234663852886e38");
  const bool causal = s.mask == S::Mask::kCausalWhere;
  // The boolean of head p (masked, or keep for kCausalWhere).
  auto maskBool = [&](const std::string& p, bool differs) {
    const std::string suffix = differs ? "_last" : "";
    const int n = constant_mask ? s.static_seq : s.max_positions;
    if (constant_mask) {
      // No masking when it differs: masked all false, keep all true.
      const std::string text = square(n, "1", "0", [&](int i, int j) {
        return differs ? causal : causal ? j <= i : j > i;
      });
      return buffer(p, (causal ? "keep" : "masked") + suffix, "bool[" + seq + ", " + seq + "]",
                    text);
    }
    const std::string tril =
        buffer(p, "tril" + suffix, "float[" + std::to_string(n) + ", " + std::to_string(n) + "]",
               square(n, "1.0", "0.0", [&](int i, int j) { return differs || j <= i; }));
    const std::string t = length(p);
    const std::string zero = constant(p, "zero", "int64[1]", "0");
    const std::string one = constant(p, "one", "int64[1]", "1");
    body += p + "rows = Slice(" + tril + ", " + zero + ", " + t + ", " + zero + ", " + one + ")\n";
    body += p + "sq = Slice(" + p + "rows, " + zero + ", " + t + ", " + one + ", " + one + ")\n";
    const std::string cmp =
        causal ? constant(p, "f_one", "float", "1.0") : constant(p, "f_zero", "float", "0.0");
    const std::string out = p + (causal ? "keep" : "masked");
    body += out + " = Equal(" + p + "sq, " + cmp + ")\n";
    return out;
  };

  std::string outs, out_dim;
  int total = 0;
  for (int h = 0; h < s.heads; ++h) {
    const std::string p = "h" + std::to_string(h) + "_";
    const bool last = h == s.heads - 1;
    const int hs = last && s.last_head_size_differs ? s.head_size / 2 : s.head_size;
    total += hs;
    const std::string hs_str = std::to_string(hs);
    // Projections.
    for (const char* w : {"q", "k", "v"}) {
      const std::string n(w), name = p + "w" + n;
      const std::string type = "float[" + hidden + ", " + hs_str + "]";
      if (n == "q" && s.weights_are_inputs)
        inputs += ", " + type + " " + name;
      else
        init(type + " " + name + " = " +
             attentionWeights(s.hidden, hs,
                              3 * h + (n == "q"   ? 1
                                       : n == "k" ? 2
                                                  : 3)));
      const std::string from = n == "q" && last && s.last_head_reads_other_input ? "x2" : "x";
      body += p + n + " = MatMul(" + from + ", " + name + ")\n";
    }
    body += p + "kt = Transpose <perm = [" + (last ? s.k_perm : "0, 2, 1") + "]> (" + p + "k)\n";
    // Scores. A head of another size has its own scale, as k.shape[-1]**-0.5 gives it.
    const double factor = last && s.last_head_scale_differs ? 0.5 : 1.0;
    const std::string c_name =
        std::string("c") + (factor != 1.0 || hs != s.head_size ? "_last" : "");
    const std::string s2 = p + "s2";
    switch (s.scale) {
      case S::Scale::kMul: {
        const std::string c = constant(p, c_name, "float", number(factor / std::sqrt(hs)));
        body +=
            p + "s = MatMul(" + p + "q, " + p + "kt)\n" + s2 + " = Mul(" + p + "s, " + c + ")\n";
        break;
      }
      case S::Scale::kDiv: {
        const std::string d = constant(p, c_name, "float", number(std::sqrt(hs) / factor));
        body +=
            p + "s = MatMul(" + p + "q, " + p + "kt)\n" + s2 + " = Div(" + p + "s, " + d + ")\n";
        break;
      }
      case S::Scale::kQAndK: {
        const std::string c =
            constant(p, c_name, "float", number(factor / std::sqrt(std::sqrt(hs))));
        body += p + "qs = Mul(" + p + "q, " + c + ")\n" + p + "kts = Mul(" + p + "kt, " + c + ")\n";
        body += s2 + " = MatMul(" + p + "qs, " + p + "kts)\n";
        break;
      }
      case S::Scale::kNone:
        body += s2 + " = MatMul(" + p + "q, " + p + "kt)\n";
        break;
    }
    // Mask.
    std::string m = s2;
    if (s.mask != S::Mask::kNone) {
      const std::string b = maskBool(p, last && s.last_head_mask_differs);
      const std::string fill = constant(p, "fill", "float", fill_text);
      m = p + "m";
      if (s.mask == S::Mask::kMaskedFill) {
        body += m + " = Where(" + b + ", " + fill + ", " + s2 + ")\n";
      } else if (causal) {
        body += m + " = Where(" + b + ", " + s2 + ", " + fill + ")\n";
      } else {
        const std::string zero = constant(p, "f_zero", "float", "0.0");
        body += p + "am = Where(" + b + ", " + fill + ", " + zero + ")\n";
        body += m + " = Add(" + s2 + ", " + p + "am)\n";
      }
    }
    const std::string axis = std::to_string(last ? s.softmax_axis : -1);
    const std::string o = s.concat ? p + "o" : "y";
    body += p + "p = Softmax <axis = " + axis + "> (" + m + ")\n";
    body += o + " = MatMul(" + p + "p, " + p + "v)\n";
    outs += (outs.empty() ? "" : ", ") + o;
  }
  // y's shape; a Concat along another axis than the last has a dim no name here states.
  std::string y_shape = "B, " + seq + ", " + std::to_string(total);
  if (s.concat) {
    body += "y = Concat <axis = " + std::to_string(s.concat_axis) + "> (" + outs + ")\n";
    if (s.concat_axis == 1) y_shape = "B, Y, " + std::to_string(s.head_size);
    if (s.concat_axis == 0) y_shape = "Y, " + seq + ", " + std::to_string(s.head_size);
  }
  std::string outputs = "float[" + y_shape + "] y";
  if (s.scores_escape)
    outputs += ", float[B, " + seq + ", " + seq + "] h" + std::to_string(s.heads - 1) + "_s2";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nheads (" +
         inputs + ") => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

/// The default spec with `edit` applied: headsSpec([](HeadsSpec& s) { s.heads = 2; }).
inline HeadsSpec headsSpec(void (*edit)(HeadsSpec&) = nullptr) {
  HeadsSpec s;
  if (edit) edit(s);
  return s;
}

/// headsModel() parsed, with every fill (the values named *fill, initializers or Constant
/// nodes) set to `s.fill`, which the text format cannot state when it is -inf.
inline onnx::ModelProto parsedHeadsModel(const HeadsSpec& s) {
  onnx::ModelProto model = parseModel(headsModel(s));
  auto isFill = [](const std::string& name) {
    return name.size() >= 4 && name.compare(name.size() - 4, 4, "fill") == 0;
  };
  auto set = [&](onnx::TensorProto& t) {
    if (t.float_data_size() != 1) throw std::runtime_error("headsModel: fill not in float_data");
    t.set_float_data(0, s.fill);
  };
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer())
    if (isFill(t.name())) set(t);
  for (onnx::NodeProto& n : *model.mutable_graph()->mutable_node())
    if (n.op_type() == "Constant" && isFill(n.output(0)))
      for (onnx::AttributeProto& a : *n.mutable_attribute())
        if (a.name() == "value") set(*a.mutable_t());
  return model;
}

}  // namespace onnx_rewrite::testing
