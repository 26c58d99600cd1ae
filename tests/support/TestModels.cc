//===- TestModels.cc - building and inspecting test models ----------------===//
#include "tests/support/TestModels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/parser.h>

#include "runtime/match/GeneratedSupport.h"

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

std::string withAttributeParams(const std::string& text) {
  // The int64 initializers: "int64[2] split = {8, 8}" or "int64 i0 = {0}".
  std::map<std::string, std::string> ints;
  static const std::regex kInit(R"(int64(\[[0-9, ]*\])?\s+(\w+)\s*=\s*\{([^}]*)\})");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kInit);
       it != std::sregex_iterator(); ++it)
    ints[(*it)[2]] = (*it)[3];
  auto valuesOf = [&](const std::string& name) {
    auto found = ints.find(name);
    if (found == ints.end())
      throw std::invalid_argument("withAttributeParams: '" + name +
                                  "' is not an int64 initializer of the model");
    return "[" + found->second + "]";
  };
  // out = Op <attrs>? (data, param): the op's parameter input becomes an attribute.
  static const std::regex kCall(
      R"(^(\s*[\w, ]+=\s*)(Unsqueeze|Squeeze|Split|ReduceSum)\s*(<([^>]*)>)?\s*\((\w+),\s*(\w+)\)\s*$)");
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kCall)) {
      const std::string name = m[2] == "Split" ? "split" : "axes";
      std::string attrs = m[4].str();
      attrs += (attrs.empty() ? "" : ", ") + name + " = " + valuesOf(m[6]);
      line = m[1].str() + m[2].str() + " <" + attrs + "> (" + m[5].str() + ")";
    }
    out += line + "\n";
  }
  return out;
}

std::string sourcePath(const std::string& relative) {
  return std::string(ONNX_REWRITE_SOURCE_DIR) + "/" + relative;
}

onnx::ModelProto modelWithTensors() {
  return parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[2, 3] y)
    <float[2, 3] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}>
    {
      a = Add (x, w)
      c = Constant <value = float[3] {1.0, 2.0, 3.0}> ()
      y = Add (a, c)
    }
  )");
}

namespace {

/// The half of `f`, clamped first to float16's finite range (finfo.min masks stay finite).
uint16_t halfOf(float f) {
  return gen::floatToHalf(std::isfinite(f) ? std::clamp(f, -65504.0f, 65504.0f) : f);
}

void tensorToFloat16(onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::FLOAT) return;
  std::vector<float> values(t.float_data().begin(), t.float_data().end());
  if (t.has_raw_data()) {
    values.resize(t.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
  }
  t.clear_float_data();
  t.clear_raw_data();
  t.set_data_type(onnx::TensorProto::FLOAT16);
  for (float v : values) t.add_int32_data(halfOf(v));
}

void typeToFloat16(onnx::ValueInfoProto& v) {
  onnx::TypeProto_Tensor* t = v.mutable_type()->mutable_tensor_type();
  if (t->elem_type() == onnx::TensorProto::FLOAT) t->set_elem_type(onnx::TensorProto::FLOAT16);
}

}  // namespace

void toFloat16(onnx::ModelProto& model) {
  onnx::GraphProto& g = *model.mutable_graph();
  for (onnx::TensorProto& t : *g.mutable_initializer()) tensorToFloat16(t);
  for (onnx::ValueInfoProto& v : *g.mutable_input()) typeToFloat16(v);
  for (onnx::ValueInfoProto& v : *g.mutable_output()) typeToFloat16(v);
  for (onnx::ValueInfoProto& v : *g.mutable_value_info()) typeToFloat16(v);
  for (onnx::NodeProto& n : *g.mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_t()) tensorToFloat16(*a.mutable_t());
      if (n.op_type() == "Cast" && a.name() == "to" && a.i() == onnx::TensorProto::FLOAT)
        a.set_i(onnx::TensorProto::FLOAT16);
      if (n.op_type() == "Constant" && a.name() == "value_float") {
        const float v = a.f();
        a.Clear();
        a.set_name("value");
        a.set_type(onnx::AttributeProto::TENSOR);
        a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT16);
        a.mutable_t()->add_int32_data(halfOf(v));
      }
    }
  }
}

}  // namespace onnx_rewrite::testing
