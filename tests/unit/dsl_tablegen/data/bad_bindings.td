// Names bound twice, never, or in a loop.
include "onnx_rewrite/Rule.td"

def BoundTwice : Rule<"bound_twice"> {
  let match = [(Neg:$d $x),
               // expect: error: 'd' is bound twice
               (Abs:$d $x),
               (Add:$y $d, $d)];
  let rewrite = [(Identity:$y $x)];
}

def Unnamed : Rule<"unnamed"> {
  // expect: error: this match dag binds no name, so nothing uses it: write (Op:$name ...)
  let match = [(Neg $x),
               (Abs:$y $x)];
  let rewrite = [(Identity:$y $x)];
}

def SelfLoop : Rule<"self_loop"> {
  // expect: error: 'y' is used in the dag that binds it
  let match = [(Add:$y $x, $y)];
  let rewrite = [(Identity:$y $x)];
}

def UsedBeforeBound : Rule<"used_before_bound"> {
  // expect: error: 'e' is used before the dag that binds it
  let match = [(Add:$s $e, $x),
               (Exp:$e $x),
               (Mul:$y $s, $e)];
  let rewrite = [(Identity:$y $x)];
}

def NotReadByTheRoot : Rule<"not_read_by_the_root"> {
  // expect: error: this dag's value is not read by the root of the match (the last dag), so it would never be matched
  // expect: note: reading an output other than 0 does not connect a node to the root; bind output 0 and read it
  let match = [(Results $_, $b, (Split $x)),
               (Neg:$y $b)];
  let rewrite = [(Identity:$y $x)];
}

def Unread : Rule<"unread"> {
  let match = [(Exp:$e $x),
               // expect: error: this dag's value is not read by the root of the match (the last dag), so it would never be matched
               (Abs:$a $x),
               (Mul:$y $e, $e)];
  let rewrite = [(Identity:$y $x)];
}
