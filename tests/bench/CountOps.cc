//===- CountOps.cc - op types per domain of ONNX files, as JSON ----------===//
//
// count_ops FILE...
//
// Prints one JSON object per file and line: {"file": F, "nodes": N, "ops":
// {"DOMAIN::OP": count, ...}} counting the nodes of the main graph and of every
// subgraph (If/Loop/Scan bodies) and local function. The default domain is written
// "ai.onnx". tests/bench/run.sh counts the fused ops of onnx-rewrite's and ONNX
// Runtime's outputs with it; the file's weights (external or not) are never read.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <onnx/onnx_pb.h>

namespace {

using Counts = std::map<std::string, long long>;

void countGraph(const onnx::GraphProto& graph, Counts& counts, long long& nodes);

void countNode(const onnx::NodeProto& node, Counts& counts, long long& nodes) {
  ++nodes;
  const std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
  ++counts[domain + "::" + node.op_type()];
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g()) countGraph(a.g(), counts, nodes);
    for (const onnx::GraphProto& g : a.graphs()) countGraph(g, counts, nodes);
  }
}

void countGraph(const onnx::GraphProto& graph, Counts& counts, long long& nodes) {
  for (const onnx::NodeProto& node : graph.node()) countNode(node, counts, nodes);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

void countFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!in || !model.ParseFromString(bytes.str()))
    throw std::runtime_error(path + ": not an ONNX model");
  Counts counts;
  long long nodes = 0;
  countGraph(model.graph(), counts, nodes);
  for (const onnx::FunctionProto& f : model.functions())
    for (const onnx::NodeProto& node : f.node()) countNode(node, counts, nodes);
  std::string ops;
  for (const auto& [op, n] : counts)
    ops += (ops.empty() ? "" : ", ") + quoted(op) + ": " + std::to_string(n);
  std::printf("{\"file\": %s, \"nodes\": %lld, \"ops\": {%s}}\n", quoted(path).c_str(), nodes,
              ops.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: count_ops FILE...\n");
    return 2;
  }
  try {
    for (int i = 1; i < argc; ++i) countFile(argv[i]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "count_ops: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
