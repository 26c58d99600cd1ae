//===- GeluModels.h - Gelu subgraphs in the forms exporters emit ---------===//
//
// Shared by the rule tests and the oracle tests. Each builder returns ONNX text
// for a model with input x: float[N, 4] and output y.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace onnx_rewrite::testing {

/// How the three factors of x * 0.5 * (1 + erf(x / sqrt 2)) are written.
enum class GeluForm {
  kTorchScript,     ///< Mul(Mul(x, 1 + erf), 0.5): torch.onnx's export of F.gelu
  kHuggingFace,     ///< Mul(Mul(x, 0.5), 1 + erf): HF's gelu written in Python
  kHalfFirst,       ///< Mul(x, Mul(0.5, erf + 1)): constant first, 1 after erf
  kReciprocalScale  ///< erf(x * 0.70710678) instead of erf(x / 1.41421356)
};

/// A Gelu in `form`. `half`, `one` and `sqrt2` let negative tests break one constant;
/// `opset` the ONNX opset imported; `bias` adds Add(x0, b) with b: float[4] in front.
inline std::string geluModel(GeluForm form, int opset = 17, const std::string& half = "0.5",
                             const std::string& one = "1.0", const std::string& sqrt2 = "1.4142135",
                             bool bias = false) {
  const std::string x = bias ? "xb" : "x";
  std::string scaled = form == GeluForm::kReciprocalScale ? "s = Mul(" + x + ", inv_sqrt2)\n"
                                                          : "s = Div(" + x + ", sqrt2)\n";
  std::string body = (bias ? "xb = Add(x, b)\n" : "") + scaled + "e = Erf(s)\n";
  switch (form) {
    case GeluForm::kTorchScript:
    case GeluForm::kReciprocalScale:
      body += "p = Add(e, one)\nm = Mul(" + x + ", p)\ny = Mul(m, half)\n";
      break;
    case GeluForm::kHuggingFace:
      body += "p = Add(e, one)\nm = Mul(" + x + ", half)\ny = Mul(m, p)\n";
      break;
    case GeluForm::kHalfFirst:
      body += "p = Add(one, e)\nm = Mul(half, p)\ny = Mul(" + x + ", m)\n";
      break;
  }
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         "]>\ngelu (float[N, 4] x) => (float[N, 4] y) <float half = {" + half + "}, float one = {" +
         one + "}, float sqrt2 = {" + sqrt2 +
         "}, float inv_sqrt2 = {0.70710678}, float[4] b = {0.1, -0.2, 0.3, -0.4}> {\n" + body +
         "}\n";
}

}  // namespace onnx_rewrite::testing
