//===- RuleTestSupport.h - running the shipped rules in tests -------------===//
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite::testing {

/// How the shipped rules run: interpreted from rules/ or compiled (generated/). The suite is
/// compiled once and linked twice, as rule_tests (InterpretedMode.cc) and
/// rule_tests_compiled (CompiledMode.cc).
enum class RuleMode { kInterpreted, kCompiled };

/// The mode of this executable, defined by the one mode file it links.
RuleMode shippedRuleMode();

/// The shipped rules in either mode. Interpreted rules are loaded with repo-relative paths
/// (rules/x.yaml), as rulec compiled them, so rule sources and failure reasons agree.
const RuleSet& shippedRules(RuleMode mode);

/// The rules of rules/ (every file) in this executable's mode: loaded, checked and
/// interpreted, or the generated ones (populateGeneratedRules).
inline const RuleSet& shippedRules() { return shippedRules(shippedRuleMode()); }

/// Every model the rule tests use (positives and negatives), by name, in ONNX text format.
std::vector<std::pair<std::string, std::string>> normModelCases();

/// Rewrites `text` (ONNX text format) with the shipped rules as the CLI does (shape
/// inference on) and returns the op types of the result; `model` receives the result.
/// `options` (max_positions, ...) are passed on.
std::vector<std::string> fuse(const std::string& text, onnx::ModelProto* model = nullptr,
                              Result* result = nullptr, const Options& options = {});

/// Expects the shipped rules whose names match `only` (RE2; all if empty) to leave `text`
/// byte-identical, rewritten with `options` (their filter replaced by `only`).
void expectUnchanged(const std::string& text, const std::string& only = "",
                     const Options& options = {});

/// Expects the rewrite of `text` (with `options`) to compute the same outputs in ONNX
/// Runtime.
void expectSameInOrt(const std::string& text, const std::string& tolerance = "",
                     const Options& options = {});

}  // namespace onnx_rewrite::testing
