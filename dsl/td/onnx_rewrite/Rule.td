//===- Rule.td - base classes of onnx-rewrite TableGen rules -*- tablegen -*-===//
//
// A rule file includes this file and defines records deriving from `Rule` (and,
// for ops outside ONNX's schema registry, `OpDecl`; for pieces of matches and
// rewrites that rules share, `Fragment`). The TableGen front end
// (dsl/tablegen/TableGenFrontEnd.cc) reads those records and builds the same
// Rule IR the YAML front end builds; docs/dsl.md is the language reference.
//
// The classes below are data only. The comments explain how a rule's dags are
// read, the way mlir/IR/PatternBase.td explains DRR patterns.
//
//===----------------------------------------------------------------------===//

#ifndef ONNX_REWRITE_RULE_TD
#define ONNX_REWRITE_RULE_TD

include "onnx_rewrite/Ops.td"

//===----------------------------------------------------------------------===//
// Markers
//===----------------------------------------------------------------------===//
//
// A marker is a record that gives a dag (or a bare argument) a meaning other
// than "a node of this op". The front end dispatches on `marker`, not on the
// record's name. An ONNX op whose name is a marker's name is defined in Ops.td
// with the suffix `Op` (`RangeOp`, `OptionalOp`).

class Marker<string kind> {
  string marker = kind;
}

// ---- In the match ----------------------------------------------------------

// `(AnyOf a, b, ...)`: any of the alternatives, tried left to right; the first
// that matches wins. An alternative may be tagged, and a rewrite variant may
// test the tag (see `When`):
//
//   (ReduceMean:$var (AnyOf (Tag<"pow"> (Pow $d, (f 2))),
//                           (Tag<"mul"> (Mul $d, $d))), (axes (ints -1)))
//
// `(AnyOf:$v a, b)` binds the chosen value to v. In an attribute, AnyOf lists
// the allowed values: `(to (AnyOf 1, 10))`.
def AnyOf : Marker<"any_of">;

// `(Tag<"t"> alternative)`: names an alternative of an AnyOf.
class Tag<string name> : Marker<"tag"> {
  string tag = name;
}

// `(Optional (Cast $x, (to 1)))`: matches the op, or, when the value is not
// produced by that op, stands for the op's first input (here: x). Bind the op
// with `(Optional (Cast:$c ...))` or `(Optional:$c (Cast ...))`.
def Optional : Marker<"optional">;

// `(Results $a, $b, (Split $x))`: several outputs of one node. Output 0 is
// bound to a, output 1 to b; `$_` skips an output. Output 0 is the dag's value.
// In a rewrite, `(Results $y, $_, $_, $sum, (MsSkipLayerNormalization ...))`
// creates a node with four outputs, replaces y with output 0 and sum with
// output 3 (re-exporting a matched intermediate).
def Results : Marker<"results">;

// `(Tuple a, b)`: one alternative of several values at once, for a Results
// that binds as many names. Each alternative of the AnyOf is a Tuple or an op
// whose outputs the names are; all the names take the same alternative:
//
//   (Results $x1, $x2, (AnyOf (Tag<"split"> (Split $x, (axis -1))),
//                             (Tag<"slice"> (Tuple (Slice $x, 0, $h, -1),
//                                                  (Slice $x, $h, $n, -1)))))
//
// `(Results $a, $b, (Tuple ...))` is a tuple with no other alternative.
def Tuple : Marker<"tuple">;

// `(alpha (Range "0.0", "1.0"))`: a numeric attribute within [lo, hi]. The
// bounds are ints or numeric strings (TableGen has no float literals).
def Range : Marker<"range">;

// `(perm (Capture $p))`: any attribute value, available to the rewrite as
// `(perm (attr $p))`.
def Capture : Marker<"capture">;

// `(Concat $a, $b, (Rest $rest), (axis -1))`: the last input of a matched op
// stands for its inputs after the ones written (zero or more), bound to the
// list rest: this Concat has two or more inputs. `(Rest $_)` binds nothing.
// Not on an optional op; the match reads a rest nowhere else and constraints
// cannot name it. A rewrite splices the list into a new node's inputs, in
// place: `(Concat:$y $m, (Rest $rest), (axis -1))`.
def Rest : Marker<"rest">;

// ---- Literals (match and rewrite) --------------------------------------------
//
// TableGen has no float literals, and a list cannot be a dag's first argument
// (`(axes [-1])` would slice the record `axes`), so numbers and lists are:
//
//   1, -1                  an int
//   "constant"             a string
//   (i 1)                  an int
//   (f 2), (f "1e-5")      a float (an int or a numeric string)
//   (ints -1), (ints 0, 2, 1, 3)
//   (floats "0.5", 1)
//   (strings "a", "b")
//   [0, 1], ["a", "b"]     a TableGen list, where it is not a dag's first argument
//
// As an input of a matched op, `(f 2)`, `(i 1)` or a bare int matches a
// constant (an initializer or Constant node) with one element of that value.
def i : Marker<"int">;
def f : Marker<"float">;
def ints : Marker<"ints">;
def floats : Marker<"floats">;
def strings : Marker<"strings">;

// ---- In the rewrite ------------------------------------------------------------

// `(epsilon (value $eps))`: the scalar value of the constant bound to eps.
def value : Marker<"value">;
// `(perm (attr $p))`: the attribute captured with `(Capture $p)`.
def attr : Marker<"attr">;
// `(num_heads (helper "num_heads", $shape))`: a native C++ function of bound
// names computes the attribute. `(tensor (helper "name", $a))` computes a tensor.
def helper : Marker<"helper">;
// `none`: an omitted optional input: `(MsAttention $x, $w, $b, none, none)`.
// In a match, as an input of an op (not the first of an optional op), it
// matches an omitted input: `(MsMultiHeadAttention $q, $k, $v, none, none, $b)`.
def none : Marker<"none">;
// `(tensor "int64", (ints 0, 0, -1))`, `(tensor "float", (f 1), [1])`: a new
// constant of an element type, a value and optionally dims; or
// `(tensor (helper "name", $a, ...))`.
def tensor : Marker<"tensor">;
// `(tensor (like $x), (f 0))`: a constant of x's floating element type, so that
// one rule serves float and float16 models.
def like : Marker<"like">;
// `(Replace $y, $x)`: y's readers read x instead (an Identity-like rewrite);
// `(Replace $y, (Op ...))` is the same as `(Op:$y ...)`.
def Replace : Marker<"replace">;

//===----------------------------------------------------------------------===//
// Applicability
//===----------------------------------------------------------------------===//

// `Opset<"", 17>`: the model imports ONNX at opset 17 or later;
// `Opset<"com.microsoft", 1>`; `Opset<"", 13, 17>`: 13 to 17. -1: no bound.
class Opset<string dom, int min = -1, int max = -1> {
  string domain = dom;
  int min_opset = min;
  int max_opset = max;
}

//===----------------------------------------------------------------------===//
// Constraints (`let where = [...]`)
//===----------------------------------------------------------------------===//
//
// Each names a bound value (the subject) and a condition on it. Several
// constraints on one name are several list elements; they hold in the order
// written.

class Constraint<string kind, string name> {
  string constraint = kind;
  string subject = name;
}

// The value is an initializer (not a graph input) or a Constant node's output.
class Constant<string name> : Constraint<"constant", name>;

// A constant with exactly one element, optionally within [min, max]:
// `Scalar<"eps">`, `Scalar<"eps", "0", "1e-3">` ("" = unbounded).
class Scalar<string name, string min = "", string max = "">
    : Constraint<"scalar", name> {
  string min_value = min;
  string max_value = max;
}

// A constant equal to a literal: `ConstantEquals<"c", "2.0">` (float),
// `ConstantEquals<"c", "2">` (int), `ConstantEquals<"c", "[1, 2]">` (list).
// Floats compare within `tolerance`.
class ConstantEquals<string name, string literal, string tolerance = "1e-6">
    : Constraint<"constant_equals", name> {
  string equals = literal;
  string tolerance_value = tolerance;
}

// The rank is one of `ranks`: `Rank<"x", [2, 3]>`.
class Rank<string name, list<int> ranks> : Constraint<"rank", name> {
  list<int> allowed_ranks = ranks;
}

// The element type is one of `types`: `ElemType<"x", ["float", "float16"]>`.
class ElemType<string name, list<string> types> : Constraint<"elem_type", name> {
  list<string> allowed_types = types;
}

// Rank and dims: "7" a static dim, "H" a symbol that is the same dim wherever it
// appears in the rule, "_" any: `Shape<"x", ["_", "_", "H"]>`.
class Shape<string name, list<string> dims> : Constraint<"shape", name> {
  list<string> shape_dims = dims;
}

// The number of readers (graph outputs count) is in [min, max]:
// `Consumers<"d", 1>` (exactly one), `Consumers<"d", 1, 2>`.
class Consumers<string name, int min, int max = min>
    : Constraint<"consumers", name> {
  int min_consumers = min;
  int max_consumers = max;
}

// The value is computed as `other`: the same value, constants with equal type,
// shape and contents, or outputs of the same op with equal attributes whose
// inputs are equivalent in turn: `Equivalent<"mb", "ma">`.
class Equivalent<string name, string other> : Constraint<"equivalent", name> {
  string other_name = other;
}

// A C++ predicate registered under `predicate`, called with the bound values
// `args`: `Native<"same_hidden_size", ["q", "k"]>`. Its subject is the first
// argument unless given: `Native<"is_causal_mask", ["m"], "scores">`.
class Native<string predicate, list<string> args, string name = "">
    : Constraint<"native", name> {
  string native = predicate;
  list<string> native_args = args;
}

//===----------------------------------------------------------------------===//
// Rewrite variants
//===----------------------------------------------------------------------===//

// When a variant applies: the model imports `domain` at an opset in [min, max]
// (-1: unbounded) and every alternative tag in `tags` was taken by the match.
class When<string dom = "", int min = -1, int max = -1, list<string> tags_ = []> {
  string domain = dom;
  int min_opset = min;
  int max_opset = max;
  list<string> tags = tags_;
  bit always = false;
}
// `WhenTags<["pow"]>`: only the tags.
class WhenTags<list<string> tags_> : When<"", -1, -1, tags_>;
// The unconditional variant (conventionally the last).
def Always : When {
  let always = true;
}

// One target, built when `when` holds. The front end reads the rewrite dags'
// source locations from the second template argument.
class Variant<When condition, list<dag> dags> {
  When when = condition;
  list<dag> rewrite = dags;
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//
//
// def LayerNorm : Rule<"layer_norm"> {
//   let priority = 100;
//   let tags = ["ort", "onnx"];
//   let requires = [Opset<"", 17>];
//   let match = [
//     (ReduceMean:$mean $x, (axes (ints -1)), (keepdims 1)),
//     (Sub:$d $x, $mean),
//     (ReduceMean:$var (AnyOf (Pow $d, (f 2)), (Mul $d, $d)), (axes (ints -1))),
//     (Sqrt:$std (Add $var, $eps)),
//     (Add:$y (Mul (AnyOf (Div $d, $std), (Mul $d, (Reciprocal $std))), $scale), $bias)
//   ];
//   let where = [Scalar<"eps", "0", "1e-3">, Rank<"scale", [1]>, Rank<"bias", [1]>];
//   let rewrite = [(LayerNormalization:$y $x, $scale, $bias, (axis -1),
//                                        (epsilon (value $eps)))];
// }
//
// Binding rules of `match`:
//  - Each dag is a node of its op (a record deriving from `Op`): inputs first,
//    then attributes, which are dags whose operator is an attribute record:
//    `(keepdims 1)`. An attribute is matched in the order written.
//  - `(Op:$name ...)` binds the node's value to name, wherever the dag is
//    written (nested or not). `$name` after that dag, in reading order, means
//    that same value: `(Add:$y (Exp:$e $x), $e)`. Before it, it is an error.
//  - A `$name` never bound by a dag is a capture: any value, bound where first
//    matched, and every other use must be the same value. In
//    `(Sub $x, (ReduceMean $x))` both x are one tensor.
//  - `$_` matches any value and binds nothing.
//  - The last dag of `match` is the root. Every other top-level dag must bind
//    a name and be read, directly or not, by the root (the matcher starts at
//    the root and would never see it otherwise).
//  - Commutative ops (Add, Mul, ...) match either operand order: write one.
//
// Binding rules of `rewrite` (and of each Variant's dags):
//  - `(Op:$name ...)` with a name the match binds (or captures) replaces that
//    value: its readers read the new one. The root's name must be one of them;
//    the others re-export intermediates. A new name is local to the rewrite and
//    may be used by later dags.
//  - `$x` reads the matched value x (or an earlier local name).
//
// `let lets = [dags]` are rewrite dags built before those of every variant
// (values all variants share), and `let keep = ["cos", "sin"]` re-exports
// matched values unchanged, as `(Replace $cos, $cos)` in every variant would:
// their readers outside the match keep reading them, so the match may apply.
//
// Give either `rewrite` or `variants`, not both. A rule's record shares
// TableGen's one namespace of records with the ops and attribute names of
// Ops.td: name it apart from them (`def GeluFusion`, not `def Gelu`).
class Rule<string name> {
  string rule_name = name;
  // Higher first; equal priorities keep file order.
  int priority = 0;
  // For --only/--skip and target selection: "ort", "onnx", "cpu", "cuda".
  list<string> tags = [];
  // What the rule matches, in a sentence or two.
  string doc = "";
  // The model must import these.
  list<Opset> requires = [];
  // The source pattern; the last dag is the root.
  list<dag> match = ?;
  // Conditions on bound names.
  list<Constraint> where = [];
  // The target (one, unconditional)...
  list<dag> rewrite = [];
  // ...or targets tried in order: the first whose `when` holds is built.
  list<Variant> variants = [];
  // Rewrite dags built first in every target (names all variants may read).
  list<dag> lets = [];
  // Matched values re-exported unchanged by every target.
  list<string> keep = [];
}

//===----------------------------------------------------------------------===//
// Fragments
//===----------------------------------------------------------------------===//
//
// A fragment is a named, parameterized piece of a match or of a rewrite. Rules
// (and other fragments) of every loaded file use it like an op, by its
// record's name, which is snake_case so it is never taken for an op:
//
//   def head_split : Fragment<["t"], [AttrParam<"perm", "[0, 2, 1, 3]">]> {
//     let match = [(Reshape:$r $t, $shape),
//                  (Transpose:$h $r, (perm $perm))];
//     let results = ["r", "h"];
//   }
//
//   def Attention : Rule<"attention"> {
//     let match = [(Results $qr, $qh, (head_split $q)), ...];
//
// Value parameters are `$name`s of the body that the use passes by position;
// attribute parameters are passed as attribute dags, `(head_split $q, (perm
// (ints 0, 2, 3, 1)))`, and read in the body as `(perm $perm)`. The results
// are the names in `results`, or the name the last dag binds; a use binds
// them as it binds an op's outputs: `(head_split:$qh $q)`, or `(Results $qr,
// $qh, (head_split $q))`. Every other name of the body is the fragment's own:
// each use gets fresh ones. A rewrite fragment has `rewrite` or `variants`
// (combined with the variants of the rule that uses it) instead of `match`
// and `where`; a name its body binds that is a result is what the use stands
// for. docs/dsl.md has the rules of expansion.

// An attribute parameter: its name (an attribute record's, from Ops.td or
// `def my_attr : AttrName<"my_attr">`, since a use writes it as an attribute
// dag) and its value when a use passes none, written as text as AttrDecl's
// default is ("-1", "1e-5", "[-1]", "'constant'"); "" (none): the body's
// attribute is then left out (no condition in a match, the op's default in a
// rewrite).
class AttrParam<string name, string dflt = ""> {
  string param_name = name;
  string param_default = dflt;
}

// A record that names a fragment: the operator of a fragment use. Declare one
// defined in another loaded file (YAML) with `def head_split : FragmentName;`.
class FragmentName;

class Fragment<list<string> values, list<AttrParam> attrs = []> : FragmentName {
  // The value parameters, in the order a use passes them.
  list<string> value_params = values;
  // The attribute parameters.
  list<AttrParam> attr_params = attrs;
  // What the fragment matches or builds, in a sentence.
  string doc = "";
  // The values a use stands for (default: the name the last dag binds).
  list<string> results = [];
  // A piece of a match, the last dag its first value...
  list<dag> match = [];
  list<Constraint> where = [];
  // ...or of a rewrite: one target, or targets by `When`.
  list<dag> rewrite = [];
  list<Variant> variants = [];
}

//===----------------------------------------------------------------------===//
// Custom op declarations
//===----------------------------------------------------------------------===//

// An attribute of a declared op: name, type ("int", "float", "string", "ints",
// "floats", "strings"), whether it is required, and its default written as a
// literal ("1e-12", "[1, 2]", "x" or "'x'" for a string); "" is no default
// ("''" is the empty string).
class AttrDecl<string name, string type, bit required = false, string dflt = ""> {
  string attr_name = name;
  string attr_type = type;
  bit attr_required = required;
  string attr_default = dflt;
}

// The signature of an op outside ONNX's schema registry, so the checks can
// verify rewrites against it. Inputs and outputs are names; "beta?" is
// optional, "inputs..." variadic:
//
//   def : OpDecl<"com.microsoft", "SkipLayerNormalization", 1,
//                ["input", "skip", "gamma", "beta?", "bias?"],
//                ["output", "mean?", "inv_std_var?", "input_skip_bias_sum?"],
//                [AttrDecl<"epsilon", "float", 0, "1e-12">]>;
//
// A named OpDecl is also an op record: `def MyOp : OpDecl<"my.domain", "MyOp",
// 1, ["x"], ["y"]>;` lets rules write `(MyOp $x)`.
class OpDecl<string dom, string name, int since, list<string> inputs,
             list<string> outputs, list<AttrDecl> attrs = []> : Op<name, dom> {
  int since_version = since;
  list<string> input_params = inputs;
  list<string> output_params = outputs;
  list<AttrDecl> attr_decls = attrs;
  bit commutative = false;
  string doc = "";
}

#endif // ONNX_REWRITE_RULE_TD
