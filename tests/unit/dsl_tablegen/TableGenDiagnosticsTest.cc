//===- TableGenDiagnosticsTest.cc - author mistakes and their messages ----===//
//
// Two suites. TableGenBadRuleFiles parses every data/bad_*.td, whose comments
// `// expect: error: MESSAGE` (or `note:`/`warning:`) sit on the line above
// the line the diagnostic must point at; every expected diagnostic must be
// reported there and no unexpected error may be. TableGenRenderedDiagnostics pins the
// exact text (file:line:col: error: message, the line, the caret) of the
// mistakes authors make most, TableGen's own syntax errors included.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::parseTd;
using testing::parseTdFile;
using testing::TdParse;

//===----------------------------------------------------------------------===//
// data/bad_*.td
//===----------------------------------------------------------------------===//

/// One `// expect: severity: message` comment and the line it is about.
struct Expectation {
  uint32_t line = 0;
  Diagnostic::Severity severity = Diagnostic::Severity::kError;
  std::string message;
};

/// The severity and message of an `// expect: severity: message` line.
bool parseExpectation(const std::string& line, Expectation& out) {
  const std::string marker = "// expect: ";
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line.compare(start, marker.size(), marker) != 0) return false;
  std::string rest = line.substr(start + marker.size());
  for (auto [word, severity] : {std::pair{"error: ", Diagnostic::Severity::kError},
                                std::pair{"warning: ", Diagnostic::Severity::kWarning},
                                std::pair{"note: ", Diagnostic::Severity::kNote}}) {
    if (rest.rfind(word, 0) == 0) {
      out.severity = severity;
      out.message = rest.substr(std::string(word).size());
      return true;
    }
  }
  return false;
}

std::vector<Expectation> readExpectations(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<Expectation> out;
  Expectation e;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!parseExpectation(lines[i], e)) continue;
    size_t target = i + 1;  // the next line that is not an expectation
    Expectation ignored;
    while (target < lines.size() && parseExpectation(lines[target], ignored)) ++target;
    e.line = static_cast<uint32_t>(target + 1);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> badFiles() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(ONNX_REWRITE_TD_TEST_DATA)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("bad_", 0) == 0 && entry.path().extension() == ".td") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class TableGenBadRuleFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(TableGenBadRuleFiles, ReportEveryExpectedDiagnosticWhereExpected) {
  std::string path = std::string(ONNX_REWRITE_TD_TEST_DATA) + "/" + GetParam();
  std::vector<Expectation> expected = readExpectations(path);
  ASSERT_FALSE(expected.empty()) << "no `// expect:` comment in " << GetParam();
  TdParse p = parseTdFile(path);
  EXPECT_FALSE(p.ok);
  std::vector<bool> matched(p.diagnostics.size(), false);
  for (const Expectation& e : expected) {
    bool found = false;
    for (size_t i = 0; i < p.diagnostics.size() && !found; ++i) {
      const Diagnostic& d = p.diagnostics[i];
      if (!matched[i] && d.severity == e.severity && d.loc.file == path && d.loc.line == e.line &&
          d.message == e.message)
        found = matched[i] = true;
    }
    EXPECT_TRUE(found) << GetParam() << ":" << e.line << ": expected \"" << e.message
                       << "\"; got:\n"
                       << p.rendered;
  }
  for (size_t i = 0; i < p.diagnostics.size(); ++i)
    EXPECT_TRUE(matched[i] || p.diagnostics[i].severity != Diagnostic::Severity::kError)
        << "unexpected: " << p.diagnostics[i].loc.str() << ": " << p.diagnostics[i].message;
}

INSTANTIATE_TEST_SUITE_P(Data, TableGenBadRuleFiles, ::testing::ValuesIn(badFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 3);
                           return name;
                         });

//===----------------------------------------------------------------------===//
// Exact rendering
//===----------------------------------------------------------------------===//

/// A rule file with one mistake and everything reported for it, as rendered.
struct Rendered {
  const char* name;
  const char* text;
  const char* rendered;
};

class TableGenRenderedDiagnostics : public ::testing::TestWithParam<Rendered> {};

TEST_P(TableGenRenderedDiagnostics, MatchTheTextExactly) {
  TdParse p = parseTd(GetParam().text);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.rendered, GetParam().rendered);
}

const Rendered kRendered[] = {
    {"MissingSemicolon",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let priority = 100
  let match = [(Neg:$y $x)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:4:3: error: expected ';' after let expression
  let match = [(Neg:$y $x)];
  ^
)"},
    {"UnknownOpRecord",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(LayerNormalizaton:$y $x)];
}
)",
     R"(rule.td:4:19: error: Variable not defined: 'LayerNormalizaton'
  let rewrite = [(LayerNormalizaton:$y $x)];
                  ^
rule.td:4:19: note: did you mean 'LayerNormalization'? ops are records from onnx_rewrite/Ops.td (com.microsoft ops have the prefix Ms, as in MsGelu); declare another op with def LayerNormalizaton : Op<"LayerNormalizaton", "my.domain">
  let rewrite = [(LayerNormalizaton:$y $x)];
                  ^
)"},
    {"RecordThatIsNotAnOp",
     R"(include "onnx_rewrite/Rule.td"
def Helper;
def R : Rule<"r"> {
  let match = [(Neg:$y (Helper $x))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:4:25: error: 'Helper' is not an op: ops are records deriving from Op, as in def Helper : Op<"Helper", "my.domain">
  let match = [(Neg:$y (Helper $x))];
                        ^
)"},
    {"RuleWithoutMatch",
     R"(include "onnx_rewrite/Rule.td"
def LayerNorm : Rule<"layer_norm"> {
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:2:5: error: rule 'layer_norm' has no match: set `let match = [...]`
def LayerNorm : Rule<"layer_norm"> {
    ^
)"},
    {"ConstraintOnAnUnboundName",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Mul:$y $x, $scale)];
  let where = [Rank<"x", [3]>, Rank<"scael", [1]>];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:4:32: error: Rank constrains 'scael', which the match does not bind
  let where = [Rank<"x", [3]>, Rank<"scael", [1]>];
                               ^
)"},
    {"AttributeNameTypo",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(ReduceMean:$y $x, (keepdim 1))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:36: error: Variable not defined: 'keepdim'
  let match = [(ReduceMean:$y $x, (keepdim 1))];
                                   ^
rule.td:3:36: note: did you mean 'keepdims'? attribute names are records from onnx_rewrite/Ops.td; declare another with def keepdim : AttrName<"keepdim">
  let match = [(ReduceMean:$y $x, (keepdim 1))];
                                   ^
)"},
    {"MissingRuleInclude",
     R"(def R : Rule<"r"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(Abs:$y $x)];
}
)",
     R"(rule.td:1:9: error: Couldn't find class 'Rule'
def R : Rule<"r"> {
        ^
rule.td:1:9: note: rules, fragments, constraints and variants are classes of onnx_rewrite/Rule.td: start the file with include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
        ^
)"},
    {"ClassNameTypo",
     R"(include "onnx_rewrite/Rule.td"
def R : Rul<"r"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(Abs:$y $x)];
}
)",
     R"(rule.td:2:9: error: Couldn't find class 'Rul'
def R : Rul<"r"> {
        ^
rule.td:2:9: note: did you mean 'Rule'?
def R : Rul<"r"> {
        ^
)"},
    {"ListAsFirstDagArgument",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(ReduceMean:$y $x, (axes [0, 1]))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:41: error: Invalid range for list slice
  let match = [(ReduceMean:$y $x, (axes [0, 1]))];
                                        ^
rule.td:3:41: note: a list cannot be a dag's first argument (TableGen reads `axes [-1]` as a slice of axes): write (axes (ints -1)), (floats ...) or (strings ...)
  let match = [(ReduceMean:$y $x, (axes [0, 1]))];
                                        ^
)"},
    {"FloatLiteral",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Mul:$y $x, (f 0.5))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:33: error: expected field identifier after '.'
  let match = [(Mul:$y $x, (f 0.5))];
                                ^
rule.td:3:33: note: TableGen has no float literals: write (f "2.5"), or "2.5" where a number is given as a string
  let match = [(Mul:$y $x, (f 0.5))];
                                ^
)"},
    {"InputAfterAttribute",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(ReduceMean:$y (keepdims 1), $x)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:45: error: an input after an attribute: an op's inputs come first
  let match = [(ReduceMean:$y (keepdims 1), $x)];
                                            ^
)"},
    {"RewriteThatBindsNothing",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(Abs $x)];
}
)",
     R"(rule.td:4:19: error: this rewrite dag binds no name, so nothing reads it: write (Op:$name ...) with the name of the value it replaces
  let rewrite = [(Abs $x)];
                  ^
)"},
    {"NameBoundTwice",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$d $x), (Abs:$d $x), (Add:$y $d, $d)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:30: error: 'd' is bound twice
  let match = [(Neg:$d $x), (Abs:$d $x), (Add:$y $d, $d)];
                             ^
rule.td:3:17: note: first bound here
  let match = [(Neg:$d $x), (Abs:$d $x), (Add:$y $d, $d)];
                ^
)"},
    {"NoneAsTheRootOfAMatch",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(none)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:17: error: 'none' cannot be the root of a match: it matches an omitted input, written bare as an input of an op: (Op $a, none, $b)
  let match = [(none)];
                ^
)"},
    {"NoneBoundToAName",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Add:$y $x, none:$n)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:28: error: 'none' binds no name: an omitted input has no value (write none, not none:$n)
  let match = [(Add:$y $x, none:$n)];
                           ^
)"},
    {"NoneAsAnAlternative",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Add:$y $x, (AnyOf none, $z))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:35: error: 'none' cannot be an alternative of AnyOf: it matches an omitted input only as an input of an op
  let match = [(Add:$y $x, (AnyOf none, $z))];
                                  ^
)"},
    {"NoneAsTheFirstInputOfAnOptionalOp",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$y (Optional (Cast:$c none, (to 1))))];
  let rewrite = [(Identity:$y $c)];
}
)",
     R"(rule.td:3:43: error: 'none' cannot be the first input of an optional op: when the op is absent, it stands for its first input
  let match = [(Neg:$y (Optional (Cast:$c none, (to 1))))];
                                          ^
)"},
    {"RestNotTheLastInput",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest $r), $b, (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:32: error: (Rest $r) must be the last input of Concat: it stands for the inputs after the ones written
  let match = [(Concat:$y $a, (Rest $r), $b, (axis 0))];
                               ^
)"},
    {"RestOnAnOptionalOp",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$y (Optional (Concat:$c $a, (Rest $r), (axis 0))))];
  let rewrite = [(Identity:$y $c)];
}
)",
     R"(rule.td:3:50: error: an optional op cannot take (Rest $r): when the op is absent, it stands for its first input
  let match = [(Neg:$y (Optional (Concat:$c $a, (Rest $r), (axis 0))))];
                                                 ^
)"},
    {"RestWithTwoNames",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest $r, $s), (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:32: error: Rest takes one name: (Rest $rest), or (Rest $_) in a match
  let match = [(Concat:$y $a, (Rest $r, $s), (axis 0))];
                               ^
)"},
    {"RestWithoutAName",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest), (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:32: error: Rest takes one name: (Rest $rest), or (Rest $_) in a match
  let match = [(Concat:$y $a, (Rest), (axis 0))];
                               ^
)"},
    {"RestOfSomethingElseThanAName",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest (Neg $b)), (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:38: error: Rest takes one name: (Rest $rest), or (Rest $_) in a match
  let match = [(Concat:$y $a, (Rest (Neg $b)), (axis 0))];
                                     ^
)"},
    {"RestAlsoReadAsAValue",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $r, (Rest $r), (axis 0))];
  let rewrite = [(Identity:$y $y)];
}
)",
     R"(rule.td:3:27: error: 'r' is a list of inputs, bound by (Rest $r); the match cannot read it as a value
  let match = [(Concat:$y $r, (Rest $r), (axis 0))];
                          ^
)"},
    {"RestAlsoBoundByADag",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$r $a), (Concat:$y $r, (Rest $r), (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:45: error: 'r' is bound twice
  let match = [(Neg:$r $a), (Concat:$y $r, (Rest $r), (axis 0))];
                                            ^
rule.td:3:17: note: first bound here
  let match = [(Neg:$r $a), (Concat:$y $r, (Rest $r), (axis 0))];
                ^
)"},
    {"RestBoundTwice",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y (Concat $a, (Rest $r), (axis 0)), (Rest $r), (axis 0))];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:3:62: error: 'r' is bound twice
  let match = [(Concat:$y (Concat $a, (Rest $r), (axis 0)), (Rest $r), (axis 0))];
                                                             ^
rule.td:3:40: note: first bound here
  let match = [(Concat:$y (Concat $a, (Rest $r), (axis 0)), (Rest $r), (axis 0))];
                                       ^
)"},
    {"ConstraintOnARest",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest $r), (axis 0))];
  let where = [Rank<"a", [1]>, Rank<"r", [1]>];
  let rewrite = [(Identity:$y $a)];
}
)",
     R"(rule.td:4:32: error: Rank constrains 'r', a list of inputs bound by (Rest $r); constraints name single values
  let where = [Rank<"a", [1]>, Rank<"r", [1]>];
                               ^
)"},
    {"SpliceOfANameThatIsNotARest",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, $b, (axis 0))];
  let rewrite = [(Concat:$y $a, (Rest $b), (axis 0))];
}
)",
     R"(rule.td:4:39: error: 'b' is not a rest of the match: (Rest $b) splices the inputs a match's (Rest $b) bound
  let rewrite = [(Concat:$y $a, (Rest $b), (axis 0))];
                                      ^
)"},
    {"RestReadWithoutSplicing",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Concat:$y $a, (Rest $r), (axis 0))];
  let rewrite = [(Concat:$y $a, $r, (axis 0))];
}
)",
     R"(rule.td:4:33: error: 'r' is a list of inputs; write (Rest $r) to splice it
  let rewrite = [(Concat:$y $a, $r, (axis 0))];
                                ^
)"},
    {"EquivalentToAnUnboundName",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Add:$y (Neg:$n $x), $x)];
  let where = [Equivalent<"n", "m">];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:4:16: error: Equivalent compares with 'm', which the match does not bind
  let where = [Equivalent<"n", "m">];
               ^
)"},
    {"MissingInclude",
     R"(include "onnx_rewrite/Rules.td"
def R : Rule<"r">;
)",
     R"(rule.td:1:9: error: Could not find include file 'onnx_rewrite/Rules.td'
include "onnx_rewrite/Rules.td"
        ^
rule.td:1:9: error: Unexpected token at top level
include "onnx_rewrite/Rules.td"
        ^
)"},
    {"FragmentWithoutABody",
     R"(include "onnx_rewrite/Rule.td"
def centered : Fragment<["x"]>;
)",
     R"(rule.td:2:5: error: fragment 'centered' needs `let match = [...]`, or `let rewrite = [...]` or `let variants = [...]`
def centered : Fragment<["x"]>;
    ^
)"},
    {"FragmentWithAMatchAndARewrite",
     R"(include "onnx_rewrite/Rule.td"
def centered : Fragment<["x"]> {
  let match = [(Sub:$d $x, (ReduceMean $x))];
  let rewrite = [(Sub:$d $x, (ReduceMean $x))];
}
)",
     R"(rule.td:4:7: error: a fragment is a piece of a match or of a rewrite, not both
  let rewrite = [(Sub:$d $x, (ReduceMean $x))];
      ^
)"},
    {"UnknownAttributeParameter",
     R"(include "onnx_rewrite/Rule.td"
def soft : Fragment<["x"], [AttrParam<"axis", "-1">]> {
  let match = [(Softmax:$y $x, (axis $axs))];
}
)",
     R"(rule.td:3:38: error: 'axs' is not an attribute parameter of fragment 'soft' (those are: axis)
  let match = [(Softmax:$y $x, (axis $axs))];
                                     ^
)"},
    {"AttributeParameterOutsideAFragment",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Softmax:$y $x, (axis $ax))];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:38: error: an attribute value is a literal or a condition; to capture it write (axis (Capture $ax))
  let match = [(Softmax:$y $x, (axis $ax))];
                                     ^
)"},
    {"AttributeParameterDefaultThatIsNoLiteral",
     R"(include "onnx_rewrite/Rule.td"
def soft : Fragment<["x"], [AttrParam<"axis", "last">]> {
  let match = [(Softmax:$y $x, (axis $axis))];
}
)",
     R"(rule.td:2:47: error: default "last" of attribute parameter 'axis' is not a literal: write it as "-1", "1e-5", "[0, 1]" or "'text'" ("" for none)
def soft : Fragment<["x"], [AttrParam<"axis", "last">]> {
                                              ^
)"},
    {"TupleOfTheWrongSize",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Results $a, $b, (AnyOf (Split $x), (Tuple (Neg $x)))), (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:3:53: error: this tuple has 1 value, but Results binds 2 names
  let match = [(Results $a, $b, (AnyOf (Split $x), (Tuple (Neg $x)))), (Add:$y $a, $b)];
                                                    ^
)"},
    {"KeepInARuleWithoutAMatchAddsNothing",
     R"(include "onnx_rewrite/Rule.td"
def LayerNorm : Rule<"layer_norm"> {
  let keep = ["x"];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:2:5: error: rule 'layer_norm' has no match: set `let match = [...]`
def LayerNorm : Rule<"layer_norm"> {
    ^
)"},
    {"KeepOfANameTheMatchDoesNotBind",
     R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Neg:$y $x)];
  let keep = ["x", "cos"];
  let rewrite = [(Identity:$y $x)];
}
)",
     R"(rule.td:4:20: error: `keep` names values of the match; 'cos' is not one
  let keep = ["x", "cos"];
                   ^
)"},
};

INSTANTIATE_TEST_SUITE_P(Mistakes, TableGenRenderedDiagnostics, ::testing::ValuesIn(kRendered),
                         [](const ::testing::TestParamInfo<Rendered>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace onnx_rewrite
