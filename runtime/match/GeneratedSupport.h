//===- GeneratedSupport.h - what rulec's generated matchers call ----------===//
//
// `rulec --emit=cpp` turns each rule into a class whose matchAndRewrite walks the
// pattern with plain C++ (one function per pattern expr, choice points as
// sequential attempts with backtracking). The structure of the search is
// compiled; the leaf checks are shared and live here: node structure, attribute
// conditions (either opset form), constants, `where` constraints, target
// attributes, the replaceability of the match, and the failure reasons.
//
// The interpreter (runtime/interp/RuleInterpreter.h) uses the same Matcher: it
// takes the RuleSpec of the one plan (compiler/plan/RulePlan.h) that rulec also
// prints, and drives these checks from its goal stack, so both keep the same
// search state (expr values, slots, attribute captures, a trail to undo them, a
// progress count for "the failure that got furthest") in one piece of code, find
// the same match and report the same reason.
// tests/unit/codegen/CompiledEqualsInterpretedTest guards this.
//
// A rule's static description (labels, locations, attribute conditions,
// constraints, variants) is a RuleSpec (RuleSpec.h), a constant table in
// generated code; a Scratch (per rule object, reused by every attempt) holds the
// search state, so a failed attempt allocates nothing once its buffers have grown.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/driver/Rewriter.h"
#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"
#include "runtime/match/NativeHelpers.h"
#include "runtime/match/RuleSpec.h"

namespace onnx_rewrite::gen {

/// A non-owning reference to a `bool()` callable: the rest of the search after one
/// goal. Two pointers, no allocation; the callable must outlive the call.
class Next {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Next>>>
  Next(F&& f)  // NOLINT: implicit, so generated code passes lambdas directly
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o) { return (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
  bool operator()() const { return call_(object_); }

 private:
  void* object_;
  bool (*call_)(void*);
};

/// A non-owning view of a list of helper arguments (slots or names): a braced list in
/// generated code, a vector in the interpreter. The list must outlive the call.
template <typename T>
struct ListRef {
  const T* data = nullptr;
  size_t size = 0;
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
};

// ---- Literals of the static description (RuleSpec.h) ---------------------------------

Literal intLiteral(int64_t v);
Literal floatLiteral(double v);
Literal stringLiteral(std::string v);
Literal intsLiteral(std::vector<int64_t> v);
Literal floatsLiteral(std::vector<double> v);
Literal stringsLiteral(std::vector<std::string> v);

/// The attribute `name` holding `lit`: INT, FLOAT, STRING, INTS, FLOATS or STRINGS.
onnx::AttributeProto literalAttribute(const Literal& lit, const std::string& name);
/// "Name" for the ONNX domain, else "domain.Name" (as rule files write ops).
std::string opLabel(const std::string& domain, const std::string& op);
std::string lowercase(std::string s);

// ---- Search state -------------------------------------------------------------------------

/// Per rule object: the buffers every attempt reuses.
struct Scratch {
  struct Capture {
    NodeId node = kNoId;
    const AttrSpec* spec = nullptr;
  };
  struct Symbol {
    bool bound = false;
    bool is_static = false;
    int64_t value = 0;
    const std::string* param = nullptr;
    ValueId v = kNoId;
    uint32_t dim = 0;
  };
  enum class TrailKind : uint8_t { kExprValue, kExprNode, kSlot, kAlt, kCapture };
  struct TrailEntry {
    TrailKind kind;
    uint32_t index;
  };
  struct Failure {
    enum class Kind : uint8_t {
      kNone,
      kRootOmitted,
      kNoProducer,
      kWrongOp,
      kWrongOutput,
      kOmittedInput,
      kPresentInput,
      kExtraInput,
      kAttr,
      kOtherOutputOmitted,
      kConstant,
      kNameConflict,
      kExprConflict,
      kCaptureConflict,
      kConstraint,
      kNoVariant,
    };
    Kind kind = Kind::kNone;
    uint32_t progress = 0;
    ExprId expr = UINT32_MAX;
    ValueId value = kNoId;
    ValueId other = kNoId;
    NodeId node = kNoId;
    uint32_t index = 0;
  };

  std::vector<ValueId> expr_value;
  std::vector<NodeId> expr_node;
  std::vector<int32_t> alt;
  std::vector<ValueId> slots;
  std::vector<Capture> captures;
  std::vector<Symbol> symbols;
  std::vector<TrailEntry> trail;
  uint32_t assigned = 0;
  int chosen = -1;
  Failure best;
  std::vector<ValueId> best_slots;
  std::vector<int64_t> ints_a, ints_b, ints_c;
  std::vector<double> doubles;
  std::vector<ValueId> args;
  // Rewriting.
  std::vector<NodeId> matched;
  std::vector<ValueId> provided;
};

/// The shared half of a generated matcher: search primitives, checks, messages and
/// target helpers. A generated `<Rule>Match` derives from it and adds one function
/// per pattern expr and one per rewrite variant.
class Matcher {
 public:
  /// How a replacement's target value is made.
  enum class To : uint8_t { kRef, kTensor, kOp };

  Matcher(const RuleSpec& spec, Scratch& scratch, Rewriter& rw);

  /// Why the search failed: the failure that got furthest, in the interpreter's words.
  std::string describe();
  /// The variant accept() chose.
  int chosen() const { return s_.chosen; }

 protected:
  // ---- Search ---------------------------------------------------------------------------
  /// Clears the state for a new attempt.
  void reset();
  /// Records the failure for the root having no value (always false).
  bool rootOmitted();
  /// Whether expr `e` already has a value (a shared sub-pattern met again).
  bool seen(ExprId e) const { return s_.expr_value[e] != kNoId; }
  /// A seen expr met again at `v`: must be the same value.
  bool same(ExprId e, ValueId v);
  /// Binds expr `e` (and its name) to `v`.
  bool bind(ExprId e, ValueId v);
  /// The node computing `v` if it is a live `op` with the pattern's output and inputs.
  NodeId node(ExprId e, ValueId v, OpId op);
  /// Attribute conditions and captures of `e` on node `n`, then binds the node and its
  /// other outputs.
  bool attrs(ExprId e, NodeId n, ValueId v);
  /// Expr `e` is a constant equal to its literal.
  bool constant(ExprId e, ValueId v);
  /// Expr `e` is `none`: the input `v` must be omitted.
  bool none(ExprId e, ValueId v);
  /// The inputs of op expr `e`'s matched node after its written ones (`rest...`).
  ListRef<ValueId> rest(ExprId e) const;
  /// Takes alternative `i` of alternatives expr `e`; false (taking nothing) when a peer of
  /// its tuple took another.
  bool choose(ExprId e, uint32_t i);
  uint32_t mark() const { return static_cast<uint32_t>(s_.trail.size()); }
  void undo(uint32_t mark);
  ValueId input(NodeId n, uint32_t i) const { return g_.node(n).input(i); }
  /// Every constraint, then a variant: the last step of a candidate match.
  bool accept();

  // ---- Rewrite --------------------------------------------------------------------------
  ValueId slot(uint32_t s) const { return s_.slots[s]; }
  /// A name the rewrite reads must be bound.
  bool requireBound(uint32_t slot, const char* loc, const char* name);
  /// Target attributes; nullopt after reporting the failure.
  std::optional<onnx::AttributeProto> valueOf(uint32_t slot, const char* attr, const char* ref,
                                              const char* loc, const char* unbound_loc);
  std::optional<onnx::AttributeProto> captured(uint32_t capture, const char* attr, const char* ref,
                                               const char* loc, const char* unbound_loc);
  std::optional<onnx::AttributeProto> attrHelper(const AttributeHelper* helper,
                                                 std::initializer_list<uint32_t> slots,
                                                 std::initializer_list<const char*> names,
                                                 const char* attr, const char* loc,
                                                 const char* unbound_loc) {
    return attrHelperArgs(helper, {slots.begin(), slots.size()}, {names.begin(), names.size()},
                          attr, loc, unbound_loc);
  }
  /// tensor(like(x), values, dims): the literal in x's element type, which must be a
  /// floating one; nullopt after reporting the failure.
  std::optional<onnx::TensorProto> likeTensor(const Literal& values, uint32_t slot,
                                              const std::vector<int64_t>& dims, const char* loc,
                                              const char* name);
  std::optional<onnx::TensorProto> helperTensor(const TensorHelper* helper,
                                                std::initializer_list<uint32_t> slots,
                                                std::initializer_list<const char*> names,
                                                const char* loc) {
    return helperTensorArgs(helper, {slots.begin(), slots.size()}, {names.begin(), names.size()},
                            loc);
  }
  /// The same over argument lists held elsewhere (the interpreter's plan).
  std::optional<onnx::AttributeProto> attrHelperArgs(const AttributeHelper* helper,
                                                     ListRef<uint32_t> slots,
                                                     ListRef<const char*> names, const char* attr,
                                                     const char* loc, const char* unbound_loc);
  std::optional<onnx::TensorProto> helperTensorArgs(const TensorHelper* helper,
                                                    ListRef<uint32_t> slots,
                                                    ListRef<const char*> names, const char* loc);
  /// The matched nodes (in expr order) into scratch().matched; clears provided.
  void collectMatched();
  /// Source value `slot` may be replaced (computed by the match; names kept); appends
  /// it to scratch().provided.
  bool replaceable(uint32_t slot, To to, uint32_t to_slot, const char* target_loc,
                   const char* expr_loc);
  const std::string& ruleName() const { return spec_.name; }

  const RuleSpec& spec_;
  Scratch& s_;
  Rewriter& rw_;
  Model& model_;
  Graph& g_;

 private:
  bool fail(Scratch::Failure::Kind kind, ExprId expr, ValueId value = kNoId, ValueId other = kNoId,
            NodeId node = kNoId, uint32_t index = 0, uint32_t progress = UINT32_MAX);
  bool bindSlot(uint32_t slot, ValueId v, ExprId at);
  bool whenHolds(const VariantSpec& v) const;
  bool unbound(const char* loc, const std::string& name);
  bool matchAttr(const AttrSpec& a, NodeId n, std::string* why);
  /// The value attribute `a` has on node `n` when absent, at the graph's opset.
  const Literal* defaultOf(const AttrSpec& a, NodeId n) const;
  bool sameCapture(const Scratch::Capture& a, const Scratch::Capture& b);
  std::optional<onnx::AttributeProto> materialize(const Scratch::Capture& c);
  bool constantMatches(const Literal& lit, double tolerance, ValueId v, std::string* why);
  bool checkConstraint(uint32_t index, std::string* why);
  bool checkShape(const ConstraintSpec& c, ValueId v, std::string* why);
  bool gatherArgs(ListRef<uint32_t> slots, ListRef<const char*> names, const char* loc);
  void resetSymbols();

  struct Actual;
  void loadLiteral(Actual& a, const Literal& lit);
  void loadAttribute(Actual& a, const onnx::AttributeProto& attr);
  std::string actualText(const Actual& a) const;
  bool equalsLiteral(const Actual& a, const Literal& lit, bool axes, int64_t rank);
};

// ---- Target attributes --------------------------------------------------------------------

onnx::AttributeProto intAttribute(const char* name, int64_t v);
onnx::AttributeProto floatAttribute(const char* name, double v);
onnx::AttributeProto stringAttribute(const char* name, std::string v);
onnx::AttributeProto intsAttribute(const char* name, std::vector<int64_t> v);
onnx::AttributeProto floatsAttribute(const char* name, std::vector<double> v);
onnx::AttributeProto stringsAttribute(const char* name, std::vector<std::string> v);

/// An infinite range bound, as generated rules write it.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// The IEEE half of `f`, rounded to nearest even (beyond +-65504: infinity).
uint16_t floatToHalf(float f);

/// The constant a rewrite's tensor literal stands for (`tensor(int64, [1, 1], [2])`): element
/// type `type` (TensorProto::DataType), `dims` (none for a scalar), one element per number
/// of numeric `values` (float16 and bfloat16 rounded to nearest even), or nullopt for an
/// element type literals cannot hold (strings, complex, float8). The interpreter and the
/// generated rules both build tensor literals with it.
std::optional<onnx::TensorProto> literalTensor(const Literal& values, int32_t type,
                                               const std::vector<int64_t>& dims);

/// The graph imports `domain` at an opset in [min_opset, max_opset] (-1: no bound).
bool opsetIn(const Graph& graph, std::string_view domain, int64_t min_opset, int64_t max_opset);

/// The registered native function `name`; throws std::logic_error if there is none (a
/// generated rule names only functions rulec resolved).
const NativePredicate* nativePredicate(const char* name);
const AttributeHelper* attributeHelper(const char* name);
const TensorHelper* tensorHelper(const char* name);

}  // namespace onnx_rewrite::gen
