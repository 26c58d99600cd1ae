//===- RuleOverlaps.h - rules that shadow or race each other --------------===//
//
// The driver tries rules by priority, highest first, and among equal priorities in the
// order they were loaded. Two mistakes follow that rulec can see before anything runs:
// - a rule whose every match another rule of equal or higher priority also matches, so
//   it never applies (the other goes first and consumes the root);
// - two rules of equal priority that can match the same node, so which one applies
//   depends on the order their files were loaded in.
// Both are warnings: the first is judged only where it is provable (the shadowing rule has
// no `where:` constraint the other lacks, its opsets cover the other's); the second
// ignores constraints (a constraint may keep the two apart on every real graph, but the
// reader cannot tell), so a rule author settles it with distinct priorities.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// True if every graph `narrow` matches (at its root), `wide` matches too: the same ops
/// and outputs, attribute conditions implied by narrow's, captures where narrow has any
/// pattern (a capture used twice only where narrow's values are the same), and every
/// constraint of `wide` written on narrow's same-named value.
bool patternSubsumes(const ir::Pattern& wide, const ir::Pattern& narrow);

/// True if some node may match both patterns at their roots, constraints aside.
bool patternsOverlap(const ir::Pattern& a, const ir::Pattern& b);

/// Warns, at the shadowed rule, of every rule another rule of equal or higher priority
/// shadows (at opsets covering the shadowed one's), and, at the later rule, of every pair
/// of overlapping rules of equal priority that run at a common opset.
void checkRuleOverlaps(const ir::RuleFile& file, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
