//===- RewritePattern.h - the interface every rule implements ------------===//
//
// A rule is metadata (name, root op, priority, tags, where it was written) plus
// matchAndRewrite. rulec generates one subclass per rule; tests and the
// interpreter write their own. matchAndRewrite checks everything first and only
// then mutates, through the Rewriter, so a failed match leaves the graph as it was.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "runtime/graph/Graph.h"
#include "runtime/graph/OpId.h"

namespace onnx_rewrite {

class Rewriter;

/// Static description of a rule.
struct RuleInfo {
  /// snake_case, unique within a rule set; recorded on the nodes the rule creates.
  std::string name;
  /// The op the match is rooted at; the driver only tries the rule on such nodes.
  OpId root;
  /// Higher first; equal priorities keep declaration order.
  int priority = 0;
  /// Targets such as "ort", "onnx", "cpu", "cuda".
  std::vector<std::string> tags;
  /// Where the rule was written ("rules/layer_norm.yaml:12"), for reports.
  std::string source;
  /// Ops the rewrite may create.
  std::vector<OpId> creates;
};

/// A compiled or interpreted rewrite rule.
class RewritePattern {
 public:
  explicit RewritePattern(RuleInfo info) : info_(std::move(info)) {}
  virtual ~RewritePattern() = default;
  RewritePattern(const RewritePattern&) = delete;
  RewritePattern& operator=(const RewritePattern&) = delete;

  const RuleInfo& info() const { return info_; }
  const std::string& name() const { return info_.name; }

  /// Whether the rule can apply in `graph` at all (imported opsets and domains).
  /// Checked once per graph, not per candidate.
  virtual bool appliesTo(const Graph& graph) const { return true; }

  /// Tries to match at `root` (a live node of op info().root). On success rewrites through
  /// `rewriter` and returns true; otherwise returns false with the graph unchanged,
  /// ideally via rewriter.notifyMatchFailure(...).
  virtual bool matchAndRewrite(NodeId root, Rewriter& rewriter) const = 0;

 private:
  RuleInfo info_;
};

}  // namespace onnx_rewrite
