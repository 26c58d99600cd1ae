//===- RulePrinter.h - Rule IR as canonical text (rulec --emit=ir) --------===//
//
// The printed form numbers exprs in post-order from the root, so two front ends
// that build the same DAG in different orders print the same text. That is what
// the "YAML and TableGen give identical IR" tests compare.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite::ir {

struct PrintOptions {
  /// Append "@ file:line:col" to every line that has a location.
  bool locations = false;
};

std::string printRule(const Rule& rule, const PrintOptions& options = {});
std::string printOpDecl(const OpDecl& op, const PrintOptions& options = {});
std::string printRuleFile(const RuleFile& file, const PrintOptions& options = {});

}  // namespace onnx_rewrite::ir
