//===- ModelValidation.h - a model checked before anything reads it ------===//
//
// The one pass over a model that stands between an untrusted file (or a
// ModelProto an exporter built) and every other part: graph import, ONNX's
// shape inference, the rules. It checks what those parts trust without
// checking: every tensor (TensorCheck.h) of every graph, body and function, and a
// nesting depth the recursive parts can take. A negative dim in a declared type
// (exporters write -1 for "any size", and ONNX Runtime loads it) gets a symbol of its
// own instead (nameNegativeDims): ONNX 1.12's shape merging crashes on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// Graphs (If/Loop/Scan bodies) nested deeper than this are refused. protobuf's own
/// recursion limit (100 messages, 3 per body level) keeps files far below it; a
/// ModelProto built in memory could go deeper than import's recursion can take.
constexpr int kMaxGraphNesting = 64;

/// Throws ModelError naming the first malformed tensor or type, e.g. "initializer 'w':
/// raw_data holds 10 bytes but its shape [2, 3] needs 24". Reads no tensor payload and no
/// file.
void validateModel(const onnx::ModelProto& model);

/// Names every negative dim_value of the declared types (graph inputs, outputs and
/// value_info, in bodies too) with a symbol of its own, onnx_rewrite_any_dim_N: any size,
/// equal to no other dim; returns how many. Run before ONNX's shape inference sees the
/// model; the names stay in the saved model (ONNX Runtime reads both forms alike).
int nameNegativeDims(onnx::ModelProto& model);

}  // namespace onnx_rewrite
