//===- RuleFiles.h - rule files loaded at run time (onnx_rewrite::rules) --===//
//
// An exporter that wants its users' rules, or rules it ships as data, loads YAML rule
// files at run time and runs them with the interpreter, as `onnx-rewrite --rules` does:
// the same front end, the same checks, the same matching. This is the optional component
// onnx_rewrite::rules of the installed package (find_package(onnx_rewrite COMPONENTS
// rules)); it links yaml-cpp but not LLVM, so TableGen rule files are compiled with rulec
// instead (onnx_rewrite_generate).
//
//   onnx_rewrite::RuleSet rules = onnx_rewrite::builtinRules();
//   rules.append(onnx_rewrite::loadRuleFiles({"my_rules.yaml"}));   // throws RuleFileError
//   onnx_rewrite::rewrite(model, rules);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite {

/// Rule files that could not be loaded: what() holds every diagnostic, rulec's format
/// (file:line:col: error: message, the line, a caret), one after the other.
class RuleFileError : public std::runtime_error {
 public:
  explicit RuleFileError(const std::string& diagnostics) : std::runtime_error(diagnostics) {}
};

/// Parses and checks the YAML rule files `paths` (.yaml/.yml) as one rule set and returns
/// their rules, run by the interpreter. Throws RuleFileError on any error.
RuleSet loadRuleFiles(const std::vector<std::string>& paths);

}  // namespace onnx_rewrite
