// TableGen has no float literals.
include "onnx_rewrite/Rule.td"

def R : Rule<"r"> {
  // expect: error: expected field identifier after '.'
  // expect: note: TableGen has no float literals: write (f "2.5"), or "2.5" where a number is given as a string
  let match = [(Pow:$y $x, (f 2.5))];
  let rewrite = [(Identity:$y $x)];
}
