//===- GeluRules.h - hand-written Gelu fusions ----------------------------===//
//
// Written by hand in C++ while the rule language is being built, they exercise
// the driver, the rewriter and the escape check on a real fusion that ONNX
// Runtime can verify. The DSL versions in rules/ replace them (issue 5).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "runtime/driver/RewritePattern.h"

namespace onnx_rewrite {

/// x * 0.5 * (1 + Erf(x / sqrt(2))) in any association and operand order, with the
/// division written as Div(x, 1.41421) or Mul(x, 0.70710) -> com.microsoft Gelu(x), or
/// ONNX Gelu when the graph imports opset >= 20.
std::unique_ptr<RewritePattern> makeGeluErfRule();

/// Gelu(Add(x, b)) with b a constant 1-D tensor of x's last (static) dim ->
/// com.microsoft BiasGelu(x, b).
std::unique_ptr<RewritePattern> makeBiasGeluRule();

}  // namespace onnx_rewrite
