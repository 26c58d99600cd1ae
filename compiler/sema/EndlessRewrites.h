//===- EndlessRewrites.h - rewrites that would apply forever --------------===//
//
// The driver applies rules until none matches. A rule whose match fits the nodes its
// own rewrite creates (Relu(Relu(x)) -> Relu(Relu(Relu(x)))), or two rules each of
// which fits what the other creates (Add(a, b) -> Sub(a, Neg(b)) and Sub(a, b) ->
// Add(a, Neg(b))), never stop: only the driver's rewrite budget ends them. These checks
// find such rules before they run, where the match provably fits: every op, input count,
// output index and attribute condition of the match holds for the created nodes, whatever
// values the rewrite reads from its own match. A match with constraints (where:),
// constant literals or other bound outputs is not judged (its fit depends on the model).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// ONNX opsets [lo, hi] at which a rule (narrowed by one of its rewrite variants) runs.
struct RuleOpsets {
  int64_t lo = 1, hi = std::numeric_limits<int64_t>::max();
  bool empty() const { return lo > hi; }
  bool overlaps(const RuleOpsets& o) const { return std::max(lo, o.lo) <= std::min(hi, o.hi); }
  bool covers(const RuleOpsets& o) const { return lo <= o.lo && o.hi <= hi; }
};
RuleOpsets ruleOpsets(const ir::Rule& rule, const ir::Target* variant = nullptr);

/// True if a node whose attribute has value `v` satisfies `m` (kCapture always does).
bool attrMatchHolds(const ir::AttrMatch& m, const ir::Literal& v);

/// True if `pattern` (its root at value `at` of rewrite `t`, a value of a node `t`
/// creates) matches whatever the values `t` reads from its match are.
bool matchFitsRewrite(const ir::Pattern& pattern, const ir::Target& t, uint32_t at);

/// Reports, as errors at the rules' rewrites, every rule whose match fits what its own
/// rewrite creates and every pair of rules each fitting what the other creates, at
/// opsets both run at.
void checkEndlessRewrites(const ir::RuleFile& file, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
