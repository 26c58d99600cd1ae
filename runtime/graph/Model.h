//===- Model.h - a ModelProto viewed as graphs ---------------------------===//
//
// A Model borrows a ModelProto: constructing it moves the nodes of the main
// graph, of every nested body and of every model-local function into Graph IR;
// finish() (or the destructor) moves them back, rewritten. Everything else stays
// in the proto, untouched, so what no rule changed is saved exactly as loaded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/NameTable.h"
#include "runtime/graph/TensorData.h"

namespace onnx_rewrite {

/// Facts about the model's inputs that the graph cannot state and the user supplies
/// (Options, CLI flags). Rules that need one read it through MatchContext::model and do
/// not fire while it is unknown.
struct ModelAssumptions {
  /// Every position id fed to the model is below this (the longest sequence it will
  /// see, past and present tokens together); 0 = unknown. Lets the rotary rules turn
  /// cos/sin computed per forward pass into constant [max_positions, d / 2] caches.
  int64_t max_positions = 0;
};

/// The IR of one model: its main graph, nested bodies and local functions.
class Model {
 public:
  /// Borrows `proto` until finish() or destruction. `base_dir` locates external data.
  /// Values defined more than once are read as ONNX Runtime reads them, or repaired
  /// where the reading is unambiguous (see DuplicateDefinitions.cc); a model without an
  /// ai.onnx import is read at kNewestOnnxOpset (Opsets.h); both say so in importNotes().
  /// Throws ModelError for a graph that cannot be represented (undefined inputs, cycles,
  /// values defined twice with an ambiguous reading); `proto` is then left exactly as it
  /// was.
  explicit Model(onnx::ModelProto& proto, std::string base_dir = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// Writes the graphs back into the proto. Idempotent; the Model is unusable after.
  void finish();

  /// What import assumed or repaired, one line each (Result::notes).
  std::vector<std::string> importNotes();
  /// True when import dropped or renamed definitions: finish() saves a repaired graph.
  bool repaired();

  Graph& mainGraph() { return *main_; }
  /// Every graph: main first, then nested bodies depth-first, then functions in file order.
  std::vector<Graph*> allGraphs();
  onnx::ModelProto& proto() { return proto_; }
  const std::string& baseDir() const { return base_dir_; }

  /// Reads the payload of initializer/constant `tensor` (see readTensor), counting
  /// external bytes read in externalBytesRead().
  TensorBytes readTensorData(const onnx::TensorProto& tensor, uint64_t max_bytes);
  uint64_t externalBytesRead() const { return external_bytes_read_; }

  /// What the user told us about the model's inputs (see ModelAssumptions).
  const ModelAssumptions& assumptions() const { return assumptions_; }
  void setAssumptions(const ModelAssumptions& assumptions) { assumptions_ = assumptions; }

 private:
  void importCreatedDomains();

  onnx::ModelProto& proto_;
  std::string base_dir_;
  NameTable names_;
  std::unique_ptr<Graph> main_;
  std::vector<std::unique_ptr<Graph>> functions_;
  uint64_t external_bytes_read_ = 0;
  ExternalFiles external_files_;  // kept open while rules read weights
  ModelAssumptions assumptions_;
  std::vector<std::string> notes_;
  bool finished_ = false;
};

}  // namespace onnx_rewrite
