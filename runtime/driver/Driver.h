//===- Driver.h - greedy application of rules to a fixpoint --------------===//
//
// The driver tries rules on candidate nodes until nothing more matches. Higher
// priority rules are tried on every candidate before any lower priority rule is
// tried anywhere; equal priorities keep declaration order; candidates go in node
// order. After a rewrite only the touched neighbourhood is queued again, and a
// final sweep proves the fixpoint. The result is deterministic: the same model
// and rules give byte-identical output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/driver/Progress.h"
#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"
#include "runtime/driver/Statistics.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// How the driver runs. Plain data; every field has a usable default.
struct DriverConfig {
  static constexpr int64_t kNoLimit = -1;
  /// The default budget: proportionalRewriteBudget() of the nodes the run starts with.
  static constexpr int64_t kProportional = -2;
  /// Sweeps per graph. A sweep drains a worklist seeded with every candidate; the run
  /// stops after the first sweep that rewrites nothing (converged). Hitting the cap
  /// while rewrites still happen is reported in DriverStats::cap_hit, never fatal.
  int max_iterations = 10;
  /// Rewrites allowed in the whole run (kProportional by default, kNoLimit: none),
  /// checked after every rewrite, inside a sweep: rules that undo each other (Add to Sub,
  /// Sub back to Add) rewrite forever within one sweep, so only this stops them. Hitting
  /// it is reported in DriverStats::cap_hit with the rules that were still firing.
  int64_t max_rewrites = kProportional;
  /// The budget came from kProportional (the report says so and how to change it).
  bool default_budget = false;
  /// Told about every change and, if it asks, every match failure (explain, tracing).
  RewriteListener* listener = nullptr;
  /// Told how far each sweep has come, every kSweepReportEvery candidates; may be null.
  ProgressSink* progress = nullptr;
  /// Measure time per rule (two clock reads per attempt, a few percent of the driver's
  /// time): off unless someone reads RuleStats::seconds.
  bool time_rules = false;
  /// After every rewrite, check over the rewired graph that no outside-visible type or
  /// shape changed, strictly, and throw SoundnessViolation if one did (Rewriter.h). Test
  /// builds (CMake option ONNX_REWRITE_VERIFY_REWRITES) do this whatever the flag says.
  bool verify_rewrites = false;
};

/// The default rewrite budget for a model of `nodes` live nodes (all graphs): 4 rewrites
/// per node plus 10,000. Real rule sets rewrite each node a few times (canonicalization,
/// then fusion); a cycle of rules hits it within seconds and a few MB of new nodes.
int64_t proportionalRewriteBudget(uint64_t nodes);

/// True when this library was built to verify every rewrite (ONNX_REWRITE_VERIFY_REWRITES).
bool verifiesRewritesByDefault();

/// Applies `rules` to every graph of `model` (main graph, nested bodies, functions).
DriverStats runDriver(Model& model, const std::vector<const RewritePattern*>& rules,
                      const DriverConfig& config = {});

}  // namespace onnx_rewrite
