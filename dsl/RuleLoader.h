//===- RuleLoader.h - rule files in, checked Rule IR out ------------------===//
//
// The one entry point rulec and `onnx-rewrite --rules` share: picks the front
// end by extension (.yaml/.yml: YAML, .td: TableGen), merges the files, and
// runs the checks with the com.microsoft declarations the project ships.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

struct RuleLoadOptions {
  /// Folders TableGen searches for `include`s; dsl/td is always searched.
  std::vector<std::string> include_dirs;
  /// Run the semantic checks (and fill commutativity and attribute defaults).
  bool check = true;
};

/// Parses and checks `paths` into `out`. Reports every problem to `diag`; returns false if
/// any error was reported (`out` is then incomplete and must not be used).
bool loadRuleFiles(const std::vector<std::string>& paths, const RuleLoadOptions& options,
                   ir::RuleFile& out, DiagnosticEngine& diag);

/// dsl/td of the source tree or of the installed package, for TableGen includes.
std::string defaultTableGenIncludeDir();

}  // namespace onnx_rewrite
