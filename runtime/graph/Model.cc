//===- Model.cc - a ModelProto viewed as graphs --------------------------===//
#include "runtime/graph/Model.h"

#include "runtime/graph/ModelError.h"
#include "runtime/graph/Opsets.h"

namespace onnx_rewrite {
namespace {

std::vector<std::pair<std::string, int64_t>> opsetsOf(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  std::vector<std::pair<std::string, int64_t>> result;
  for (const onnx::OperatorSetIdProto& o : imports) result.emplace_back(o.domain(), o.version());
  return result;
}

void collect(Graph& g, std::vector<Graph*>& out) {
  out.push_back(&g);
  for (NodeId id = 0; id < g.nodeCapacity(); ++id)
    if (g.node(id).live())
      for (const auto& body : g.node(id).subgraphs()) collect(*body, out);
}

}  // namespace

Model::Model(onnx::ModelProto& proto, std::string base_dir)
    : proto_(proto), base_dir_(std::move(base_dir)) {
  if (!proto_.has_graph()) throw ModelError("the model has no graph");
  auto model_opsets = opsetsOf(proto_.opset_import());
  int64_t onnx_opset = onnxOpsetVersion(proto_.opset_import());
  if (onnx_opset < 0) {
    onnx_opset = kNewestOnnxOpset;
    model_opsets.emplace_back("", onnx_opset);
    notes_.push_back(missingOnnxOpsetNote());
  }
  main_ = std::make_unique<Graph>(Graph::Kind::kMain, names_, nullptr, kNoId);
  main_->setOpsets(model_opsets);
  main_->setInitializerInputsAreConstant(initializerInputsAreConstant(proto_));
  try {
    main_->importFrom(*proto_.mutable_graph());
    for (onnx::FunctionProto& f : *proto_.mutable_functions()) {
      functions_.push_back(std::make_unique<Graph>(Graph::Kind::kFunction, names_, nullptr, kNoId));
      // A function without its own imports uses the model's; one without ai.onnx, the
      // model's ai.onnx.
      auto opsets = f.opset_import_size() > 0 ? opsetsOf(f.opset_import()) : model_opsets;
      if (onnxOpsetVersion(f.opset_import()) < 0 && f.opset_import_size() > 0)
        opsets.emplace_back("", onnx_opset);
      functions_.back()->setOpsets(std::move(opsets));
      functions_.back()->importFrom(f);
    }
  } catch (...) {
    main_->abandonImport();
    for (auto& f : functions_) f->abandonImport();
    finished_ = true;
    throw;
  }
}

Model::~Model() {
  // A destructor must not throw; finish() can only fail on a cyclic graph, which import
  // already rejected, so this is a safety net for early exits.
  try {
    finish();
  } catch (...) {
  }
}

void Model::importCreatedDomains() {
  // A rule may emit ops of a domain the model does not import yet (com.microsoft); ONNX
  // Runtime refuses such a model, so the import is added (version 1, the only one of the
  // contrib domains). Functions with their own imports get it there too.
  auto ensure = [](google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                   const std::string& domain) {
    for (const onnx::OperatorSetIdProto& o : imports)
      if (canonicalDomain(o.domain()) == canonicalDomain(domain)) return;
    onnx::OperatorSetIdProto* added = imports.Add();
    added->set_domain(domain);
    added->set_version(1);
  };
  auto scan = [&](Graph& g, google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    for (NodeId id = 0; id < g.nodeCapacity(); ++id) {
      const Node& n = g.node(id);
      if (n.live() && !n.createdBy().empty() && !canonicalDomain(n.domain()).empty())
        ensure(imports, n.domain());
    }
  };
  std::vector<Graph*> graphs;
  collect(*main_, graphs);
  for (Graph* g : graphs) scan(*g, *proto_.mutable_opset_import());
  for (size_t i = 0; i < functions_.size(); ++i) {
    onnx::FunctionProto& f = *proto_.mutable_functions(static_cast<int>(i));
    graphs.clear();
    collect(*functions_[i], graphs);
    for (Graph* g : graphs) {
      scan(*g, *proto_.mutable_opset_import());
      if (f.opset_import_size() > 0) scan(*g, *f.mutable_opset_import());
    }
  }
}

void Model::finish() {
  if (finished_) return;
  finished_ = true;
  importCreatedDomains();
  main_->exportBack();
  for (auto& f : functions_) f->exportBack();
}

std::vector<std::string> Model::importNotes() {
  std::vector<std::string> notes = notes_;
  for (Graph* g : allGraphs())
    notes.insert(notes.end(), g->importNotes().begin(), g->importNotes().end());
  return notes;
}

bool Model::repaired() {
  for (Graph* g : allGraphs())
    if (g->repaired()) return true;
  return false;
}

std::vector<Graph*> Model::allGraphs() {
  std::vector<Graph*> result;
  collect(*main_, result);
  for (auto& f : functions_) collect(*f, result);
  return result;
}

TensorBytes Model::readTensorData(const onnx::TensorProto& tensor, uint64_t max_bytes) {
  return readTensor(tensor, base_dir_, max_bytes, &external_bytes_read_, &external_files_);
}

}  // namespace onnx_rewrite
