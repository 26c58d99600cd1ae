// The LayerNorm rule of docs/dsl.md ("A first rule"), in TableGen. Its YAML twin must
// give the same canonical IR (TableGenFrontEndTest.cc, LayerNormRule).
include "onnx_rewrite/Rule.td"

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
