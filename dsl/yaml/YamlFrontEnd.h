//===- YamlFrontEnd.h - YAML rule files to Rule IR ------------------------===//
//
// Reads a YAML rule file (docs/dsl.md: a mapping with a `rules:` list and an
// optional `ops:` list) into ir::RuleFile. yaml-cpp parses the YAML; this front
// end checks every field's key and type, parses the `match:`/`rewrite:`
// statements with RuleExprParser, and reports each problem at the line and
// column of the offending key or value, carrying on to report as many as it can.
// It never throws and never crashes, whatever the input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// Parses `text`, the contents of the YAML rule file `path`, appending its rules and op
/// declarations to `out`. Registers `text` with `diag` (so messages quote its lines) and
/// reports every problem there. Returns false if any error was reported; `out` then holds
/// only the rules and declarations that had none.
bool parseYamlRules(const std::string& path, const std::string& text, ir::RuleFile& out,
                    DiagnosticEngine& diag);

/// Reads the file at `path` and parses it as parseYamlRules does; a file that cannot be read
/// is an error.
bool parseYamlRuleFile(const std::string& path, ir::RuleFile& out, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
