//===- ProgressPrinter.h - the command's progress display ----------------===//
//
// On a terminal, one status line rewritten in place ("onnx-rewrite: rewrite, sweep 1:
// 45% of 1,000,009 candidates, 120,345 rewrites, 12.3 s"), shown only once a run has
// taken half a second, so that small models print nothing, and erased at the end.
// Elsewhere (--progress into a log), a line per phase and per second of sweeping.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "runtime/driver/Progress.h"

namespace onnx_rewrite {

class ProgressPrinter : public ProgressSink {
 public:
  enum class Style {
    kStatusLine,  // a terminal: one line rewritten in place
    kLines,       // a file or pipe: a line per report
  };
  /// When reports show, in seconds (tests set them to 0 to see every report).
  struct Timing {
    double status_after = 0.5;  // a status line waits this long into a run
    double status_every = 0.1;  // and is redrawn at most this often
    double line_every = 1.0;    // a sweep's log lines at most this often
  };
  ProgressPrinter(std::FILE* out, Style style, Timing timing);
  ProgressPrinter(std::FILE* out, Style style) : ProgressPrinter(out, style, Timing{}) {}
  ~ProgressPrinter() override;
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void phase(std::string_view name) override;
  void sweep(int graph, int graphs, int iteration, uint64_t done, uint64_t seeded,
             uint64_t rewrites) override;
  /// Erases the status line (a terminal); call before printing anything else.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void show(const std::string& text, bool force);

  std::FILE* out_;
  Style style_;
  Timing timing_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_shown_{};
  bool line_shown_ = false;  // a status line is on the terminal
  std::string phase_;
};

}  // namespace onnx_rewrite
