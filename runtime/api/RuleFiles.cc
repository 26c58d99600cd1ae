//===- RuleFiles.cc - rule files loaded at run time (onnx_rewrite::rules) -===//
#include "runtime/api/RuleFiles.h"

#include "compiler/diag/Diagnostics.h"
#include "dsl/RegularFileText.h"
#include "dsl/RuleFileMerge.h"
#include "dsl/yaml/YamlFrontEnd.h"
#include "runtime/interp/RuleInterpreter.h"

namespace onnx_rewrite {

RuleSet loadRuleFiles(const std::vector<std::string>& paths) {
  DiagnosticEngine diag;
  std::string report;
  diag.setHandler([&](const Diagnostic& d) { report += diag.render(d); });
  ir::RuleFile file;
  bool ok = true;
  for (const std::string& path : paths) {
    std::string text, error;
    if (!isYamlRuleFile(path)) {
      diag.error(ir::SourceLoc{path, 0, 0},
                 "only YAML rule files load at run time; compile .td files with rulec "
                 "(onnx_rewrite_generate)");
      ok = false;
    } else if (!readRegularFile(path, text, error)) {
      diag.error(ir::SourceLoc{path, 0, 0}, cannotReadRuleFile(error));
      ok = false;
    } else {
      ir::RuleFile one;
      ok &= parseYamlRules(path, text, one, diag);
      mergeRuleFile(file, std::move(one));
    }
  }
  if (!ok || !finishRuleFile(file, /*check=*/true, diag)) throw RuleFileError(report);
  try {
    return interpretRules(file);
  } catch (const std::invalid_argument& e) {  // a native the interpreter does not know
    throw RuleFileError(e.what());
  }
}

}  // namespace onnx_rewrite
