//===- TableGenFragmentsTest.cc - fragments, tuples, lets and keeps in .td ===//
//
// The TableGen forms of the reuse features (docs/dsl.md, "TableGen specifics"):
// a Fragment record becomes an ir::Fragment with its parameters, defaults and
// results; a use is an op call named after it; a Results over an AnyOf of
// Tuples and ops is a tuple alternative; `lets` and `keep` start every target.
// Then the same through the rule loader, where fragments expand: from an
// included file, from a file two rule files include, across YAML and
// TableGen, and misuses reported at the use in the .td file.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <filesystem>

#include "dsl/RuleLoader.h"
#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::parseTd;
using testing::TdParse;
using testing::writeTestFile;

/// Parses `text` and expects no diagnostics at all.
TdParse parseClean(const std::string& text) {
  TdParse p = parseTd(text);
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.rendered, "");
  return p;
}

// ---- Fragment records ------------------------------------------------------------------

TEST(TableGenFragments, AMatchFragmentHasItsParametersResultsAndConstraints) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def heads : Fragment<["t"], [AttrParam<"perm", "[0, 2, 1, 3]">, AttrParam<"axis">]> {
  let doc = "Heads split off.";
  let results = ["r", "h"];
  let match = [(Reshape:$r $t, $shape), (Transpose:$h $r, (perm $perm))];
  let where = [Constant<"shape">];
}
)");
  ASSERT_EQ(p.file.fragments.size(), 1u);
  const ir::Fragment& f = p.file.fragments[0];
  EXPECT_EQ(f.name, "heads");
  EXPECT_EQ(f.doc, "Heads split off.");
  EXPECT_TRUE(f.is_match);
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].name, "t");
  EXPECT_FALSE(f.params[0].attribute);
  EXPECT_EQ(f.params[1].name, "perm");
  EXPECT_TRUE(f.params[1].attribute);
  ASSERT_TRUE(f.params[1].default_value.has_value());
  EXPECT_EQ(f.params[1].default_value->str(), "[0, 2, 1, 3]");
  EXPECT_TRUE(f.params[2].attribute);
  EXPECT_FALSE(f.params[2].default_value.has_value());
  EXPECT_EQ(f.results, (std::vector<std::string>{"r", "h"}));
  EXPECT_EQ(testing::fragmentText(f), R"(fragment heads(t, perm=[0, 2, 1, 3], axis=_) -> r h (match)
  doc Heads split off.
rule heads priority 0
  match
    %0 = capture t
    %1 = capture shape
    %2 = op Reshape(%0, %1) -> r
    root %2
  where
    shape: constant
rule heads priority 0
  match
    %0 = capture t
    %1 = capture shape
    %2 = op Reshape(%0, %1) -> r
    %3 = op Transpose(%2) {perm == parameter perm} -> h
    root %3
  where
    shape: constant
)");
  // Locations: the fragment at its name, a parameter at its text.
  EXPECT_EQ(f.loc.line, 2u);
  EXPECT_EQ(f.loc.col, 5u);
  EXPECT_EQ(f.params[1].loc.col, 40u);
}

TEST(TableGenFragments, AttributeParameterDefaultsAreLiteralsOfEveryKind) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def lits : Fragment<["x"], [AttrParam<"a", "-1">, AttrParam<"b", "1e-5">, AttrParam<"c", "[0, 1]">,
                         AttrParam<"d", "[0.5, 2]">, AttrParam<"e", "'constant'">,
                         AttrParam<"g", "['p', 'q']">, AttrParam<"h", "2.0">]> {
  let match = [(Relu:$y $x)];
}
)");
  ASSERT_EQ(p.file.fragments.size(), 1u);
  std::vector<std::string> defaults;
  for (const ir::Fragment::Param& param : p.file.fragments[0].params)
    if (param.default_value) defaults.push_back(param.default_value->str());
  EXPECT_EQ(defaults, (std::vector<std::string>{"-1", "1e-05", "[0, 1]", "[0.5, 2.0]", "'constant'",
                                                "['p', 'q']", "2.0"}));
}

TEST(TableGenFragments, ARewriteFragmentKeepsItsVariantsAndReadsItsParameters) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def rms : Fragment<["x", "w"], [AttrParam<"epsilon">]> {
  let variants = [
    Variant<When<"", 23>, [(RMSNormalization:$y $x, $w, (epsilon $epsilon))]>,
    Variant<Always, [(SimplifiedLayerNormalization:$y $x, $w, (epsilon $epsilon))]>
  ];
}
)");
  ASSERT_EQ(p.file.fragments.size(), 1u);
  const ir::Fragment& f = p.file.fragments[0];
  EXPECT_FALSE(f.is_match);
  // The result is the name the last dag of the first target binds.
  EXPECT_EQ(f.results, std::vector<std::string>{"y"});
  EXPECT_EQ(testing::fragmentText(f), R"(fragment rms(x, w, epsilon=_) -> y (rewrite)
rule rms priority 0
  match
  rewrite when opset(ai.onnx) >= 23
    %0 = ref x
    %1 = ref w
    %2 = op RMSNormalization(%0, %1) {epsilon = parameter epsilon}
    replace y with %2
  rewrite
    %0 = ref x
    %1 = ref w
    %2 = op SimplifiedLayerNormalization(%0, %1) {epsilon = parameter epsilon}
    replace y with %2
)");
}

TEST(TableGenFragments, AUseIsAnOpCallNamedAfterTheFragment) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def heads : Fragment<["t"], [AttrParam<"perm", "[0, 2, 1, 3]">]> {
  let results = ["r", "h"];
  let match = [(Reshape:$r $t, $s), (Transpose:$h $r, (perm $perm))];
}
def skip : Fragment<["a", "b"]> {
  let results = ["y", "s"];
  let rewrite = [(Results $y, $_, $_, $s, (MsSkipLayerNormalization $a, $b))];
}
def R : Rule<"r"> {
  let match = [(Results $qr, $qh, (heads $q, (perm (ints 0, 2, 3, 1)))),
               (Add:$y $qr, $qh)];
  let rewrite = [(Results $y, $qh, (skip $q, $qr))];
}
)");
  ASSERT_EQ(p.file.rules.size(), 1u);
  EXPECT_EQ(ir::printRule(p.file.rules[0]), R"(rule r priority 0
  match
    %0 = capture q
    %1 = op heads(%0) {perm == [0, 2, 3, 1]} -> qr, .1 -> qh
    %2 = capture qh
    %3 = op Add(%1, %2) -> y
    root %3
  rewrite
    %0 = ref q
    %1 = ref qr
    %2 = op skip(%0, %1).0 of 2
    replace y with %2
    %3 = op (%2).1 of 2
    replace qh with %3
)");
}

// ---- Tuple alternatives ----------------------------------------------------------------

TEST(TableGenTuples, EveryNameTakesTheSameAlternativeOfOneGroup) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Results $x1, $x2,
                (AnyOf (Tag<"split"> (Split $x, (axis -1))),
                       (Tag<"slice"> (Tuple (Slice $x, 0, $h, -1), (Slice $x, $h, $n, -1))))),
               (Concat:$y (Neg $x2), $x1, (axis -1))];
  let rewrite = [(Identity:$y $x)];
}
)");
  ASSERT_EQ(p.file.rules.size(), 1u);
  // Split's output 1 is x2 of alternative 0: the capture "x2.0".
  EXPECT_EQ(ir::printRule(p.file.rules[0]), R"(rule r priority 0
  match
    %0 = capture x2.0
    %1 = capture x
    %2 = capture h
    %3 = capture n
    %4 = const -1
    %5 = op Slice(%1, %2, %3, %4)
    %6 = alt(%0 @split | %5 @slice) tuple 0 -> x2
    %7 = op Neg(%6)
    %8 = op Split(%1) {axis == -1}, .1 -> x2.0
    %9 = const 0
    %10 = const -1
    %11 = op Slice(%1, %9, %2, %10)
    %12 = alt(%8 @split | %11 @slice) tuple 0 -> x1
    %13 = op Concat(%7, %12) {axis == -1} -> y
    root %13
  rewrite
    %0 = ref x
    %1 = op Identity(%0)
    replace y with %1
)");
  const ir::Pattern& pattern = p.file.rules[0].pattern;
  std::vector<uint32_t> groups;
  for (const ir::Expr& e : pattern.exprs)
    if (e.kind == ir::Expr::Kind::kAlternatives) groups.push_back(e.group);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], groups[1]);
  EXPECT_NE(groups[0], ir::kNoGroup);
}

TEST(TableGenTuples, ATupleAloneIsTheOnlyAlternative) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Results $a, $_, (Tuple (Relu $x), $_)), (Neg:$y $a)];
  let rewrite = [(Identity:$y $x)];
}
)");
  ASSERT_EQ(p.file.rules.size(), 1u);
  EXPECT_EQ(ir::printRule(p.file.rules[0]), R"(rule r priority 0
  match
    %0 = capture x
    %1 = op Relu(%0)
    %2 = alt(%1) tuple 0 -> a
    %3 = op Neg(%2) -> y
    root %3
  rewrite
    %0 = ref x
    %1 = op Identity(%0)
    replace y with %1
)");
}

// ---- Lets and keeps --------------------------------------------------------------------

TEST(TableGenLetsAndKeeps, LetsThenKeepsStartEveryTarget) {
  TdParse p = parseClean(R"(include "onnx_rewrite/Rule.td"
def R : Rule<"r"> {
  let match = [(Unsqueeze:$cos $c, (axes (ints 1))),
               (AnyOf:$y (Tag<"mul"> (Mul $x, $cos)), (Tag<"add"> (Add $x, $cos)))];
  let lets = [(Squeeze:$s $cos, (tensor "int64", (ints 1), [1]))];
  let keep = ["cos", "c"];
  let variants = [Variant<WhenTags<["mul"]>, [(Mul:$y $x, $s)]>,
                  Variant<Always, [(Add:$y $x, $s)]>];
}
)");
  ASSERT_EQ(p.file.rules.size(), 1u);
  const std::string text = ir::printRule(p.file.rules[0]);
  const std::string rewrites = text.substr(text.find("  rewrite"));
  EXPECT_EQ(rewrites, R"(  rewrite when @mul
    %0 = ref cos
    replace cos with %0
    %1 = ref c
    replace c with %1
    %2 = ref x
    %3 = tensor int64 [1] dims [1]
    %4 = op Squeeze(%0, %3)
    %5 = op Mul(%2, %4)
    replace y with %5
  rewrite
    %0 = ref cos
    replace cos with %0
    %1 = ref c
    replace c with %1
    %2 = ref x
    %3 = tensor int64 [1] dims [1]
    %4 = op Squeeze(%0, %3)
    %5 = op Add(%2, %4)
    replace y with %5
)");
  // The let's dag comes first in each target: it is built once and copied.
  for (const ir::Target& t : p.file.rules[0].targets) {
    ASSERT_FALSE(t.exprs.empty());
    EXPECT_EQ(t.exprs[0].kind, ir::TargetExpr::Kind::kRef);
    EXPECT_EQ(t.exprs[0].name, "cos");
  }
}

// ---- Through the loader: files, expansion, errors at the use ---------------------------

struct Loaded {
  bool ok = false;
  ir::RuleFile file;
  std::string rendered;  ///< every diagnostic, the test folder removed from paths
};

Loaded load(const std::vector<std::string>& paths, const std::vector<std::string>& includes = {},
            bool check = false) {
  Loaded out;
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic& d) { out.rendered += diag.render(d); });
  RuleLoadOptions options;
  options.include_dirs = includes;
  options.check = check;
  out.ok = loadRuleFiles(paths, options, out.file, diag);
  out.rendered = testing::replaceAll(out.rendered, testing::testFolder() + "/", "");
  return out;
}

const char* const kLibrary = R"(include "onnx_rewrite/Rule.td"
def soft : Fragment<["m"], [AttrParam<"axis", "-1">]> {
  let match = [(Softmax:$s $m, (axis $axis))];
}
)";

TEST(TableGenFragmentFiles, FragmentsOfAnIncludedFileExpandInTheIncludingFile) {
  writeTestFile("lib/frag.td", kLibrary);
  std::string rules = writeTestFile("r.td", R"(include "frag.td"
def R : Rule<"r"> {
  let match = [(Relu:$y (soft $x, (axis 1)))];
  let rewrite = [(Identity:$y $x)];
}
)");
  Loaded l = load({rules}, {testing::testFolder() + "/lib"});
  ASSERT_TRUE(l.ok) << l.rendered;
  ASSERT_EQ(l.file.rules.size(), 1u);
  EXPECT_NE(ir::printRule(l.file.rules[0]).find("op Softmax(%0) {axis == 1} -> soft.1.s"),
            std::string::npos)
      << ir::printRule(l.file.rules[0]);
}

TEST(TableGenFragmentFiles, AFileTwoRuleFilesIncludeDefinesItsFragmentsOnce) {
  writeTestFile("lib/frag.td", kLibrary);
  std::string a = writeTestFile("a.td", R"(include "frag.td"
def A : Rule<"a"> {
  let match = [(Relu:$y (soft $x))];
  let rewrite = [(Identity:$y $x)];
}
)");
  std::string b = writeTestFile("b.td", R"(include "frag.td"
def B : Rule<"b"> {
  let match = [(Neg:$y (soft $x))];
  let rewrite = [(Identity:$y $x)];
}
)");
  Loaded l = load({a, b}, {testing::testFolder() + "/lib"});
  ASSERT_TRUE(l.ok) << l.rendered;
  EXPECT_EQ(l.file.fragments.size(), 1u);
  ASSERT_EQ(l.file.rules.size(), 2u);
  EXPECT_NE(ir::printRule(l.file.rules[1]).find("{axis == -1}"), std::string::npos);
}

TEST(TableGenFragmentFiles, YamlAndTableGenRulesUseEachOthersFragments) {
  std::string yaml = writeTestFile("f.yaml", R"(fragments:
  - fragment: centered(x)
    match: |
      d = Sub(x, ReduceMean(x, axes=[-1]))
rules:
  - rule: from_yaml
    match: |
      y = Relu(soft(x))
    rewrite: |
      y = Identity(x)
)");
  std::string td = writeTestFile("t.td", R"(include "onnx_rewrite/Rule.td"
def soft : Fragment<["m"], [AttrParam<"axis", "-1">]> {
  let match = [(Softmax:$s $m, (axis $axis))];
}
// Defined in f.yaml.
def centered : FragmentName;
def FromTd : Rule<"from_td"> {
  let match = [(Abs:$y (centered $x))];
  let rewrite = [(Identity:$y $x)];
}
)");
  Loaded l = load({yaml, td}, {}, /*check=*/true);
  ASSERT_TRUE(l.ok) << l.rendered;
  ASSERT_EQ(l.file.rules.size(), 2u);
  EXPECT_NE(ir::printRule(l.file.rules[0]).find("op Softmax"), std::string::npos);
  EXPECT_NE(ir::printRule(l.file.rules[1]).find("op Sub"), std::string::npos);
}

TEST(TableGenFragmentFiles, AFragmentNameNoLoadedFileDefinesIsAnUnknownOp) {
  std::string td = writeTestFile("t.td", R"(include "onnx_rewrite/Rule.td"
def centered : FragmentName;
def FromTd : Rule<"from_td"> {
  let match = [(Abs:$y (centered $x))];
  let rewrite = [(Identity:$y $x)];
}
)");
  Loaded l = load({td}, {}, /*check=*/true);
  EXPECT_FALSE(l.ok);
  EXPECT_NE(l.rendered.find("t.td:4:25: error:"), std::string::npos) << l.rendered;
  EXPECT_NE(l.rendered.find("centered"), std::string::npos) << l.rendered;
}

TEST(TableGenFragmentFiles, MisusesAreReportedAtTheUseInTheTdFile) {
  std::string td = writeTestFile("t.td", R"(include "onnx_rewrite/Rule.td"
def soft : Fragment<["m"], [AttrParam<"axis", "-1">]> {
  let match = [(Softmax:$s $m, (axis $axis))];
}
def relu : Fragment<["x"]> {
  let rewrite = [(Relu:$y $x)];
}
def UnknownAttribute : Rule<"unknown_attribute"> {
  let match = [(Neg:$y (soft $x, (keepdims 1)))];
  let rewrite = [(Identity:$y $x)];
}
def Arity : Rule<"arity"> {
  let match = [(Neg:$y (soft $x, $z))];
  let rewrite = [(Identity:$y $x)];
}
def RewriteInAMatch : Rule<"rewrite_in_a_match"> {
  let match = [(Neg:$y (relu $x))];
  let rewrite = [(Identity:$y $x)];
}
def MatchInARewrite : Rule<"match_in_a_rewrite"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(soft:$y $x)];
}
)");
  Loaded l = load({td});
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(
      l.rendered,
      R"(t.td:9:35: error: fragment 'soft' has no attribute parameter 'keepdims': soft(m, axis=-1)
  let match = [(Neg:$y (soft $x, (keepdims 1)))];
                                  ^
t.td:13:25: error: fragment 'soft' takes 1 value, 2 given: soft(m, axis=-1)
  let match = [(Neg:$y (soft $x, $z))];
                        ^
t.td:17:25: error: fragment 'relu' is a piece of a rewrite; it cannot be used in a match
  let match = [(Neg:$y (relu $x))];
                        ^
t.td:22:19: error: fragment 'soft' is a piece of a match; it cannot be used in a rewrite
  let rewrite = [(soft:$y $x)];
                  ^
)");
}

TEST(TableGenFragmentFiles, ExpandedPiecesNameTheFragmentAndTheUse) {
  std::string td = writeTestFile("t.td", R"(include "onnx_rewrite/Rule.td"
def scaled : Fragment<["t"]> {
  let match = [(Mul:$s $t, $c)];
  let where = [Scalar<"c">];
}
def R : Rule<"r"> {
  let match = [(Relu:$y (scaled $x))];
  let rewrite = [(Identity:$y $x)];
}
)");
  Loaded l = load({td});
  ASSERT_TRUE(l.ok) << l.rendered;
  const ir::Constraint& c = l.file.rules.at(0).pattern.constraints.at(0);
  EXPECT_EQ(c.subject, "scaled.1.c");
  EXPECT_EQ(testing::replaceAll(c.loc.trace(), testing::testFolder() + "/", ""),
            "t.td:4:16 (in scaled at t.td:7:26)");
}

}  // namespace
}  // namespace onnx_rewrite
