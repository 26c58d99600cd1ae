//===- TableGenIncludesTest.cc - what a TableGen rule file may include ---===//
//
// LLVM's TableGen opens whatever an include names. A rule file may include
// only regular files in its own folder, the -I folders and the shipped dsl/td,
// at most 16 files deep and without cycles; brackets nest at most 256 deep.
// Everything else is one error at the include (or bracket), never a hang or a
// crashed parse process (issue 15).
//
//===----------------------------------------------------------------------===//
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::parseTd;
using testing::parseTdFile;
using testing::TdParse;
using testing::testFolder;
using testing::writeTestFile;

const char* const kRule = R"(
def R : Rule<"r"> {
  let match = [(Relu:$y $x)];
  let rewrite = [(Identity:$y $x)];
}
)";

/// The first line of the rendered diagnostics: "file:line:col: error: message".
std::string firstLine(const TdParse& p) { return p.rendered.substr(0, p.rendered.find('\n')); }

TEST(TableGenIncludes, AFileNextToTheRuleFileIsFoundFromAnyWorkingFolder) {
  writeTestFile("rules/lib.td", "include \"onnx_rewrite/Rule.td\"\n");
  TdParse p = parseTdFile(writeTestFile("rules/r.td", std::string("include \"lib.td\"\n") + kRule));
  EXPECT_TRUE(p.ok) << p.rendered;
  EXPECT_EQ(p.file.rules.size(), 1u);
}

TEST(TableGenIncludes, ASelfIncludeIsAnErrorAtTheInclude) {
  // Was a stack overflow in the parse process ("killed by signal 11", no location).
  TdParse p = parseTd("include \"onnx_rewrite/Rule.td\"\ninclude \"rule.td\"\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(firstLine(p), "rule.td:2:1: error: include \"rule.td\": the file includes itself");
}

TEST(TableGenIncludes, AnIncludeCycleIsAnErrorAtTheIncludeThatClosesIt) {
  writeTestFile("b.td", "// b\ninclude \"a.td\"\n");
  TdParse p = parseTd("include \"b.td\"\n", "a.td");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(firstLine(p), "b.td:2:1: error: include \"a.td\" closes an include cycle");
}

TEST(TableGenIncludes, DevZeroIsRefusedNotRead) {
  // Was a hang: TableGen read /dev/zero forever.
  TdParse p = parseTd("include \"/dev/zero\"\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(firstLine(p),
            "rule.td:1:1: error: include \"/dev/zero\": '/dev/zero' is not a regular file (a "
            "device or FIFO)");
}

TEST(TableGenIncludes, AFileOutsideTheAllowedFoldersIsRefused) {
  const std::string outside = writeTestFile("outside/secret.td", "def Secret;\n");
  TdParse p = parseTdFile(writeTestFile("rules/r.td", "include \"../outside/secret.td\"\n"));
  EXPECT_FALSE(p.ok);
  char real[PATH_MAX];
  ASSERT_NE(::realpath(outside.c_str(), real), nullptr);
  EXPECT_NE(p.rendered.find("r.td:1:1: error: include \"../outside/secret.td\" resolves to '" +
                            std::string(real) +
                            "', outside the rule file's folder, the -I folders and the shipped "
                            "dsl/td"),
            std::string::npos)
      << p.rendered;
}

TEST(TableGenIncludes, ASymlinkOutOfTheAllowedFoldersIsRefused) {
  writeTestFile("outside/secret.td", "def Secret;\n");
  writeTestFile("rules/placeholder", "");
  ::unlink((testFolder() + "/rules/lib.td").c_str());  // from an earlier run
  ASSERT_EQ(::symlink((testFolder() + "/outside/secret.td").c_str(),
                      (testFolder() + "/rules/lib.td").c_str()),
            0);
  TdParse p = parseTdFile(writeTestFile("rules/r.td", "include \"lib.td\"\n"));
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.rendered.find("outside the rule file's folder"), std::string::npos) << p.rendered;
}

TEST(TableGenIncludes, IncludesNestedDeeperThanSixteenFilesAreRefused) {
  for (int i = 0; i < 20; ++i)
    writeTestFile("f" + std::to_string(i) + ".td",
                  "include \"f" + std::to_string(i + 1) + ".td\"\n");
  writeTestFile("f20.td", "def End;\n");
  TdParse p = parseTdFile(testFolder() + "/f0.td");
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.rendered.find("f15.td:1:1: error: include \"f16.td\": includes nested deeper than "
                            "16 files"),
            std::string::npos)
      << p.rendered;
}

TEST(TableGenIncludes, BracketsNestedTenThousandDeepAreAnErrorNotACrash) {
  TdParse p = parseTd("def D { dag d = " + std::string(10000, '(') + "ops" +
                      std::string(10000, ')') + "; }\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(firstLine(p),
            "rule.td:1:272: error: brackets nested deeper than 256 levels (TableGen's parser "
            "would run out of stack)");
}

TEST(TableGenIncludes, IncludesInCommentsAndStringsAreNotIncludes) {
  TdParse p = parseTd(std::string("include \"onnx_rewrite/Rule.td\"\n// include \"/dev/zero\"\n"
                                  "/* include \"/dev/zero\" /* nested */ */\n") +
                      "def S { string s = \"include \\\"/dev/zero\\\"\"; }\n" + kRule);
  EXPECT_TRUE(p.ok) << p.rendered;
}

TEST(TableGenIncludes, ARuleFileThatIsAFifoIsRefusedWithoutWaiting) {
  const std::string fifo = testFolder() + "/fifo.td";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  TdParse p = parseTdFile(fifo);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.rendered, "fifo.td: error: cannot read rule file: it is not a regular file\n");
}

}  // namespace
}  // namespace onnx_rewrite
