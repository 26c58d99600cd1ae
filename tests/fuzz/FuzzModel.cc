//===- FuzzModel.cc - libFuzzer target: load, rewrite, save a model -------===//
//
// The deployer's path through the public API (runtime/io/ModelFile.h,
// runtime/api/Rewrite.h) on hostile bytes: loadModelFile, rewrite() with the
// built-in rules, saveModelFile, and loading the saved model again. The only
// acceptable failure is a ModelError (what onnx-rewrite prints as one clean
// line); anything else (a sanitizer report, another exception, a saved model
// that does not load) is a crash for libFuzzer.
//
// LLVMFuzzerCustomMutator mutates the parsed ModelProto (tests/fuzz/ModelMutator.h)
// and falls back to libFuzzer's byte mutations for bytes that do not parse.
//
//===----------------------------------------------------------------------===//
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <onnx/onnx_pb.h>

#include "runtime/api/Rewrite.h"
#include "runtime/graph/ModelError.h"
#include "runtime/io/ModelFile.h"
#include "tests/fuzz/ModelMutator.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

/// The model, its output and nothing else live in one scratch folder per process, so
/// external data locations in the input resolve inside it.
struct Scratch {
  onnx_rewrite::testing::TempDir dir;
  std::string input = dir.file("model.onnx");
  std::string output = dir.file("out/model.onnx");
  Scratch() { ::mkdir(dir.file("out").c_str(), 0700); }
};

void clearOutput(const Scratch& s) {
  for (const std::string& name : onnx_rewrite::testing::listFolder(s.dir.file("out")))
    std::remove(s.dir.file("out/" + name).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnx_rewrite;
  static Scratch scratch;
  testing::writeFile(scratch.input, std::string(reinterpret_cast<const char*>(data), size));
  clearOutput(scratch);

  onnx::ModelProto model;
  try {
    loadModelFile(scratch.input, model);
  } catch (const ModelError&) {
    return 0;
  }
  Options options;
  options.base_dir = folderOf(scratch.input);
  try {
    rewrite(model, options);
  } catch (const ModelError&) {
    return 0;
  }
  try {
    saveModelFile(model, scratch.output, folderOf(scratch.input));
  } catch (const ModelError&) {
    return 0;
  }
  // What we write must load again: a saved model that does not is a bug of ours.
  onnx::ModelProto saved;
  try {
    loadModelFile(scratch.output, saved);
  } catch (const ModelError& e) {
    std::fprintf(stderr, "the rewritten model does not load again: %s\n", e.what());
    std::abort();
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  onnx::ModelProto model;
  // One in eight stays a byte mutation: the parser and its framing checks are fuzzed too.
  if (rng() % 8 == 0 || !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, max_size);
  onnx_rewrite::fuzz::mutateModel(model, rng);
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
