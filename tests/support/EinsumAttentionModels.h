//===- EinsumAttentionModels.h - attention as tf2onnx exports Keras's ----===//
//
// One self-attention block in ONNX text format as tf2onnx converts TensorFlow's Keras /
// TF-models MultiHeadAttention (BERT from TensorFlow): EinsumDense projections
// einsum("abc,cde->abde", x, W [D, N, H]) + b [N, H], the query scaled by 1/sqrt(H), the
// scores einsum("aecd,abcd->acbe", key, query), an additive mask, Softmax over the keys,
// the context einsum("acbe,aecd->abcd", probs, value) and the output projection
// einsum("abcd,cde->abe", context, Wo). Hidden size 8, 2 heads of 4. Negative tests flip
// exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tests/support/AttentionModels.h"

namespace onnx_rewrite::testing {

struct EinsumAttentionSpec {
  int opset = 13;
  bool mask = true;  ///< Add of a float[B, 1, 1, S] mask to the scores
  // ---- one field per condition a negative test breaks ----
  std::string scores_equation = "aecd,abcd->acbe";
  std::string softmax_axis = "3";
  bool scale_is_input = false;  ///< the query's scale a graph input (not constant)
};

inline std::string einsumAttentionModel(const EinsumAttentionSpec& s) {
  std::string inits = "float[8, 2, 4] wq = " + attentionWeights(8, 8, 1) +
                      ", float[8, 2, 4] wk = " + attentionWeights(8, 8, 2) +
                      ", float[8, 2, 4] wv = " + attentionWeights(8, 8, 3) +
                      ", float[2, 4] bq = " + attentionWeights(1, 8, 4) +
                      ", float[2, 4] bk = " + attentionWeights(1, 8, 5) +
                      ", float[2, 4] bv = " + attentionWeights(1, 8, 6) +
                      ", float[2, 4, 8] wo = " + attentionWeights(8, 8, 7) +
                      ", float[8] bo = " + attentionWeights(1, 8, 8);
  std::string inputs = "float[B, S, 8] x";
  if (s.mask) inputs += ", float[B, 1, 1, S] mask";
  if (s.scale_is_input)
    inputs += ", float c";
  else
    inits += ", float c = {0.5}";
  std::string body;
  for (const char* p : {"q", "k", "v"}) {
    const std::string n(p);
    body += n + "e = Einsum <equation = \"abc,cde->abde\"> (x, w" + n + ")\n";
    body += n + "p = Add(" + n + "e, b" + n + ")\n";
  }
  body += "qs = Mul(qp, c)\n";
  body += "s = Einsum <equation = \"" + s.scores_equation + "\"> (kp, qs)\n";
  std::string scores = "s";
  if (s.mask) {
    body += "sm = Add(s, mask)\n";
    scores = "sm";
  }
  body += "pr = Softmax <axis = " + s.softmax_axis + "> (" + scores + ")\n";
  body += "o = Einsum <equation = \"acbe,aecd->abcd\"> (pr, vp)\n";
  body += "oe = Einsum <equation = \"abcd,cde->abe\"> (o, wo)\ny = Add(oe, bo)\n";
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(s.opset) + "]>\ntf_attn (" +
         inputs + ") => (float[B, S, 8] y)\n<" + inits + ">\n{\n" + body + "}\n";
}

}  // namespace onnx_rewrite::testing
