//===- Escape.cc - may a matched set of nodes be replaced? ---------------===//
#include "runtime/match/Escape.h"

#include <algorithm>

namespace onnx_rewrite {

std::string findEscapingValue(const Graph& graph, const std::vector<NodeId>& matched,
                              const std::vector<ValueId>& provided) {
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
