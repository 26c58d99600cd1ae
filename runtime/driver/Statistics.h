//===- Statistics.h - what the driver did, per rule ----------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx_rewrite {

/// Counters of one rule over a driver run.
struct RuleStats {
  std::string name;
  int priority = 0;
  /// Candidate roots the rule was tried on.
  uint64_t tried = 0;
  /// Attempts that passed every constraint (applied, or blocked by the escape check or the
  /// soundness check).
  uint64_t matched = 0;
  /// Matches the soundness check refused: the rewrite would have changed the type or shape
  /// of a value read outside the match (Soundness.h).
  uint64_t unsound = 0;
  /// Attempts that rewrote the graph.
  uint64_t applied = 0;
  /// Time spent in the rule's matchAndRewrite, in seconds.
  double seconds = 0;
};

/// The outcome of a driver run.
struct DriverStats {
  /// True when a sweep over every graph found nothing more to rewrite.
  bool converged = true;
  /// Sweeps run (the largest over the model's graphs).
  int iterations = 0;
  uint64_t rewrites = 0;
  /// Set when a cap stopped the run early: which cap and what remained.
  std::string cap_hit;
  /// Live nodes over all graphs before and after.
  uint64_t nodes_before = 0;
  uint64_t nodes_after = 0;
  double seconds = 0;
  /// Per rule, in declaration order (rules that never had a candidate included).
  std::vector<RuleStats> rules;

  /// The stats as a JSON object (stable key order, no trailing newline).
  std::string toJson() const;
};

/// `s` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string& s);

}  // namespace onnx_rewrite
