//===- RuleInterpreter.h - running Rule IR without compiling it -----------===//
//
// `onnx-rewrite --rules FILE` loads rules through a front end and runs them with
// this interpreter, so a rule author iterates without rebuilding anything. The
// compiled rules rulec generates must behave exactly like the interpreter on
// every model; the semantics are those of docs/dsl.md, made precise here:
//
// Search. The matcher is a backtracking search over the pattern DAG from the
// root. Choice points, tried in this order: the alternatives of an Alternatives
// expr (in order); a commutative binary op's operands (written order, then
// swapped, unless both inputs are one value); an optional op (present, then
// absent, standing for its first input at the same value). The first complete
// binding that satisfies the structure, every `where` constraint (in order) and
// the `when` of some target variant is the match; so a constraint failure
// backtracks into the remaining choices (`Add(x, b)` with `b: {constant: true}`
// finds the constant on either side). Then, without further search: target
// values (value(), attr(), helpers) are computed, the escape check runs, and
// the first variant whose `when` holds is built.
//
// Values. An expr matched twice (a shared sub-DAG) must match one value; a name
// bound twice (captures, named exprs, other outputs) must be one value, and so
// must an attribute captured twice under one name. `_` never binds. A kOp expr matches a value
// computed by a live node of its op at output `output`; the node must have a value at every input
// the pattern lists, and may have further inputs only if they are omitted or hold a parameter that
// a later opset moved from an attribute (Params.h): ReduceMean(x) matches an
// opset-18 ReduceMean(x, axes), but Gemm(a, b) does not match Gemm(a, b, c).
//
// Attributes read either opset form (Params.h). Absent ones take
// AttrMatch::default_value; absent without a default fails. `axes`/`axis`
// integers are compared after normalising negative axes by the rank of the
// node's data input (the output for Unsqueeze) when that rank is known, and
// as written otherwise. Ints compare exactly; floats within a relative 1e-6.
//
// Constraints on a name the match did not bind (its alternative was not taken)
// hold; a native predicate with an unbound argument holds too. A target that
// reads such a name fails the attempt.
//
// Targets. A TargetExpr{kOp, op = "", output = k, inputs = {n}} is output k of
// the node built for expr n. A node declares outputs up to the highest one any
// expr uses; unused ones below it are omitted (SkipLayerNormalization's
// `y, _, _, sum`), and TargetExpr::num_outputs is not consulted. New nodes and
// initializers are named after the rule and record it as their creator. Only
// values computed by matched nodes may be replaced (an attempt to replace an
// input fails), and a graph output is never renamed to an input's name.
//
// Failure reasons (for explain mode) name the rule-file location and the piece
// of the pattern that failed; when the search explored several branches, the
// failure that got furthest (most exprs matched; any constraint counts as
// further than any structure) is reported. See RuleInterpreter.cc for the
// exact formats.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <vector>

#include "compiler/ir/RuleIR.h"
#include "runtime/driver/RewritePattern.h"
#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite {

/// One pattern per distinct root op of `rule`: a rule whose root is an op gives one; a rule
/// whose root is an Alternatives expr of ops (`Div(..) | Mul(..)`) gives one per distinct
/// op, named "rule/Op" ("rule/com.microsoft::Gelu"), each trying every alternative in
/// order. Nodes they create record the rule's own name. Throws std::invalid_argument
/// ("file:line:col: rule: what") for a rule the interpreter cannot run: a root that is not
/// an op (or alternatives of ops), an optional root, dangling expr ids, unknown native
/// functions or wrong arities, unknown element types, names the target reads but the
/// match never binds, a cyclic target.
std::vector<std::unique_ptr<RewritePattern>> makeInterpretedRules(
    std::shared_ptr<const ir::Rule> rule);

/// The pattern of a rule with a single root op. Throws std::invalid_argument as above, and
/// when the root is alternatives of several ops (use makeInterpretedRules).
std::unique_ptr<RewritePattern> makeInterpretedRule(std::shared_ptr<const ir::Rule> rule);

/// The patterns of every rule of `file`, in file order.
std::vector<std::unique_ptr<RewritePattern>> makeInterpretedRules(const ir::RuleFile& file);

/// The same as a RuleSet (which also rejects duplicate rule names).
RuleSet interpretRules(const ir::RuleFile& file);

}  // namespace onnx_rewrite
