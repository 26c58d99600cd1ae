//===- ModelMutator.h - structure-aware mutations of an ONNX model --------===//
//
// Byte mutations of a serialized ModelProto mostly break the protobuf framing, so
// the loader refuses them before any interesting code runs. The model fuzzer
// instead parses its input, changes one field the way a broken exporter or a
// hostile file would (a dim, an element type, a raw_data length, a name, an op
// type, an attribute, an edge, the node order, an opset version) and serializes
// it again. Every mutation keeps the message parseable, so the bytes reach the
// validation, shape inference, the rules and the saver.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::fuzz {

/// Applies one to three random field mutations to `model`, anywhere in it (main graph,
/// If/Loop/Scan bodies, model-local functions). Deterministic for a given `rng` state.
void mutateModel(onnx::ModelProto& model, std::mt19937_64& rng);

}  // namespace onnx_rewrite::fuzz
