//===- RulePlan.h - a rule compiled for the interpreter -------------------===//
//
// Loading a rule compiles it once into a Plan, so matching never looks a name
// up: names become dense slots, op names interned OpIds, literals prebuilt
// AttributeProtos and TensorProtos, native functions resolved, and the target
// DAG put in build order with each new node's used and omitted outputs. The
// Plan also validates everything the matcher relies on. Internal to
// runtime/interp: RuleInterpreter.cc is its only user.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "compiler/ir/RuleIR.h"
#include "runtime/graph/OpId.h"
#include "runtime/match/GeneratedSupport.h"
#include "runtime/match/NativeHelpers.h"

namespace onnx_rewrite::interp {

using ir::ExprId;
using ir::kNoExpr;

/// "No slot": a name that binds nothing (`_`, or an unnamed expr).
inline constexpr uint32_t kNoSlot = UINT32_MAX;

/// One attribute condition of an op expr.
struct AttrPlan {
  const ir::AttrMatch* match = nullptr;
  bool axes = false;           ///< "axes"/"axis": compared after normalising by rank
  uint32_t capture = kNoSlot;  ///< kCapture: attribute-capture slot
};

/// A pattern expr, resolved (indexed like Pattern::exprs).
struct ExprPlan {
  const ir::Expr* expr = nullptr;
  OpId op;
  uint32_t slot = kNoSlot;
  std::vector<std::pair<uint32_t, uint32_t>> other_outputs;  ///< (output, slot)
  std::vector<AttrPlan> attrs;
  bool commutative = false;  ///< commutative with exactly two operands
  std::string label;         ///< for messages
};

/// One dim of a `shape:` constraint.
struct DimPlan {
  enum class Kind { kAny, kStatic, kSymbol };
  Kind kind = Kind::kAny;
  int64_t value = 0;    ///< kStatic
  uint32_t symbol = 0;  ///< kSymbol
};

/// A `where` constraint, resolved.
struct ConstraintPlan {
  const ir::Constraint* c = nullptr;
  uint32_t slot = kNoSlot;
  std::vector<int32_t> elem_types;
  std::vector<DimPlan> dims;
  const NativePredicate* native = nullptr;
  std::vector<uint32_t> args;
  uint32_t guard = kNoSlot;  ///< checked only when this slot is bound (a fragment's)
};

/// An attribute of a new node; a literal one is prebuilt.
struct TargetAttrPlan {
  const ir::TargetAttr* attr = nullptr;
  onnx::AttributeProto literal;  ///< kLiteral, named
  uint32_t slot = kNoSlot;       ///< kValueOf: value slot; kCaptured: capture slot
  const AttributeHelper* helper = nullptr;
  std::vector<uint32_t> args;
  std::vector<const char*> arg_names;  ///< kHelper: the names of `args`, as written
  std::string loc;                     ///< resolved: the attr's, else its expr's
};

/// A target expr, resolved; for a new node, the outputs it declares and omits.
struct TargetExprPlan {
  const ir::TargetExpr* expr = nullptr;
  uint32_t slot = kNoSlot;  ///< kRef
  OpId op;                  ///< kOp that builds a node
  uint32_t num_outputs = 1;
  std::vector<uint32_t> omitted;
  std::vector<TargetAttrPlan> attrs;
  onnx::TensorProto tensor;  ///< kTensor literal
  const TensorHelper* helper = nullptr;
  std::vector<uint32_t> args;
  std::vector<const char*> arg_names;  ///< helper: the names of `args`, as written
  ExprId rest = kNoExpr;               ///< kRest: the op expr whose rest it splices
  std::string loc;                     ///< resolved
};

/// One rewrite variant.
struct TargetPlan {
  const ir::Target* target = nullptr;
  std::vector<TargetExprPlan> exprs;  ///< indexed like Target::exprs
  std::vector<uint32_t> order;        ///< exprs the replacements reach, inputs first
  std::vector<std::pair<uint32_t, uint32_t>> replacements;  ///< (value slot, target expr)
  /// when.tags: for each tag, the (alternatives expr, index) pairs carrying it.
  std::vector<std::vector<std::pair<ExprId, uint32_t>>> tags;
};

/// A whole rule. The pointers into `rule` stay valid: the Plan shares its ownership.
struct Plan {
  std::shared_ptr<const ir::Rule> rule;
  std::vector<ExprPlan> exprs;
  std::vector<std::string> slot_names;
  std::vector<std::string> capture_names;
  std::vector<std::string> symbols;
  std::vector<ConstraintPlan> constraints;
  std::vector<TargetPlan> targets;
  /// Distinct root ops and the output of the root node the pattern root is.
  std::vector<std::pair<OpId, uint32_t>> roots;
  std::vector<OpId> creates;
  /// What the checks and failure reasons shared with generated matchers need
  /// (runtime/match/GeneratedSupport.h); indexed like the above.
  gen::RuleSpec spec;
};

/// Compiles `rule`. Throws std::invalid_argument ("file:line:col: rule: what") for a rule
/// the interpreter cannot run (see makeInterpretedRules).
Plan buildPlan(std::shared_ptr<const ir::Rule> rule);

// ---- Helpers shared with the matcher ------------------------------------------------------

using gen::lowercase;
using gen::opLabel;
/// `l` in the shared checks' form.
gen::Literal genLiteral(const ir::Literal& l);
/// `loc`, or the rule's own location when it is unknown (as failure reasons print it).
std::string locOf(const ir::Rule& rule, const ir::SourceLoc& loc);
/// The attribute `name` holding `lit`: INT, FLOAT, STRING, INTS, FLOATS or STRINGS.
onnx::AttributeProto literalAttribute(const ir::Literal& lit, const std::string& name);
/// A scalar literal has exactly one value.
bool wellFormed(const ir::Literal& lit);
bool isNumeric(const ir::Literal& lit);
bool isIntLiteral(const ir::Literal& lit);

}  // namespace onnx_rewrite::interp
