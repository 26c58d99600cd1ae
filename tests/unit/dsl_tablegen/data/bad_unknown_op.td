// A misspelt op is a record TableGen does not know.
include "onnx_rewrite/Rule.td"

def LayerNorm : Rule<"layer_norm"> {
  let match = [(Neg:$y $x)];
  // expect: error: Variable not defined: 'LayerNormalizaton'
  // expect: note: did you mean 'LayerNormalization'? ops are records from onnx_rewrite/Ops.td (com.microsoft ops have the prefix Ms, as in MsGelu); declare another op with def LayerNormalizaton : Op<"LayerNormalizaton", "my.domain">
  let rewrite = [(LayerNormalizaton:$y $x)];
}
