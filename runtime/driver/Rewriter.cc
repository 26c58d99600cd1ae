//===- Rewriter.cc - the only way rules change a graph -------------------===//
#include "runtime/driver/Rewriter.h"

#include <algorithm>
#include <functional>

#include "runtime/driver/OpsetFormOfNode.h"
#include "runtime/driver/RewritePattern.h"
#include "runtime/driver/Soundness.h"
#include "runtime/graph/TensorContent.h"
#include "runtime/match/Escape.h"

namespace onnx_rewrite {

void Rewriter::beginAttempt(const RewritePattern& rule, NodeId root) {
  rule_ = &rule;
  root_ = root;
  matched_ = false;
  refused_as_unsound_ = false;
  created_.clear();
  feeders_.clear();
}

void Rewriter::reportFailure(const std::string& reason) {
  if (rule_) listener_->onMatchFailure(*rule_, graph_, root_, reason);
}

bool Rewriter::checkReplaceable(const std::vector<NodeId>& matched,
                                const std::vector<ValueId>& provided) {
  matched_ = true;
  matched_nodes_ = matched;
  feeders_.clear();
  std::string reason = findEscapingValue(graph_, matched, provided, &feeders_);
  if (reason.empty()) return true;
  if (listener_ && listener_->wantsMatchFailures()) reportFailure(reason);
  return false;
}

NodeId Rewriter::createNode(NodeSpec spec) {
  if (spec.created_by.empty() && rule_) spec.created_by = rule_->name();
  if (spec.order == 0 && root_ != kNoId) spec.order = graph_.node(root_).order();
  toOpsetForm(model_, graph_, *this, spec);
  // Omitted trailing inputs are no inputs (a variant that leaves an optional bias out).
  while (!spec.inputs.empty() && spec.inputs.back() == kNoId) spec.inputs.pop_back();
  if (const NodeId same = findIdenticalNode(spec); same != kNoId) return same;
  NodeId id = graph_.addNode(std::move(spec));
  created_.push_back(id);
  if (listener_) listener_->onNodeInserted(graph_, id);
  return id;
}

namespace {

/// Ops whose two applications to the same inputs may differ.
bool isNondeterministic(const OpId& op) {
  static const char* const kOps[] = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
      "Multinomial",  "Bernoulli",        "Dropout"};
  if (!op.domain().empty()) return false;
  return std::find(std::begin(kOps), std::end(kOps), op.opType()) != std::end(kOps);
}

bool sameAttributes(const std::vector<onnx::AttributeProto>& spec, const Node& node) {
  if (static_cast<size_t>(node.proto().attribute_size()) != spec.size()) return false;
  for (const onnx::AttributeProto& a : spec) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return false;
    const onnx::AttributeProto* b = node.attribute(a.name());
    if (!b || b->SerializeAsString() != a.SerializeAsString()) return false;
  }
  return true;
}

}  // namespace

NodeId Rewriter::findIdenticalNode(const NodeSpec& spec) const {
  if (spec.inputs.empty() || spec.inputs[0] == kNoId || spec.num_outputs != 1 ||
      !spec.omitted_outputs.empty() || isNondeterministic(spec.op))
    return kNoId;
  // Bounded: a value read by very many nodes is not searched through on every creation.
  constexpr size_t kMaxUsesSearched = 64;
  const std::vector<Use>& uses = graph_.value(spec.inputs[0]).uses();
  for (size_t i = 0; i < uses.size() && i < kMaxUsesSearched; ++i) {
    const NodeId id = uses[i].node;
    const Node& node = graph_.node(id);
    if (!node.live() || node.op() != spec.op || node.inputs() != spec.inputs ||
        node.outputs().size() != 1 || !node.subgraphs().empty() ||
        graph_.value(node.output(0)).isNamePinned() || !sameAttributes(spec.attributes, node))
      continue;
    // The match is erased and its feeders must not be read (readFeeder). A graph output
    // (pinned name) is not reused: a replaced graph output could not take its place.
    if (std::find(matched_nodes_.begin(), matched_nodes_.end(), id) != matched_nodes_.end() ||
        std::find(feeders_.begin(), feeders_.end(), id) != feeders_.end())
      continue;
    return id;
  }
  return kNoId;
}

ValueId Rewriter::addInitializer(onnx::TensorProto tensor, std::string_view name_hint) {
  const size_t key = tensorContentHash(tensor);
  auto [first, last] = added_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const onnx::TensorProto* stored = graph_.value(it->second).initializer();
    if (stored && sameTensorContent(*stored, tensor)) return it->second;
  }
  ValueId v = graph_.addInitializer(std::move(tensor), name_hint);
  if (graph_.value(v).initializer()) added_.emplace(key, v);
  NodeId constant = graph_.value(v).producer();  // functions get a Constant node instead
  if (constant != kNoId) {
    created_.push_back(constant);
    if (listener_) listener_->onNodeInserted(graph_, constant);
  }
  return v;
}

bool Rewriter::replaceValue(ValueId from, ValueId to) {
  if (!graph_.replaceAllUsesWith(from, to)) return false;
  if (listener_) listener_->onValueReplaced(graph_, from, to);
  return true;
}

void Rewriter::eraseNode(NodeId node) {
  if (listener_) listener_->onNodeErased(graph_, node);
  graph_.eraseNode(node);
}

bool Rewriter::replaceMatch(const std::vector<NodeId>& matched,
                            const std::vector<std::pair<ValueId, ValueId>>& replacements) {
  // Refuse before touching anything: two pinned names cannot both survive.
  for (const auto& [from, to] : replacements) {
    const Value& a = graph_.value(from);
    const Value& b = graph_.value(to);
    // A value kept as it is (`keep`) replaces nothing, whatever its name.
    if (from != to && a.isNamePinned() &&
        (b.isNamePinned() || b.isGraphInput() || b.initializer())) {
      rollBack();
      return notifyMatchFailure([&] {
        return "cannot replace '" + a.name() + "' by '" + b.name() + "': both names must be kept";
      });
    }
  }
  // A feeder of the match the target reads would keep itself and the matched values it
  // reads alive: the match would be computed twice.
  if (const ValueId fed = readFeeder(); fed != kNoId) {
    const std::string name = graph_.value(fed).name();
    rollBack();
    return notifyMatchFailure([&] {
      return "the rewrite reads '" + name + "', which is computed from values inside the match";
    });
  }
  // Nor may a replacement change what readers of the replaced value see.
  std::vector<TypedReplacement> typed;
  typed.reserve(replacements.size());
  for (const auto& [from, to] : replacements)
    typed.push_back({from, to, graph_.value(from).name(), graph_.value(from).type()});
  std::vector<std::pair<ValueId, onnx::TypeProto>> inferred;
  std::string change =
      findTypeChange(model_, graph_, created_, typed, Strictness::kRefuse, &inferred);
  if (!change.empty()) {
    refused_as_unsound_ = true;
    rollBack();
    return notifyMatchFailure([&] { return std::move(change); });
  }
  // Outputs of new nodes that take over matched intermediates other than the root's: the
  // values a rule re-exports in case something outside the match reads them.
  std::vector<ValueId> reexports;
  for (const auto& [from, to] : replacements)
    if (graph_.value(from).producer() != root_ && graph_.value(to).producer() != kNoId)
      reexports.push_back(to);
  for (const auto& [from, to] : replacements) replaceValue(from, to);
  // Later rules see what the new values are (a Cast's element type, a FusedMatMul's rank);
  // a replacement already took the replaced value's type (what whole-model inference knew).
  for (auto& [v, type] : inferred) graph_.setInferredType(v, std::move(type));
  // Erase what the replacement left without readers. The stack pops the match in reverse
  // topological order (consumers before producers); a node still used (a value the rule
  // chose to keep) stays.
  std::vector<NodeId> order = matched;
  std::sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    return std::make_pair(graph_.node(a).order(), a) < std::make_pair(graph_.node(b).order(), b);
  });
  eraseNodesLeftDead(std::move(order));
  // A re-export nothing reads any more is not written: an unread last output of the new
  // node goes (EmbedLayerNormalization's embedding_sum, SkipLayerNormalization's sum), so
  // that the op does not compute it.
  for (ValueId v : reexports) {
    const Value& value = graph_.value(v);
    const NodeId producer = value.producer();
    if (!value.live() || producer == kNoId ||
        std::find(created_.begin(), created_.end(), producer) == created_.end())
      continue;
    graph_.dropUnreadTrailingOutputs(producer, value.producerOutput());
  }
  if (verify_) {
    // The same question over the rewired graph, where "cannot tell" counts too: a check of
    // the check (and of the inference tables) that test builds run after every rewrite.
    const std::string missed = findTypeChange(model_, graph_, created_, typed, Strictness::kVerify);
    if (!missed.empty()) {
      std::string where = "in " + graph_.label();
      if (root_ != kNoId)
        where =
            "at " + graph_.node(root_).op().str() + " '" + graph_.node(root_).name() + "' " + where;
      throw SoundnessViolation("soundness check: rule '" +
                               (rule_ ? rule_->name() : std::string("?")) + "' " + where + ": " +
                               missed);
    }
  }
  return true;
}

ValueId Rewriter::readFeeder() const {
  for (NodeId created : created_)
    for (ValueId in : graph_.node(created).inputs()) {
      const NodeId producer = in == kNoId ? kNoId : graph_.value(in).producer();
      if (producer != kNoId &&
          std::find(feeders_.begin(), feeders_.end(), producer) != feeders_.end())
        return in;
    }
  return kNoId;
}

void Rewriter::rollBack() {
  // Newest first: a new node may read an older one's output, never the reverse.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it)
    if (graph_.node(*it).live() && graph_.isDead(*it)) eraseNode(*it);
  created_.clear();
}

void Rewriter::eraseNodesLeftDead(std::vector<NodeId> candidates) {
  // Depth-first from the candidates towards the inputs: a node the rewrite left without
  // readers goes, and so may its own producers, inside the match or outside it (the
  // Shape/Gather/Concat computing a Reshape shape the match consumed). Nodes dead before
  // the rewrite are never reached: beyond the candidates, only producers of erased nodes
  // are visited.
  while (!candidates.empty()) {
    const NodeId id = candidates.back();
    candidates.pop_back();
    if (!graph_.node(id).live() || !graph_.isDead(id)) continue;
    for (ValueId in : graph_.node(id).inputs())
      if (in != kNoId && graph_.value(in).producer() != kNoId)
        candidates.push_back(graph_.value(in).producer());
    eraseNode(id);
  }
}

}  // namespace onnx_rewrite
