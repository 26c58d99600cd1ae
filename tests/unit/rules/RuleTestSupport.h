//===- RuleTestSupport.h - running the shipped rules in tests -------------===//
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite::testing {

/// The rules of rules/ (every file), loaded and checked once, run by the interpreter.
const RuleSet& shippedRules();

/// Rewrites `text` (ONNX text format) with the shipped rules as the CLI does (shape
/// inference on) and returns the op types of the result; `model` receives the result.
std::vector<std::string> fuse(const std::string& text, onnx::ModelProto* model = nullptr,
                              Result* result = nullptr);

/// Expects the shipped rules whose names match `only` (RE2; all if empty) to leave `text`
/// byte-identical.
void expectUnchanged(const std::string& text, const std::string& only = "");

/// Expects the rewrite of `text` to compute the same outputs in ONNX Runtime.
void expectSameInOrt(const std::string& text, const std::string& tolerance = "");

}  // namespace onnx_rewrite::testing
