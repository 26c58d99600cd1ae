//===- ShippedRuleFilesTest.cc - the shipped rule files stay readable -----===//
//
// A rule library grows by variants; fragments, tuples, lets and file defaults are how
// a variant costs a line instead of a copy. These tests keep it so: the stripped,
// non-blank, non-comment lines of rules/ (com_microsoft.yaml, a list of op
// signatures, aside) longer than 12 characters that occur more than once are at most
// 15% of all such lines, and no line is wider than 120 columns.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace onnx_rewrite {
namespace {

namespace fs = std::filesystem;

struct Line {
  std::string file;
  size_t number = 0;
  std::string text;
};

std::string strip(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/// Every line of the shipped rule files, com_microsoft.yaml aside.
std::vector<Line> ruleLines() {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(ONNX_REWRITE_SOURCE_DIR "/rules")) {
    const std::string name = e.path().filename().string();
    const std::string ext = e.path().extension().string();
    if ((ext == ".yaml" || ext == ".td") && name != "com_microsoft.yaml")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Line> out;
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string text;
    for (size_t n = 1; std::getline(in, text); ++n) out.push_back({f, n, text});
  }
  return out;
}

TEST(ShippedRules, RepeatAtMostFifteenPercentOfTheirLines) {
  std::map<std::string, int> counts;
  size_t total = 0;
  for (const Line& l : ruleLines()) {
    const std::string t = strip(l.text);
    if (t.empty() || t[0] == '#' || t.rfind("//", 0) == 0) continue;
    ++total;
    if (t.size() > 12) ++counts[t];
  }
  size_t repeated = 0;
  std::string worst;
  for (const auto& [text, n] : counts) {
    if (n < 2) continue;
    repeated += n;
    if (n >= 3) worst += "  " + std::to_string(n) + "x " + text + "\n";
  }
  ASSERT_GT(total, 0u);
  EXPECT_LE(repeated * 100, total * 15)
      << repeated << " of " << total << " lines repeat; the most repeated:\n"
      << worst;
}

TEST(ShippedRules, HaveNoLineOver120Columns) {
  for (const Line& l : ruleLines()) EXPECT_LE(l.text.size(), 120u) << l.file << ":" << l.number;
}

}  // namespace
}  // namespace onnx_rewrite
