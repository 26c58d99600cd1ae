// Constraints must name a value the match binds.
include "onnx_rewrite/Rule.td"

def R : Rule<"r"> {
  let match = [(Add:$y (Mul $x, $scale), $bias)];
  // expect: error: Rank constrains 'scael', which the match does not bind
  let where = [Rank<"scael", [1]>,
               // expect: error: Native names nothing: pass it the matched values it checks, as in Native<"is_even", ["x"]>
               Native<"is_even", []>,
               // expect: error: Scalar bound "small" is not a number
               Scalar<"bias", "small">,
               // expect: error: Native argument 'bais' is not a name the match binds
               Native<"same_shape", ["x", "bais"]>,
               // expect: error: Rank needs at least one rank: Rank<"x", [3]>
               Rank<"x", []>];
  let rewrite = [(Identity:$y $x)];
}
