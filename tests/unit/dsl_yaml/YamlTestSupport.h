//===- YamlTestSupport.h - helpers for the YAML front-end tests -----------===//
//
// Parses rule text with a DiagnosticEngine whose handler collects diagnostics
// (and their rendered text) instead of printing them, so tests can assert on
// exact messages and locations.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"
#include "compiler/ir/RulePrinter.h"
#include "dsl/yaml/YamlFrontEnd.h"

namespace onnx_rewrite::testing {

/// What one parse produced.
struct YamlParse {
  bool ok = false;
  ir::RuleFile file;
  std::vector<Diagnostic> diags;      ///< every diagnostic, in order
  std::vector<std::string> rendered;  ///< DiagnosticEngine::render of each
  /// The messages of the errors only.
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diags)
      if (d.severity == Diagnostic::Severity::kError) out.push_back(d.message);
    return out;
  }
  /// All rendered diagnostics, concatenated.
  std::string renderedText() const {
    std::string out;
    for (const std::string& r : rendered) out += r;
    return out;
  }
};

/// Parses `text` as the YAML rule file `path`.
inline YamlParse parseYaml(const std::string& text, const std::string& path = "rules.yaml") {
  YamlParse result;
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic& d) {
    result.diags.push_back(d);
    result.rendered.push_back(diag.render(d));
  });
  result.ok = parseYamlRules(path, text, result.file, diag);
  return result;
}

}  // namespace onnx_rewrite::testing
