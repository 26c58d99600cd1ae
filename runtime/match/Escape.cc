//===- Escape.cc - may a matched set of nodes be replaced? ---------------===//
#include "runtime/match/Escape.h"

#include <algorithm>

#include "runtime/match/Params.h"

namespace onnx_rewrite {

namespace {

/// Nodes outside a match that only feed it, looked at per match: shape computations are a
/// handful of nodes, and a longer chain is treated as escaping.
constexpr int kMaxFeederNodes = 32;

/// True when every output of `user` is read only by matched nodes or by nodes that are, in
/// turn, such feeders: the Shape/Gather/Concat chain computing a matched Reshape's target
/// from a matched value. The rewrite leaves the whole chain without readers, so it goes
/// with the match (Rewriter::eraseNodesLeftDead) and the value it reads escapes nowhere.
bool onlyFeedsMatch(const Graph& graph, NodeId user, const std::vector<NodeId>& matched,
                    int& budget, std::vector<NodeId>& found) {
  if (--budget < 0) return false;
  found.push_back(user);
  bool read = false;  // a chain that ends nowhere is not the match's (nor going with it)
  for (ValueId out : graph.node(user).outputs()) {
    if (out == kNoId) continue;
    const Value& v = graph.value(out);
    if (v.isGraphOutput()) return false;
    for (const Use& u : v.uses()) {
      read = true;
      if (u.input == kSubgraphUse) return false;
      if (std::find(matched.begin(), matched.end(), u.node) != matched.end()) continue;
      if (!onlyFeedsMatch(graph, u.node, matched, budget, found)) return false;
    }
  }
  return read;
}

/// Ops that compute shapes and indices (TorchScript's Unsqueeze(Gather(Shape(x), 0)), a
/// Concat of such dims): a handful of small integer values.
bool isShapeOp(const Node& node) {
  static const char* const kOps[] = {"Shape",  "Size",  "Gather", "Unsqueeze", "Squeeze",
                                     "Concat", "Slice", "Cast",   "Constant",  "Add",
                                     "Sub",    "Mul",   "Div",    "Identity"};
  if (!node.domain().empty()) return false;
  return std::find(std::begin(kOps), std::end(kOps), node.opType()) != std::end(kOps);
}

/// True when v is known to be an integer scalar or vector: a shape, a dim, an index.
bool isSmallInteger(const Graph& graph, ValueId v) {
  const onnx::TensorShapeProto* shape = valueShape(graph, v);
  const int32_t elem = valueElemType(graph, v);
  return shape && shape->dim_size() <= 1 &&
         (elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32);
}

/// True when matched node `id`, read outside the match, may simply stay for those readers:
/// it and the matched nodes it reads are shape computations over values from outside the
/// match, which outlive the rewrite. The rewrite erases only what it leaves without
/// readers, so they stay; a shared dim (B read once, used by the match's head split and by
/// another branch's) then blocks no fusion. Anything else kept would compute part of the
/// match twice.
bool staysForOtherReaders(const Graph& graph, NodeId id, const std::vector<NodeId>& matched) {
  std::vector<NodeId> stack{id}, seen;
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    const Node& node = graph.node(n);
    if (!isShapeOp(node) || !node.subgraphs().empty()) return false;
    for (ValueId out : node.outputs())
      if (out != kNoId && !isSmallInteger(graph, out)) return false;
    for (ValueId in : node.inputs()) {
      if (in == kNoId) continue;
      const NodeId producer = graph.value(in).producer();
      if (producer != kNoId && std::find(matched.begin(), matched.end(), producer) != matched.end())
        stack.push_back(producer);
    }
  }
  return true;
}

}  // namespace

std::string findEscapingValue(const Graph& graph, const std::vector<NodeId>& matched,
                              const std::vector<ValueId>& provided, std::vector<NodeId>* feeders) {
  // Matches are small (tens of nodes): linear searches beat building sets.
  auto inMatch = [&](NodeId n) {
    return std::find(matched.begin(), matched.end(), n) != matched.end();
  };
  // Records the chain starting at outside reader `user` as feeders if it feeds only the
  // match; false if it does not (or feeders are not collected).
  auto recordFeeders = [&](NodeId user) {
    int budget = kMaxFeederNodes;
    std::vector<NodeId> found;
    if (!feeders || !onlyFeedsMatch(graph, user, matched, budget, found)) return false;
    feeders->insert(feeders->end(), found.begin(), found.end());
    return true;
  };
  for (NodeId id : matched) {
    const Node& node = graph.node(id);
    enum { kUnknown, kStays, kGoes } fate = kUnknown;  // decided when an output first escapes
    for (ValueId out : node.outputs()) {
      if (out == kNoId) continue;
      const Value& v = graph.value(out);
      if (std::find(provided.begin(), provided.end(), out) != provided.end()) {
        // A provided value may escape, but a chain from it that feeds the match (the mask
        // sliced by a re-exported K's length) must not feed the target too: it would read
        // the target's own output, a cycle.
        for (const Use& u : v.uses())
          if (u.input != kSubgraphUse && !inMatch(u.node)) recordFeeders(u.node);
        continue;
      }
      auto escapes = [&] {
        if (fate == kUnknown) fate = staysForOtherReaders(graph, id, matched) ? kStays : kGoes;
        return fate == kGoes;
      };
      if (v.isGraphOutput() && escapes())
        return "'" + v.name() + "' (output of " + node.opType() + " '" + node.name() +
               "') is a graph output the rewrite would remove";
      for (const Use& u : v.uses()) {
        if (inMatch(u.node) && u.input != kSubgraphUse) continue;
        // A shape computation that stays is read by its other readers as any value from
        // outside the match is: they are not feeders, and the target may read them.
        if (!escapes()) continue;
        if (u.input != kSubgraphUse && recordFeeders(u.node)) continue;
        const Node& user = graph.node(u.node);
        return "'" + v.name() + "' (output of " + node.opType() + " '" + node.name() +
               "') is also used by " + user.opType() + " '" + user.name() + "'" +
               (u.input == kSubgraphUse ? " in a subgraph" : "") + " outside the match";
      }
    }
  }
  return {};
}

}  // namespace onnx_rewrite
