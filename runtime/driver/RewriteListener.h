//===- RewriteListener.h - observing the rewriter ------------------------===//
//
// Everything that changes the graph goes through Rewriter, which tells a
// listener. The driver's worklist is one listener; explain mode and tracing are
// others. Failure reasons are built only when a listener asks for them, so the
// hot path pays nothing for them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "runtime/graph/Graph.h"

namespace onnx_rewrite {

class RewritePattern;

/// Callbacks for graph changes and match failures. All default to doing nothing.
class RewriteListener {
 public:
  virtual ~RewriteListener() = default;
  virtual void onNodeInserted(Graph& graph, NodeId node) {}
  /// Called just before `node` becomes a tombstone; its inputs are still wired.
  virtual void onNodeErased(Graph& graph, NodeId node) {}
  /// All uses of `from` now read `to`.
  virtual void onValueReplaced(Graph& graph, ValueId from, ValueId to) {}
  /// Whether onMatchFailure should be called (building reasons costs time).
  virtual bool wantsMatchFailures() const { return false; }
  /// `rule` did not apply at `root`: `reason` says which check failed, `at` where.
  virtual void onMatchFailure(const RewritePattern& rule, Graph& graph, NodeId root,
                              const std::string& reason) {}
  /// `rule` was never tried in `graph`: `reason` says why (its opset range, no node of its
  /// root op, a cap). Called, like onMatchFailure, only if wantsMatchFailures().
  virtual void onRuleNotRun(const RewritePattern& rule, const Graph& graph,
                            const std::string& reason) {}
};

/// Forwards every callback to two listeners (the worklist and the user's).
class ListenerPair : public RewriteListener {
 public:
  ListenerPair(RewriteListener* first, RewriteListener* second) : a_(first), b_(second) {}
  void onNodeInserted(Graph& g, NodeId n) override {
    if (a_) a_->onNodeInserted(g, n);
    if (b_) b_->onNodeInserted(g, n);
  }
  void onNodeErased(Graph& g, NodeId n) override {
    if (a_) a_->onNodeErased(g, n);
    if (b_) b_->onNodeErased(g, n);
  }
  void onValueReplaced(Graph& g, ValueId from, ValueId to) override {
    if (a_) a_->onValueReplaced(g, from, to);
    if (b_) b_->onValueReplaced(g, from, to);
  }
  bool wantsMatchFailures() const override {
    return (a_ && a_->wantsMatchFailures()) || (b_ && b_->wantsMatchFailures());
  }
  void onMatchFailure(const RewritePattern& r, Graph& g, NodeId n,
                      const std::string& why) override {
    if (a_ && a_->wantsMatchFailures()) a_->onMatchFailure(r, g, n, why);
    if (b_ && b_->wantsMatchFailures()) b_->onMatchFailure(r, g, n, why);
  }
  void onRuleNotRun(const RewritePattern& r, const Graph& g, const std::string& why) override {
    if (a_ && a_->wantsMatchFailures()) a_->onRuleNotRun(r, g, why);
    if (b_ && b_->wantsMatchFailures()) b_->onRuleNotRun(r, g, why);
  }

 private:
  RewriteListener* a_;
  RewriteListener* b_;
};

}  // namespace onnx_rewrite
