// An include that no include folder has.
// expect: error: Could not find include file 'onnx_rewrite/Rules.td'
// expect: error: Unexpected token at top level
include "onnx_rewrite/Rules.td"

def R : Rule<"r">;
