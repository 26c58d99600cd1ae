//===- Diagnostics.h - compiler-grade messages for rule files -------------===//
//
// One engine for both front ends and the checks: `file:line:col: error: msg`,
// then the source line and a caret under the column, then notes. Errors are
// counted so a pass reports everything it finds before rulec exits 1. Tests
// install a handler to collect diagnostics instead of printing them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// One message about a rule file.
struct Diagnostic {
  enum class Severity { kError, kWarning, kNote };
  Severity severity = Severity::kError;
  ir::SourceLoc loc;
  std::string message;
};

/// Collects, counts and renders diagnostics.
class DiagnosticEngine {
 public:
  using Handler = std::function<void(const Diagnostic&)>;

  /// Renders to stderr unless a handler is set.
  DiagnosticEngine() = default;
  void setHandler(Handler handler) { handler_ = std::move(handler); }

  /// Registers the text of `file` so messages can quote its lines. Front ends call this
  /// with the buffer they parsed; otherwise the file is read from disk on demand.
  void addSource(const std::string& file, std::string text);

  void error(const ir::SourceLoc& loc, const std::string& message);
  void warning(const ir::SourceLoc& loc, const std::string& message);
  void note(const ir::SourceLoc& loc, const std::string& message);
  void report(const Diagnostic& d);

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ > 0; }

  /// "file:line:col: error: message\n<line>\n<caret>\n": the text printed for `d`.
  std::string render(const Diagnostic& d);

 private:
  const std::string* sourceLine(const std::string& file, uint32_t line);

  Handler handler_;
  std::map<std::string, std::vector<std::string>> lines_;  // file -> lines
  unsigned errors_ = 0;
  unsigned warnings_ = 0;
};

}  // namespace onnx_rewrite
