//===- yaml_rules.cc - an exporter that loads rule files at run time ------===//
//
// The installed interpreter component (onnx_rewrite::rules): a YAML rule file given on the
// command line is parsed, checked and interpreted at run time, as `onnx-rewrite --rules`
// does, with no rulec step at build time. Only the stable header names are used.
//
// usage: yaml_rules_exporter RULES.yaml   Exit 0 when the rule fused the one SiLU of a
// small model; 1 (with rulec-style diagnostics on stderr) when the rule file is bad.
//
//===----------------------------------------------------------------------===//
#include <onnx/defs/parser.h>

#include <onnx_rewrite/ModelError.h>
#include <onnx_rewrite/Rewrite.h>
#include <onnx_rewrite/RuleFiles.h>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: yaml_rules_exporter RULES.yaml\n");
    return 2;
  }
  try {
    const onnx_rewrite::RuleSet rules = onnx_rewrite::loadRuleFiles({argv[1]});
    onnx::ModelProto model;
    const auto parsed = onnx::OnnxParser::Parse(model, R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 8] x, float[2, 8] w) => (float[2, 8] y, float[2, 8] z) {
  s = Sigmoid(x)
  y = Mul(x, s)
  t = Sigmoid(w)
  z = Mul(x, t)
}
)");
    if (!parsed.IsOK()) {
      std::fprintf(stderr, "model: %s\n", parsed.ErrorMessage().c_str());
      return 1;
    }
    const onnx_rewrite::Result result = onnx_rewrite::rewrite(model, rules);
    int fused = 0;
    for (const onnx::NodeProto& n : model.graph().node())
      fused += n.op_type() == "QuickGelu" && n.domain() == "com.microsoft";
    if (fused != 1 || result.stats.rewrites != 1) {
      std::fprintf(stderr, "expected the one SiLU fused, got %d QuickGelu\n", fused);
      return 1;
    }
    std::printf("yaml rules example: OK (x * Sigmoid(x) fused by a rule loaded at run time)\n");
    return 0;
  } catch (const onnx_rewrite::RuleFileError& e) {
    std::fputs(e.what(), stderr);
    return 1;
  } catch (const onnx_rewrite::ModelError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
