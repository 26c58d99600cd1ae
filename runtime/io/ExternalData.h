//===- ExternalData.h - external tensor files: checks and relocation -----===//
//
// Weights stored outside the .onnx file are referenced by a path relative to the
// model's folder. Loading checks that every referenced file exists, is long
// enough and lies inside the model's folder, without reading it; saving into
// another folder makes the references valid there by hard-linking the files,
// and copies them only onto another file system.
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
/// `base_dir` that names a regular file covering offset + length, and that file, with every
/// symlink resolved, lies inside `base_dir` or inside the folder `model_path` (if given)
/// really lies in. Run validateModel (ModelValidation.h) first.
void checkExternalData(onnx::ModelProto& model, const std::string& base_dir,
                       const std::string& model_path = {});

/// Makes `model`'s external references valid from `to_dir` (the output's folder) by
/// linking each file of `from_dir` there. Files created are appended to `created`, so a
/// failed save can remove them. Throws ModelError when a different file of that name
/// already exists in `to_dir` or no link can be made.
void linkExternalData(onnx::ModelProto& model, const std::string& from_dir,
                      const std::string& to_dir, std::vector<std::string>& created);

}  // namespace onnx_rewrite
