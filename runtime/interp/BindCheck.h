//===- BindCheck.h - would the interpreter and generated code run a rule? -===//
//
// The checks of compiler/sema are about the rule (ops, arities, bindings); a few
// more happen only when a rule is planned and bound to the running program: the
// plan's (an element type such as '//', a root the back ends cannot run) and the
// registry's (a native predicate or helper that no C++ registered, or called
// with the wrong number of arguments; a tensor literal of an element type no
// literal can have). dsl/RuleLoader runs this on every rule it loads, so rulec
// (every --emit) and `onnx-rewrite --rules` refuse the same rules with the same
// file:line:col message, from this one function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>

#include "compiler/ir/RuleIR.h"
#include "compiler/plan/RulePlan.h"

namespace onnx_rewrite::interp {

/// Plans and binds `rule` as the interpreter does (bindRule) and returns what it rejects,
/// or nullopt when the rule can run. Natives are looked up in this program's registry
/// (runtime/match/NativeHelpers.h): the shipped ones, and any the program registered.
std::optional<plan::PlanError> bindError(const ir::Rule& rule);

}  // namespace onnx_rewrite::interp
