//===- TensorCheck.h - is a TensorProto what it says it is? --------------===//
//
// Model files are not trusted, and ONNX's own code (shape inference's
// ParseData, the checker) writes past buffers when a tensor's payload
// disagrees with its shape. Every tensor of a model passes checkTensor before
// anything reads it or hands it to ONNX: after that its dims are >= 0, its
// element count and byte size fit in int64, and its payload (raw, typed or
// external) has exactly the size its shape and element type need.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// Bytes one element of `data_type` takes in raw_data: 0 for strings and unknown types,
/// and for the 4-bit types (2 per byte) see payloadBytes.
size_t rawElementBytes(int32_t data_type);

/// The element count of a tensor with these dims, or nullopt when a dim is negative or the
/// product exceeds INT64_MAX.
std::optional<int64_t> checkedElementCount(const google::protobuf::RepeatedField<int64_t>& dims);

/// Bytes of raw_data (or external data) a tensor of `data_type` with `count` elements
/// needs, or nullopt when that is unknown (strings, types this build does not know) or
/// exceeds INT64_MAX.
std::optional<int64_t> payloadBytes(int32_t data_type, int64_t count);

/// Names a tensor for the user, e.g. "initializer 'w'". Called only to write an error: a
/// model has a tensor per weight, and building every name cost more than checking them.
using TensorDescription = std::function<std::string()>;

/// Throws ModelError "<what>: <problem>" unless `tensor` is well formed (see the file
/// comment). External data is checked as far as the proto goes (entries, sizes, the
/// location's shape); the file itself is checkExternalData's (ExternalData.h).
void checkTensor(const onnx::TensorProto& tensor, const TensorDescription& what);
inline void checkTensor(const onnx::TensorProto& tensor, const std::string& what) {
  checkTensor(tensor, [&what] { return what; });
}

}  // namespace onnx_rewrite
