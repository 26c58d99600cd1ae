//===- Progress.h - where a long run is -----------------------------------===//
//
// A 10^6-node model takes tens of seconds. A run tells a ProgressSink each phase
// as it starts and, while rewriting, how far the current sweep has come; the
// command shows that on a terminal (runtime/cli/ProgressPrinter). Reports are
// cheap and rare: the driver reports every kSweepReportEvery candidates.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>

namespace onnx_rewrite {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// A phase starts: "shape inference", "import", "rewrite", "export" (rewrite() calls
  /// them once per round of shape inference, the later rounds named "... (round N)"), or
  /// one of the caller's own ("load", "save").
  virtual void phase(std::string_view name) = 0;
  /// While rewriting: sweep `iteration` (from 1) of graph `graph` (from 1 of `graphs`,
  /// the main graph first) has taken `done` candidates of the `seeded` it started with
  /// (rewrites queue more: done may pass seeded); `rewrites` in the whole run so far.
  virtual void sweep(int graph, int graphs, int iteration, uint64_t done, uint64_t seeded,
                     uint64_t rewrites) {}
};

/// Candidates the driver takes between two sweep() reports.
constexpr uint64_t kSweepReportEvery = 1024;

}  // namespace onnx_rewrite
