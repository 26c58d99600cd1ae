//===- main.cc - an exporter that links the installed onnx_rewrite --------===//
//
// What an exporter author does: build a ModelProto (here by hand, with ONNX's
// protobuf API), add its own compiled rule (rules/quick_gelu.td, turned into C++
// by the installed rulec at build time) beside the shipped rules, and rewrite.
//
// The model has three x * Sigmoid(...) products: two of x * Sigmoid(x), in both
// operand orders, which the rule fuses into com.microsoft QuickGelu(alpha = 1),
// and one x * Sigmoid(w), which it must leave alone. Exit status 0 when exactly
// that happened, 1 otherwise (with the reason on stderr). With an argument, the
// rewritten model is also saved there.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

// Ours: populateQuickGelu (rules/quick_gelu.td).
#include "generated/registry.gen.h"
#include "runtime/api/Rewrite.h"
#include "runtime/builtin/BuiltinRules.h"
#include "runtime/io/ModelFile.h"

namespace {

void addInput(onnx::GraphProto& graph, const std::string& name) {
  onnx::ValueInfoProto* v = graph.add_input();
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  t->mutable_shape()->add_dim()->set_dim_value(8);
}

void addOutput(onnx::GraphProto& graph, const std::string& name) {
  onnx::ValueInfoProto* v = graph.add_output();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

void addNode(onnx::GraphProto& graph, const std::string& op, std::initializer_list<const char*> in,
             const std::string& out) {
  onnx::NodeProto* n = graph.add_node();
  n->set_op_type(op);
  n->set_name(out + "_node");
  for (const char* i : in) n->add_input(i);
  n->add_output(out);
}

/// y1 = x * Sigmoid(x); y2 = Sigmoid(x) * x; y3 = x * Sigmoid(w) (not a SiLU).
onnx::ModelProto buildModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("onnx_rewrite_install_example");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("silu");
  addInput(graph, "x");
  addInput(graph, "w");
  addNode(graph, "Sigmoid", {"x"}, "s1");
  addNode(graph, "Mul", {"x", "s1"}, "y1");
  addNode(graph, "Sigmoid", {"x"}, "s2");
  addNode(graph, "Mul", {"s2", "x"}, "y2");
  addNode(graph, "Sigmoid", {"w"}, "s3");
  addNode(graph, "Mul", {"x", "s3"}, "y3");
  for (const char* y : {"y1", "y2", "y3"}) addOutput(graph, y);
  return model;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "install example: FAILED: %s\n", why.c_str());
  return 1;
}

int run(int argc, char** argv) {
  onnx::ModelProto model = buildModel();

  // The rules onnx-rewrite runs (the shipped rules/, compiled into the library), plus ours,
  // compiled by the installed rulec.
  onnx_rewrite::RuleSet rules = onnx_rewrite::builtinRules();
  const size_t builtin = rules.size();
  onnx_rewrite::populateQuickGelu(rules);
  if (rules.find("example_silu_quick_gelu") == nullptr)
    return fail("populateQuickGelu did not add example_silu_quick_gelu");

  onnx_rewrite::Result result = onnx_rewrite::rewrite(model, rules);
  std::printf("%zu built-in rule(s) + %zu compiled example rule(s)\n%s\n", builtin,
              rules.size() - builtin, result.toJson().c_str());

  // Count the ops left, and check each QuickGelu.
  std::map<std::string, int> ops;
  for (const onnx::NodeProto& n : model.graph().node()) {
    ++ops[(n.domain().empty() ? "" : n.domain() + ".") + n.op_type()];
    if (n.op_type() != "QuickGelu") continue;
    if (n.domain() != "com.microsoft") return fail("QuickGelu outside com.microsoft");
    if (n.input_size() != 1 || n.input(0) != "x") return fail("QuickGelu does not read x");
    bool alpha_one = false;
    for (const onnx::AttributeProto& a : n.attribute())
      alpha_one |= a.name() == "alpha" && a.type() == onnx::AttributeProto::FLOAT && a.f() == 1.0f;
    if (!alpha_one) return fail("QuickGelu " + n.output(0) + " lacks alpha = 1");
  }
  for (const auto& [op, count] : ops) std::printf("  %-26s %d\n", op.c_str(), count);
  if (ops["com.microsoft.QuickGelu"] != 2) return fail("expected 2 QuickGelu nodes");
  if (ops["Mul"] != 1 || ops["Sigmoid"] != 1)
    return fail("expected x * Sigmoid(w) to stay (1 Mul, 1 Sigmoid)");
  bool imports_ms = false;
  for (const onnx::OperatorSetIdProto& o : model.opset_import())
    imports_ms |= o.domain() == "com.microsoft";
  if (!imports_ms) return fail("the model does not import com.microsoft");
  for (const onnx_rewrite::RuleStats& r : result.stats.rules)
    if (r.name == "example_silu_quick_gelu" && r.applied != 2)
      return fail("the statistics report " + std::to_string(r.applied) + " rewrites, not 2");

  if (argc > 1) onnx_rewrite::saveModelFile(model, argv[1], ".");
  std::printf("install example: OK (x * Sigmoid(x) fused twice into com.microsoft QuickGelu)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
