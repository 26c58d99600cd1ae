//===- RegistryFreeTest.cc - the default path never builds ONNX's registry ===//
//
// Building ONNX 1.12's schema registry costs 5 to 8 ms, more than loading, rewriting and
// saving a 12-layer model. The command's path (load, our shape inference, every built-in
// rule, the soundness check, save) answers from its own tables for the models exporters
// write, so the registry must never be built for them.
//
// The registry builds itself by calling onnx::RegisterOnnxOperatorSetSchema(), which
// libonnx reaches through its PLT: the definition below, in this executable, takes its
// place and records the call. This binary never needs the real registry.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/api/Rewrite.h"
#include "runtime/io/ModelFile.h"

namespace {
bool registry_built = false;
}  // namespace

namespace onnx {
void RegisterOnnxOperatorSetSchema() { registry_built = true; }
}  // namespace onnx

namespace onnx_rewrite {
namespace {

/// gen_exporter_model arguments of the exporter models checked: every family in both
/// exporters' forms, and the decoder and embedding variants whose fused ops have optional
/// outputs. The models are written by that program, whose own shape inference builds the
/// registry in its process, not this one.
const char* const kModels[] = {
    "--family bert",
    "--family bert --exporter dynamo",
    "--family bert --embeddings",
    "--family gpt2",
    "--family gpt2 --exporter dynamo",
    "--family gpt2 --past",
    "--family gpt2 --past --stacked-past",
    "--family gpt2 --presents",
    "--family llama",
    "--family llama --exporter dynamo",
    "--family llama --exporter dynamo --past",
    "--family llama --exporter dynamo --merged",
    "--family phi --exporter dynamo",
    "--family phi --exporter dynamo --unoptimized",
    "--family heads",
    "--family heads --exporter dynamo",
    "--family t5",
    "--family t5 --exporter dynamo",
};

TEST(RegistryFree, LoadRewriteAndSaveOfExporterModelsNeverBuildOnnxsSchemaRegistry) {
  char folder[] = "/tmp/registry_free_XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const std::string in = std::string(folder) + "/in.onnx";
  const std::string out = std::string(folder) + "/out.onnx";
  for (const char* args : kModels) {
    SCOPED_TRACE(args);
    const std::string generate =
        std::string(ONNX_REWRITE_GEN_EXPORTER_MODEL) + " " + args + " -o " + in + " >/dev/null";
    ASSERT_EQ(std::system(generate.c_str()), 0);
    onnx::ModelProto model;
    loadModelFile(in, model);
    const Result result = rewrite(model);
    EXPECT_GT(result.stats.rewrites, 0u);
    saveModelFile(model, out, folder);
    EXPECT_FALSE(registry_built);
  }
  std::remove(in.c_str());
  std::remove(out.c_str());
  ::rmdir(folder);
}

}  // namespace
}  // namespace onnx_rewrite
