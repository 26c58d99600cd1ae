// TableGen reads `axes [-1]` as a slice of the record axes.
include "onnx_rewrite/Rule.td"

def R : Rule<"r"> {
  // expect: error: invalid range, cannot be negative
  // expect: note: a list cannot be a dag's first argument (TableGen reads `axes [-1]` as a slice of axes): write (axes (ints -1)), (floats ...) or (strings ...)
  let match = [(ReduceMean:$y $x, (axes [-1]))];
  let rewrite = [(Identity:$y $x)];
}
