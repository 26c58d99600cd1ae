//===- GeluModels.h - Gelu subgraphs in the forms exporters emit ---------===//
//
// Shared by the rule tests (tests/unit/rules/GeluRulesTest.cc), the CLI tests
// and the oracle tests. geluModel's models have input x: float[N, 4]; the other
// builders' inputs have the symbolic dims B and S (the rule tests' ORT check sets
// them). Every builder returns ONNX text with output y; negatives flip one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace onnx_rewrite::testing {

/// How the three factors of x * 0.5 * (1 + erf(x / sqrt 2)) are written.
enum class GeluForm {
  kTorchScript,      ///< Mul(Mul(x, 1 + erf), 0.5): torch.onnx's export of F.gelu
  kHuggingFace,      ///< Mul(Mul(x, 0.5), 1 + erf): HF's gelu written in Python
  kHalfFirst,        ///< Mul(x, Mul(0.5, erf + 1)): constant first, 1 after erf
  kReciprocalScale,  ///< erf(x * 0.70710678) instead of erf(x / 1.41421356)
  kDynamo,           ///< torchlib's aten_gelu: Mul(x, Mul(0.5, erf + 1))
  kDynamoOuterHalf   ///< older torchlib: Mul(0.5, Mul(x, erf + 1))
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
    case GeluForm::kDynamo:
      body += "p = Add(e, one)\nm = Mul(half, p)\ny = Mul(" + x + ", m)\n";
      break;
    case GeluForm::kDynamoOuterHalf:
      body += "p = Add(e, one)\nm = Mul(" + x + ", p)\ny = Mul(half, m)\n";
      break;
  }
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         "]>\ngelu (float[N, 4] x) => (float[N, 4] y) <float half = {" + half + "}, float one = {" +
         one + "}, float sqrt2 = {" + sqrt2 +
         "}, float inv_sqrt2 = {0.70710678}, float[4] b = {0.1, -0.2, 0.3, -0.4}> {\n" + body +
         "}\n";
}

/// The initializers and body of a model over x: float[B, S, 4], as ONNX text.
inline std::string bsModel(int opset, const std::string& inits, const std::string& body,
                           const std::string& extra_outputs = "",
                           const std::string& elem = "float") {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + elem +
         "[B, S, 4] x) => (" + elem + "[B, S, 4] y" + extra_outputs + ") <" + inits + "> {\n" +
         body + "}\n";
}

/// The tanh approximation 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
struct FastGeluSpec {
  enum class Form {
    kHuggingFace,     ///< NewGELUActivation / GPT-2 gelu_new: Mul(Mul(x, 0.5), 1 + tanh), Pow(x, 3)
    kTorchScript,     ///< torch gelu(approximate='tanh'), TorchScript: x * (x * x), constants first
    kDynamo,          ///< torchlib: Pow(x, 3) (int exponent), Mul(x, Mul(0.5, tanh + 1))
    kDynamoUnfolded,  ///< torchlib before constant folding: Sqrt(CastLike(Div(2, pi), x))
    kHuggingFaceFast  ///< FastGELUActivation: Tanh(x * beta * (1 + kappa * x * x))
  };
  Form form = Form::kHuggingFace;
  int opset = 17;
  std::string kappa = "0.044715";
  std::string beta = "0.7978845608";
  std::string half = "0.5";
  std::string one = "1.0";
  std::string exponent = "3.0";
  bool bias = false;           ///< x = Add(x0, b) with b: float[4] in front
  bool leak_tanh = false;      ///< also output the Tanh (an intermediate used outside)
  bool cube_of_other = false;  ///< the cube reads another tensor z (broken sharing)
};

inline std::string fastGeluModel(const FastGeluSpec& s) {
  using F = FastGeluSpec::Form;
  std::string body;
  std::string x = "x";
  if (s.bias) {
    body += "xb = Add(x, b)\n";
    x = "xb";
  }
  const std::string cx = s.cube_of_other ? "z" : x;
  if (s.cube_of_other) body += "z = Neg(" + x + ")\n";
  switch (s.form) {
    case F::kHuggingFace:
      body += "h = Mul(" + x + ", half)\nc = Pow(" + cx + ", three)\nkc = Mul(c, kappa)\n" +
              "i = Add(" + x + ", kc)\nbi = Mul(i, beta)\nt = Tanh(bi)\np = Add(t, one)\n" +
              "y = Mul(h, p)\n";
      break;
    case F::kTorchScript:
      body += "xx = Mul(" + cx + ", " + cx + ")\nc = Mul(" + cx + ", xx)\nkc = Mul(kappa, c)\n" +
              "i = Add(" + x + ", kc)\nbi = Mul(beta, i)\nt = Tanh(bi)\np = Add(one, t)\n" +
              "m = Mul(" + x + ", p)\ny = Mul(half, m)\n";
      break;
    case F::kDynamo:
      body += "c = Pow(" + cx + ", three_i)\nkc = Mul(kappa, c)\ni = Add(" + x + ", kc)\n" +
              "bi = Mul(beta, i)\nt = Tanh(bi)\np = Add(t, one)\nm = Mul(half, p)\n" + "y = Mul(" +
              x + ", m)\n";
      break;
    case F::kDynamoUnfolded:
      body += "c = Pow(" + cx + ", three)\nkc = Mul(kappa, c)\ni = Add(" + x + ", kc)\n" +
              "q = Div(two, pi)\nql = CastLike(q, " + x + ")\nsq = Sqrt(ql)\n" +
              "bi = Mul(sq, i)\nt = Tanh(bi)\np = Add(t, one)\nm = Mul(" + x + ", p)\n" +
              "y = Mul(half, m)\n";
      break;
    case F::kHuggingFaceFast:
      body += "h = Mul(" + x + ", half)\nxb2 = Mul(" + x + ", beta)\nkx = Mul(kappa, " + cx +
              ")\nkxx = Mul(kx, " + cx + ")\nq = Add(kxx, one)\nbi = Mul(xb2, q)\n" +
              "t = Tanh(bi)\np = Add(t, one)\ny = Mul(h, p)\n";
      break;
  }
  std::string inits = "float half = {" + s.half + "}, float one = {" + s.one +
                      "}, float kappa = {" + s.kappa + "}, float beta = {" + s.beta +
                      "}, float three = {" + s.exponent + "}, int64 three_i = {3}, " +
                      "float two = {2.0}, float pi = {3.14159265}, " +
                      "float[4] b = {0.1, -0.2, 0.3, -0.4}";
  return bsModel(s.opset, inits, body, s.leak_tanh ? ", float[B, S, 4] t" : "");
}

/// CLIP's quick_gelu: x * Sigmoid(alpha * x).
struct QuickGeluSpec {
  int opset = 17;
  std::string alpha = "1.702";
  std::string alpha_dims = "";    ///< "4" for a per-channel (non-scalar) alpha
  bool sigmoid_of_other = false;  ///< Sigmoid(alpha * z), z another tensor
  bool alpha_first = false;       ///< Mul(alpha, x) (else Mul(x, alpha))
  bool silu = false;              ///< SiLU: Sigmoid(x) itself, no alpha (LLaMA's MLP)
};

inline std::string quickGeluModel(const QuickGeluSpec& s) {
  const std::string in = s.sigmoid_of_other ? "z" : "x";
  std::string body = s.sigmoid_of_other ? "z = Neg(x)\n" : "";
  if (s.silu) {
    body += "sg = Sigmoid(" + in + ")\ny = Mul(sg, x)\n";
    return bsModel(s.opset, "float unused = {0.0}", body);
  }
  body += s.alpha_first ? "a = Mul(alpha, " + in + ")\n" : "a = Mul(" + in + ", alpha)\n";
  body += "sg = Sigmoid(a)\ny = Mul(x, sg)\n";
  std::string alpha = "float";
  if (!s.alpha_dims.empty()) alpha += "[" + s.alpha_dims + "]";
  std::string values = s.alpha;
  if (!s.alpha_dims.empty()) values = s.alpha + ", " + s.alpha + ", 1.0, " + s.alpha;
  return bsModel(s.opset, alpha + " alpha = {" + values + "}", body);
}

/// MatMuls with a Transpose of A and/or B, and a scalar scale, as attention and linear
/// layers export them. a: float[B, S, 4] (x), b: float[B, S, 4] or float[B, 4, S] (z).
struct MatMulSpec {
  std::string perm_a = "";  ///< a Transpose of A with this perm ("" none)
  std::string perm_b = "";  ///< a Transpose of B with this perm ("" none)
  enum class Scale { kNone, kMul, kDiv, kDivByConstantFirst } scale = Scale::kNone;
  std::string scale_value = "2.0";
  bool scale_is_input = false;  ///< the scale a graph input (not a constant)
  std::string scale_dims = "";  ///< dims of the one-element scale ("1, 1, 1, 1"); "" a scalar
  /// The same scalar c on one MatMul input instead (after any Transpose): Mul(A, c) or Div(B, c).
  enum class InputScale { kNone, kMulA, kDivB } input_scale = InputScale::kNone;
  bool rank4 = false;           ///< 4-D inputs [B, 2, S, 4] (heads split, as in LLaMA)
  std::string elem = "float";   ///< element type of both inputs
  bool leak_transpose = false;  ///< also output the Transpose of B (used outside)
  int opset = 17;
};

/// The dims of B's Transpose output.
inline std::string transposedZDims(const MatMulSpec& s) {
  return s.rank4 ? "[B, 2, 4, S]" : "[B, 4, S]";
}

inline std::string matMulModel(const MatMulSpec& s) {
  const std::string t = s.elem;
  const std::string dims = s.rank4 ? "[B, 2, S, 4]" : "[B, S, 4]";
  // B's layout: z is [B, S, 4]; a Transpose makes it [B, 4, S], so y is [B, S, S].
  // Without a Transpose of B, z is [B, 4, S] already. A transposed: x is [B, 4, S].
  const std::string x_dims = s.perm_a.empty() ? dims : (s.rank4 ? "[B, 2, 4, S]" : "[B, 4, S]");
  const std::string z_dims = s.perm_b.empty() ? (s.rank4 ? "[B, 2, 4, S]" : "[B, 4, S]") : dims;
  const std::string y_dims = s.rank4 ? "[B, 2, S, S]" : "[B, S, S]";
  std::string body, a = "x", b = "z";
  if (!s.perm_a.empty()) {
    body += "ta = Transpose <perm = [" + s.perm_a + "]> (x)\n";
    a = "ta";
  }
  if (!s.perm_b.empty()) {
    body += "tb = Transpose <perm = [" + s.perm_b + "]> (z)\n";
    b = "tb";
  }
  if (s.input_scale == MatMulSpec::InputScale::kMulA) {
    body += "sa = Mul(" + a + ", c)\n";
    a = "sa";
  } else if (s.input_scale == MatMulSpec::InputScale::kDivB) {
    body += "sb = Div(" + b + ", c)\n";
    b = "sb";
  }
  const std::string mm = s.scale == MatMulSpec::Scale::kNone ? "y" : "m";
  body += mm + " = MatMul(" + a + ", " + b + ")\n";
  switch (s.scale) {
    case MatMulSpec::Scale::kNone:
      break;
    case MatMulSpec::Scale::kMul:
      body += "y = Mul(m, c)\n";
      break;
    case MatMulSpec::Scale::kDiv:
      body += "y = Div(m, c)\n";
      break;
    case MatMulSpec::Scale::kDivByConstantFirst:
      body += "y = Div(c, m)\n";
      break;
  }
  const std::string c = "float" + (s.scale_dims.empty() ? "" : "[" + s.scale_dims + "]") +
                        " c = {" + s.scale_value + "}";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\ng (" + t +
         x_dims + " x, " + t + z_dims + " z" + (s.scale_is_input ? ", " + t + " c" : "") +
         ") => (" + t + y_dims + " y" +
         (s.leak_transpose ? ", " + t + transposedZDims(s) + " tb" : "") + ") <" +
         (s.scale_is_input ? "float unused = {0.0}" : c) + "> {\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
