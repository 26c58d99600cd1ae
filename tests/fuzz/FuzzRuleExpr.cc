//===- FuzzRuleExpr.cc - libFuzzer target: the rule statement parser ------===//
//
// dsl/yaml/RuleExprParser.h on its own, without YAML around it, so every byte
// the fuzzer changes lands in the statement language. The input is
//
//   SIGNATURE-OR-NATIVE-CALL \n MATCH-STATEMENTS [\n=>\n REWRITE-STATEMENTS]
//
// The first line is parsed as a fragment signature and as a `native:` call; the
// match block as a rule's match (and, after a good signature, as a match
// fragment's body); the rewrite block (the match block when there is none) as a
// rewrite over the names the match binds. Results are printed to exercise the
// IR printer on whatever the parser built.
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RulePrinter.h"
#include "dsl/yaml/RuleExprParser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnx_rewrite;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t eol = input.find('\n');
  const std::string head = input.substr(0, eol);
  const std::string body = eol == std::string::npos ? std::string() : input.substr(eol + 1);
  const size_t arrow = body.find("\n=>\n");
  const std::string match_text = body.substr(0, arrow);
  const std::string rewrite_text = arrow == std::string::npos ? body : body.substr(arrow + 4);

  DiagnosticEngine diag;
  diag.setHandler([&diag](const Diagnostic& d) { (void)diag.render(d); });
  const yaml::TextLocator head_at = yaml::TextLocator::forText("head", head);
  const yaml::TextLocator match_at = yaml::TextLocator::forText("match", match_text);
  const yaml::TextLocator rewrite_at = yaml::TextLocator::forText("rewrite", rewrite_text);
  diag.addSource("head", head);
  diag.addSource("match", match_text);
  diag.addSource("rewrite", rewrite_text);

  std::string name;
  std::vector<std::string> args;
  (void)yaml::parseNativeCall(head, head_at, diag, name, args);
  (void)yaml::checkStatements(match_text, match_at, diag);

  ir::Rule rule;
  rule.name = "fuzz";
  (void)yaml::parseMatch(match_text, match_at, diag, rule.pattern);
  const std::set<std::string> names = yaml::patternValueNames(rule.pattern);
  ir::Target& target = rule.targets.emplace_back();
  (void)yaml::parseRewrite(rewrite_text, rewrite_at, names, diag, target);
  (void)ir::printRule(rule);

  ir::Fragment fragment;
  if (yaml::parseSignature(head, head_at, diag, fragment) &&
      yaml::parseFragmentMatch(match_text, match_at, diag, fragment)) {
    ir::Rule body;
    body.name = fragment.name;
    body.pattern = fragment.match;
    (void)ir::printRule(body);
  }
  return 0;
}
