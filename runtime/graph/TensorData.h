//===- TensorData.h - reading one tensor's bytes on demand ---------------===//
//
// Weights are never read unless a rule asks for one constant's value. This is
// the only place that reads tensor payloads, inline or external, and it reads
// exactly the bytes of the tensor asked for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// A tensor's element type, shape and payload as little-endian bytes (raw_data layout).
struct TensorBytes {
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  std::string bytes;
  /// Number of elements (product of dims; 1 for a scalar).
  int64_t elementCount() const;
};

/// Size in bytes of one element of ONNX data type `data_type`, or 0 if not fixed-size.
size_t elementSize(int32_t data_type);

/// True when the payload lives in an external file.
bool isExternal(const onnx::TensorProto& tensor);

/// The external_data entries of `tensor` ("location", "offset", "length").
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};
ExternalRef externalRef(const onnx::TensorProto& tensor);

/// `rel` (an external data location) inside folder `dir`; `rel` itself when `dir` is empty
/// (the model's folder is the current one).
std::string joinPath(const std::string& dir, const std::string& rel);

class RegularFile;

/// External data files kept open between reads: rules read many small tensors (biases,
/// scales) from the one file an exporter wrote them all into, and opening it per tensor
/// was most of what a bias check cost. At most kMaxOpen files stay open (exports that
/// write a file per tensor have thousands); beyond that each read opens its own.
class ExternalFiles {
 public:
  static constexpr size_t kMaxOpen = 64;
  ExternalFiles();
  ~ExternalFiles();
  ExternalFiles(const ExternalFiles&) = delete;
  ExternalFiles& operator=(const ExternalFiles&) = delete;
  /// The open file at `path`, or null when kMaxOpen others are open.
  const RegularFile* find(const std::string& path);
  /// Keeps `file` (open) for later reads of `path`, if there is room.
  void keep(const std::string& path, std::unique_ptr<RegularFile> file);

 private:
  std::unordered_map<std::string, std::unique_ptr<RegularFile>> open_;
};

/// Reads `tensor`'s payload, resolving external data against `base_dir`. Throws ModelError
/// when the payload is larger than `max_bytes`, the file is missing or short, or the
/// element type has no fixed size. `external_bytes_read`, if given, grows by what was read
/// from disk; `files`, if given, keeps external files open for the next read.
TensorBytes readTensor(const onnx::TensorProto& tensor, const std::string& base_dir,
                       uint64_t max_bytes, uint64_t* external_bytes_read = nullptr,
                       ExternalFiles* files = nullptr);

/// Element `i` of a numeric tensor as a double (float16/bfloat16 widened).
double elementAsDouble(const TensorBytes& tensor, int64_t i);

}  // namespace onnx_rewrite
