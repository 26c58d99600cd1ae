//===- GenOpsTd.cc - writes dsl/td/onnx_rewrite/Ops.td ---------------------===//
//
// Ops.td holds one record per op a rule may name and one per attribute name.
// The ai.onnx part comes from ONNX's schema registry (what the installed ONNX
// library knows); the tables below add the ai.onnx ops of opsets newer than
// that registry, the ONNX Runtime contrib ops rules emit (com.microsoft), and
// their attribute names. `gen_ops_td` prints the file; `gen_ops_td --check
// FILE` exits 1 when FILE differs (a ctest runs it so the committed file stays
// current).
//
// Naming: an ai.onnx op's record is its name (`def Add : Op<"Add">`); a
// com.microsoft op's is its name prefixed with `Ms` (`def MsGelu : Op<"Gelu",
// "com.microsoft">`). A name Rule.td already defines as a marker gets the
// suffix `Op` (`RangeOp`, `OptionalOp`). An attribute's record is its name
// (`def axes : AttrName<"axes">`), with the suffix `_attr` when that name is
// already an op record, a marker, a field of Rule or Fragment or a TableGen keyword
// (`def value_attr : AttrName<"value">`).
//
//===----------------------------------------------------------------------===//

#include <onnx/defs/schema.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace onnx_rewrite {
namespace {

/// An op the installed registry does not know.
struct ExtraOp {
  const char* name;
  int since;  ///< opset of the domain that introduced it
  std::vector<const char*> attrs;
};

/// ai.onnx ops of opsets 18-23 (ONNX 1.13-1.18).
const std::vector<ExtraOp> kNewerOnnxOps = {
    {"BitwiseAnd", 18, {}},
    {"BitwiseNot", 18, {}},
    {"BitwiseOr", 18, {}},
    {"BitwiseXor", 18, {}},
    {"CenterCropPad", 18, {"axes"}},
    {"Col2Im", 18, {"dilations", "pads", "strides"}},
    {"GroupNormalization", 18, {"epsilon", "num_groups", "stash_type"}},
    {"Mish", 18, {}},
    {"DeformConv", 19, {"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"}},
    {"AffineGrid", 20, {"align_corners"}},
    {"Gelu", 20, {"approximate"}},
    {"ImageDecoder", 20, {"pixel_format"}},
    {"RegexFullMatch", 20, {"pattern"}},
    {"StringConcat", 20, {}},
    {"StringSplit", 20, {"delimiter", "maxsplit"}},
    {"Attention",
     23,
     {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap",
      "softmax_precision"}},
    {"RMSNormalization", 23, {"axis", "epsilon", "stash_type"}},
    {"RotaryEmbedding", 23, {"interleaved", "num_heads", "rotary_embedding_dim"}},
};

/// Attributes opsets 18-23 added to ops the registry already has (Split, Resize,
/// Cast, QuantizeLinear, DequantizeLinear, LpPool).
const std::vector<const char*> kNewerOnnxAttrs = {
    "antialias",    "keep_aspect_ratio_policy", "num_outputs", "saturate", "block_size",
    "output_dtype",
};

/// ONNX Runtime contrib ops registered in the ai.onnx domain.
const std::vector<ExtraOp> kOrtOnnxDomainOps = {
    {"SimplifiedLayerNormalization", 1, {"axis", "epsilon", "stash_type"}},
};

/// ONNX Runtime contrib ops (com.microsoft) that fusion rules emit or match.
const std::vector<ExtraOp> kMicrosoftOps = {
    {"Attention",
     1,
     {"do_rotary", "mask_filter_value", "num_heads", "past_present_share_buffer",
      "qkv_hidden_sizes", "rotary_embedding_dim", "scale", "unidirectional"}},
    {"BiasAdd", 1, {}},
    {"BiasDropout", 1, {"seed"}},
    {"BiasGelu", 1, {}},
    {"BiasSoftmax", 1, {"axis", "is_inner_broadcast"}},
    {"BiasSplitGelu", 1, {}},
    {"EmbedLayerNormalization", 1, {"epsilon", "mask_index_type"}},
    {"FastGelu", 1, {}},
    {"FusedConv",
     1,
     {"activation", "activation_params", "auto_pad", "dilations", "group", "kernel_shape", "pads",
      "strides"}},
    {"FusedMatMul", 1, {"alpha", "transA", "transB", "transBatchA", "transBatchB"}},
    {"Gelu", 1, {}},
    {"GemmFastGelu", 1, {}},
    {"GroupNorm", 1, {"activation", "channels_last", "epsilon", "groups"}},
    {"GroupQueryAttention",
     1,
     {"do_rotary", "kv_num_heads", "local_window_size", "num_heads", "rotary_interleaved", "scale",
      "smooth_softmax", "softcap"}},
    {"MatMulNBits", 1, {"K", "N", "accuracy_level", "bits", "block_size"}},
    {"MultiHeadAttention", 1, {"mask_filter_value", "num_heads", "scale", "unidirectional"}},
    {"QuickGelu", 1, {"alpha"}},
    {"RotaryEmbedding",
     1,
     {"interleaved", "is_packed_batching", "num_heads", "rotary_embedding_dim", "scale"}},
    {"SkipGroupNorm", 1, {"activation", "channels_last", "epsilon", "groups"}},
    {"SkipLayerNormalization", 1, {"epsilon"}},
    {"SkipSimplifiedLayerNormalization", 1, {"epsilon"}},
};

/// Records Rule.td defines (markers), fields of Rule, and TableGen's keywords: an op or
/// attribute record must not take these names.
const std::set<std::string> kReservedNames = {
    // Rule.td defs
    "AnyOf", "Optional", "Results", "Range", "Capture", "Replace", "Always", "i", "f", "ints",
    "floats", "strings", "value", "attr", "helper", "none", "tensor", "like", "Rest", "Tuple",
    // fields of Rule and Fragment (visible inside a rule's or a fragment's body)
    "rule_name", "priority", "tags", "doc", "requires", "match", "where", "rewrite", "variants",
    "lets", "keep", "value_params", "attr_params", "results",
    // TableGen keywords
    "assert", "bit", "bits", "class", "code", "dag", "def", "defm", "defset", "defvar", "else",
    "false", "field", "foreach", "if", "in", "include", "int", "let", "list", "multiclass",
    "string", "then", "true"};

/// One `def` line: record name, op or attribute name, domain, trailing comment.
struct Def {
  std::string record;
  std::string name;
  std::string domain;
  std::string comment;
};

void emitDefs(std::ostream& os, const std::vector<Def>& defs, const char* cls) {
  for (const Def& d : defs) {
    std::string line = "def " + d.record + " : " + cls + "<\"" + d.name + "\"";
    if (!d.domain.empty()) line += ", \"" + d.domain + "\"";
    line += ">;";
    if (!d.comment.empty()) line += "  // " + d.comment;
    os << line << "\n";
  }
}

/// Writes Ops.td to `os`.
void generate(std::ostream& os) {
  std::set<std::string> registry_ops;
  std::set<std::string> deprecated;
  std::set<std::string> attr_names;
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty() && schema.domain() != "ai.onnx") continue;
    registry_ops.insert(schema.Name());
    if (schema.Deprecated()) deprecated.insert(schema.Name());
    for (const auto& [name, attr] : schema.attributes()) attr_names.insert(name);
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const int max_opset = ranges.count("") ? ranges.at("").second : 0;

  std::set<std::string> op_records;
  auto opRecord = [&](const std::string& name) {
    std::string record = kReservedNames.count(name) ? name + "Op" : name;
    op_records.insert(record);
    return record;
  };

  std::vector<Def> onnx_defs, newer_defs, ort_defs, ms_defs;
  for (const std::string& name : registry_ops)
    onnx_defs.push_back({opRecord(name), name, "", deprecated.count(name) ? "deprecated" : ""});
  for (const ExtraOp& op : kNewerOnnxOps) {
    for (const char* a : op.attrs) attr_names.insert(a);
    if (registry_ops.count(op.name)) continue;
    newer_defs.push_back({opRecord(op.name), op.name, "", "opset " + std::to_string(op.since)});
  }
  for (const char* a : kNewerOnnxAttrs) attr_names.insert(a);
  for (const ExtraOp& op : kOrtOnnxDomainOps) {
    for (const char* a : op.attrs) attr_names.insert(a);
    ort_defs.push_back({opRecord(op.name), op.name, "", ""});
  }
  for (const ExtraOp& op : kMicrosoftOps) {
    for (const char* a : op.attrs) attr_names.insert(a);
    ms_defs.push_back({opRecord(std::string("Ms") + op.name), op.name, "com.microsoft", ""});
  }
  std::vector<Def> attr_defs;
  for (const std::string& name : attr_names) {
    bool taken = kReservedNames.count(name) || op_records.count(name);
    attr_defs.push_back({taken ? name + "_attr" : name, name, "", ""});
  }

  os << "//===- Ops.td - ONNX and com.microsoft ops as records ---*- tablegen -*-===//\n"
        "//\n"
        "// Automatically generated by gen_ops_td (dsl/tablegen/GenOpsTd.cc), do not edit!\n"
        "// Regenerate: build/dsl/tablegen/gen_ops_td > dsl/td/onnx_rewrite/Ops.td\n"
        "// Generated from: the installed ONNX schema registry (ai.onnx, opsets 1-"
     << max_opset
     << ")\n"
        "// and the tables in GenOpsTd.cc (newer ai.onnx ops, ONNX Runtime contrib ops).\n"
        "//\n"
        "// Rules name ops and attributes by these records: `(ReduceMean $x, (keepdims 1))`.\n"
        "// An ai.onnx op's record is its name; a com.microsoft op's is its name with the\n"
        "// prefix Ms (MsSkipLayerNormalization). A name Rule.td uses for a marker takes\n"
        "// the suffix Op (RangeOp, OptionalOp). An attribute's record is its name, with\n"
        "// the suffix _attr when the name is already an op record, a marker, a field of\n"
        "// Rule or a TableGen keyword (value_attr). Declare other ops in the rule file:\n"
        "// `def MyOp : Op<\"MyOp\", \"my.domain\">;`, `def my_attr : AttrName<\"my_attr\">;`.\n"
        "//\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n"
        "#ifndef ONNX_REWRITE_OPS_TD\n"
        "#define ONNX_REWRITE_OPS_TD\n"
        "\n"
        "// An op: `name` in `domain` (\"\" = ai.onnx).\n"
        "class Op<string name, string dom = \"\"> {\n"
        "  string op_name = name;\n"
        "  string op_domain = dom;\n"
        "}\n"
        "\n"
        "// An attribute name: the operator of an attribute dag, `(axis -1)`.\n"
        "class AttrName<string name> {\n"
        "  string attr_name = name;\n"
        "}\n"
        "\n"
        "//===----------------------------------------------------------------------===//\n"
        "// ai.onnx, from the schema registry (latest version of each op)\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n";
  emitDefs(os, onnx_defs, "Op");
  os << "\n"
        "//===----------------------------------------------------------------------===//\n"
        "// ai.onnx, opsets newer than the schema registry\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n";
  emitDefs(os, newer_defs, "Op");
  os << "\n"
        "//===----------------------------------------------------------------------===//\n"
        "// ONNX Runtime contrib ops in the ai.onnx domain\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n";
  emitDefs(os, ort_defs, "Op");
  os << "\n"
        "//===----------------------------------------------------------------------===//\n"
        "// com.microsoft (ONNX Runtime contrib ops)\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n";
  emitDefs(os, ms_defs, "Op");
  os << "\n"
        "//===----------------------------------------------------------------------===//\n"
        "// Attribute names\n"
        "//===----------------------------------------------------------------------===//\n"
        "\n";
  emitDefs(os, attr_defs, "AttrName");
  os << "\n#endif // ONNX_REWRITE_OPS_TD\n";
}

}  // namespace
}  // namespace onnx_rewrite

int main(int argc, char** argv) {
  std::ostringstream text;
  onnx_rewrite::generate(text);
  if (argc == 1) {
    std::cout << text.str();
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--check") {
    std::ifstream in(argv[2], std::ios::binary);
    std::ostringstream current;
    if (in) current << in.rdbuf();
    if (in && current.str() == text.str()) return 0;
    std::cerr << argv[2] << " is not what " << argv[0] << " generates; regenerate it: " << argv[0]
              << " > " << argv[2] << "\n";
    return 1;
  }
  std::cerr << "usage: " << argv[0] << " [--check Ops.td]\n";
  return 2;
}
