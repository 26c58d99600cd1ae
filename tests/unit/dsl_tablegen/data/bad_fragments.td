// Fragments, tuple alternatives, lets and keeps written wrong. Each error is
// reported once, at the part written wrong.
include "onnx_rewrite/Rule.td"

def soft : Fragment<["x"], [AttrParam<"axis", "-1">]> {
  let match = [(Softmax:$y $x, (axis $axis))];
}

// ---- Definitions ------------------------------------------------------------

// expect: error: fragment name 'BadName' is not snake_case (lowercase letters, digits and '_'), so it could be taken for an op
def BadName : Fragment<["x"]> {
  let match = [(Relu:$y $x)];
}

// expect: error: a fragment is used by its record's name: def head_split : Fragment<...>
def : Fragment<["x"]> {
  let match = [(Relu:$y $x)];
}

// expect: error: fragment name 'Declared' is not snake_case (lowercase letters, digits and '_'), so it could be taken for an op
def Declared : FragmentName;

// expect: error: fragment 'no_body' needs `let match = [...]`, or `let rewrite = [...]` or `let variants = [...]`
def no_body : Fragment<["x"]> {
  let doc = "nothing to expand";
}

def match_and_rewrite : Fragment<["x"]> {
  let match = [(Relu:$y $x)];
  // expect: error: a fragment is a piece of a match or of a rewrite, not both
  let rewrite = [(Relu:$y $x)];
}

def rewrite_and_variants : Fragment<["x"]> {
  let rewrite = [(Relu:$y $x)];
  // expect: error: a fragment has either `rewrite` or `variants`, not both
  let variants = [Variant<Always, [(Relu:$y $x)]>];
}

def where_in_rewrite : Fragment<["x"]> {
  // expect: error: `where` constrains a match; a rewrite fragment has none
  let where = [Rank<"x", [1]>];
  let rewrite = [(Relu:$y $x)];
}

// expect: error: parameter 'x' is listed twice
def param_twice : Fragment<["x", "x"]> {
  let match = [(Add:$y $x, $x)];
}

// expect: error: parameter 'axis' is listed twice
def attr_param_twice : Fragment<["axis"], [AttrParam<"axis">]> {
  let match = [(Relu:$y $axis)];
}

// expect: error: a parameter's name is a name, as in "t" (not "_")
def anonymous_param : Fragment<["_"]> {
  let match = [(Relu:$y $x)];
}

// expect: error: default "any" of attribute parameter 'axis' is not a literal: write it as "-1", "1e-5", "[0, 1]" or "'text'" ("" for none)
def bad_default : Fragment<["x"], [AttrParam<"axis", "any">]> {
  let match = [(Softmax:$y $x, (axis $axis))];
}

def binds_its_parameter : Fragment<["x"]> {
  // expect: error: 'x' is a parameter of fragment 'binds_its_parameter'; the uses pass its value, the body cannot bind it
  let match = [(Relu:$x $z)];
}

def rewrite_binds_its_parameter : Fragment<["x"]> {
  // expect: error: 'x' is a parameter of fragment 'rewrite_binds_its_parameter'; the uses pass its value, the body cannot bind it
  let rewrite = [(Relu:$x $z), (Neg:$y $x)];
}

def unknown_attr_param : Fragment<["x"], [AttrParam<"axis">]> {
  // expect: error: 'ax' is not an attribute parameter of fragment 'unknown_attr_param' (those are: axis)
  let match = [(Softmax:$y $x, (axis $ax))];
}

def no_attr_params : Fragment<["x"]> {
  // expect: error: 'ax' is not an attribute parameter of fragment 'no_attr_params', which has none: declare it, as in Fragment<[...], [AttrParam<"ax">]>
  let rewrite = [(Softmax:$y $x, (axis $ax))];
}

def value_param_as_attr : Fragment<["x"]> {
  // expect: error: 'x' is not an attribute parameter of fragment 'value_param_as_attr': it is a value parameter, passed as an input
  let match = [(Softmax:$y $x, (axis $x))];
}

def unnamed_result : Fragment<["x"]> {
  // expect: error: a fragment's last dag names its result, as in (Op:$name ...); or list its results in `let results = [...]`
  let match = [(Relu $x)];
}

def unbound_result : Fragment<["x"]> {
  // expect: error: fragment 'unbound_result' returns 'b', which no dag of its match binds: bind it with (Op:$b ...)
  let results = ["a", "b"];
  let match = [(Results $a, $b, (Split $x))];
}

def result_twice : Fragment<["x"]> {
  // expect: error: result 'a' is listed twice
  let results = ["a", "a"];
  let match = [(Relu:$a $x)];
}

def unread_dag : Fragment<["x"]> {
  let results = ["b"];
  // expect: error: this dag's value is not read by the root of the match (the last dag), so it would never be matched
  let match = [(Neg:$a $x),
               (Relu:$b $x),
               (Abs:$c $x)];
}

// ---- Uses -------------------------------------------------------------------

def OptionalUse : Rule<"optional_use"> {
  // expect: error: a fragment's use cannot be optional: make an op inside the fragment optional
  let match = [(Neg:$y (Optional (soft $x)))];
  let rewrite = [(Identity:$y $x)];
}

def BareUse : Rule<"bare_use"> {
  // expect: error: a fragment's use is a dag: write (soft ...)
  let match = [(Add:$y $x, soft)];
  let rewrite = [(Identity:$y $x)];
}

def BareUseInARewrite : Rule<"bare_use_in_a_rewrite"> {
  let match = [(Neg:$y $x)];
  // expect: error: a fragment's use is a dag: write (soft ...)
  let rewrite = [(Add:$y $x, soft)];
}

def UnnamedUseInARewrite : Rule<"unnamed_use_in_a_rewrite"> {
  let match = [(Neg:$y $x)];
  // expect: error: this rewrite dag binds no name, so nothing reads it: write (Op:$name ...) with the name of the value it replaces
  let rewrite = [(soft $x)];
}

// ---- Tuple alternatives -----------------------------------------------------

def TupleCount : Rule<"tuple_count"> {
  // expect: error: this tuple has 3 values, but Results binds 2 names
  let match = [(Results $a, $b, (AnyOf (Split $x), (Tuple (Relu $x), (Neg $x), (Abs $x)))),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleOutsideResults : Rule<"tuple_outside_results"> {
  // expect: error: 'Tuple' cannot be used in a match here: a Tuple is the value of a Results binding as many names, or one alternative of its AnyOf: (Results $a, $b, (AnyOf (Split $x), (Tuple (Neg $x), (Abs $x))))
  let match = [(Add:$y (Tuple $x, $x), $x)];
  let rewrite = [(Identity:$y $x)];
}

def TupleOptionalAlternative : Rule<"tuple_optional_alternative"> {
  // expect: error: an alternative of a Results binding several names is a (Tuple ...) of as many values, or an op dag whose outputs they are
  let match = [(Results $a, $b, (AnyOf (Optional (Split $x)), (Tuple $x, $x))),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleNamedOp : Rule<"tuple_named_op"> {
  // expect: error: name the outputs in Results, not the op: (Results $a, $b, (AnyOf (Op ...), ...))
  let match = [(Results $a, $b, (AnyOf (Split:$s $x), (Tuple $x, $x))),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleNamedAnyOf : Rule<"tuple_named_any_of"> {
  // expect: error: name the values in Results, not AnyOf
  let match = [(Results $a, $b, (AnyOf:$v (Split $x), (Tuple $x, $x))),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleWithNone : Rule<"tuple_with_none"> {
  // expect: error: 'none' cannot be a value of a Tuple: it matches an omitted input only as an input of an op
  let match = [(Results $a, $b, (Tuple $x, none)),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleReadsItsOwnName : Rule<"tuple_reads_its_own_name"> {
  // expect: error: 'a' is used in the dag that binds it
  let match = [(Results $a, $b, (Tuple (Neg $x), (Abs $a))),
               (Add:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def TupleInARewrite : Rule<"tuple_in_a_rewrite"> {
  let match = [(Neg:$y $x)];
  // expect: error: 'Tuple' cannot be used in a rewrite here: a Tuple is the value of a Results binding as many names, or one alternative of its AnyOf: (Results $a, $b, (AnyOf (Split $x), (Tuple (Neg $x), (Abs $x))))
  let rewrite = [(Add:$y (Tuple $x, $x), $x)];
}

// ---- Lets and keeps ---------------------------------------------------------

def KeepUnknown : Rule<"keep_unknown"> {
  let match = [(Neg:$y $x)];
  // expect: error: `keep` names values of the match; 'z' is not one
  let keep = ["z"];
  let rewrite = [(Abs:$y $x)];
}

def KeepRest : Rule<"keep_rest"> {
  let match = [(Concat:$y $a, (Rest $r), (axis 0))];
  // expect: error: 'r' is a list of inputs the match binds with (Rest $r); `keep` names single values
  let keep = ["r"];
  let rewrite = [(Identity:$y $a)];
}

def KeepAndReplace : Rule<"keep_and_replace"> {
  let match = [(Neg:$y $x)];
  let keep = ["y"];
  // expect: error: 'y' is replaced twice in one rewrite
  let rewrite = [(Abs:$y $x)];
}

def LetReadsAVariantsName : Rule<"let_reads_a_variants_name"> {
  let match = [(Neg:$y $x)];
  // expect: error: 't' is used before the rewrite dag that binds it
  let lets = [(Abs:$u $t)];
  let variants = [Variant<WhenTags<["a"]>, [(Exp:$t $x), (Add:$y $t, $u)]>,
                  Variant<Always, [(Add:$y $x, $u)]>];
}

def LetWithoutAName : Rule<"let_without_a_name"> {
  let match = [(Neg:$y $x)];
  // expect: error: this rewrite dag binds no name, so nothing reads it: write (Op:$name ...) with the name of the value it replaces
  let lets = [(Abs $x)];
  let variants = [Variant<WhenTags<["a"]>, [(Exp:$y $x)]>,
                  Variant<Always, [(Abs:$y $x)]>];
}

def LetBoundAgain : Rule<"let_bound_again"> {
  let match = [(Neg:$y $x)];
  let lets = [(Abs:$u $x)];
  // expect: error: 'u' is bound twice in one rewrite
  let rewrite = [(Exp:$u $x), (Add:$y $u, $x)];
}
