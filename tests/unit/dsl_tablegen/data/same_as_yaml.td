// Rules written in both languages: same_as_yaml.yaml says the same in YAML, and
// SameIRAsYamlTest.cc checks both front ends print the same canonical IR.
include "onnx_rewrite/Rule.td"

def : OpDecl<"com.microsoft", "SkipLayerNormalization", 1,
             ["input", "skip", "gamma", "beta?", "bias?"],
             ["output", "mean?", "inv_std_var?", "input_skip_bias_sum?"],
             [AttrDecl<"epsilon", "float", 0, "1e-12">]>;

def LayerNorm : Rule<"layer_norm"> {
  let priority = 100;
  let tags = ["ort", "onnx"];
  let doc = "LayerNorm written out as ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add.";
  let requires = [Opset<"", 17>];
  let match = [
    (ReduceMean:$mean $x, (axes (ints -1)), (keepdims 1)),
    (Sub:$d $x, $mean),
    (ReduceMean:$var (AnyOf (Pow $d, (f 2)), (Mul $d, $d)), (axes (ints -1)), (keepdims 1)),
    (Sqrt:$std (Add $var, $eps)),
    (Add:$y (Mul (AnyOf (Div $d, $std), (Mul $d, (Reciprocal $std))), $scale), $bias)
  ];
  let where = [Scalar<"eps", "0", "1e-3">, Rank<"scale", [1]>, Rank<"bias", [1]>];
  let rewrite = [(LayerNormalization:$y $x, $scale, $bias, (axis -1), (epsilon (value $eps)))];
}

def SkipLayerNorm : Rule<"skip_layer_norm"> {
  let priority = 90;
  let tags = ["ort"];
  let requires = [Opset<"", 17>, Opset<"com.microsoft", 1>];
  let match = [
    (Add:$sum $a, $b),
    (LayerNormalization:$y $sum, $gamma, $beta, (axis -1), (epsilon (Capture $eps)))
  ];
  let where = [Rank<"gamma", [1]>];
  let rewrite = [(Results $y, $_, $_, $sum,
                  (MsSkipLayerNormalization $a, $b, $gamma, $beta, (epsilon (attr $eps))))];
}

def RmsNorm : Rule<"rms_norm"> {
  let match = [
    (Mul:$y $x, (Reciprocal (Sqrt (Add (ReduceMean (AnyOf (Tag<"pow"> (Pow $x, (f 2))),
                                                         (Tag<"mul"> (Mul $x, $x))),
                                                  (axes (ints -1))), $eps))))
  ];
  let where = [Scalar<"eps", "0", "1e-3">];
  let variants = [
    Variant<When<"", 23>, [(RMSNormalization:$y $x, (tensor "float", (f 1), [1]), (axis -1),
                                                    (epsilon (value $eps)))]>,
    Variant<When<"com.microsoft", 1, 1, ["pow", "mul"]>, [(MsGelu:$y $x)]>,
    Variant<WhenTags<["pow"]>, [(SimplifiedLayerNormalization:$y $x,
                                    (tensor (helper "ones_like", $x)), (epsilon (value $eps)))]>,
    Variant<Always, [(MsGelu:$t $x), (Identity:$y $t)]>
  ];
}

def OptionalCast : Rule<"optional_cast"> {
  let match = [(Erf:$y (Optional (Cast:$c $x, (to 1))))];
  let rewrite = [(Identity:$y $c)];
}

def SplitOutputs : Rule<"split_outputs"> {
  let match = [(Results $a, $_, $c, (Split $x, (axis 0))), (Concat:$y $a, $c, (axis 0))];
  let rewrite = [(Identity:$y $x)];
}

def AttributeForms : Rule<"attribute_forms"> {
  let match = [(MsFusedMatMul:$y $a, $b, (alpha (Range 0, "1.5")), (transA (AnyOf 0, 1)),
                (transB (Capture $tb)), (transBatchA 0), (transBatchB (f "0.5")))];
  let rewrite = [(MsFusedMatMul:$y $a, $b, (alpha (f 1)), (transB (attr $tb)),
                  (transBatchA (ints 0, -1)), (transBatchB (floats 1, "2.5")),
                  (transA (strings "p", "q")), (mode "constant"))];
}

def ConstantInputs : Rule<"constant_inputs"> {
  let match = [(Mul:$y (Add $x, 1), (Add $x, (f "1e-5")))];
  let rewrite = [(Identity:$y $x)];
}

def Constraints : Rule<"constraints"> {
  let match = [(Mul:$m $x, $w), (Add:$y $m, $c)];
  let where = [Constant<"w">, Scalar<"c">, Rank<"x", [2, 3]>,
               ElemType<"x", ["float", "float16"]>, Shape<"x", ["_", "7", "H"]>,
               Consumers<"m", 1, 2>];
  let rewrite = [(Identity:$y $x)];
}

def DropIdentity : Rule<"drop_identity"> {
  let match = [(Identity:$y $x)];
  let rewrite = [(Replace $y, $x)];
}

def NoneAndHelpers : Rule<"none_and_helpers"> {
  let match = [(Softmax:$y (Reshape $q, $shape))];
  let rewrite = [(MsMultiHeadAttention:$y $q, none, none, (tensor "int64", (ints 0, 0, -1), [3]),
                  (num_heads (helper "num_heads", $shape, $q)))];
}

def Anonymous : Rule<"anonymous"> {
  let match = [(Where:$y $_, $x, $_)];
  let rewrite = [(Identity:$y $x)];
}

def SharedReferences : Rule<"shared_references"> {
  let match = [(Add:$y $x, $x)];
  let rewrite = [(Add:$y $x, $x)];
}

def RewriteReadsAReplacedName : Rule<"rewrite_reads_a_replaced_name"> {
  let match = [(Mul:$m $a, $b), (Add:$y $m, $c)];
  let rewrite = [(Neg:$m $a), (Add:$y $m, $c)];
}

def NamedAlternatives : Rule<"named_alternatives"> {
  let match = [(AnyOf:$v (Pow $x, (f 2)), (Mul $x, $x)), (Sqrt:$y $v)];
  let rewrite = [(Abs:$y $x)];
}

def OmittedInputs : Rule<"omitted_inputs"> {
  let match = [(MsMultiHeadAttention:$y $q, $k, $v, none, none, $b)];
  let rewrite = [(MsMultiHeadAttention:$y $q, $k, $v, $b)];
}

def RestOfInputs : Rule<"rest_of_inputs"> {
  let match = [(Concat:$c $a, $b, (Rest $rest), (axis -1)), (Sum:$y $c, (Rest $_))];
  let rewrite = [(Concat:$y $b, (Rest $rest), $a, (Rest $rest), (axis -1))];
}

def Equivalence : Rule<"equivalence"> {
  let match = [(MatMul:$ma $x, $w), (MatMul:$mb $x, $w2), (Add:$y $ma, $mb)];
  let where = [Rank<"x", [3]>, Equivalent<"mb", "ma">];
  let rewrite = [(Add:$y $ma, $ma)];
}
