//===- RuleFileMerge.h - parsed rule files into one checked rule set ------===//
//
// What loading does after a front end parsed each file, shared by the loader of both front
// ends (RuleLoader.h, which links TableGen) and the YAML-only loader of the installed
// interpreter (runtime/api/RuleFiles.h): merge the files, expand fragments across them,
// run the checks with the com.microsoft declarations the project ships.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// A YAML rule file by its name (.yaml, .yml), and a TableGen one (.td).
bool isYamlRuleFile(const std::string& path);
bool isTableGenRuleFile(const std::string& path);

/// Moves the rules, declarations and fragments of `one` into `into`; a fragment that several
/// files define (a .td file included by more than one) is kept once.
void mergeRuleFile(ir::RuleFile& into, ir::RuleFile&& one);

/// Expands fragments and, with `check`, runs the semantic checks. False on any error.
bool finishRuleFile(ir::RuleFile& file, bool check, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
