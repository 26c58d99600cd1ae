//===- CommandLine.h - onnx-rewrite's arguments ---------------------------===//
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/driver/Driver.h"

namespace onnx_rewrite {

/// A mistake in the command line; main() prints it and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

/// Parsed arguments of `onnx-rewrite`.
struct CommandLine {
  std::string input;
  std::string output;              ///< empty with --explain and no -o: nothing is written
  std::string stats;               ///< "" none, "-" stdout, else a file
  std::vector<std::string> rules;  ///< --rules: rule files run instead of the built-in set
  std::string only;
  std::string explain;       ///< --explain RULE: why RULE did not apply, per candidate
  bool explain_all = false;  ///< --explain-all: every attempt, also at nodes fused later
  std::string skip;
  std::string enable;  ///< --enable RE: opt-in rules (tag opt_in) it matches also run
  int max_iterations = 10;
  int64_t max_rewrites = DriverConfig::kProportional;  ///< --max-rewrites 0: kNoLimit
  int64_t max_positions = 0;      ///< --max-positions N: position ids stay below N (0: unknown)
  int max_inference_rounds = 16;  ///< --max-inference-rounds N (Options::max_inference_rounds)
  bool list_rules = false;
  bool quiet = false;
  /// Progress: kAuto shows a status line when stderr is a terminal and not --quiet;
  /// --progress always (lines into a file or pipe), --no-progress never.
  enum class Progress { kAuto, kAlways, kNever } progress = Progress::kAuto;
  bool in_place = false;
  bool shape_inference = true;
  bool inline_functions = true;
  bool help = false;
  bool version = false;
};

/// Parses argv (without argv[0]). Accepts `--opt value` and `--opt=value`. Throws
/// UsageError for unknown options, missing values, bad numbers and missing files.
CommandLine parseCommandLine(const std::vector<std::string>& args);

/// The --help text.
std::string usageText();

}  // namespace onnx_rewrite
