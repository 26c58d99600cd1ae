//===- MakeModelSeeds.cc - the model fuzzer's seed corpus ------------------===//
//
// Writes small valid models into the folder named on the command line: the
// exporter-shaped subgraphs tests/support builds (each fuses under a shipped
// rule, so mutations start from models the rules do reach), the round-trip
// models of tests/models/roundtrip (functions, nested If/Loop, opsets 18-23)
// and the tensor model the hostile-input tests break. Generated at build time,
// so no binary corpus is committed.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/AttentionModels.h"
#include "tests/support/EmbedModels.h"
#include "tests/support/GeluModels.h"
#include "tests/support/NormModels.h"
#include "tests/support/RotaryModels.h"
#include "tests/support/TestModels.h"

int main(int argc, char** argv) {
  using namespace onnx_rewrite::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_model_seeds OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  std::vector<std::pair<std::string, std::string>> texts = {
      {"layer_norm", layerNormModel({})},
      {"rms_norm", rmsNormModel({})},
      {"skip_layer_norm", skipLayerNormModel({})},
      {"gelu", geluModel(GeluForm::kTorchScript)},
      {"fast_gelu", fastGeluModel({})},
      {"attention", attentionModel({})},
      {"rotary", rotaryModel({})},
      {"embed", embedModel({})},
  };
  for (const char* name : {"functions", "nested_if_loop", "opset18", "opset21", "opset23"})
    texts.emplace_back(
        name, readFile(sourcePath(std::string("tests/models/roundtrip/") + name + ".onnxtxt")));
  try {
    for (const auto& [name, text] : texts) writeModel(out + "/" + name + ".onnx", parseModel(text));
    writeModel(out + "/tensors.onnx", modelWithTensors());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_model_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
