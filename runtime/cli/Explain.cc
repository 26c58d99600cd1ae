//===- Explain.cc - --explain RULE: why a rule did not apply -------------===//
#include "runtime/cli/Explain.h"

#include <algorithm>

namespace onnx_rewrite {

bool Explainer::covers(const std::string& name) const {
  return name == rule_ || name.rfind(rule_ + "/", 0) == 0;
}

void Explainer::onMatchFailure(const RewritePattern& rule, Graph& graph, NodeId root,
                               const std::string& reason) {
  if (!covers(rule.name())) return;
  const Node& node = graph.node(root);
  std::fprintf(out_, "explain: %s at %s '%s' in %s: %s\n", rule_.c_str(), node.op().str().c_str(),
               node.name().c_str(), graph.label().c_str(), reason.c_str());
}

void Explainer::onRuleNotRun(const RewritePattern& rule, const Graph& graph,
                             const std::string& reason) {
  if (!covers(rule.name())) return;
  if (std::find(not_run_.begin(), not_run_.end(), reason) == not_run_.end())
    not_run_.push_back(reason);
}

bool Explainer::reportFilteredOut(const RuleSet& rules, const RuleFilter& filter) {
  std::string reason;
  for (const auto& rule : rules.rules()) {
    if (!covers(rule->name())) continue;
    std::string why = whyFilteredOut(*rule, filter);
    if (why.empty()) return false;  // one of its root-op variants runs
    if (reason.empty()) reason = std::move(why);
  }
  if (reason.empty()) return false;
  std::fprintf(out_, "explain: %s did not run: %s\n", rule_.c_str(), reason.c_str());
  return true;
}

void Explainer::reportNotRun(const DriverStats& stats) {
  uint64_t tried = 0;
  for (const RuleStats& r : stats.rules)
    if (covers(r.name)) tried += r.tried;
  if (tried > 0) return;
  for (const std::string& reason : not_run_)
    std::fprintf(out_, "explain: %s did not run: %s\n", rule_.c_str(), reason.c_str());
}

}  // namespace onnx_rewrite
