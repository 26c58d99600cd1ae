//===- RuleFileTarget.h - what the rule-file fuzzers run on each input ----===//
//
// A rule file goes through the path rulec and `onnx-rewrite --rules` share:
// loadRuleFiles (front end, fragments, checks), then every back end (--emit=ir,
// dot, cpp) and the interpreter's binding. A diagnostic is the clean outcome
// for a bad file; a crash, a sanitizer report, an exception other than the
// documented ones, or a rule the loader accepts and the interpreter refuses is
// a bug.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/diag/Diagnostics.h"

namespace onnx_rewrite::fuzz {

/// Writes `data` to a scratch file named `file_name` (its extension picks the front end),
/// loads it as rulec does and, if it loads, runs every back end and the interpreter on it.
/// `on_diagnostic` sees every diagnostic (the TableGen target looks for a dead parse child).
void runRuleFile(const uint8_t* data, size_t size, const std::string& file_name,
                 const DiagnosticEngine::Handler& on_diagnostic = {});

}  // namespace onnx_rewrite::fuzz
