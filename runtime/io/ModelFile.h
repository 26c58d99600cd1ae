//===- ModelFile.h - loading and saving .onnx files ----------------------===//
//
// Loading parses the protobuf and checks the external data files exist, without
// reading them. Saving writes a temporary file in the output's folder and renames
// it into place, so readers never see a half-written model and a failure leaves
// nothing behind. Every failure is a ModelError whose message names the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// The folder holding `path` ("." for a bare file name); external data is relative to it.
std::string folderOf(const std::string& path);

/// Parses `path` into `model` and checks its external data references. Throws ModelError
/// "<path>: <cause>" for a missing or unreadable file, a file that is not an ONNX
/// protobuf (or is truncated), a model without graph or opset imports, or a missing or
/// short external data file.
void loadModelFile(const std::string& path, onnx::ModelProto& model);

/// Writes `model` to `path` atomically. External references, relative to `source_folder`,
/// are made valid next to `path` (see linkExternalData). Throws ModelError "<path>: ..."
/// on failure, leaving no file behind.
void saveModelFile(onnx::ModelProto& model, const std::string& path,
                   const std::string& source_folder);

/// True when both paths name the same existing file (same device and inode).
bool sameFile(const std::string& a, const std::string& b);

}  // namespace onnx_rewrite
