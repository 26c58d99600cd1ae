// A `let` without its semicolon: TableGen's own syntax error, through our engine.
include "onnx_rewrite/Rule.td"

def LayerNorm : Rule<"layer_norm"> {
  let priority = 100
  // expect: error: expected ';' after let expression
  let match = [(Neg:$y $x)];
  let rewrite = [(Identity:$y $x)];
}
