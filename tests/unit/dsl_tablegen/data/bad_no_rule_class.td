// Rules need the base classes of onnx_rewrite/Rule.td.
// expect: error: Couldn't find class 'Rule'
def R : Rule<"r">;
