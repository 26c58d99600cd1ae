// RMSNorm (SimplifiedLayerNormalization) from its decomposed form, and the residual Add
// in front of it (SkipSimplifiedLayerNormalization).
//
//   y = x / sqrt(mean(x^2) + eps) * weight        over the last axis
//
// Hugging Face LLaMA/Mistral/Phi-3 and T5 write it as: Cast x to float, Pow(x, 2) (or x*x),
// ReduceMean, Add eps, Sqrt, Reciprocal then Mul (or Div, or TorchScript's rsqrt: Div(1, .)
// then Mul), Cast back, Mul by the weight in either order. Both Casts are optional: fp32
// exports have neither. ONNX Runtime's
// SimplifiedLayerNormalization (ONNX domain, an ORT contrib op) computes in float and gives
// the weight's type, exactly what the Cast sandwich did; from opset 23 ONNX has
// RMSNormalization with the same contract.
include "onnx_rewrite/Rule.td"

def SimplifiedLayerNormFusion : Rule<"simplified_layer_norm"> {
  let priority = 100;
  let tags = ["ort", "onnx"];
  let doc = "RMSNorm (LLaMA, T5) with its optional fp32 Cast sandwich.";
  let requires = [Opset<"", 9>];
  let match = [
    (Optional (Cast:$xf $x, (to 1))),
    (ReduceMean:$var (AnyOf (Pow $xf, (f 2)), (Mul $xf, $xf)), (axes (ints -1)), (keepdims 1)),
    (Sqrt:$std (Add $var, $eps)),
    (Optional (Cast:$h (AnyOf (Mul $xf, (Reciprocal $std)), (Div $xf, $std),
                              (Mul $xf, (Div (f 1), $std))))),
    (Mul:$y $h, $weight)
  ];
  let where = [Scalar<"eps", "0", "1e-3">, Rank<"weight", [1]>,
               ElemType<"weight", ["float", "float16", "bfloat16"]>,
               Native<"last_dim_of", ["weight", "x"]>];
  let variants = [
    Variant<When<"", 23>, [(RMSNormalization:$y $x, $weight, (axis -1), (epsilon (value $eps)),
                                             (stash_type 1))]>,
    Variant<Always, [(SimplifiedLayerNormalization:$y $x, $weight, (axis -1),
                                                    (epsilon (value $eps)), (stash_type 1))]>
  ];
}

// A residual Add in front of an RMSNorm (either domain's op), of one hidden size H and one
// element type. When the sum is read elsewhere too (every pre-norm decoder passes it on to
// the next residual Add), it is re-exported as output 3.
class SkipSimplifiedRule<string name> : Rule<name> {
  let tags = ["ort"];
  let requires = [Opset<"", 9>];
  let match = [
    (Add:$s $a, $skip),
    (AnyOf:$y (SimplifiedLayerNormalization $s, $gamma, (axis -1), (epsilon (Capture $eps))),
              (RMSNormalization $s, $gamma, (axis -1), (epsilon (Capture $eps))))
  ];
  list<Constraint> operands = [Shape<"a", ["B", "S", "H"]>, Shape<"skip", ["B", "S", "H"]>,
                               Shape<"gamma", ["H"]>, Native<"same_elem_type", ["a", "skip", "gamma"]>];
}

def SkipSimplifiedLayerNormResidualFusion : SkipSimplifiedRule<"skip_simplified_layer_norm_residual"> {
  let priority = 61;
  let doc = "Add + RMSNorm whose sum is also read elsewhere.";
  let where = !listconcat([Consumers<"s", 2, 1000000>], operands);
  let rewrite = [(Results $y, $_, $_, $s,
                  (MsSkipSimplifiedLayerNormalization $a, $skip, $gamma, (epsilon (attr $eps))))];
}

def SkipSimplifiedLayerNormFusion : SkipSimplifiedRule<"skip_simplified_layer_norm"> {
  let priority = 60;
  let doc = "Add + RMSNorm.";
  let where = operands;
  let rewrite = [(MsSkipSimplifiedLayerNormalization:$y $a, $skip, $gamma,
                                                       (epsilon (attr $eps)))];
}
