//===- TestModels.cc - building and inspecting test models ----------------===//
#include "tests/support/TestModels.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/parser.h>

namespace onnx_rewrite::testing {

onnx::ModelProto parseModel(const std::string& text) {
  onnx::ModelProto model;
  onnx::OnnxParser parser(text.c_str());
  auto status = parser.Parse(model);
  if (!status.IsOK())
    throw std::runtime_error("test model does not parse: " + status.ErrorMessage());
  if (!parser.EndOfInput()) throw std::runtime_error("test model has trailing text");
  return model;
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  model.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

std::vector<std::string> opTypes(const onnx::GraphProto& graph) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : graph.node())
    ops.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                : n.domain() + "::" + n.op_type());
  return ops;
}

std::vector<std::string> opTypes(const onnx::ModelProto& model) { return opTypes(model.graph()); }

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

void writeModel(const std::string& path, const onnx::ModelProto& model) {
  writeFile(path, serialize(model));
}

std::string sourcePath(const std::string& relative) {
  return std::string(ONNX_REWRITE_SOURCE_DIR) + "/" + relative;
}

}  // namespace onnx_rewrite::testing
