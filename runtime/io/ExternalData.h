//===- ExternalData.h - external tensor files: checks and relocation -----===//
//
// Weights stored outside the .onnx file are referenced by a path relative to the
// model's folder. Loading checks that every referenced file exists and is long
// enough, without reading it; saving into another folder makes the references
// valid there by linking the files (hard link, else symbolic link), never by
// copying gigabytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// Calls `fn` on every TensorProto of the model: initializers, sparse initializer parts,
/// and tensor attributes (Constant values, ...) in every graph, body and function.
void forEachTensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn);

/// The distinct external data locations the model references, in first-use order.
std::vector<std::string> externalLocations(onnx::ModelProto& model);

/// Throws ModelError unless every external reference is a relative path inside
/// `base_dir` whose file exists and covers offset + length.
void checkExternalData(onnx::ModelProto& model, const std::string& base_dir);

/// Makes `model`'s external references valid from `to_dir` (the output's folder) by
/// linking each file of `from_dir` there. Files created are appended to `created`, so a
/// failed save can remove them. Throws ModelError when a different file of that name
/// already exists in `to_dir` or no link can be made.
void linkExternalData(onnx::ModelProto& model, const std::string& from_dir,
                      const std::string& to_dir, std::vector<std::string>& created);

}  // namespace onnx_rewrite
