//===- SameIRAsYamlTest.cc - one rule, two languages, one IR --------------===//
//
// data/same_as_yaml.{yaml,td} hold the same rules and declaration written in
// each language, one feature per rule; both front ends must print the same
// canonical IR, rule by rule. Built only when the YAML front end is.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "dsl/yaml/YamlFrontEnd.h"
#include "tests/unit/dsl_tablegen/TableGenTestSupport.h"

namespace onnx_rewrite {
namespace {

TEST(SameIRAsYaml, EveryRuleAndDeclarationPrintsTheSame) {
  DiagnosticEngine diag;
  std::string rendered;
  diag.setHandler([&](const Diagnostic& d) { rendered += diag.render(d); });
  ir::RuleFile yaml;
  ASSERT_TRUE(parseYamlRuleFile(ONNX_REWRITE_TD_TEST_DATA "/same_as_yaml.yaml", yaml, diag))
      << rendered;
  testing::TdParse td = testing::parseTdFile(ONNX_REWRITE_TD_TEST_DATA "/same_as_yaml.td");
  ASSERT_TRUE(td.ok) << td.rendered;
  ASSERT_EQ(yaml.rules.size(), td.file.rules.size());
  for (size_t i = 0; i < yaml.rules.size(); ++i)
    EXPECT_EQ(ir::printRule(td.file.rules[i]), ir::printRule(yaml.rules[i]))
        << "rule " << yaml.rules[i].name;
  ASSERT_EQ(yaml.ops.size(), td.file.ops.size());
  for (size_t i = 0; i < yaml.ops.size(); ++i)
    EXPECT_EQ(ir::printOpDecl(td.file.ops[i]), ir::printOpDecl(yaml.ops[i]));
}

}  // namespace
}  // namespace onnx_rewrite
