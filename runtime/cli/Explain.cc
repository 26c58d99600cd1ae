//===- Explain.cc - --explain RULE: why a rule did not apply -------------===//
#include "runtime/cli/Explain.h"

#include <algorithm>

#include "runtime/driver/FailureReasons.h"

namespace onnx_rewrite {

bool Explainer::covers(const std::string& name) const { return isPartOfRule(name, rule_); }

std::string Explainer::where(const Graph& graph, const Node& node) {
  std::string at = node.op().str() + " ";
  if (!node.name().empty()) {
    at += "'" + node.name() + "'";
  } else {
    const ValueId out = node.outputs().empty() ? kNoId : node.outputs()[0];
    at += "(output '" + (out == kNoId ? std::string() : graph.value(out).name()) + "')";
  }
  return at + " in " + graph.label();
}

void Explainer::onMatchFailure(const RewritePattern& rule, Graph& graph, NodeId root,
                               const std::string& reason) {
  if (!covers(rule.name())) return;
  const std::string at = where(graph, graph.node(root));
  const std::string line = "explain: " + rule_ + " at " + at + ": " + reason + "\n";
  if (all_) {
    std::fputs(line.c_str(), out_);
    return;
  }
  for (auto& [node, held] : held_)
    if (node == at) {
      held = line;
      return;
    }
  held_.emplace_back(at, line);
}

void Explainer::onNodeErased(Graph& graph, NodeId node) {
  if (all_ || held_.empty()) return;
  const std::string at = where(graph, graph.node(node));
  held_.erase(
      std::remove_if(held_.begin(), held_.end(), [&](const auto& h) { return h.first == at; }),
      held_.end());
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
  for (const auto& [node, line] : held_) std::fputs(line.c_str(), out_);
  held_.clear();
  uint64_t tried = 0;
  for (const RuleStats& r : stats.rules)
    if (covers(r.name)) tried += r.tried;
  if (tried > 0) return;
  for (const std::string& reason : not_run_)
    std::fprintf(out_, "explain: %s did not run: %s\n", rule_.c_str(), reason.c_str());
}

}  // namespace onnx_rewrite
