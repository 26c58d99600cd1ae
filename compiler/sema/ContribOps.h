//===- ContribOps.h - the ONNX Runtime contrib ops rules emit, in C++ -----===//
//
// rules/com_microsoft.yaml declares the ONNX Runtime contrib ops our rules emit
// (Gelu, FastGelu, SkipLayerNormalization, RotaryEmbedding, the attention ops,
// ...) so the checks verify rewrites against their signatures. This is the same
// table in C++, for callers that run the checks without reading that file (the
// rule loader, tests); a test keeps the two identical.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// The declarations of rules/com_microsoft.yaml: com.microsoft ops, plus the two ops ONNX
/// Runtime registers in the ONNX domain "" that rules emit below the opset where ONNX
/// defines them (SimplifiedLayerNormalization, LayerNormalization).
std::vector<ir::OpDecl> contribOpDecls();

}  // namespace onnx_rewrite
