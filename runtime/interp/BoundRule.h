//===- BoundRule.h - a rule's plan, bound to the running program ----------===//
//
// The interpreter runs the one plan of a rule (compiler/plan/RulePlan.h), the
// same plan rulec prints as C++. Binding adds only what exists at run time:
// op names interned as OpIds, native predicates and helpers looked up in the
// registry (arity checked), literal attributes and tensors prebuilt as protos,
// so matching never looks a name up. Internal to runtime/interp:
// RuleInterpreter.cc is its only user.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "compiler/ir/RuleIR.h"
#include "compiler/plan/RulePlan.h"
#include "runtime/graph/OpId.h"
#include "runtime/match/NativeHelpers.h"

namespace onnx_rewrite::interp {

/// An attribute of a new node, as the program holds it.
struct BoundAttr {
  onnx::AttributeProto literal;  ///< kLiteral, named
  const AttributeHelper* helper = nullptr;
  std::vector<const char*> arg_names;  ///< kHelper: the names of its arguments, as written
};

/// A target expr, as the program holds it (indexed like ir::Target::exprs).
struct BoundTargetExpr {
  OpId op;                   ///< kOp that builds a node
  onnx::TensorProto tensor;  ///< kTensor literal of a given element type
  gen::Literal like_values;  ///< tensor(like(x), ...): the values, typed when the rule applies
  const TensorHelper* helper = nullptr;
  std::vector<const char*> arg_names;  ///< helper: the names of its arguments, as written
  std::vector<BoundAttr> attrs;
};

/// A planned rule bound to the registry and the op table. The plan's pointers into `rule`
/// stay valid: the BoundRule shares its ownership.
struct BoundRule {
  std::shared_ptr<const ir::Rule> rule;
  plan::RulePlan plan;                                ///< its spec's native predicates resolved
  std::vector<OpId> ops;                              ///< per pattern expr (kOp)
  std::vector<std::vector<BoundTargetExpr>> targets;  ///< per variant, per target expr
  std::vector<std::pair<OpId, uint32_t>> roots;       ///< plan.roots
  std::vector<OpId> creates;                          ///< plan.creates
};

/// Plans and binds `rule`. Throws plan::PlanError ("file:line:col: rule: what", a
/// std::invalid_argument) for a rule the interpreter cannot run (see makeInterpretedRules).
BoundRule bindRule(std::shared_ptr<const ir::Rule> rule);

}  // namespace onnx_rewrite::interp
