//===- SameIRAsYamlTest.cc - one rule, two languages, one IR --------------===//
//
// data/same_as_yaml.{yaml,td} hold the same rules and declaration written in
// each language, one feature per rule; both front ends must print the same
// canonical IR, rule by rule. data/fragments_same_as_yaml.{yaml,td} do the same
// for fragments (the TableGen ones partly in an included file), tuple
// alternatives, lets and keeps: the same fragments, the same rules as parsed,
// and the same rules once the fragments are expanded, which is what
// `rulec --emit=ir` prints. Built only when the YAML front end is.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "compiler/sema/ExpandFragments.h"
#include "dsl/yaml/YamlFrontEnd.h"
#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite {
namespace {

/// The YAML and the TableGen file of a pair in data/, parsed (the TableGen one with data/
/// as an include folder).
struct Pair {
  ir::RuleFile yaml;
  testing::TdParse td;
};

void parsePair(const std::string& stem, Pair& out) {
  DiagnosticEngine diag;
  std::string rendered;
  diag.setHandler([&](const Diagnostic& d) { rendered += diag.render(d); });
  ASSERT_TRUE(parseYamlRuleFile(ONNX_REWRITE_TD_TEST_DATA "/" + stem + ".yaml", out.yaml, diag))
      << rendered;
  out.td = testing::parseTdFile(ONNX_REWRITE_TD_TEST_DATA "/" + stem + ".td",
                                {ONNX_REWRITE_TD_TEST_DATA});
  ASSERT_TRUE(out.td.ok) << out.td.rendered;
}

/// Expands the fragments of `file` in place; the rendered errors, if any.
std::string expand(ir::RuleFile& file) {
  DiagnosticEngine diag;
  std::string rendered;
  diag.setHandler([&](const Diagnostic& d) { rendered += diag.render(d); });
  EXPECT_TRUE(expandFragments(file, diag)) << rendered;
  return rendered;
}

void expectSameRules(const ir::RuleFile& td, const ir::RuleFile& yaml) {
  ASSERT_EQ(yaml.rules.size(), td.rules.size());
  for (size_t i = 0; i < yaml.rules.size(); ++i)
    EXPECT_EQ(ir::printRule(td.rules[i]), ir::printRule(yaml.rules[i]))
        << "rule " << yaml.rules[i].name;
}

TEST(SameIRAsYaml, EveryRuleAndDeclarationPrintsTheSame) {
  Pair p;
  parsePair("same_as_yaml", p);
  expectSameRules(p.td.file, p.yaml);
  ASSERT_EQ(p.yaml.ops.size(), p.td.file.ops.size());
  for (size_t i = 0; i < p.yaml.ops.size(); ++i)
    EXPECT_EQ(ir::printOpDecl(p.td.file.ops[i]), ir::printOpDecl(p.yaml.ops[i]));
}

TEST(SameIRAsYaml, EveryFragmentReadsTheSame) {
  Pair p;
  parsePair("fragments_same_as_yaml", p);
  ASSERT_EQ(p.yaml.fragments.size(), p.td.file.fragments.size());
  for (size_t i = 0; i < p.yaml.fragments.size(); ++i)
    EXPECT_EQ(testing::fragmentText(p.td.file.fragments[i]),
              testing::fragmentText(p.yaml.fragments[i]))
        << "fragment " << p.yaml.fragments[i].name;
}

TEST(SameIRAsYaml, RulesUsingFragmentsTuplesLetsAndKeepsReadTheSame) {
  Pair p;
  parsePair("fragments_same_as_yaml", p);
  expectSameRules(p.td.file, p.yaml);
}

TEST(SameIRAsYaml, RulesWithTheirFragmentsExpandedAreTheSame) {
  Pair p;
  parsePair("fragments_same_as_yaml", p);
  EXPECT_EQ(expand(p.yaml), "");
  EXPECT_EQ(expand(p.td.file), "");
  expectSameRules(p.td.file, p.yaml);
  // Expansion happened: no rule still calls a fragment.
  for (const ir::Rule& r : p.td.file.rules)
    for (const ir::Fragment& f : p.td.file.fragments)
      EXPECT_EQ(ir::printRule(r).find(" " + f.name + "("), std::string::npos)
          << r.name << " still uses " << f.name;
}

}  // namespace
}  // namespace onnx_rewrite
