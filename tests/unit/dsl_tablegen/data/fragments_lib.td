// The fragments fragments_same_as_yaml.td includes: fragments defined in an
// included file serve the rules of the file that includes it.
include "onnx_rewrite/Rule.td"

// An attribute parameter not named after an ONNX attribute needs its record.
def kd : AttrName<"kd">;

def centered : Fragment<["x"], [AttrParam<"kd", "1">]> {
  let doc = "x minus its mean over the last axis.";
  let match = [(ReduceMean:$mean $x, (axes (ints -1)), (keepdims $kd)),
               (Sub:$d $x, $mean)];
  let where = [Rank<"x", [2, 3]>];
}

def heads : Fragment<["t"], [AttrParam<"perm", "[0, 2, 1, 3]">]> {
  let results = ["r", "h"];
  let match = [(Reshape:$r $t, $shape),
               (Transpose:$h $r, (perm $perm))];
  let where = [Constant<"shape">];
}

def halves : Fragment<["x"]> {
  let results = ["x1", "x2"];
  let match = [(Results $x1, $x2,
                (AnyOf (Tag<"split"> (Split $x, (axis -1))),
                       (Tag<"slice"> (Tuple (Slice $x, 0, $h, -1), (Slice $x, $h, $_, -1)))))];
  let where = [Native<"half_last_dim", ["h", "x"]>];
}

def variance : Fragment<["x"]> {
  let match = [(ReduceMean:$v (Mul (centered $x, (kd 1)), (centered $x)), (axes (ints -1)))];
}

def rms : Fragment<["x", "w"], [AttrParam<"epsilon">, AttrParam<"stash_type", "1">]> {
  let variants = [
    Variant<When<"", 23>, [(RMSNormalization:$y $x, $w, (axis -1), (epsilon $epsilon))]>,
    Variant<Always, [(SimplifiedLayerNormalization:$y $x, $w, (axis -1), (epsilon $epsilon),
                                                      (stash_type $stash_type))]>
  ];
}

def skip : Fragment<["a", "b", "g"], [AttrParam<"epsilon", "1e-12">]> {
  let results = ["y", "s"];
  let rewrite = [(Results $y, $_, $_, $s,
                  (MsSkipLayerNormalization $a, $b, $g,
                                            (Unsqueeze $g, (tensor "int64", (ints 0), [1])),
                                            (epsilon $epsilon)))];
}
