//===- Escape.h - may a matched set of nodes be replaced? ----------------===//
//
// The one safety check every rule gets without asking: a value computed inside
// the match but read outside it (by another node, a subgraph, or as a graph
// output) would disappear with the match, so such a match is rejected unless
// the rule re-exports that value from its target, or it is a cheap shape
// computation that can stay where it is. Existing fusion tools learned
// this from wrong outputs; here it is not the rule author's job.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "runtime/graph/Graph.h"

namespace onnx_rewrite {

/// Returns why `matched` cannot be replaced, or an empty string if it can. Outputs of
/// matched nodes listed in `provided` are replaced by the target and may escape. A matched
/// value may also be read by nodes outside the match that feed only the match (the Shape
/// chain computing a matched Reshape's target from a matched value): they go with it,
/// provided the target does not read them; they are added to `feeders` for that check. A
/// matched shape computation (small integer values: Shape, Gather, Unsqueeze, Concat, ...)
/// over values from outside the match may be read outside it too: it stays for those
/// readers, as the rewrite erases only nodes it leaves without readers. Chains from a
/// provided value that feed only the match are feeders too: a target reading them would
/// read its own output.
std::string findEscapingValue(const Graph& graph, const std::vector<NodeId>& matched,
                              const std::vector<ValueId>& provided,
                              std::vector<NodeId>* feeders = nullptr);

}  // namespace onnx_rewrite
