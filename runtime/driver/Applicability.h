//===- Applicability.h - why a rule cannot run in a graph ----------------===//
//
// --explain must say why a rule never ran. One reason is its applicability: the
// opsets and domains the model must import (`requires:` in a rule file). Rules
// state it only as RewritePattern::appliesTo, a predicate over the graph's opset
// imports, so the reason is found by asking that predicate: the model's imports
// with the ai.onnx version varied over every opset show the range the rule accepts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "runtime/driver/RewritePattern.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// Why `rule` does not apply to `graph` of `model`, e.g. "it requires ai.onnx >= 13, the
/// model imports ai.onnx 11"; empty when rule.appliesTo(graph).
std::string whyNotApplicable(const RewritePattern& rule, Model& model, const Graph& graph);

}  // namespace onnx_rewrite
