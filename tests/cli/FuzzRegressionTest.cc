//===- FuzzRegressionTest.cc - every input the fuzzers broke us with ------===//
//
// tests/fuzz/regressions holds one small input per crash the fuzzers found
// (tests/fuzz), each with the outcome it must have now in its first line:
//
//   model.onnxtxt (ONNX text format)   # expect: ok [OP...]      or   # expect: error: TEXT
//   rules.yaml                          # expect: error: TEXT
//   rules.td                            // expect: error: TEXT
//
// A model runs through the onnx-rewrite command: "ok" means status 0, an output
// that loads again and holds every OP listed; "error: TEXT" means status 1, one
// line on stderr containing TEXT and no output. A rule file runs through
// rulec --emit=check and onnx-rewrite --rules, which must both refuse it with
// one first line containing TEXT.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/io/ModelFile.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::CommandResult;
using testing::readFile;
using testing::runCommand;
using testing::shellQuote;
using testing::TempDir;

const std::string kFolder = testing::sourcePath("tests/fuzz/regressions");

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// What follows "expect: " on the first line.
std::string expectation(const std::string& text) {
  const std::string first = text.substr(0, text.find('\n'));
  const size_t at = first.find("expect: ");
  return at == std::string::npos ? std::string() : first.substr(at + 8);
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

class FuzzRegression : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzRegression, HasTheOutcomeItsFirstLineStates) {
  const std::string name = GetParam();
  const std::string text = readFile(kFolder + "/" + name);
  const std::string expect = expectation(text);
  ASSERT_FALSE(expect.empty()) << name << ": the first line says no 'expect: '";
  TempDir dir;
  const std::string out = dir.file("out.onnx");
  const bool ok = expect.rfind("ok", 0) == 0;
  const std::string error = ok ? "" : expect.substr(expect.find(':') + 2);
  ASSERT_TRUE(ok || expect.rfind("error: ", 0) == 0) << name << ": expect ok or error";

  if (endsWith(name, ".onnxtxt")) {
    const std::string in = dir.file("in.onnx");
    testing::writeModel(in, testing::parseModel(text));
    CommandResult r = runCommand("timeout 60 " + shellQuote(ONNX_REWRITE_CLI) + " -q " +
                                 shellQuote(in) + " -o " + shellQuote(out));
    if (ok) {
      ASSERT_EQ(r.exit_code, 0) << r.err;
      onnx::ModelProto saved;
      ASSERT_NO_THROW(loadModelFile(out, saved));
      std::istringstream ops(expect.substr(2));
      const std::vector<std::string> types = testing::opTypes(saved);
      for (std::string op; ops >> op;)
        EXPECT_NE(std::find(types.begin(), types.end(), op), types.end()) << name << ": no " << op;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find(error), std::string::npos) << r.err;
    }
    return;
  }
  ASSERT_FALSE(ok) << name << ": a rule file regression expects an error";
  const std::string rules = shellQuote(kFolder + "/" + name);
  CommandResult rulec =
      runCommand("timeout 60 " + shellQuote(ONNX_REWRITE_RULEC) + " --emit=check " + rules);
  EXPECT_EQ(rulec.exit_code, 1) << rulec.err;
  EXPECT_NE(firstLine(rulec.err).find(error), std::string::npos) << rulec.err;
  const std::string model = shellQuote(testing::sourcePath("tests/models/examples/bert_tiny.onnx"));
  CommandResult cli = runCommand("timeout 60 " + shellQuote(ONNX_REWRITE_CLI) + " --rules " +
                                 rules + " " + model + " -o " + shellQuote(out));
  EXPECT_EQ(cli.exit_code, 1) << cli.err;
  EXPECT_EQ(firstLine(cli.err), firstLine(rulec.err)) << "rulec and --rules say the same";
}

std::vector<std::string> regressionInputs() {
  std::vector<std::string> names;
  for (const std::string& n : testing::listFolder(kFolder))
    if (endsWith(n, ".onnxtxt") || endsWith(n, ".yaml") || endsWith(n, ".td")) names.push_back(n);
  return names;
}

std::string testName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Inputs, FuzzRegression, ::testing::ValuesIn(regressionInputs()), testName);

}  // namespace
}  // namespace onnx_rewrite
