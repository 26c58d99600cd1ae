//===- TestModels.h - building and inspecting test models -----------------===//
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::testing {

/// Parses a model in ONNX's text format (onnx/defs/parser.h). Throws std::runtime_error
/// with the parser's message on a syntax error, so a broken test model fails loudly.
onnx::ModelProto parseModel(const std::string& text);

/// The model `text` (ONNX text format, written in opset 13's forms) as opsets 9-12 write
/// it, as torch 1.x exports: the constant axes of Unsqueeze, Squeeze and ReduceSum and the
/// split of Split, inputs from opset 13, become attributes (`Unsqueeze(x, ax0)` with `int64[1] ax0
/// = {0}` becomes `Unsqueeze <axes = [0]> (x)`); the opset import is the caller's to set.
/// Throws std::invalid_argument when such an input is not an int64 initializer of the text.
std::string withAttributeParams(const std::string& text);

/// Deterministic serialisation, for byte-for-byte comparisons.
std::string serialize(const onnx::ModelProto& model);

/// The op types of the main graph's nodes in order, "domain::op" outside the ONNX domain.
std::vector<std::string> opTypes(const onnx::GraphProto& graph);
std::vector<std::string> opTypes(const onnx::ModelProto& model);

/// The attribute `name` of `node`, or null.
const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name);

/// Whole-file helpers; readFile throws if the file cannot be read.
std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& bytes);
void writeModel(const std::string& path, const onnx::ModelProto& model);

/// Path of a file in the source tree, e.g. sourcePath("tests/models/x.onnxtxt").
std::string sourcePath(const std::string& relative);

/// The model as a float16 export (torch's `.half()`) writes it: every float tensor
/// (initializers, Constant and ConstantOfShape values), the graph's float inputs, outputs and
/// value_info, and Cast to float become float16; values beyond float16's range are clamped
/// to +-65504 (finfo(float32).min masks become finfo(float16).min). The ONNX text format has
/// no float16 literals, so fp16 test models are written in float and converted.
void toFloat16(onnx::ModelProto& model);

/// y = x + w + c: an initializer w (float[2, 3], node 0 reads it) and a Constant c (float[3],
/// node 1). The valid model the hostile-input tests break one field at a time.
onnx::ModelProto modelWithTensors();

}  // namespace onnx_rewrite::testing
