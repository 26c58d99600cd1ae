// Records that are not ops used as a dag's operator.
include "onnx_rewrite/Rule.td"

def Helper;

def R : Rule<"r"> {
  // expect: error: 'Helper' is not an op: ops are records deriving from Op, as in def Helper : Op<"Helper", "my.domain">
  let match = [(Neg:$y (Helper $x))];
  // expect: error: 'value' cannot be used in a rewrite here: it computes a rewrite attribute: (epsilon (value $eps))
  let rewrite = [(Identity:$y (value $x))];
}

def S : Rule<"s"> {
  // expect: error: attribute 'axis' is not a value: attributes follow an op's inputs, as in (ReduceMean $x, (axes (ints -1)))
  let match = [(Neg:$y (AnyOf (axis 1), $x))];
  let rewrite = [(Identity:$y $x)];
}
