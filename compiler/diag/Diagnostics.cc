//===- Diagnostics.cc - compiler-grade messages for rule files ------------===//
#include "compiler/diag/Diagnostics.h"

#include <fstream>
#include <iostream>
#include <sstream>

namespace onnx_rewrite {
namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

const char* severityText(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::kError:
      return "error";
    case Diagnostic::Severity::kWarning:
      return "warning";
    case Diagnostic::Severity::kNote:
      return "note";
  }
  return "error";
}

}  // namespace

void DiagnosticEngine::addSource(const std::string& file, std::string text) {
  lines_[file] = splitLines(text);
}

const std::string* DiagnosticEngine::sourceLine(const std::string& file, uint32_t line) {
  auto it = lines_.find(file);
  if (it == lines_.end()) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    it = lines_.emplace(file, splitLines(text.str())).first;
  }
  if (line == 0 || line > it->second.size()) return nullptr;
  return &it->second[line - 1];
}

std::string DiagnosticEngine::render(const Diagnostic& d) {
  std::string out = d.loc.str() + ": " + severityText(d.severity) + ": " + d.message + "\n";
  if (d.loc.known()) {
    if (const std::string* line = sourceLine(d.loc.file, d.loc.line)) {
      out += *line + "\n";
      std::string caret;
      // Keep tabs so the caret lines up under tab-indented text.
      for (uint32_t i = 1; i < d.loc.col && i <= line->size(); ++i)
        caret += (*line)[i - 1] == '\t' ? '\t' : ' ';
      out += caret + "^\n";
    }
  }
  return out;
}

void DiagnosticEngine::report(const Diagnostic& d) {
  if (d.severity == Diagnostic::Severity::kError) ++errors_;
  if (d.severity == Diagnostic::Severity::kWarning) ++warnings_;
  if (handler_) {
    handler_(d);
  } else {
    std::cerr << render(d);
  }
}

void DiagnosticEngine::error(const ir::SourceLoc& loc, const std::string& message) {
  report({Diagnostic::Severity::kError, loc, message});
}
void DiagnosticEngine::warning(const ir::SourceLoc& loc, const std::string& message) {
  report({Diagnostic::Severity::kWarning, loc, message});
}
void DiagnosticEngine::note(const ir::SourceLoc& loc, const std::string& message) {
  report({Diagnostic::Severity::kNote, loc, message});
}

}  // namespace onnx_rewrite
