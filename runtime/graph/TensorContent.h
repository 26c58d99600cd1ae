//===- TensorContent.h - what a tensor holds, hashed and compared --------===//
//
// Rewrites share identical constants (Rewriter::addInitializer): two rules writing the
// same shape or scale get one initializer. These compare what tensors hold, their names
// aside, without serializing them: a packed QKV weight is megabytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// A hash of `tensor`'s element type, dims and payload; its name does not count.
size_t tensorContentHash(const onnx::TensorProto& tensor);

/// True when `a` and `b` hold the same element type, dims and payload, bit for bit (-0.0
/// is not 0.0; the same payload in raw_data and in float_data is not the same tensor).
/// Names do not count.
bool sameTensorContent(const onnx::TensorProto& a, const onnx::TensorProto& b);

}  // namespace onnx_rewrite
