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

// The RMSNorm pattern and its two targets, for the mean written `mean` (the ReduceMean
// over x^2 bound to $var) and the fused op's `axis`.
class RmsNormRule<string name, dag mean, dag axis> : Rule<name> {
  let tags = ["ort", "onnx"];
  let requires = [Opset<"", 9>];
  let match = [
    (Optional (Cast:$xf $x, (to 1))),
    mean,
    (Sqrt:$std (Add $var, $eps)),
    (Optional (Cast:$h (AnyOf (Mul $xf, (Reciprocal $std)), (Div $xf, $std),
                              (Mul $xf, (Div (f 1), $std))))),
    (Mul:$y $h, $weight)
  ];
  let variants = [
    Variant<When<"", 23>, [(RMSNormalization:$y $x, $weight, axis, (epsilon (value $eps)),
                                             (stash_type 1))]>,
    Variant<Always, [(SimplifiedLayerNormalization:$y $x, $weight, axis,
                                                    (epsilon (value $eps)), (stash_type 1))]>
  ];
}

def SimplifiedLayerNormFusion
    : RmsNormRule<"simplified_layer_norm",
                  (ReduceMean:$var (AnyOf (Pow $xf, (AnyOf (f 2), (Cast (f 2)))), (Mul $xf, $xf)), (axes (ints -1)),
                                   (keepdims 1)),
                  (axis -1)> {
  let priority = 100;
  let doc = "RMSNorm (LLaMA, T5) with its optional fp32 Cast sandwich.";
  let where = [Scalar<"eps", "0", "1e-3">, Rank<"weight", [1]>,
               ElemType<"weight", ["float", "float16", "bfloat16"]>,
               ElemType<"x", ["float", "float16", "bfloat16"]>,
               Native<"last_dim_of", ["weight", "x"]>];
}

// The same over several trailing axes, or all of them: a ReduceMean without axes (ONNX
// Runtime's SimplifiedLayerNorm fusion tests write it so) or with axes k..rank-1. The
// fused op normalizes from `axis` k on; its scale may broadcast into the normalized shape
// (ONNX Runtime's kernels and ONNX's RMSNormalization take that; probed), so the norm keeps
// the weight as written: at most as many axes as are normalized, and y of x's shape. The
// last-axis rule above outranks it: it also holds where x's shape is unknown.
def SimplifiedLayerNormTrailingAxesFusion
    : RmsNormRule<"simplified_layer_norm_trailing_axes",
                  (ReduceMean:$var (AnyOf (Pow $xf, (AnyOf (f 2), (Cast (f 2)))), (Mul $xf, $xf)), (keepdims 1)),
                  (axis (helper "first_reduced_axis", $var, $xf))> {
  let priority = 99;
  let doc = "RMSNorm over the last k axes of x (all of them when ReduceMean has no axes).";
  let where = [Scalar<"eps", "0", "1e-3">, Native<"reduces_trailing_axes", ["var", "xf"]>,
               Native<"fits_normalized_shape", ["weight", "var", "xf"]>,
               Native<"same_shape", ["y", "x"]>,
               ElemType<"weight", ["float", "float16", "bfloat16"]>,
               ElemType<"x", ["float", "float16", "bfloat16"]>];
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
