//===- Explain.h - --explain RULE: why a rule did not apply --------------===//
//
// What rule authors need most when a fusion silently fails: for each node the rule
// was tried on, how far the match got and what failed (printed as the driver reports
// it); and when the rule was never tried at all, why not: --only/--skip dropped it,
// the model's opsets are outside its range, or no graph has a node of its root op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RuleSet.h"
#include "runtime/driver/Statistics.h"

namespace onnx_rewrite {

/// Prints "explain: RULE ..." lines to `out`. Interpreted rules with several root ops are
/// named "RULE/Op"; RULE covers them all. By default a failed attempt is held back until
/// the end and printed only if its node is still there (the last reason per node): on a
/// model the rule fuses, the attempts at nodes that were fused after all are noise.
/// `all` prints every failed attempt as it happens.
class Explainer : public RewriteListener {
 public:
  Explainer(std::string rule, std::FILE* out, bool all = false)
      : rule_(std::move(rule)), out_(out), all_(all) {}

  bool wantsMatchFailures() const override { return true; }
  void onMatchFailure(const RewritePattern& rule, Graph& graph, NodeId root,
                      const std::string& reason) override;
  void onRuleNotRun(const RewritePattern& rule, const Graph& graph,
                    const std::string& reason) override;
  void onNodeErased(Graph& graph, NodeId node) override;

  /// Before the run: if `filter` drops every rule named RULE, says so and returns true.
  bool reportFilteredOut(const RuleSet& rules, const RuleFilter& filter);
  /// After the run: prints the held-back attempts at nodes still there, then, if RULE was
  /// never tried (per `stats`), says why, once per reason.
  void reportNotRun(const DriverStats& stats);

 private:
  bool covers(const std::string& name) const;
  /// "Op 'name' in graph", or "Op (output 'y') in graph" for a node without a name.
  static std::string where(const Graph& graph, const Node& node);

  std::string rule_;
  std::FILE* out_;
  bool all_;
  /// Held-back attempts: the node (by where()) and its last failure line, in first-seen order.
  std::vector<std::pair<std::string, std::string>> held_;
  /// Why RULE did not run, per graph, without repeats (inference rounds run the driver again).
  std::vector<std::string> not_run_;
};

}  // namespace onnx_rewrite
