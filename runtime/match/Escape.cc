//===- Escape.cc - may a matched set of nodes be replaced? ---------------===//
#include "runtime/match/Escape.h"

#include <algorithm>

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

}  // namespace

std::string findEscapingValue(const Graph& graph, const std::vector<NodeId>& matched,
                              const std::vector<ValueId>& provided, std::vector<NodeId>* feeders) {
  // Matches are small (tens of nodes): linear searches beat building sets.
  auto inMatch = [&](NodeId n) {
    return std::find(matched.begin(), matched.end(), n) != matched.end();
  };
  for (NodeId id : matched) {
    const Node& node = graph.node(id);
    for (ValueId out : node.outputs()) {
      if (out == kNoId) continue;
      if (std::find(provided.begin(), provided.end(), out) != provided.end()) continue;
      const Value& v = graph.value(out);
      if (v.isGraphOutput())
        return "'" + v.name() + "' (output of " + node.opType() + " '" + node.name() +
               "') is a graph output the rewrite would remove";
      for (const Use& u : v.uses()) {
        if (inMatch(u.node) && u.input != kSubgraphUse) continue;
        int budget = kMaxFeederNodes;
        std::vector<NodeId> found;
        if (feeders && u.input != kSubgraphUse &&
            onlyFeedsMatch(graph, u.node, matched, budget, found)) {
          feeders->insert(feeders->end(), found.begin(), found.end());
          continue;
        }
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
