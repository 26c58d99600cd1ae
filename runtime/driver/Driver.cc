//===- Driver.cc - greedy application of rules to a fixpoint -------------===//
#include "runtime/driver/Driver.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <queue>

#include "runtime/driver/Applicability.h"
#include "runtime/driver/Rewriter.h"

namespace onnx_rewrite {
namespace {

using Clock = std::chrono::steady_clock;

/// Rules of one graph bucketed by root op and priority level.
struct RuleIndex {
  /// Distinct priorities, highest first; a "level" is an index into this.
  std::vector<int> priorities;
  /// by_op[op index] = (level, rule indices in declaration order) pairs.
  std::vector<std::vector<std::pair<size_t, std::vector<size_t>>>> by_op;

  RuleIndex(const Graph& graph, const std::vector<const RewritePattern*>& rules) {
    for (const RewritePattern* r : rules) priorities.push_back(r->info().priority);
    std::sort(priorities.begin(), priorities.end(), std::greater<int>());
    priorities.erase(std::unique(priorities.begin(), priorities.end()), priorities.end());
    for (size_t i = 0; i < rules.size(); ++i) {
      const RewritePattern& r = *rules[i];
      if (!r.info().root.valid() || !r.appliesTo(graph)) continue;
      size_t op = r.info().root.index();
      size_t level =
          std::find(priorities.begin(), priorities.end(), r.info().priority) - priorities.begin();
      if (op >= by_op.size()) by_op.resize(op + 1);
      auto& levels = by_op[op];
      auto it = std::find_if(levels.begin(), levels.end(),
                             [&](const auto& l) { return l.first == level; });
      if (it == levels.end()) {
        levels.emplace_back(level, std::vector<size_t>{});
        it = levels.end() - 1;
      }
      it->second.push_back(i);
    }
  }

  const std::vector<std::pair<size_t, std::vector<size_t>>>* levelsOf(OpId op) const {
    if (op.index() >= by_op.size() || by_op[op.index()].empty()) return nullptr;
    return &by_op[op.index()];
  }
};

/// Pending (node, level) pairs, deduplicated; pop() yields the lowest node id of the
/// highest non-empty level. Each level keeps the ids seeded by a sweep as an ascending
/// list read with a cursor, and the few ids queued by rewrites in a min-heap: popping
/// the smaller head of the two yields the same sequence as one heap of everything, but
/// a sweep over 10^6 nodes no longer pays a heap operation per node. Also the listener
/// that queues the neighbourhood of every change.
class Worklist : public RewriteListener {
 public:
  Worklist(Graph& graph, const RuleIndex& index)
      : graph_(graph), index_(index), levels_(index.priorities.size()) {}

  void push(NodeId id) {
    const Node& n = graph_.node(id);
    if (!n.live()) return;
    const auto* levels = index_.levelsOf(n.op());
    if (!levels) return;
    for (const auto& [level, rules] : *levels) {
      Level& l = levels_[level];
      if (!markQueued(l, id)) continue;
      l.heap.push(id);
    }
  }

  /// Queues every candidate; returns how many (node, level) pairs that queued.
  uint64_t seedAll() {
    uint64_t seeded = 0;
    // Ids come in ascending order: append them to each level's seeded list.
    for (Level& l : levels_) {
      l.seeded.erase(l.seeded.begin(), l.seeded.begin() + static_cast<ptrdiff_t>(l.cursor));
      l.cursor = 0;
    }
    for (NodeId id = 0; id < graph_.nodeCapacity(); ++id) {
      const Node& n = graph_.node(id);
      if (!n.live()) continue;
      const auto* levels = index_.levelsOf(n.op());
      if (!levels) continue;
      for (const auto& [level, rules] : *levels) {
        Level& l = levels_[level];
        if (!markQueued(l, id)) continue;
        ++seeded;
        // Keeps the list ascending: a leftover id larger than `id` (none in practice, as
        // sweeps drain the worklist) sends this one to the heap.
        if (l.cursor < l.seeded.size() && l.seeded.back() > id)
          l.heap.push(id);
        else
          l.seeded.push_back(id);
      }
    }
    return seeded;
  }

  /// The next candidate: lowest node id of the highest non-empty level.
  bool pop(NodeId& id, size_t& level) {
    for (level = 0; level < levels_.size(); ++level) {
      Level& l = levels_[level];
      const bool has_seeded = l.cursor < l.seeded.size();
      if (!has_seeded && l.heap.empty()) continue;
      if (has_seeded && (l.heap.empty() || l.seeded[l.cursor] < l.heap.top())) {
        id = l.seeded[l.cursor++];
        if (l.cursor == l.seeded.size()) {
          l.seeded.clear();
          l.cursor = 0;
        }
      } else {
        id = l.heap.top();
        l.heap.pop();
      }
      l.queued[id] = 0;
      return true;
    }
    return false;
  }

  void onNodeInserted(Graph&, NodeId n) override { push(n); }
  void onValueReplaced(Graph&, ValueId, ValueId to) override {
    const Value& v = graph_.value(to);
    if (v.producer() != kNoId) push(v.producer());
    for (const Use& u : v.uses()) push(u.node);
  }
  void onNodeErased(Graph&, NodeId n) override {
    // Producers lose a consumer; a single-consumer constraint may now hold.
    for (ValueId in : graph_.node(n).inputs())
      if (in != kNoId && graph_.value(in).producer() != kNoId) push(graph_.value(in).producer());
  }

 private:
  using MinHeap = std::priority_queue<NodeId, std::vector<NodeId>, std::greater<NodeId>>;
  struct Level {
    std::vector<NodeId> seeded;  // ascending; ids before `cursor` are taken
    size_t cursor = 0;
    MinHeap heap;
    std::vector<uint8_t> queued;  // by node id: in `seeded` (past the cursor) or `heap`
  };

  /// Marks `id` queued on level `l`; false if it already was.
  bool markQueued(Level& l, NodeId id) {
    if (id >= l.queued.size()) l.queued.resize(std::max<size_t>(graph_.nodeCapacity(), id + 1), 0);
    if (l.queued[id]) return false;
    l.queued[id] = 1;
    return true;
  }

  Graph& graph_;
  const RuleIndex& index_;
  std::vector<Level> levels_;
};

/// Tells the listener why each rule that `graph` never saw tried did not run there. For
/// --explain only: computed when the listener wants failure reasons.
void reportRulesNotRun(Model& model, Graph& graph, const std::vector<const RewritePattern*>& rules,
                       const std::vector<uint64_t>& tried_before,
                       const std::vector<bool>& root_present, const DriverStats& stats,
                       bool out_of_rewrites, RewriteListener& listener) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (stats.rules[i].tried != tried_before[i]) continue;
    const RewritePattern& rule = *rules[i];
    const OpId root = rule.info().root;
    std::string reason;
    if (!root.valid()) {
      reason = "it has no root op";
    } else if (!rule.appliesTo(graph)) {
      reason = whyNotApplicable(rule, model, graph);
    } else if (out_of_rewrites) {
      reason = stats.cap_hit.substr(0, stats.cap_hit.find(';')) + " before it was tried";
    } else if (!root_present[i]) {
      reason = graph.label() + " has no " + root.str() + " node (the op its match is rooted at)";
    } else {
      reason = "rules of higher priority rewrote every " + root.str() + " node of " +
               graph.label() + " (the op its match is rooted at) before its turn";
    }
    listener.onRuleNotRun(rule, graph, reason);
  }
}

/// The rules of the last rewrites, so hitting the budget can name the rules that kept
/// firing (a cycle's rules) rather than those that fired most over the whole run.
class RecentRewrites {
 public:
  void add(size_t rule) {
    ring_[next_ % ring_.size()] = rule;
    ++next_;
  }
  /// "a (n), b (m)": the rules of the last rewrites, most frequent first, at most five.
  std::string describe(const std::vector<RuleStats>& rules) const {
    std::vector<std::pair<uint64_t, size_t>> counts;  // (count, rule)
    const size_t held = std::min(next_, ring_.size());
    for (size_t i = 0; i < held; ++i) {
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& c) { return c.second == ring_[i]; });
      if (it == counts.end())
        counts.emplace_back(1, ring_[i]);
      else
        ++it->first;
    }
    std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string out;
    for (size_t i = 0; i < counts.size() && i < 5; ++i)
      out += (i ? ", " : "") + rules[counts[i].second].name + " (" +
             std::to_string(counts[i].first) + ")";
    return out;
  }

 private:
  std::array<size_t, 1000> ring_{};
  size_t next_ = 0;
};

uint64_t liveNodes(const std::vector<Graph*>& graphs) {
  uint64_t n = 0;
  for (const Graph* g : graphs) n += g->liveNodeCount();
  return n;
}

}  // namespace

int64_t proportionalRewriteBudget(uint64_t nodes) {
  const uint64_t capped = std::min<uint64_t>(nodes, uint64_t{1} << 60);  // no overflow
  return static_cast<int64_t>(4 * capped + 10000);
}

bool verifiesRewritesByDefault() {
#ifdef ONNX_REWRITE_VERIFY_REWRITES
  return true;
#else
  return false;
#endif
}

DriverStats runDriver(Model& model, const std::vector<const RewritePattern*>& rules,
                      const DriverConfig& config) {
  const auto start = Clock::now();
  DriverStats stats;
  stats.rules.resize(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    stats.rules[i].name = rules[i]->name();
    stats.rules[i].priority = rules[i]->info().priority;
  }
  // Bodies are listed before the graph is rewritten: a rewrite never creates bodies,
  // and erased nodes keep theirs alive until the model is saved.
  std::vector<Graph*> graphs = model.allGraphs();
  stats.nodes_before = liveNodes(graphs);
  bool out_of_rewrites = false;
  const bool default_budget =
      config.default_budget || config.max_rewrites == DriverConfig::kProportional;
  const int64_t max_rewrites = config.max_rewrites == DriverConfig::kProportional
                                   ? proportionalRewriteBudget(stats.nodes_before)
                                   : config.max_rewrites;
  RecentRewrites recent;

  const bool explain = config.listener && config.listener->wantsMatchFailures();
  int graph_number = 0;
  for (Graph* graph : graphs) {
    ++graph_number;
    if (out_of_rewrites) break;
    RuleIndex index(*graph, rules);
    Worklist worklist(*graph, index);
    ListenerPair listeners(&worklist, config.listener);
    Rewriter rewriter(model, *graph, &listeners);
    rewriter.setVerifyAfterRewrite(config.verify_rewrites || verifiesRewritesByDefault());
    std::vector<uint64_t> tried_before;
    std::vector<bool> root_present;
    if (explain)
      for (size_t i = 0; i < rules.size(); ++i) {
        tried_before.push_back(stats.rules[i].tried);
        const OpId root = rules[i]->info().root;
        root_present.push_back(root.valid() && !graph->nodesOf(root).empty());
      }
    bool converged = false;
    int iteration = 0;
    while (iteration < config.max_iterations && !converged && !out_of_rewrites) {
      ++iteration;
      uint64_t rewrites_this_sweep = 0;
      const uint64_t seeded = worklist.seedAll();
      uint64_t taken = 0;
      NodeId id;
      size_t level;
      while (!out_of_rewrites && worklist.pop(id, level)) {
        if (config.progress && ++taken % kSweepReportEvery == 0)
          config.progress->sweep(graph_number, static_cast<int>(graphs.size()), iteration, taken,
                                 seeded, stats.rewrites);
        const Node& node = graph->node(id);
        if (!node.live()) continue;
        const auto* levels = index.levelsOf(node.op());
        auto it = std::find_if(levels->begin(), levels->end(),
                               [&](const auto& l) { return l.first == level; });
        for (size_t r : it->second) {
          RuleStats& rs = stats.rules[r];
          rewriter.beginAttempt(*rules[r], id);
          ++rs.tried;
          bool applied;
          if (config.time_rules) {
            const auto t0 = Clock::now();
            applied = rules[r]->matchAndRewrite(id, rewriter);
            rs.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
          } else {
            applied = rules[r]->matchAndRewrite(id, rewriter);
          }
          if (applied || rewriter.matched()) ++rs.matched;
          if (rewriter.refusedAsUnsound()) ++rs.unsound;
          if (!applied) continue;
          ++rs.applied;
          ++stats.rewrites;
          ++rewrites_this_sweep;
          recent.add(r);
          if (max_rewrites != DriverConfig::kNoLimit &&
              static_cast<int64_t>(stats.rewrites) >= max_rewrites) {
            out_of_rewrites = true;
            stats.cap_hit =
                (default_budget
                     ? "rewrite budget (" + std::to_string(max_rewrites) + ", 4 per node + 10000)"
                     : "max-rewrites (" + std::to_string(max_rewrites) + ")") +
                " reached in " + graph->label() +
                "; more rewrites may apply; rules still firing: " + recent.describe(stats.rules);
            if (default_budget)
              stats.cap_hit +=
                  " (rules that undo each other never stop; --max-rewrites N "
                  "changes the budget, 0 lifts it)";
          }
          break;  // the root was rewritten; its new neighbourhood is queued
        }
      }
      converged = rewrites_this_sweep == 0;
    }
    stats.iterations = std::max(stats.iterations, iteration);
    if (explain)
      reportRulesNotRun(model, *graph, rules, tried_before, root_present, stats, out_of_rewrites,
                        *config.listener);
    if (!converged) {
      stats.converged = false;
      if (stats.cap_hit.empty())
        stats.cap_hit = "max-iterations (" + std::to_string(config.max_iterations) +
                        ") reached in " + graph->label() + " while rules still applied";
    }
  }
  if (out_of_rewrites) stats.converged = false;
  // Bodies of nodes a rewrite erased no longer count.
  stats.nodes_after = liveNodes(model.allGraphs());
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return stats;
}

}  // namespace onnx_rewrite
