// Arguments the rule language does not allow where they are written.
include "onnx_rewrite/Rule.td"

def InputAfterAttribute : Rule<"input_after_attribute"> {
  // expect: error: an input after an attribute: an op's inputs come first
  let match = [(ReduceMean:$y (axes (ints -1)), $x)];
  let rewrite = [(Identity:$y $x)];
}

def StringInput : Rule<"string_input"> {
  // expect: error: unsupported argument '"x"': an input is $name, a dag or a number
  let match = [(Neg:$y "x")];
  let rewrite = [(Identity:$y $y)];
}

def AttributeArity : Rule<"attribute_arity"> {
  // expect: error: attribute 'keepdims' takes one value, as in (keepdims 1)
  let match = [(ReduceMean:$y $x, (keepdims))];
  let rewrite = [(Identity:$y $x)];
}

def BareOp : Rule<"bare_op"> {
  // expect: error: an op in value position is a dag: write (Neg ...)
  let match = [(Abs:$y Neg)];
  let rewrite = [(Identity:$y $y)];
}

def OptionalOfName : Rule<"optional_of_name"> {
  // expect: error: Optional wraps one op dag: (Optional (Cast $x, (to 1)))
  let match = [(Neg:$y (Optional $x))];
  let rewrite = [(Identity:$y $x)];
}
