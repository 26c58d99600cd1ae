//===- RuleFileMerge.cc - parsed rule files into one checked rule set -----===//
#include "dsl/RuleFileMerge.h"

#include <algorithm>

#include "compiler/sema/ContribOps.h"
#include "compiler/sema/ExpandFragments.h"
#include "compiler/sema/RuleChecks.h"

namespace onnx_rewrite {
namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool isYamlRuleFile(const std::string& path) {
  return endsWith(path, ".yaml") || endsWith(path, ".yml");
}

bool isTableGenRuleFile(const std::string& path) { return endsWith(path, ".td"); }

void mergeRuleFile(ir::RuleFile& into, ir::RuleFile&& one) {
  for (ir::Rule& r : one.rules) into.rules.push_back(std::move(r));
  for (ir::OpDecl& d : one.ops) into.ops.push_back(std::move(d));
  for (ir::Fragment& f : one.fragments) {
    const bool loaded = std::any_of(
        into.fragments.begin(), into.fragments.end(),
        [&](const ir::Fragment& g) { return g.name == f.name && g.loc.str() == f.loc.str(); });
    if (!loaded) into.fragments.push_back(std::move(f));
  }
}

bool finishRuleFile(ir::RuleFile& file, bool check, DiagnosticEngine& diag) {
  // Fragments of every file serve the rules of every file.
  if (!expandFragments(file, diag)) return false;
  if (!check) return !diag.hasErrors();
  return checkRules(file, contribOpDecls(), diag) && !diag.hasErrors();
}

}  // namespace onnx_rewrite
