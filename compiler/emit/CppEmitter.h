//===- CppEmitter.h - rules as C++ matchers (rulec --emit=cpp) ------------===//
//
// Writes one `<stem>.gen.cc` per rule file that has rules, plus registry.gen.h and
// registry.gen.cc exposing populateGeneratedRules(RuleSet&) and one
// populate<Family>(RuleSet&) per file. Each rule's plan (compiler/plan/RulePlan.h,
// the plan the interpreter runs) is printed as its RuleSpec constant table, a
// `<PascalName>Match` (one function per pattern expr: early returns, backtracking
// at alternatives, commutative operands and optional ops, in the interpreter's
// search order; one function per rewrite variant, in the plan's build order) and a
// `<PascalName>Rule : RewritePattern`. Match functions that several rules of a file
// have verbatim (with everything they call) are written once, in a class template
// `<Family>SharedMatch<Ids>` those rules derive from. The leaf checks and failure
// texts are the interpreter's, through runtime/match/GeneratedSupport.h.
//
// Output is deterministic (no timestamps; files, rules and ops in input order) and
// laid out by the emitter itself (CppText.h), so it does not depend on any installed
// formatter and CI can diff a fresh run against generated/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// A rule the C++ back end cannot compile ("file:line:col: rule: what").
class CppEmitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The C++ back end of rulec.
class CppEmitter {
 public:
  /// `file` holds the rules of `inputs` (the paths as given to rulec, in order);
  /// `command` is the regeneration command quoted in the output.
  CppEmitter(const ir::RuleFile& file, std::vector<std::string> inputs, std::string command)
      : file_(file), inputs_(std::move(inputs)), command_(std::move(command)) {}

  /// Every output file as (file name, text), in a fixed order. Throws CppEmitError.
  std::vector<std::pair<std::string, std::string>> run() const;

  /// The generated file of the rules read from `input` (empty if it has none).
  std::string emitFamily(const std::string& input) const;
  std::string emitRegistryHeader() const;
  std::string emitRegistrySource() const;

  /// "layer_norm" for "rules/layer_norm.yaml".
  static std::string stem(const std::string& path);
  /// "LayerNorm" for "layer_norm".
  static std::string pascal(const std::string& name);

 private:
  /// Input files that define at least one rule, in order.
  std::vector<std::string> familyInputs() const;
  std::vector<const ir::Rule*> rulesOf(const std::string& input) const;
  /// The banner and provenance comment that open registry file `name`.
  std::string registryHeading(const std::string& name) const;

  const ir::RuleFile& file_;
  std::vector<std::string> inputs_;
  std::string command_;
};

}  // namespace onnx_rewrite
