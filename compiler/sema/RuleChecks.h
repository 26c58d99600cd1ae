//===- RuleChecks.h - semantic checks on Rule IR, after either front end --===//
//
// The front ends only know syntax; these checks know ONNX. They run on the Rule
// IR of a whole rule set and report, with the location of the offending text:
//
//  - ops that exist nowhere (with the closest known name), ops of an unknown
//    domain, ops missing at the opsets a rule requires; attribute names and
//    literal types; input and output counts, of the match and of the rewrite;
//  - names: every name the rewrite reads is bound, value(x) and attr(c) refer to
//    what the match binds, constraints constrain bound names, every rewrite
//    replaces the match root; captures never used (a warning);
//  - reachability: alternatives after one that matches anything or identical to
//    an earlier one, rewrite variants after one without `when`, empty opset
//    ranges; a rewrite its own match would match again (an endless loop);
//  - rule-set level: duplicate names, priorities out of range, unknown tags (a
//    warning), inconsistent op declarations.
//
// Opsets. A rule's `requires` gives, per domain, the opsets it runs at; without
// one, the newest opset the catalog knows is checked. The match must be able to
// match at some opset of that range (an op missing at part of it just does not
// match there); the rewrite must be valid at every opset of its range (the rule's,
// narrowed by the variant's `when`), since it would create an invalid model
// otherwise.
//
// The checks also complete the IR: Expr::commutative for commutative binary ops,
// and AttrMatch::default_value from the op's schema.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

class OpCatalog;

/// Priorities outside [-kMaxRulePriority, kMaxRulePriority] are errors.
inline constexpr int kMaxRulePriority = 10000;

/// The tags a rule may carry without a warning: ort, onnx, cpu, cuda, test, opt_in,
/// approximation.
const std::vector<std::string>& knownRuleTags();
/// The same, comma-separated, for messages.
std::string knownTagList();

/// Checks every rule of `file` against ONNX and the op declarations of `file.ops` plus
/// `extra_decls` (identical duplicates between the two are fine). Reports every problem
/// to `diag`, continuing after errors; fills Expr::commutative and AttrMatch::default_value.
/// Returns false if it reported an error.
bool checkRules(ir::RuleFile& file, const std::vector<ir::OpDecl>& extra_decls,
                DiagnosticEngine& diag);

/// The same against a catalog the caller built; `file.ops` are not added to it.
bool checkRules(ir::RuleFile& file, const OpCatalog& catalog, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
