//===- FunctionModels.cc - models as dynamo exports with local functions ---===//
#include "tests/support/FunctionModels.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace onnx_rewrite::testing {
namespace {

constexpr const char* kTorchLib = "pkg.onnxscript.torch_lib";
constexpr const char* kModules = "pkg.torch.modules";

/// The one-node function a node of `n`'s op, arity and attribute names calls.
onnx::FunctionProto opFunction(const onnx::NodeProto& n, const std::string& name,
                               const onnx::ModelProto& model) {
  onnx::FunctionProto f;
  f.set_name(name);
  f.set_domain(kTorchLib);
  *f.mutable_opset_import() = model.opset_import();
  onnx::NodeProto& body = *f.add_node();
  body.set_op_type(n.op_type());
  body.set_domain(n.domain());
  for (int i = 0; i < n.input_size(); ++i) {
    f.add_input("self_" + std::to_string(i));
    body.add_input(f.input(i));
  }
  for (int i = 0; i < n.output_size(); ++i) {
    f.add_output("result_" + std::to_string(i));
    body.add_output(f.output(i));
  }
  for (const onnx::AttributeProto& a : n.attribute()) {
    f.add_attribute(a.name());
    onnx::AttributeProto& ref = *body.add_attribute();
    ref.set_name(a.name());
    ref.set_type(a.type());
    ref.set_ref_attr_name(a.name());
  }
  return f;
}

bool hasGraphAttribute(const onnx::NodeProto& n) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.has_g() || a.graphs_size(); });
}

}  // namespace

onnx::ModelProto withLocalFunctions(const onnx::ModelProto& model) {
  onnx::ModelProto out = model;
  onnx::GraphProto& g = *out.mutable_graph();
  g.clear_value_info();
  for (const char* domain : {kTorchLib, kModules}) {
    onnx::OperatorSetIdProto& o = *out.add_opset_import();
    o.set_domain(domain);
    o.set_version(1);
  }
  onnx::FunctionProto module;
  module.set_name("Model");
  module.set_domain(kModules);
  *module.mutable_opset_import() = out.opset_import();
  for (const auto& v : g.input()) module.add_input(v.name());
  for (const auto& t : g.initializer()) module.add_input(t.name());
  for (const auto& v : g.output()) module.add_output(v.name());

  std::map<std::string, std::string> function_of;  // op signature -> function name
  std::vector<onnx::FunctionProto> op_functions;
  for (const onnx::NodeProto& n : g.node()) {
    if (hasGraphAttribute(n)) {
      *module.add_node() = n;
      continue;
    }
    std::string signature = n.domain() + "::" + n.op_type() + "/" + std::to_string(n.input_size()) +
                            "/" + std::to_string(n.output_size());
    for (const onnx::AttributeProto& a : n.attribute()) signature += "/" + a.name();
    auto [it, fresh] = function_of.try_emplace(
        signature, "aten_" + n.op_type() + "_" + std::to_string(function_of.size()));
    if (fresh) op_functions.push_back(opFunction(n, it->second, out));
    onnx::NodeProto& call = *module.add_node();
    call.set_name(n.name());
    call.set_op_type(it->second);
    call.set_domain(kTorchLib);
    *call.mutable_input() = n.input();
    *call.mutable_output() = n.output();
    *call.mutable_attribute() = n.attribute();
  }

  g.clear_node();
  onnx::NodeProto& call = *g.add_node();
  call.set_name("model");
  call.set_op_type("Model");
  call.set_domain(kModules);
  *call.mutable_input() = module.input();
  *call.mutable_output() = module.output();
  *out.add_functions() = std::move(module);
  for (onnx::FunctionProto& f : op_functions) *out.add_functions() = std::move(f);
  return out;
}

}  // namespace onnx_rewrite::testing
