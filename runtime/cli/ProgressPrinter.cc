//===- ProgressPrinter.cc - the command's progress display ---------------===//
#include "runtime/cli/ProgressPrinter.h"

#include <algorithm>

namespace onnx_rewrite {
namespace {

/// 1234567 as "1,234,567".
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

ProgressPrinter::ProgressPrinter(std::FILE* out, Style style, Timing timing)
    : out_(out), style_(style), timing_(timing) {}

ProgressPrinter::~ProgressPrinter() { finish(); }

void ProgressPrinter::show(const std::string& text, bool force) {
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_shown_).count();
  if (style_ == Style::kLines) {
    if (!force && since_last < timing_.line_every) return;
    std::fprintf(out_, "onnx-rewrite: [%.1f s] %s\n", elapsed, text.c_str());
  } else {
    if (elapsed < timing_.status_after || (!force && since_last < timing_.status_every)) return;
    // Back to the line's start, the text, then erase what a longer line left.
    std::fprintf(out_, "\ronnx-rewrite: %s, %.1f s\x1b[K", text.c_str(), elapsed);
    line_shown_ = true;
  }
  std::fflush(out_);
  last_shown_ = now;
}

void ProgressPrinter::phase(std::string_view name) {
  phase_ = std::string(name);
  show(phase_, /*force=*/true);
}

void ProgressPrinter::sweep(int graph, int graphs, int iteration, uint64_t done, uint64_t seeded,
                            uint64_t rewrites) {
  // Rewrites queue candidates of their own: never claim 100% before the sweep ends.
  const uint64_t percent = seeded ? std::min<uint64_t>(99, done * 100 / seeded) : 99;
  std::string text = phase_ + ", ";
  if (graphs > 1) text += "graph " + std::to_string(graph) + " of " + std::to_string(graphs) + ", ";
  text += "sweep " + std::to_string(iteration) + ": " + std::to_string(percent) + "% of " +
          grouped(seeded) + " candidates, " + grouped(rewrites) + " rewrites";
  show(text, /*force=*/false);
}

void ProgressPrinter::finish() {
  if (!line_shown_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  line_shown_ = false;
}

}  // namespace onnx_rewrite
