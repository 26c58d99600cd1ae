//===- RulePlan.h - the one match-and-rewrite plan of a rule --------------===//
//
// A rule is planned once, here, and both back ends consume the result: the
// interpreter (runtime/interp) runs it, rulec's C++ emitter (compiler/emit)
// prints it. Planning turns names into dense slots (values, attribute captures,
// shape symbols), resolves every location the failure reasons quote, checks what
// the matchers rely on, orders each rewrite variant's target DAG (inputs first)
// with the outputs each new node declares and omits, and collects the root ops
// and the ops the rule creates. The checks and messages shared by both back ends
// read the plan's gen::RuleSpec (runtime/match/RuleSpec.h).
//
// What stays with each back end is only its own form of the plan: the
// interpreter binds op names to OpIds and native names to registered functions
// and prebuilds literal attributes and tensors (runtime/interp/BoundRule.h); the
// emitter names things and prints C++ (compiler/emit/CppEmitter.cc).
//
// No runtime library is linked: the plan is plain data over the Rule IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/RuleIR.h"
#include "runtime/match/RuleSpec.h"

namespace onnx_rewrite::plan {

using gen::kNoSlot;

/// A rule no back end can run. what() is "file:line:col: rule: message"; `loc` and
/// `message` are its parts, for a diagnostic (dsl/RuleLoader reports it as rulec's checks do).
class PlanError : public std::invalid_argument {
 public:
  PlanError(ir::SourceLoc loc, const std::string& rule, std::string message)
      : std::invalid_argument(loc.str() + ": " + rule + ": " + message),
        loc(std::move(loc)),
        message(std::move(message)) {}
  ir::SourceLoc loc;
  std::string message;
};

/// An op as written in the rule (domain "" or "ai.onnx" is ONNX's).
struct OpName {
  std::string domain;
  std::string op;
};

/// A distinct op the pattern's root can be, and the output of it the root value is.
struct Root {
  OpName op;
  uint32_t output = 0;
};

/// An attribute of a new node.
struct TargetAttrPlan {
  /// kCaptured: the attribute-capture slot; kValueOf: the value slot.
  uint32_t slot = kNoSlot;
  std::vector<uint32_t> args;  ///< kHelper: the slots of its arguments, as written
  std::string loc;             ///< the attr's location, else its expr's
};

/// A target expr (indexed like ir::Target::exprs).
struct TargetExprPlan {
  uint32_t slot = kNoSlot;        ///< kRef: the slot read; tensor(like(x)): x's; helpers use `args`
  std::vector<uint32_t> args;     ///< kTensor helper: the slots of its arguments
  ir::ExprId rest = ir::kNoExpr;  ///< kRest: the op expr whose further inputs it splices
  uint32_t num_outputs = 1;       ///< kOp: outputs the new node declares
  std::vector<uint32_t> omitted;  ///< kOp: of those, the ones nothing reads
  std::vector<TargetAttrPlan> attrs;
  int32_t elem_type = 0;      ///< kTensor literal: TensorProto::DataType (0: like `slot`)
  std::vector<int64_t> dims;  ///< kTensor literal: its shape (a list without dims: 1-D)
  std::string loc;            ///< resolved
};

/// One source value a variant replaces.
struct ReplacementPlan {
  uint32_t slot = kNoSlot;  ///< the replaced value's slot
  uint32_t expr = 0;        ///< the target expr replacing it
  std::string expr_loc;     ///< that expr's location, else the variant's
};

/// One rewrite variant.
struct TargetPlan {
  const ir::Target* target = nullptr;
  std::vector<TargetExprPlan> exprs;
  std::vector<uint32_t> order;  ///< exprs the replacements reach, inputs first
  std::vector<ReplacementPlan> replacements;
  std::string loc;  ///< resolved
};

/// A whole rule. `rule` must outlive the plan (the interpreter shares its ownership).
struct RulePlan {
  const ir::Rule* rule = nullptr;
  /// The shared checks' view: slots, captures, symbols, labels, locations, constraints.
  gen::RuleSpec spec;
  /// Per pattern expr: a binary op whose operands may match in either order.
  std::vector<bool> commutative;
  std::vector<Root> roots;
  std::vector<OpName> creates;  ///< ops the variants create, first use first
  std::vector<TargetPlan> targets;
};

/// Plans `rule`. Throws PlanError for a rule the back ends cannot run: no root or a root
/// that is not an op (or alternatives of ops), an optional root, dangling expr ids,
/// malformed literals, unknown element types, names read but never bound, a cyclic target.
RulePlan planRule(const ir::Rule& rule);

// ---- Helpers the back ends share -------------------------------------------------------

/// `l` in the shared checks' form.
gen::Literal specLiteral(const ir::Literal& l);
/// `loc`, or the rule's own location when it is unknown (as failure reasons print it).
std::string locOf(const ir::Rule& rule, const ir::SourceLoc& loc);
/// ONNX's domain, "" or "ai.onnx".
bool isOnnxDomain(const std::string& domain);
/// The same op: ONNX's domain compares equal under either spelling.
bool sameOp(const OpName& a, const OpName& b);
/// An element type name ("float", "int64", "bfloat16": ONNX's, lowercase) as
/// TensorProto::DataType, or 0.
int32_t elemTypeOf(const std::string& name);

}  // namespace onnx_rewrite::plan
