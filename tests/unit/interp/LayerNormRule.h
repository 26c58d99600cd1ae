//===- LayerNormRule.h - docs/dsl.md's LayerNorm rule and models for it ---===//
//
// Shared by the end-to-end test and the allocation test: the rule as the Rule
// IR a front end builds, and LayerNorm as torch.onnx (opset 17) and opset 18
// write it out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tests/unit/interp/RuleBuilder.h"

namespace onnx_rewrite::interp_test {

/// rules/layer_norm.yaml of docs/dsl.md:
///   mean = ReduceMean(x, axes=[-1], keepdims=1)
///   d    = Sub(x, mean)
///   var  = ReduceMean(Pow(d, 2.0) | Mul(d, d), axes=[-1], keepdims=1)
///   std  = Sqrt(Add(var, eps))
///   y    = Add(Mul(Div(d, std) | Mul(d, Reciprocal(std)), scale), bias)
///   where eps: { scalar: [0, 1e-3] }, scale: { rank: 1 }, bias: { rank: 1 }
///   rewrite: y = LayerNormalization(x, scale, bias, axis=-1, epsilon=value(eps))
inline Rule layerNormRule() {
  Rule r("layer_norm", 100);
  r.tags({"ort", "onnx"});
  r.requires("", 17);
  auto reduce = [&](ExprId in) {
    return r.op("ReduceMean", {in}, {eq("axes", Is({-1})), eq("keepdims", I(1), I(1))});
  };
  ExprId mean = r.named(reduce(r.cap("x")), "mean");
  ExprId d = r.named(r.op("Sub", {r.cap("x"), mean}), "d");
  ExprId var =
      r.named(reduce(r.alt({r.op("Pow", {d, r.cst(F(2.0))}), r.op("Mul", {d, d})})), "var");
  ExprId std = r.named(r.op("Sqrt", {r.op("Add", {var, r.cap("eps")})}), "std");
  ExprId normed = r.alt({r.op("Div", {d, std}), r.op("Mul", {d, r.op("Reciprocal", {std})})});
  r.root(r.op("Add", {r.op("Mul", {normed, r.cap("scale")}), r.cap("bias")}), "y");
  r.scalar("eps", 0.0, 1e-3);
  r.rank("scale", {1});
  r.rank("bias", {1});
  Target t = r.rewrite();
  t.replace("y", t.op("LayerNormalization", {t.ref("x"), t.ref("scale"), t.ref("bias")},
                      {lit("axis", I(-1)), valueOf("epsilon", "eps")}));
  return r;
}

inline constexpr const char* kWeights = R"(<float two = {2.0}, float eps = {1e-5},
    float[16] scale = {0.5, 1.5, -1.0, 2.0, 0.25, 1.0, 1.0, 0.75, 1.25, -0.5, 3.0, 1.0, 0.1, 0.9, 1.1, 2.5},
    float[16] bias = {0.0, 0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9, -1.0, 1.1, -1.2, 1.3, -1.4, 1.5}%s>)";

inline std::string weights(const std::string& extra = "") {
  std::string w = kWeights;
  w.replace(w.find("%s"), 2, extra);
  return w;
}

/// torch.onnx (TorchScript) at opset 17: axes attributes, Pow and Div.
inline std::string torchOpset17() {
  return R"(<ir_version: 8, opset_import: ["" : 17]>
ln (float[batch, seq, 16] x) => (float[batch, seq, 16] y) )" +
         weights() + R"( {
  mean = ReduceMean <axes = [-1]> (x)
  d = Sub(x, mean)
  p = Pow(d, two)
  var = ReduceMean <axes = [-1]> (p)
  ve = Add(var, eps)
  std = Sqrt(ve)
  n = Div(d, std)
  s = Mul(n, scale)
  y = Add(s, bias)
}
)";
}

/// Opset 18: axes inputs ([2] and [-1]), Mul(d, d), Reciprocal, operands swapped.
inline std::string opset18() {
  return R"(<ir_version: 8, opset_import: ["" : 18]>
ln (float[batch, seq, 16] x) => (float[batch, seq, 16] y) )" +
         weights(", int64[1] last = {-1}, int64[1] two_axis = {2}") + R"( {
  mean = ReduceMean <keepdims = 1> (x, two_axis)
  d = Sub(x, mean)
  p = Mul(d, d)
  var = ReduceMean(p, last)
  ve = Add(eps, var)
  std = Sqrt(ve)
  r = Reciprocal(std)
  n = Mul(r, d)
  s = Mul(scale, n)
  y = Add(bias, s)
}
)";
}

}  // namespace onnx_rewrite::interp_test
