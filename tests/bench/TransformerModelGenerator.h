//===- TransformerModelGenerator.h - synthetic BERT-shaped models ---------===//
//
// Builds, directly as an onnx::ModelProto (no text parsing, so a million nodes
// take about a second), a stack of pre-LayerNorm transformer layers in the form
// the torch.onnx TorchScript exporter emits: LayerNorm decomposed into
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, nn.Linear as MatMul plus
// Add(bias, .), heads split with Reshape/Transpose, and GELU in erf form
// Div(x, 1.4142135) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5). The
// benchmarks and the generator smoke test use it; gen_transformer writes it to
// disk. Weights are either seeded random floats stored inline, or "shape-only":
// external data in one sparse file, so that 10^6-node models need no gigabytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::bench {

/// What to build. Every field has a default that makes a small valid model.
struct TransformerOptions {
  int layers = 2;
  int hidden = 64;
  int heads = 4;
  /// Inner size of the feed-forward block; 0 means 4 * hidden.
  int ffn = 0;
  /// Weights as seeded random floats in raw_data (true), or external references into
  /// `external_location` with no bytes in the model (false).
  bool inline_weights = true;
  /// File the external weights refer to, relative to the model's folder.
  std::string external_location = "weights.bin";
  /// One set of scalar constants (eps, 2, sqrt(d), sqrt 2, 1, 0.5) and shapes shared by
  /// all layers (true), or one initializer per use as torch names them (false).
  bool shared_constants = false;
  uint64_t seed = 1;
};

/// Nodes per transformer layer and outside the layers (the final LayerNorm).
inline constexpr int64_t kNodesPerLayer = 50;
inline constexpr int64_t kNodesOutsideLayers = 9;

/// Node count of a model with `layers` layers.
inline int64_t transformerNodeCount(int layers) {
  return kNodesPerLayer * layers + kNodesOutsideLayers;
}

/// The model: inputs hidden_states float[batch, seq, hidden] and attention_mask
/// float[batch, 1, 1, seq] (additive), output last_hidden_state float[batch, seq, hidden];
/// ir_version 8, opset 17. Throws std::invalid_argument for bad sizes.
onnx::ModelProto makeTransformerModel(const TransformerOptions& options);

/// Bytes the external weights of `options` occupy (0 with inline weights).
uint64_t externalDataSize(const TransformerOptions& options);

/// Creates (or truncates) `path` as a sparse file of `size` zero bytes with ftruncate.
/// Throws std::runtime_error naming the file on failure.
void createSparseFile(const std::string& path, uint64_t size);

/// Writes the model to `path`; with external weights also creates the sparse weights file
/// next to it, named by options.external_location. Returns the model's node count.
int64_t writeTransformerModel(const TransformerOptions& options, const std::string& path);

}  // namespace onnx_rewrite::bench
