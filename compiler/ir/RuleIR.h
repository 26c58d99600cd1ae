//===- RuleIR.h - the in-memory form of rewrite rules ---------------------===//
//
// Both front ends (YAML and TableGen) build this; the checks, the printer, the
// dot drawer, the interpreter and the C++ emitter consume it. It is plain data:
// no LLVM, no yaml-cpp, so the interpreter can link it without either.
//
// A rule is a source pattern (a DAG of op matches over named values), typed
// constraints on the names, and one or more target variants (a DAG of new ops
// plus which source values it replaces). Every piece records where it was
// written, so diagnostics and explain mode can point at the rule file.
//
// Semantics, in brief (docs/dsl.md is the reference):
//  - A name bound twice is one value: `Sub(x, ReduceMean(x))` needs both x equal.
//  - Commutative binary ops (Add, Mul, ...) match either operand order; the IR
//    marks them (Expr::commutative) and matchers try both orders.
//  - An Alternatives expr matches if any alternative matches (first wins); its
//    tag is visible to target variants.
//  - An optional op (`Cast?(x)`) matches the op, or else stands for its first
//    input matched at the same value.
//  - `none` as an input matches an omitted optional input.
//  - `Op(a, b, rest...)` matches a node with two or more inputs and binds the inputs
//    after b (zero or more) to `rest`; a rewrite splices them: `Op(c, rest...)`.
//  - Attributes that later opsets moved to inputs (ReduceMean axes from 18,
//    Squeeze/Unsqueeze axes from 13, Split split from 13, Slice starts/ends/
//    axes/steps from 10) are written once as attributes; matchers read
//    whichever form the node has.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnx_rewrite::ir {

struct FragmentUse;

/// Where something was written: file, 1-based line and column (0 = unknown).
struct SourceLoc {
  SourceLoc(std::string file_ = {}, uint32_t line_ = 0, uint32_t col_ = 0)  // NOLINT: braces
      : file(std::move(file_)), line(line_), col(col_) {}
  std::string file;
  uint32_t line = 0;
  uint32_t col = 0;
  /// A piece written in a fragment and expanded into a rule: where the fragment was used
  /// (that use's own `via` leads further out, for fragments used in fragments). Null for a
  /// piece written in the rule itself.
  std::shared_ptr<const FragmentUse> via;
  bool known() const { return line != 0; }
  /// "file:line:col" (or "file" / "<unknown>").
  std::string str() const;
  /// str(), then for a piece from a fragment " (in head_split at rules/a.yaml:40:10)", once
  /// per fragment it was expanded through, innermost first: how explain and generated
  /// code name a place.
  std::string trace() const;
};

/// One expansion of a fragment: its name and where it was used.
struct FragmentUse {
  std::string fragment;
  SourceLoc at;
};

/// A literal value: a number, a string, or a list of them.
struct Literal {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings };
  Kind kind = Kind::kInt;
  std::vector<int64_t> ints;         ///< kInt (one element), kInts
  std::vector<double> floats;        ///< kFloat (one element), kFloats
  std::vector<std::string> strings;  ///< kString (one element), kStrings
  bool isList() const {
    return kind == Kind::kInts || kind == Kind::kFloats || kind == Kind::kStrings;
  }
  /// Integers as floats (kInt to kFloat, kInts to kFloats): a float tensor's value
  /// written with integers, tensor(float, [1, 2]).
  void toFloats();
  /// "2", "2.0", "'x'", "[-1]", "[1.0, 2.0]": the form the printer uses.
  std::string str() const;
  friend bool operator==(const Literal& a, const Literal& b);
};

// ---- Source pattern -----------------------------------------------------------------

/// A condition on one attribute of a matched op.
struct AttrMatch {
  enum class Kind {
    kEquals,   ///< the attribute equals `values[0]` (axes: after normalising by rank)
    kOneOf,    ///< equals one of `values`
    kRange,    ///< numeric, within [min, max]
    kCapture,  ///< any value, bound to `capture` for the target (attr(name))
    kParam,    ///< in a fragment: the condition the use passes for parameter `capture`
  };
  std::string name;
  Kind kind = Kind::kEquals;
  std::vector<Literal> values;
  double min = 0, max = 0;
  std::string capture;
  /// The value an absent attribute has, from the op's schema at the newest opset the rule
  /// covers (filled by the checks).
  std::optional<Literal> default_value;
  /// Where older opsets of the rule's range default otherwise (Softmax's axis is 1 up to
  /// opset 12): (last opset, default) pairs, oldest first (filled by the checks).
  std::vector<std::pair<int64_t, Literal>> older_defaults;
  SourceLoc loc;
};

using ExprId = uint32_t;
inline constexpr ExprId kNoExpr = UINT32_MAX;
/// Expr::group of alternatives that are not part of a tuple.
inline constexpr uint32_t kNoGroup = UINT32_MAX;

/// One node of a pattern DAG. Exprs live in Pattern::exprs and refer to each other by id;
/// an expr used twice (a shared name) appears twice in some `inputs` list.
struct Expr {
  enum class Kind {
    kCapture,       ///< any value, bound to `name` (x, eps, scale)
    kOp,            ///< a node of op `domain::op`; its output `output` is this value
    kConstant,      ///< a constant tensor equal to `literal` (within `tolerance`)
    kAlternatives,  ///< any of `inputs`, tried in order; `tags[i]` names alternative i
    kNone,          ///< an omitted input (`none`): only as an input of an op
  };
  Kind kind = Kind::kCapture;
  /// kCapture: the capture's name. kOp / kAlternatives: the name bound to the value, or "".
  std::string name;
  // kOp
  std::string domain;  ///< "" for ONNX; "com.microsoft" ...
  std::string op;
  std::vector<ExprId> inputs;  ///< kOp: operands in order; kAlternatives: the alternatives
  std::vector<AttrMatch> attrs;
  uint32_t output = 0;       ///< which output of the op this value is
  bool optional = false;     ///< `Op?(...)`: may be absent, standing for inputs[0]
  bool commutative = false;  ///< binary op whose operands may match in either order
  /// kOp: further outputs of the same node bound to names (`a, b = Split(x)`): (index, name).
  std::vector<std::pair<uint32_t, std::string>> other_outputs;
  /// kOp: `Op(a, rest...)`: the name bound to the node's inputs after `inputs` (zero or
  /// more; "_" takes them without binding). Empty: the node has no further inputs.
  std::string rest;
  SourceLoc rest_loc;
  // kConstant
  Literal literal;
  double tolerance = 1e-6;  ///< absolute, for float literals
  // kAlternatives
  std::vector<std::string> tags;
  /// A tuple alternative (`a, b = Split(x) | (Slice(x, ..), Slice(x, ..))`) is one
  /// alternatives expr per name; they share a group, and all of them take the same index.
  uint32_t group = kNoGroup;
  SourceLoc loc;
};

/// A typed condition on a bound name (where: in YAML, `let where` in TableGen).
struct Constraint {
  enum class Kind {
    kConstant,        ///< the value is a constant (initializer or Constant node)
    kScalar,          ///< a constant with exactly one element; `min`/`max` bound it
    kConstantEquals,  ///< a constant equal to `literal` within `tolerance`
    kRank,            ///< rank in `ints` (one or more allowed ranks)
    kElemType,        ///< element type in `strings` ("float", "float16", "bfloat16", ...)
    kShape,           ///< dims: `dims` entries are an int, a symbol (same dim everywhere it
                      ///< appears in this rule) or "_" (any); the rank must match
    kConsumers,       ///< number of consumers in [min, max] (graph outputs count)
    kNative,          ///< a named C++ predicate (registered in the runtime) over `args`
    kEquivalent,      ///< computed as `args[0]`: the same value, equal constants, or the same
                      ///< ops with equal attributes on equivalent inputs
  };
  Kind kind = Kind::kConstant;
  std::string subject;  ///< the bound name constrained
  double min = 0, max = 0;
  bool has_min = false, has_max = false;
  Literal literal;
  double tolerance = 1e-6;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  /// kShape: one entry per dim: "7" (static), "H" (symbol), "_" (any).
  std::vector<std::string> dims;
  std::string native;             ///< kNative: predicate name
  std::vector<std::string> args;  ///< kNative: bound names passed to it; kEquivalent: the other
  /// A fragment's constraint holds where the fragment is matched: it is checked only when
  /// the value named `guard` (the use's result) was matched. Empty: always checked.
  std::string guard;
  SourceLoc loc;
};

/// The source side of a rule.
struct Pattern {
  std::vector<Expr> exprs;
  ExprId root = kNoExpr;
  std::vector<Constraint> constraints;
};

// ---- Target ---------------------------------------------------------------------------

/// An attribute of a new node.
struct TargetAttr {
  enum class Kind {
    kLiteral,   ///< `axis=-1`
    kCaptured,  ///< `attr(c)`: the source attribute captured as c
    kValueOf,   ///< `value(eps)`: the scalar value of constant eps (float or int)
    kHelper,    ///< `helper(name, args...)`: a native function computing the attribute
    kParam,     ///< in a fragment: the attribute its use passes for parameter `ref`
  };
  std::string name;
  Kind kind = Kind::kLiteral;
  Literal literal;
  std::string ref;                ///< kCaptured / kValueOf: the name; kHelper: helper name
  std::vector<std::string> args;  ///< kHelper: bound names
  SourceLoc loc;
};

/// One value of the target DAG.
struct TargetExpr {
  enum class Kind {
    kRef,     ///< a value bound in the source (x, scale)
    kOp,      ///< a new node; this value is its output `output`
    kTensor,  ///< a new constant: `literal` (shape `dims`, type `elem_type`) or a helper
    kNone,    ///< an omitted optional input
    kRest,    ///< `rest...`: the inputs the match bound to rest, spliced into a node's inputs
  };
  Kind kind = Kind::kRef;
  std::string name;  ///< kRef: the source name; kRest: the rest's name
  std::string domain;
  std::string op;
  std::vector<uint32_t> inputs;  ///< indices into Target::exprs
  std::vector<TargetAttr> attrs;
  uint32_t num_outputs = 1;  ///< outputs the new node declares (omitted ones stay empty)
  /// Leading outputs the op requires (set by the checks from its signature): the new node
  /// gets them, named, even when no value of the rewrite reads them.
  uint32_t required_outputs = 1;
  uint32_t output = 0;
  Literal literal;
  std::vector<int64_t> dims;
  std::string elem_type;  ///< kTensor literal: "float", "int64", ...; "" with `like`
  /// kTensor literal: the bound value whose (floating) element type the constant takes,
  /// `tensor(like(x), 0.0)`: rules over float and float16 make constants of either.
  std::string like;
  std::string helper;             ///< kTensor computed by a native helper
  std::vector<std::string> args;  ///< helper arguments (bound names)
  SourceLoc loc;
};

/// When a target variant applies: the model imports `domain` at an opset in [min, max]
/// (max < 0: no upper bound), and every alternative tag in `tags` was taken. Declared
/// outside Target (and aliased as Target::When): clang rejects std::optional of a nested
/// struct whose member initializers it has not seen before the enclosing class is complete.
struct TargetWhen {
  std::string domain;
  int64_t min_opset = -1, max_opset = -1;
  std::vector<std::string> tags;
};

/// The target side: new nodes, and which source values they replace.
struct Target {
  std::vector<TargetExpr> exprs;
  /// (source name, target expr): every use of the source value reads the target value.
  /// The root's name is always here; other names are re-exported intermediates.
  std::vector<std::pair<std::string, uint32_t>> replacements;
  using When = TargetWhen;
  std::optional<When> when;
  SourceLoc loc;
};

// ---- Rules ----------------------------------------------------------------------------

/// A requirement on the model for the rule to run at all.
struct Applicability {
  std::string domain;  ///< "" = ONNX
  int64_t min_opset = -1, max_opset = -1;
  SourceLoc loc;
};

struct Rule {
  std::string name;  ///< snake_case, unique in a rule set
  int priority = 0;
  std::vector<std::string> tags;  ///< "ort", "onnx", "cpu", "cuda"
  std::string doc;                ///< what the rule matches, in a sentence or two
  std::vector<Applicability>
  requires;
  Pattern pattern;
  /// Tried in order; the first whose `when` holds is built.
  std::vector<Target> targets;
  SourceLoc loc;
};

/// A custom operator declaration (com.microsoft ops the rules emit): its signature, so the
/// checks can verify targets against it as they verify ONNX ops against ONNX's schemas.
struct OpDecl {
  std::string domain;
  std::string op;
  int64_t since_version = 1;
  struct Param {
    std::string name;
    bool optional = false;
    bool variadic = false;
  };
  std::vector<Param> inputs;
  std::vector<Param> outputs;
  struct Attr {
    std::string name;
    std::string type;  ///< "int", "float", "string", "ints", "floats", "strings"
    bool required = false;
    std::optional<Literal> default_value;
  };
  std::vector<Attr> attrs;
  bool commutative = false;
  std::string doc;
  SourceLoc loc;
};

/// Drops the exprs the root no longer reaches (after a pass rewired some) and renumbers the
/// rest, keeping their order.
void compactPattern(Pattern& p);

/// A named, parameterized piece of a match or of a rewrite, used like an op by rules (and
/// other fragments) of any loaded file: `qr = head_split(q)`. Expansion
/// (compiler/ir/ExpandFragments.h) copies it into each use, so rules built with fragments
/// are plain Rule IR afterwards.
struct Fragment {
  struct Param {
    std::string name;
    /// Passed as `name=...` at the use: an attribute condition (match) or an attribute value
    /// (rewrite) the body writes as `attr=name`. Otherwise a value, passed by position.
    bool attribute = false;
    /// An attribute parameter's value when the use passes none; absent: the body's attribute
    /// is left out (no condition in a match, the op's default in a rewrite).
    std::optional<Literal> default_value;
    SourceLoc loc;
  };
  std::string name;  ///< snake_case, unique among the fragments loaded together
  std::vector<Param> params;
  /// The values a use stands for: one name (the usual case) or several
  /// (`qr, qh = head_split(q)`). Names of the body.
  std::vector<std::string> results;
  std::string doc;
  /// A match fragment: value parameters are the kCapture exprs named after them;
  /// `result_exprs[i]` is the expr of results[i]. Constraints are the fragment's `where`.
  bool is_match = true;
  Pattern match;
  std::vector<ExprId> result_exprs;
  /// A rewrite fragment: variants (tried as a rule's variants are, by `when`); value
  /// parameters are kRef exprs; `replacements` map each result name to its expr.
  std::vector<Target> rewrite;
  SourceLoc loc;
};

/// Everything read from one or more rule files.
struct RuleFile {
  std::vector<Rule> rules;
  std::vector<OpDecl> ops;
  std::vector<Fragment> fragments;
};

}  // namespace onnx_rewrite::ir
