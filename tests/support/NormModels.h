//===- NormModels.h - normalization subgraphs as exporters emit them -----===//
//
// Builders of small models in ONNX text format, parametrised by the variants the
// normalization rules claim: torch.onnx TorchScript's LayerNorm (opset 13-17:
// ReduceMean axes attribute; 18+: axes input), Pow vs Mul-by-itself, Div vs
// Reciprocal-then-Mul, with or without scale and bias, fp16 Cast sandwiches,
// LLaMA/T5 RMSNorm, and BERT/GPT-2 residual Adds in front of a LayerNorm.
// Negative tests flip exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace onnx_rewrite::testing {

/// A decomposed LayerNorm over the last axis of x: float[B, S, 8].
struct LayerNormSpec {
  int opset = 17;
  bool pow = true;         ///< Pow(d, 2) (else Mul(d, d))
  bool div = true;         ///< Div(d, std) (else Mul(d, Reciprocal(std)))
  bool scale = true;       ///< Mul by gamma
  bool bias = true;        ///< Add beta
  bool eps_first = false;  ///< Add(eps, var) instead of Add(var, eps)
  bool fp16 = false;       ///< x and gamma/beta fp16, computed in float between two Casts
  std::string exponent = "2.0";
  std::string eps = "1e-5";
  int keepdims = 1;
  std::string axes = "-1";       ///< of both ReduceMeans
  std::string gamma_dims = "8";  ///< "1, 1, 8" for a 3-D gamma
  bool eps_is_input = false;     ///< eps a graph input (not constant)
  bool leak_d = false;           ///< also output d (an intermediate used outside)
};

inline std::string layerNormModel(const LayerNormSpec& s) {
  const std::string t = s.fp16 ? "float16" : "float";
  const std::string op = std::to_string(s.opset);
  const bool axes_input = s.opset >= 18;
  auto reduce = [&](const std::string& out, const std::string& in) {
    std::string keep = "keepdims = " + std::to_string(s.keepdims);
    return axes_input
               ? out + " = ReduceMean <" + keep + "> (" + in + ", axes)\n"
               : out + " = ReduceMean <axes = [" + s.axes + "], " + keep + "> (" + in + ")\n";
  };
  std::string body;
  std::string x = "x";
  if (s.fp16) {
    body += "xf = Cast <to = 1> (x)\n";
    x = "xf";
  }
  body += reduce("mean", x);
  body += "d = Sub(" + x + ", mean)\n";
  body += s.pow ? "p = Pow(d, two)\n" : "p = Mul(d, d)\n";
  body += reduce("var", "p");
  body += s.eps_first ? "ve = Add(eps, var)\n" : "ve = Add(var, eps)\n";
  body += "std = Sqrt(ve)\n";
  body += s.div ? "n = Div(d, std)\n" : "r = Reciprocal(std)\nn = Mul(d, r)\n";
  std::string last = "n";
  if (s.fp16) {
    body += "nh = Cast <to = 10> (n)\n";
    last = "nh";
  }
  // ONNX 1.12's text format has no float16 literals: fp16 weights are float constants
  // Cast once, which is what they look like to a rule (a value of type float16).
  std::string gamma = "gamma", beta = "beta";
  if (s.fp16) {
    body = "gamma = Cast <to = 10> (gamma32)\nbeta = Cast <to = 10> (beta32)\n" + body;
    gamma = "gamma32";
    beta = "beta32";
  }
  if (s.scale) {
    body += "m = Mul(" + last + ", gamma)\n";
    last = "m";
  }
  body += s.bias ? "y = Add(" + last + ", beta)\n" : "y = Identity(" + last + ")\n";
  std::string inits = "float two = {" + s.exponent + "}, float[" + s.gamma_dims + "] " + gamma +
                      " = {1.5, 0.5, 1, 2, 1, 1, 0.25, 3}, float[8] " + beta +
                      " = {0.1, 0.2, 0, -0.1, 0.5, 0, 0, 1}";
  if (!s.eps_is_input) inits += ", float eps = {" + s.eps + "}";
  if (axes_input) inits += ", int64[1] axes = {" + s.axes + "}";
  std::string inputs = t + "[B, S, 8] x" + std::string(s.eps_is_input ? ", float eps" : "");
  std::string outputs = t + "[B, S, 8] y" + std::string(s.leak_d ? ", float[B, S, 8] d" : "");
  // Without bias the last node is an Identity, as exporters leave one; canonicalization
  // removes it.
  return "<ir_version: 8, opset_import: [\"\" : " + op + "]>\nln (" + inputs + ") => (" + outputs +
         ") <" + inits + "> {\n" + body + "}\n";
}

/// A decomposed RMSNorm (SimplifiedLayerNormalization) over the last axis of x: [B, S, 8].
struct RmsNormSpec {
  int opset = 17;
  bool cast_in = true;       ///< LLaMA: Cast(x, to=float) first
  bool cast_out = true;      ///< Cast back before the weight
  bool fp16 = false;         ///< x and weight fp16 (with both Casts)
  bool reciprocal = true;    ///< Mul(x, Reciprocal(Sqrt)) (else Div(x, Sqrt))
  bool one_over = false;     ///< TorchScript's rsqrt: Mul(x, Div(1, Sqrt)) (overrides reciprocal)
  bool pow = true;           ///< Pow(x, 2) (else Mul(x, x))
  bool weight_first = true;  ///< Mul(weight, h) as LLaMA writes it (else Mul(h, weight))
  std::string exponent = "2.0";
  std::string eps = "1e-6";
  std::string axes = "-1";
};

inline std::string rmsNormModel(const RmsNormSpec& s) {
  const std::string t = s.fp16 ? "float16" : "float";
  const bool axes_input = s.opset >= 18;
  std::string body, x = "x";
  if (s.cast_in) {
    body += "xf = Cast <to = 1> (x)\n";
    x = "xf";
  }
  body += s.pow ? "p = Pow(" + x + ", two)\n" : "p = Mul(" + x + ", " + x + ")\n";
  body += axes_input ? "var = ReduceMean <keepdims = 1> (p, axes)\n"
                     : "var = ReduceMean <axes = [" + s.axes + "], keepdims = 1> (p)\n";
  body += "ve = Add(var, eps)\nstd = Sqrt(ve)\n";
  if (s.one_over)
    body += "r = Div(one, std)\nh = Mul(" + x + ", r)\n";
  else
    body +=
        s.reciprocal ? "r = Reciprocal(std)\nh = Mul(" + x + ", r)\n" : "h = Div(" + x + ", std)\n";
  std::string h = "h";
  if (s.cast_out) {
    body += std::string("hc = Cast <to = ") + (s.fp16 ? "10" : "1") + "> (h)\n";
    h = "hc";
  }
  body += s.weight_first ? "y = Mul(weight, " + h + ")\n" : "y = Mul(" + h + ", weight)\n";
  // No float16 literals in ONNX 1.12's text format: an fp16 weight is a Cast float constant.
  if (s.fp16) body = "weight = Cast <to = 10> (weight32)\n" + body;
  std::string inits = "float two = {" + s.exponent + "}, float eps = {" + s.eps + "}, float[8] " +
                      (s.fp16 ? "weight32" : "weight") + " = {1.5, 0.5, 1, 2, 1, 1, 0.25, 3}";
  if (axes_input) inits += ", int64[1] axes = {" + s.axes + "}";
  if (s.one_over) inits += ", float[1] one = {1.0}";
  const std::string out_t = s.fp16 || !s.cast_out ? t : "float";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\nrms (" + t +
         "[B, S, 8] x) => (" + out_t + "[B, S, 8] y) <" + inits + "> {\n" + body + "}\n";
}

/// A residual Add (and optional 1-D bias Add) in front of a decomposed LayerNorm, as BERT
/// (post-LN) and GPT-2 (pre-LN, where the sum also feeds the next residual) emit them.
struct SkipLayerNormSpec {
  int opset = 17;
  enum class Bias { kNone, kBefore, kAfter } bias = Bias::kNone;
  bool sum_used_elsewhere = false;  ///< GPT-2: the residual sum is also a later input
  bool skip_first = false;          ///< Add(skip, a) instead of Add(a, skip)
  std::string skip_dims = "B, S, 8";
  std::string bias_dims = "8";
  bool simplified = false;   ///< RMSNorm instead of LayerNorm (SkipSimplifiedLayerNormalization)
  bool a_from_node = false;  ///< a is computed (Relu of the input), so its shape is inferred
};

inline std::string skipLayerNormModel(const SkipLayerNormSpec& s) {
  std::string body = s.a_from_node ? "a = Relu(a_in)\n" : "";
  std::string a = "a";
  if (s.bias == SkipLayerNormSpec::Bias::kBefore) {
    body += "ab = Add(a, bias)\n";
    a = "ab";
  }
  body += s.skip_first ? "s0 = Add(skip, " + a + ")\n" : "s0 = Add(" + a + ", skip)\n";
  std::string sum = "s0";
  if (s.bias == SkipLayerNormSpec::Bias::kAfter) {
    body += "s1 = Add(s0, bias)\n";
    sum = "s1";
  }
  const bool axes_input = s.opset >= 18;
  auto reduce = [&](const std::string& out, const std::string& in) {
    return axes_input ? out + " = ReduceMean <keepdims = 1> (" + in + ", axes)\n"
                      : out + " = ReduceMean <axes = [-1], keepdims = 1> (" + in + ")\n";
  };
  if (s.simplified) {
    body += "p = Pow(" + sum + ", two)\n" + reduce("var", "p") +
            "ve = Add(var, eps)\nstd = Sqrt(ve)\nr = Reciprocal(std)\nh = Mul(" + sum +
            ", r)\ny = Mul(gamma, h)\n";
  } else {
    body += reduce("mean", sum) + "d = Sub(" + sum + ", mean)\np = Pow(d, two)\n" +
            reduce("var", "p") +
            "ve = Add(var, eps)\nstd = Sqrt(ve)\nn = Div(d, std)\nm = Mul(n, gamma)\ny = Add(m, "
            "beta)\n";
  }
  std::string outputs = "float[B, S, 8] y";
  if (s.sum_used_elsewhere) {
    body += "z = Relu(" + sum + ")\n";
    outputs += ", float[B, S, 8] z";
  }
  std::string inits =
      "float two = {2.0}, float eps = {1e-12}, float[8] gamma = {1.5, 0.5, 1, 2, 1, 1, 0.25, 3}, "
      "float[8] beta = {0.1, 0.2, 0, -0.1, 0.5, 0, 0, 1}";
  if (s.bias != SkipLayerNormSpec::Bias::kNone) {
    inits += ", float[" + s.bias_dims + "] bias = {0.3, -0.3, 0.2, 0.1, 0, 0, 0.7, -1}";
  }
  if (axes_input) inits += ", int64[1] axes = {-1}";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) +
         "]>\nskip (float[B, S, 8] " + (s.a_from_node ? "a_in" : "a") + ", float[" + s.skip_dims +
         "] skip) => (" + outputs + ") <" + inits + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
