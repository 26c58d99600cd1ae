//===- Rewriter.h - the only way rules change a graph --------------------===//
//
// Rules call the Rewriter, never Graph's mutators directly: it stamps new nodes
// with the rule's name and a position next to the match, enforces the escape
// check and the soundness check (Soundness.h: no replaced value changes its type
// or shape), erases what a replacement left dead and tells the listener (the
// driver's worklist) about every change.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/driver/RewriteListener.h"
#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

class RewritePattern;

/// Mutation API handed to RewritePattern::matchAndRewrite.
class Rewriter {
 public:
  Rewriter(Model& model, Graph& graph, RewriteListener* listener)
      : model_(model), graph_(graph), listener_(listener) {}

  Graph& graph() { return graph_; }
  Model& model() { return model_; }

  /// Called by the driver before each attempt.
  void beginAttempt(const RewritePattern& rule, NodeId root);
  /// True once the attempt got past every constraint (see checkReplaceable).
  bool matched() const { return matched_; }
  /// True when the attempt matched but the soundness check refused its rewrite.
  bool refusedAsUnsound() const { return refused_as_unsound_; }
  /// Test builds: after every rewrite, check again over the rewired graph, strictly
  /// (Strictness::kVerify), and throw SoundnessViolation on a change that got through.
  void setVerifyAfterRewrite(bool verify) { verify_ = verify; }

  // ---- Match support -------------------------------------------------------------

  /// Marks the attempt as matched and runs the escape check (findEscapingValue) on the
  /// matched nodes. Returns true if the match may be replaced; otherwise reports the
  /// reason as a match failure and returns false. Call after the last constraint and
  /// before the first mutation.
  bool checkReplaceable(const std::vector<NodeId>& matched, const std::vector<ValueId>& provided);

  /// Reports why the attempt failed and returns false, so a rule can write
  /// `return rewriter.notifyMatchFailure([&] { return "..."; });`. `reason` runs only
  /// when a listener wants failure reasons.
  template <typename ReasonFn>
  bool notifyMatchFailure(ReasonFn&& reason) {
    if (listener_ && listener_->wantsMatchFailures()) reportFailure(reason());
    return false;
  }

  // ---- Rewrite -------------------------------------------------------------------

  /// Adds a node; created_by and order default to the current rule and the root's place.
  /// Parameters later opsets moved to inputs (Unsqueeze's axes, ...) are put in the form
  /// the model's opset takes, whichever way the rule wrote them (OpsetFormOfNode.h).
  /// A node outside the match that computes the same (op, inputs, attributes; one output,
  /// deterministic) is returned instead: rules that each move a shared Cast or Transpose
  /// (one per reader) then leave one node, not one per reader.
  NodeId createNode(NodeSpec spec);
  /// Adds a constant. A tensor equal to one added before in this graph (name aside) reuses
  /// that initializer: the half caches of Q's and K's rotary, made from one cache, are one
  /// tensor, not one per node.
  ValueId addInitializer(onnx::TensorProto tensor, std::string_view name_hint);
  /// Every use of `from` reads `to` instead; false (nothing changed) if ONNX naming forbids.
  bool replaceValue(ValueId from, ValueId to);
  /// Replaces each `first` by `second`, then erases the matched nodes left without uses,
  /// and the nodes outside the match that only they read (transitively). Returns false,
  /// reporting why, if a replacement is not allowed: two names that must both survive, or
  /// a `second` whose type or shape differs from its `first`'s (findTypeChange). The graph
  /// is then as before the attempt (the nodes the rule created are erased again).
  bool replaceMatch(const std::vector<NodeId>& matched,
                    const std::vector<std::pair<ValueId, ValueId>>& replacements);
  void eraseNode(NodeId node);

 private:
  void reportFailure(const std::string& reason);
  /// An input of a created node that a feeder of the match computes, or kNoId.
  ValueId readFeeder() const;
  /// A live node computing what `spec` describes, outside the match and its feeders, or
  /// kNoId.
  NodeId findIdenticalNode(const NodeSpec& spec) const;
  /// Erases the nodes this attempt created, newest first, when its rewrite is refused.
  void rollBack();
  /// Erases each of `candidates` (popped from the back) that has no reader left, then its
  /// producers likewise.
  void eraseNodesLeftDead(std::vector<NodeId> candidates);

  Model& model_;
  Graph& graph_;
  RewriteListener* listener_;
  const RewritePattern* rule_ = nullptr;
  NodeId root_ = kNoId;
  bool matched_ = false;
  bool refused_as_unsound_ = false;
  bool verify_ = false;
  /// Nodes created in this attempt, in creation order (a topological order).
  std::vector<NodeId> created_;
  /// The nodes checkReplaceable was given: the match, erased by its rewrite.
  std::vector<NodeId> matched_nodes_;
  /// Nodes outside the match that read a matched value and feed only the match: the
  /// target may not read them, or they (and the matched values) would stay.
  std::vector<NodeId> feeders_;
  /// Initializers added so far, by a hash of their serialised contents without the name.
  std::unordered_multimap<size_t, ValueId> added_;
};

}  // namespace onnx_rewrite
