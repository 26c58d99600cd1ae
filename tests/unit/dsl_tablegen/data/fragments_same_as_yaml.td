// Fragments, tuple alternatives, lets and keeps written in both languages:
// fragments_same_as_yaml.yaml says the same in YAML, and SameIRAsYamlTest.cc
// checks both front ends give the same fragments and, once they are expanded,
// the same rules. Most fragments come from an included file.
include "fragments_lib.td"

def padded : Fragment<["x", "p"], [AttrParam<"mode", "'constant'">]> {
  let rewrite = [(Pad:$y $x, $p, (mode $mode))];
}

def NormOfCentered : Rule<"norm_of_centered"> {
  let match = [(centered:$d $x),
               (Div:$y $d, (Sqrt (ReduceMean (Mul $d, $d), (axes (ints -1)), (keepdims 1))))];
  let rewrite = [(LayerNormalization:$y $x, (tensor (helper "ones_of_last_dim", $x)), (axis -1))];
}

def CenteredKeepdimsGiven : Rule<"centered_keepdims_given"> {
  let match = [(Abs:$y (centered $x, (kd (AnyOf 0, 1))))];
  let rewrite = [(Identity:$y $x)];
}

def AttentionScores : Rule<"attention_scores"> {
  let match = [(Results $qr, $qh, (heads $q)),
               (Transpose:$kh (heads $k, (perm (ints 0, 2, 3, 1))), (perm (Capture $p))),
               (MatMul:$y (Mul $qh, (Relu $qr)), $kh)];
  let where = [Rank<"qr", [4]>];
  let rewrite = [(MatMul:$y $qh, (Transpose $kh, (perm (attr $p))))];
}

def RotateHalf : Rule<"rotate_half"> {
  let match = [(Results $x1, $x2, (halves $x)),
               (Concat:$y (Neg $x2), $x1, (axis -1))];
  let variants = [Variant<WhenTags<["split"]>, [(Identity:$y $x)]>,
                  Variant<Always, [(Neg:$y $x)]>];
}

def VarianceOfX : Rule<"variance_of_x"> {
  let match = [(Sqrt:$y (variance $z))];
  let rewrite = [(Identity:$y $z)];
}

def TupleInRule : Rule<"tuple_in_rule"> {
  let match = [(Results $a, $_, $c, (AnyOf (Tag<"split"> (Split $x, (axis 0))),
                                           (Tuple (Relu $x), (Neg $x), (Abs $x)),
                                           (Tag<"tuple"> (Tuple (Abs $x), $_, (Neg $x))))),
               (Add:$y $a, $c)];
  let rewrite = [(Identity:$y $x)];
}

def PlainTuple : Rule<"plain_tuple"> {
  let match = [(Results $a, $b, (Tuple (Relu $x), (Neg $x))),
               (Mul:$y $a, $b)];
  let rewrite = [(Identity:$y $x)];
}

def RmsVariants : Rule<"rms_variants"> {
  let requires = [Opset<"", 13>];
  let match = [(AnyOf:$y
      (Tag<"div"> (Mul (Div $x, (Sqrt (Add (ReduceMean (Mul $x, $x), (axes (ints -1))), $eps))),
                       $w)),
      (Tag<"mul"> (Mul $x, $w)))];
  let where = [Scalar<"eps", "0", "1e-3">];
  let variants = [
    Variant<WhenTags<["div"]>, [(rms:$y $x, $w, (epsilon (value $eps)), (stash_type 0))]>,
    Variant<Always, [(rms:$y $x, $w)]>
  ];
}

def SkipNorm : Rule<"skip_norm"> {
  let match = [(Add:$s $a, $b),
               (LayerNormalization:$y $s, $g, $beta, (axis -1), (epsilon (Capture $e)))];
  let rewrite = [(Results $y, $s, (skip $a, $b, $g, (epsilon (attr $e))))];
}

def LetAndKeep : Rule<"let_and_keep"> {
  let match = [(Unsqueeze:$cos (Gather $cache, $pos), (axes (ints 1))),
               (AnyOf:$y (Tag<"mul"> (Mul $x, $cos)), (Tag<"add"> (Add $x, $cos)))];
  let lets = [(Squeeze:$c $cos, (tensor "int64", (ints 1), [1]))];
  let keep = ["cos", "pos"];
  let variants = [
    Variant<WhenTags<["mul"]>, [(Mul:$y $x, (Unsqueeze $c, (tensor "int64", (ints 1), [1])))]>,
    Variant<Always, [(padded:$y $x, (tensor "int64", (ints 0, 0), [2]))]>
  ];
}
