//===- DotEmitter.h - rules as Graphviz drawings (rulec --emit=dot) -------===//
#pragma once

#include <string>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// Draws each rule as a Graphviz digraph: the match DAG in one cluster (ops as boxes,
/// captures as ellipses, constants as plain text, alternatives as diamonds) and each
/// target variant in another, with dashed edges from replaced source values to their
/// replacements.
class DotEmitter {
 public:
  explicit DotEmitter(const ir::RuleFile& file) : file_(file) {}
  /// The whole file: one digraph per rule.
  std::string run() const;

 private:
  std::string emitRule(const ir::Rule& rule) const;
  std::string emitPattern(const ir::Rule& rule) const;
  std::string emitTarget(const ir::Rule& rule, size_t index) const;

  const ir::RuleFile& file_;
};

}  // namespace onnx_rewrite
