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

#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"
#include "runtime/driver/Statistics.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// How the driver runs. Plain data; every field has a usable default.
struct DriverConfig {
  static constexpr int64_t kNoLimit = -1;
  /// Sweeps per graph. A sweep drains a worklist seeded with every candidate; the run
  /// stops after the first sweep that rewrites nothing (converged). Hitting the cap
  /// while rewrites still happen is reported in DriverStats::cap_hit, never fatal.
  int max_iterations = 10;
  /// Rewrites allowed in the whole run (kNoLimit: no limit); hitting it is reported.
  int64_t max_rewrites = kNoLimit;
  /// Told about every change and, if it asks, every match failure (explain, tracing).
  RewriteListener* listener = nullptr;
  /// Measure time per rule (two clock reads per attempt).
  bool time_rules = true;
  /// After every rewrite, check over the rewired graph that no outside-visible type or
  /// shape changed, strictly, and throw SoundnessViolation if one did (Rewriter.h). Test
  /// builds (CMake option ONNX_REWRITE_VERIFY_REWRITES) do this whatever the flag says.
  bool verify_rewrites = false;
};

/// True when this library was built to verify every rewrite (ONNX_REWRITE_VERIFY_REWRITES).
bool verifiesRewritesByDefault();

/// Applies `rules` to every graph of `model` (main graph, nested bodies, functions).
DriverStats runDriver(Model& model, const std::vector<const RewritePattern*>& rules,
                      const DriverConfig& config = {});

}  // namespace onnx_rewrite
