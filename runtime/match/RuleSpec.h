//===- RuleSpec.h - a rule's static description, as plain data ------------===//
//
// What the shared checks and failure messages (GeneratedSupport.h) read about a
// rule: labels, locations, slots, attribute conditions, constraints, variants.
// The one plan library (compiler/plan/RulePlan.h) builds it from the Rule IR;
// the interpreter uses that value as is, and rulec prints it into generated code
// as a constant table (aggregate initialisers, in member order). So members are
// ordered for those tables: what every entry has first, what most leave at the
// default last (a table row stops at its last non-default member).
//
// Plain data only: no ONNX, graph or compiler types, so rulec's plan library can
// build it without linking the runtime.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnx_rewrite {

// NativeHelpers.h defines these; a spec only points at a registered predicate.
struct MatchContext;
class ValueArgs;
template <typename Fn>
struct NativeFunction;

namespace gen {

using ExprId = uint32_t;
/// "No slot": an unnamed expr or `_`.
inline constexpr uint32_t kNoSlot = UINT32_MAX;

/// A literal of a rule file (ir::Literal without the compiler dependency).
struct Literal {
  enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings };
  Kind kind = Kind::kInt;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;

  bool isList() const {
    return kind == Kind::kInts || kind == Kind::kFloats || kind == Kind::kStrings;
  }
  bool isInt() const { return kind == Kind::kInt || kind == Kind::kInts; }
  bool isNumeric() const { return kind != Kind::kString && kind != Kind::kStrings; }
  /// As the rule printer writes it: "2", "2.0", "'x'", "[-1]" (GeneratedSupport.cc).
  std::string str() const;
};

/// A condition on an attribute of a matched op (ir::AttrMatch).
struct AttrSpec {
  enum class Kind : uint8_t { kEquals, kOneOf, kRange, kCapture };
  std::string name;
  std::string loc;  ///< where it was written (resolved: the attr's, its expr's or the rule's)
  Kind kind = Kind::kEquals;
  std::vector<Literal> values;
  bool axes = false;  ///< "axes"/"axis": compared after normalising by rank
  std::optional<Literal> default_value;
  /// (last opset, default) pairs, oldest first, where older opsets default otherwise.
  std::vector<std::pair<int64_t, Literal>> older_defaults;
  double min = 0, max = 0;     ///< kRange
  uint32_t capture = kNoSlot;  ///< kCapture: the attribute-capture slot
  std::string capture_name;
};

/// One pattern expr (ir::Expr), for checks and messages.
struct ExprSpec {
  std::string label;  ///< "ReduceMean", "com.microsoft.Gelu", "x", "constant 2.0"
  std::string loc;
  uint32_t slot = kNoSlot;
  uint32_t num_inputs = 0;
  std::vector<AttrSpec> attrs;
  Literal literal;  ///< kConstant
  double tolerance = 1e-6;
  uint32_t output = 0;
  /// Written inputs that are `none`: these must be omitted, the others present.
  std::vector<uint32_t> none_inputs;
  /// `Op(a, rest...)`: the node may have inputs after the written ones (the rest).
  bool variadic = false;
  struct OtherOutput {
    uint32_t output = 0;
    uint32_t slot = kNoSlot;  ///< kNoSlot for `_`
    std::string name;
  };
  std::vector<OtherOutput> other_outputs;
  /// Alternatives of one tuple (`a, b = X | (Y, Z)`): the other members, which must take
  /// the same alternative.
  std::vector<ExprId> peers;
};

/// A `where` constraint (ir::Constraint).
struct ConstraintSpec {
  enum class Kind : uint8_t {
    kConstant,
    kScalar,
    kConstantEquals,
    kRank,
    kElemType,
    kShape,
    kConsumers,
    kNative,
    kEquivalent
  };
  Kind kind = Kind::kConstant;
  std::string loc;
  std::string subject;
  uint32_t slot = kNoSlot;
  std::vector<std::string> args;    ///< kNative: its arguments; kEquivalent: the other name
  std::vector<uint32_t> arg_slots;  ///< the slots of `args`
  std::string native;               ///< kNative: the predicate's name
  /// kNative: the registered predicate (NativePredicate); null until the rule is bound to
  /// the runtime (by the interpreter, or by generated code naming it).
  const NativeFunction<bool (*)(const MatchContext&, ValueArgs)>* predicate = nullptr;
  /// A fragment's constraint: checked only when this slot (the use's result) is bound.
  uint32_t guard_slot = kNoSlot;
  std::vector<int64_t> ints;  ///< kRank: the allowed ranks
  bool has_min = false, has_max = false;
  double min = 0, max = 0;
  std::vector<std::string> strings;  ///< kElemType: the names as written
  std::vector<int32_t> elem_types;   ///< kElemType: parsed
  /// kShape: as written ("7", "H", "_") and resolved.
  std::vector<std::string> dims;
  struct Dim {
    enum class Kind : uint8_t { kAny, kStatic, kSymbol };
    Kind kind = Kind::kAny;
    int64_t value = 0;
    uint32_t symbol = 0;
  };
  std::vector<Dim> dim_plans;
  Literal literal;  ///< kConstantEquals
  double tolerance = 1e-6;
};

/// A rewrite variant's `when`.
struct VariantSpec {
  bool has_when = false;
  std::string domain;
  int64_t min_opset = -1, max_opset = -1;
  /// For each tag, the (alternatives expr, index) pairs carrying it.
  std::vector<std::vector<std::pair<ExprId, uint32_t>>> tags;
};

/// Everything the shared checks and messages need to know about one rule.
struct RuleSpec {
  std::string name;
  std::string loc;  ///< the rule's own location
  ExprId root = 0;
  std::vector<std::string> slot_names;
  size_t num_captures = 0;
  size_t num_symbols = 0;
  std::vector<ExprSpec> exprs;
  std::vector<ConstraintSpec> constraints;
  std::vector<VariantSpec> variants;
};

}  // namespace gen
}  // namespace onnx_rewrite
