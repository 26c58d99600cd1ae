//===- YamlDiagnosticsTest.cc - golden diagnostics of bad rule files ------===//
//
// Every data/bad_*.yaml holds author mistakes, each preceded by the error it
// must produce, in the spirit of LLVM's `[[@LINE+1]]:COL: error: ...`:
//
//     # expect:COL: error: MESSAGE
//     <the offending line>
//
// The test parses the file and requires exactly those errors: each at the
// line after its comment and the given column, with that exact message,
// rendered by DiagnosticEngine::render as "file:line:col: error: message",
// the source line and a caret. Any other error fails the test. Notes are not
// checked here.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/unit/dsl_yaml/YamlTestSupport.h"

namespace onnx_rewrite {
namespace {

namespace fs = std::filesystem;

/// The bad_*.yaml files of the data folder, sorted.
std::vector<std::string> badFiles() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(DSL_YAML_TEST_DATA)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad_", 0) == 0 && e.path().extension() == ".yaml") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// One `# expect:` line: the error due on the line after it.
struct Expectation {
  uint32_t line = 0;
  uint32_t col = 0;
  std::string message;
};

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::vector<Expectation> expectations(const std::vector<std::string>& lines) {
  static const std::regex kExpect(R"(#\s*expect:(\d+): error: (.*)$)");
  std::vector<Expectation> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, kExpect))
      out.push_back({static_cast<uint32_t>(i + 2), static_cast<uint32_t>(std::stoul(m[1])), m[2]});
  }
  return out;
}

/// What DiagnosticEngine::render must print for an error at `e` in `lines`.
std::string expectedRendering(const std::string& file, const std::vector<std::string>& lines,
                              const Expectation& e) {
  const std::string& source = lines.at(e.line - 1);
  std::string caret;
  for (uint32_t i = 1; i < e.col && i <= source.size(); ++i)
    caret += source[i - 1] == '\t' ? '\t' : ' ';
  return file + ":" + std::to_string(e.line) + ":" + std::to_string(e.col) +
         ": error: " + e.message + "\n" + source + "\n" + caret + "^\n";
}

class BadRuleFile : public ::testing::TestWithParam<std::string> {};

TEST_P(BadRuleFile, ReportsExactlyTheExpectedErrors) {
  const std::string name = GetParam();
  std::ifstream in(std::string(DSL_YAML_TEST_DATA) + "/" + name, std::ios::binary);
  ASSERT_TRUE(in) << name;
  std::ostringstream text;
  text << in.rdbuf();
  const std::vector<std::string> lines = splitLines(text.str());
  std::vector<Expectation> expected = expectations(lines);
  ASSERT_FALSE(expected.empty()) << name << " has no '# expect:' lines";

  testing::YamlParse p = testing::parseYaml(text.str(), name);
  EXPECT_FALSE(p.ok);
  for (size_t i = 0; i < p.diags.size(); ++i) {
    const Diagnostic& d = p.diags[i];
    if (d.severity != Diagnostic::Severity::kError) continue;
    auto it = std::find_if(expected.begin(), expected.end(), [&](const Expectation& e) {
      return e.line == d.loc.line && e.message == d.message;
    });
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected diagnostic:\n" << p.rendered[i];
      continue;
    }
    EXPECT_EQ(p.rendered[i], expectedRendering(name, lines, *it));
    expected.erase(it);
  }
  for (const Expectation& e : expected)
    ADD_FAILURE() << "missing diagnostic:\n"
                  << expectedRendering(name, lines, e) << "reported instead:\n"
                  << p.renderedText();
}

INSTANTIATE_TEST_SUITE_P(Data, BadRuleFile, ::testing::ValuesIn(badFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id = fs::path(info.param).stem().string();
                           std::replace_if(
                               id.begin(), id.end(), [](char c) { return !std::isalnum(c & 0xff); },
                               '_');
                           return id;
                         });

TEST(BadRuleFiles, CoverAtLeastFifteenMistakes) {
  size_t total = 0;
  for (const std::string& name : badFiles()) {
    std::ifstream in(std::string(DSL_YAML_TEST_DATA) + "/" + name);
    std::ostringstream text;
    text << in.rdbuf();
    total += expectations(splitLines(text.str())).size();
  }
  EXPECT_GE(total, 15u);
}

}  // namespace
}  // namespace onnx_rewrite
