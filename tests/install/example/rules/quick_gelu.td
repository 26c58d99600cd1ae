// An exporter's own rule: x * Sigmoid(x) (SiLU/Swish as torch exports it) becomes ONNX
// Runtime's com.microsoft QuickGelu with alpha = 1, which computes x * Sigmoid(alpha * x).
// The installed rulec compiles it to C++ at build time (onnx_rewrite_generate in
// CMakeLists.txt); Rule.td comes from the installed package's TableGen folder. The shipped
// rules have the same fusion (silu, priority 50): priority 60 makes ours the one that runs,
// as an exporter's rule outranks a built-in one it overlaps.
include "onnx_rewrite/Rule.td"

def SiluToQuickGelu : Rule<"example_silu_quick_gelu"> {
  let priority = 60;
  let tags = ["ort"];
  let doc = "x * Sigmoid(x) -> com.microsoft QuickGelu(x, alpha=1).";
  let match = [(Mul:$y $x, (Sigmoid $x))];
  let where = [ElemType<"x", ["float", "float16"]>];
  let rewrite = [(MsQuickGelu:$y $x, (alpha (f 1)))];
}
