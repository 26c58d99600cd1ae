//===- RuleFileTarget.cc - what the rule-file fuzzers run on each input ---===//
#include "tests/fuzz/RuleFileTarget.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "compiler/emit/CppEmitter.h"
#include "compiler/emit/DotEmitter.h"
#include "compiler/ir/RulePrinter.h"
#include "dsl/RuleLoader.h"
#include "runtime/interp/RuleInterpreter.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite::fuzz {

void runRuleFile(const uint8_t* data, size_t size, const std::string& file_name,
                 const DiagnosticEngine::Handler& on_diagnostic) {
  static const testing::TempDir scratch;
  const std::string path = scratch.file(file_name);
  testing::writeFile(path, std::string(reinterpret_cast<const char*>(data), size));

  DiagnosticEngine diag;
  // Rendering quotes the source line under the caret: run it, but print nothing (the
  // fuzzer's speed is in not writing to the terminal).
  diag.setHandler([&](const Diagnostic& d) {
    (void)diag.render(d);
    if (on_diagnostic) on_diagnostic(d);
  });
  ir::RuleFile rules;
  if (!loadRuleFiles({path}, RuleLoadOptions{}, rules, diag) || diag.hasErrors()) return;

  ir::PrintOptions print;
  print.locations = true;
  (void)ir::printRuleFile(rules, print);
  (void)DotEmitter(rules).run();
  try {
    (void)CppEmitter(rules, {path}, "rulec").run();
  } catch (const CppEmitError&) {
    // rulec reports it and writes nothing: a clean error.
  }
  try {
    (void)interpretRules(rules);
  } catch (const std::invalid_argument& e) {
    // The loader runs the interpreter's own binding checks (runtime/interp/BindCheck.h):
    // a rule it accepted must run, or rulec and --rules disagree again.
    std::fprintf(stderr, "the loader accepted a rule the interpreter rejects: %s\n", e.what());
    std::abort();
  }
}

}  // namespace onnx_rewrite::fuzz
