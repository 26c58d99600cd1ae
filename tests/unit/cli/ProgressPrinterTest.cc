//===- ProgressPrinterTest.cc - what the command shows of a long run -----===//
//
// On a terminal one status line, rewritten in place and erased at the end, and only
// once the run has taken a while; into a log a line per phase, sweeps at most once a
// second. Percentages never claim a sweep done before it is.
//
//===----------------------------------------------------------------------===//
#include "runtime/cli/ProgressPrinter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>

namespace onnx_rewrite {
namespace {

using Style = ProgressPrinter::Style;
using Timing = ProgressPrinter::Timing;

/// What a printer wrote into a temporary file.
class Captured {
 public:
  Captured() : file_(std::tmpfile()) {}
  ~Captured() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

/// `text` with each elapsed time ("1.2 s") written as "T s".
std::string withoutTimes(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(\d+\.\d s)"), "T s");
}

const Timing kEveryReport{0, 0, 0};

TEST(ProgressPrinter, StatusLineIsRewrittenInPlaceAndErasedAtTheEnd) {
  Captured out;
  ProgressPrinter p(out.file(), Style::kStatusLine, kEveryReport);
  p.phase("rewrite");
  p.sweep(1, 1, 1, 2048, 4096, 1234);
  p.finish();
  EXPECT_EQ(withoutTimes(out.text()),
            "\ronnx-rewrite: rewrite, T s\x1b[K"
            "\ronnx-rewrite: rewrite, sweep 1: 50% of 4,096 candidates, 1,234 rewrites, T s\x1b[K"
            "\r\x1b[K");
}

TEST(ProgressPrinter, AFastRunShowsNoStatusLine) {
  Captured out;
  {
    ProgressPrinter p(out.file(), Style::kStatusLine);  // waits half a second
    p.phase("load");
    p.sweep(1, 1, 1, 1024, 4096, 0);
  }  // destruction erases only what was shown: nothing
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressPrinter, LogGetsALinePerPhaseAndSweepsAtMostOnceASecond) {
  Captured out;
  ProgressPrinter p(out.file(), Style::kLines, Timing{0, 0, 3600});
  p.phase("load");
  p.phase("rewrite");
  p.sweep(1, 1, 1, 1024, 4096, 0);  // within the hour since the phase line: dropped
  p.phase("save");
  p.finish();
  EXPECT_EQ(withoutTimes(out.text()),
            "onnx-rewrite: [T s] load\n"
            "onnx-rewrite: [T s] rewrite\n"
            "onnx-rewrite: [T s] save\n");
}

TEST(ProgressPrinter, NeverClaimsASweepDoneAndNamesTheGraph) {
  // Rewrites queue candidates of their own: a sweep may take more than it was seeded with.
  Captured out;
  ProgressPrinter p(out.file(), Style::kLines, kEveryReport);
  p.phase("rewrite");
  p.sweep(2, 3, 4, 5000, 4096, 7);
  EXPECT_EQ(withoutTimes(out.text()),
            "onnx-rewrite: [T s] rewrite\n"
            "onnx-rewrite: [T s] rewrite, graph 2 of 3, sweep 4: 99% of 4,096 candidates, 7 "
            "rewrites\n");
}

}  // namespace
}  // namespace onnx_rewrite
