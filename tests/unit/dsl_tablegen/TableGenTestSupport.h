//===- TableGenTestSupport.h - parsing rule text in TableGen tests --------===//
//
// Writes a rule file (into the test's own temporary folder), parses it with the
// TableGen front end, and keeps the IR, every diagnostic and the rendered
// diagnostics with the folder stripped from file names, so expectations read
// `rule.td:3:5: error: ...` whatever the machine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RulePrinter.h"
#include "dsl/tablegen/TableGenFrontEnd.h"

namespace onnx_rewrite::testing {

/// What parsing one file gave.
struct TdParse {
  bool ok = false;
  ir::RuleFile file;
  std::vector<Diagnostic> diagnostics;
  /// Every diagnostic rendered (file:line:col: severity: message, line, caret), with the
  /// folder of the parsed file removed from paths.
  std::string rendered;

  unsigned errors() const {
    unsigned n = 0;
    for (const Diagnostic& d : diagnostics) n += d.severity == Diagnostic::Severity::kError;
    return n;
  }
  /// The canonical IR of every declaration and rule (no locations).
  std::string ir() const { return ir::printRuleFile(file); }
};

inline std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// A fragment as canonical text, for comparing front ends: its signature and results,
/// then its body as RulePrinter prints a rule (a match once per result, as if it were the
/// root; a rewrite's variants as a rule's).
inline std::string fragmentText(const ir::Fragment& f) {
  std::string out = "fragment " + f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ir::Fragment::Param& p = f.params[i];
    out += (i ? ", " : "") + p.name;
    if (p.attribute) out += "=" + (p.default_value ? p.default_value->str() : std::string("_"));
  }
  out += ") ->";
  for (const std::string& r : f.results) out += " " + r;
  out += f.is_match ? " (match)\n" : " (rewrite)\n";
  if (!f.doc.empty()) out += "  doc " + f.doc + "\n";
  ir::Rule body;
  body.name = f.name;
  if (f.is_match) {
    body.pattern = f.match;
    for (ir::ExprId result : f.result_exprs) {
      body.pattern.root = result;
      out += ir::printRule(body);
    }
  } else {
    body.targets = f.rewrite;
    out += ir::printRule(body);
  }
  return out;
}

/// Parses `path` with dsl/td and `extra_includes` as include folders.
inline TdParse parseTdFile(const std::string& path,
                           const std::vector<std::string>& extra_includes = {}) {
  TdParse result;
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic& d) { result.diagnostics.push_back(d); });
  std::vector<std::string> includes = extra_includes;
  includes.push_back(ONNX_REWRITE_TD_INCLUDE_DIR);
  result.ok = parseTableGenRules(path, includes, result.file, diag);
  std::string folder = std::filesystem::path(path).parent_path().string() + "/";
  for (const Diagnostic& d : result.diagnostics)
    result.rendered += replaceAll(diag.render(d), folder, "");
  return result;
}

/// A folder for this test's files.
inline std::string testFolder() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name)
    if (c == '/') c = '_';
  std::filesystem::path folder =
      std::filesystem::path(::testing::TempDir()) / "dsl_tablegen" / name;
  std::filesystem::create_directories(folder);
  return folder.string();
}

/// Writes `text` to `name` in this test's folder; returns the path.
inline std::string writeTestFile(const std::string& name, const std::string& text) {
  std::string path = testFolder() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Parses `text` as the file `name` in this test's folder.
inline TdParse parseTd(const std::string& text, const std::string& name = "rule.td") {
  return parseTdFile(writeTestFile(name, text));
}

}  // namespace onnx_rewrite::testing
