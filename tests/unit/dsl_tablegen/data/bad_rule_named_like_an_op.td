// Rule records share TableGen's namespace with the op records of Ops.td.
include "onnx_rewrite/Rule.td"

// expect: error: def already exists: Gelu
def Gelu : Rule<"gelu"> {
  let match = [(Mul:$y $x, (Erf $x))];
  let rewrite = [(MsGelu:$y $x)];
}
