// Rewrites that build nothing anyone reads, or read what is not there.
include "onnx_rewrite/Rule.td"

def BindsNothing : Rule<"binds_nothing"> {
  let match = [(Neg:$y $x)];
  // expect: error: this rewrite dag binds no name, so nothing reads it: write (Op:$name ...) with the name of the value it replaces
  let rewrite = [(Identity $x)];
}

def Underscore : Rule<"underscore"> {
  let match = [(Neg:$y $x)];
  // expect: error: `$_` is not a value in a rewrite: an omitted optional input is `none`
  let rewrite = [(MsAttention:$y $x, $_)];
}

def UsedBeforeBound : Rule<"used_before_bound"> {
  let match = [(Neg:$y $x)];
  // expect: error: 't' is used before the rewrite dag that binds it
  let rewrite = [(Identity:$y $t), (Abs:$t $x)];
}

def ConstantInput : Rule<"constant_input"> {
  let match = [(Neg:$y $x)];
  // expect: error: a constant input of a new node is a tensor: (tensor "float", (f 2))
  let rewrite = [(Mul:$y $x, (f 2))];
}

def Both : Rule<"both"> {
  let match = [(Neg:$y $x)];
  let rewrite = [(Identity:$y $x)];
  // expect: error: a rule has either `rewrite` or `variants`, not both
  let variants = [Variant<Always, [(Abs:$y $x)]>];
}

def ReplaceUnbound : Rule<"replace_unbound"> {
  let match = [(Neg:$y $x)];
  // expect: error: Replace names 'z', which the match does not bind
  let rewrite = [(Replace $z, $x)];
}
