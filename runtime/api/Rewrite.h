//===- Rewrite.h - the library entry point --------------------------------===//
//
// What exporters link: one call rewrites a ModelProto in place. Loading and
// saving files (with external data) are separate helpers so that a caller who
// already holds a ModelProto never touches the file system.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/driver/Driver.h"
#include "runtime/driver/RuleSet.h"
#include "runtime/driver/Statistics.h"

namespace onnx_rewrite {

/// How to rewrite. Every field has a default that suits a deployer.
struct Options {
  /// Which rules to run (RE2 patterns over rule names and tags).
  RuleFilter filter;
  /// Driver caps; hitting one is reported in Result::stats.cap_hit.
  int max_iterations = 10;
  /// Rewrites in the whole run: by default proportionalRewriteBudget() of the model's
  /// nodes (Driver.h), so rules that undo each other stop; kNoLimit for none.
  int64_t max_rewrites = DriverConfig::kProportional;
  /// Infer shapes and types first (our symbolic pass; ONNX's per-op functions for ops it
  /// has no rule for). Inferred types guide rules but are not saved.
  bool shape_inference = true;
  /// Inline every call of a model-local function first (FunctionInlining.h), as ONNX
  /// Runtime does when it loads the model; otherwise rules run inside each function body
  /// and never see across a call.
  bool inline_functions = true;
  /// Folder that external data locations are relative to (the model file's folder).
  std::string base_dir;
  /// Every position id the model will be fed is below this; 0 = unknown. Rules that
  /// turn cos/sin computed per forward pass (RoPE) into constant caches of this many rows
  /// need it and do not fire without it (the graph cannot tell: position_ids is an input).
  int64_t max_positions = 0;
  /// Told about every change and match failure (explain, tracing); may be null.
  RewriteListener* listener = nullptr;
  /// With shape_inference: rounds of (infer, rewrite to a fixpoint). Another round runs
  /// when the last one fused ops whose outputs inference could not size (ops ONNX 1.12's
  /// schemas lack, or dims lost to run-time slicing): inferred again past the fused ops,
  /// shapes reach the values behind them, whose rules then apply. Per-head attention
  /// exports take two rounds (the heads of every layer fuse in the first, the residual
  /// norms they had hidden from inference in the second).
  int max_inference_rounds = 16;
  /// Check after every rewrite, over the rewired graph, that no type or shape read outside
  /// the match changed, and throw SoundnessViolation (a std::logic_error) if one did. The
  /// driver always refuses such rewrites beforehand; this checks that check, strictly
  /// (DriverConfig::verify_rewrites). On in every build made with the CMake option
  /// ONNX_REWRITE_VERIFY_REWRITES (the default when tests are built).
  bool verify_rewrites = false;
  /// Told each phase as it starts and how far the driver's sweeps have come (a command
  /// showing progress on a large model); may be null.
  ProgressSink* progress = nullptr;
  /// Measure each rule's time (Result::stats.rules[i].seconds; two clock reads per attempt,
  /// a few percent of the driver's time). Off: those seconds stay 0.
  bool time_rules = false;
};

/// What a rewrite did.
struct Result {
  DriverStats stats;
  /// Things the user should know that did not stop the rewrite (one line each).
  std::vector<std::string> notes;
  /// Bytes of external tensor data read (0 unless a rule asked for a constant on disk).
  uint64_t external_bytes_read = 0;
  /// Rounds of shape inference and rewriting run (see Options::max_inference_rounds).
  int inference_rounds = 1;
  /// stats as JSON plus notes and external_bytes_read.
  std::string toJson() const;
};

/// Rewrites `model` in place with `rules`. Throws ModelError for a model the IR cannot
/// represent (the model is then unchanged, local function calls included) and std::invalid_argument
/// for a bad filter or a negative max_positions.
Result rewrite(onnx::ModelProto& model, const RuleSet& rules, const Options& options = {});

/// The same with the built-in rules.
Result rewrite(onnx::ModelProto& model, const Options& options = {});

}  // namespace onnx_rewrite
