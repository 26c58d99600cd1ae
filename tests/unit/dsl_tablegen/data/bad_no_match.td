// A rule must say what it matches and what it builds.
include "onnx_rewrite/Rule.td"

// expect: error: rule 'no_match' has no match: set `let match = [...]`
def NoMatch : Rule<"no_match"> {
  let rewrite = [(Identity:$y $x)];
}

// expect: error: rule 'no_rewrite' has no rewrite: set `let rewrite = [...]` or `let variants = [...]`
def NoRewrite : Rule<"no_rewrite"> {
  let match = [(Neg:$y $x)];
}

def EmptyMatch : Rule<"empty_match"> {
  // expect: error: `match` is empty: it needs at least the root dag
  let match = [];
  let rewrite = [(Identity:$y $x)];
}
