//===- TypeParams.h - which inputs of an ai.onnx op share a type ----------===//
//
// ONNX Runtime refuses a node whose inputs bound to one type parameter have different
// element types (Add of float and float16); the shape inference functions do not check
// it. The soundness check asks this of every node a rewrite creates, so it must be cheap:
// the answer comes from a table gen_type_params writes at build time from ONNX's schema
// registry, and the registry itself (several milliseconds to build) is never started for
// it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace onnx_rewrite {

/// The formal inputs of ai.onnx op `op` at opset `opset` (ONNX 1.12's schema, the newest
/// version at or below `opset`): one word per formal input, separated by spaces, naming
/// its type parameter ("T") or '.' for an input of fixed type; '*' after the last word when
/// that input is variadic and homogeneous, '?' when heterogeneous. Empty when the op has no
/// schema at that opset, or no inputs.
std::string_view onnxTypeParams(std::string_view op, int64_t opset);

/// One formal input of onnxTypeParams's signature, read.
struct FormalInput {
  std::string_view param;  ///< its type parameter, "." for a fixed type
  char variadic = 0;       ///< '*' homogeneous or '?' heterogeneous variadic last input; 0
};

/// The formal inputs of `op` at `opset` (onnxTypeParams), in order; empty when unknown.
std::vector<FormalInput> onnxFormalInputs(std::string_view op, int64_t opset);

}  // namespace onnx_rewrite
