//===- Rewrite.cc - the library entry point -------------------------------===//
#include "runtime/api/Rewrite.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "runtime/builtin/BuiltinRules.h"
#include "runtime/graph/Model.h"
#include "runtime/io/FunctionInlining.h"
#include "runtime/io/ModelValidation.h"
#include "runtime/io/ShapeInference.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {

std::string Result::toJson() const {
  std::string out = stats.toJson();
  out.erase(out.find_last_not_of("}\n") + 1);  // reopen the object to append our fields
  out += ",\n  \"external_bytes_read\": " + std::to_string(external_bytes_read);
  out += ",\n  \"inference_rounds\": " + std::to_string(inference_rounds);
  out += ",\n  \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "") + jsonQuote(notes[i]);
  out += "]\n}";
  return out;
}

namespace {

bool lacksDims(const Graph& g, ValueId v) {
  const onnx::TensorShapeProto* shape = v == kNoId ? nullptr : valueShape(g, v);
  return shape && std::any_of(shape->dim().begin(), shape->dim().end(), isUnknownDim);
}

/// An older node reading a shaped new value whose own outputs have no shape (or lack dims
/// the new value, fully sized, may give): the inference before the rewrite could not see through
/// what the rewrite replaced (a Reshape to a computed shape, a causal cut of unknown length),
/// another round can.
bool readerLacksShape(const Graph& g, ValueId v) {
  if (!valueShape(g, v)) return false;
  const bool sized = !lacksDims(g, v);
  for (const Use& use : g.value(v).uses()) {
    const Node& reader = g.node(use.node);
    if (use.input == kSubgraphUse || !reader.createdBy().empty()) continue;
    for (ValueId out : reader.outputs())
      if (out != kNoId && (!valueShape(g, out) || (sized && lacksDims(g, out)))) return true;
  }
  return false;
}

/// True when a node some rule created writes a value whose inferred shape lacks a dim:
/// the inference before the fusion could not size it, and may once it knows the fused op.
/// Also true when an older node reads a shaped new value but has no shapes itself.
bool fusedOutputsLackShapes(Model& ir) {
  for (Graph* g : ir.allGraphs())
    for (NodeId id = 0; id < g->nodeCapacity(); ++id) {
      const Node& n = g->node(id);
      if (!n.live() || n.createdBy().empty()) continue;
      for (ValueId out : n.outputs()) {
        if (out == kNoId) continue;
        // What the node's own inference gave is not what another round would learn.
        if (g->value(out).typeInferredLocally() ? readerLacksShape(*g, out) : lacksDims(*g, out))
          return true;
      }
    }
  return false;
}

/// What inlining changes in a model, kept so that a model import then refuses is given
/// back as it was.
class InliningUndo {
 public:
  explicit InliningUndo(const onnx::ModelProto& model)
      : nodes_(model.graph().node()),
        functions_(model.functions()),
        opsets_(model.opset_import()) {}
  void restore(onnx::ModelProto& model) {
    model.mutable_graph()->mutable_node()->Swap(&nodes_);
    model.mutable_functions()->Swap(&functions_);
    model.mutable_opset_import()->Swap(&opsets_);
  }

 private:
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes_;
  google::protobuf::RepeatedPtrField<onnx::FunctionProto> functions_;
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> opsets_;
};

/// Inlines `model`'s local function calls and says so in `notes`; returns the undo, or
/// null when nothing was called.
std::unique_ptr<InliningUndo> inlineFunctions(onnx::ModelProto& model,
                                              std::vector<std::string>& notes) {
  if (!callsLocalFunctions(model)) return nullptr;
  auto undo = std::make_unique<InliningUndo>(model);
  const InliningReport report = inlineLocalFunctions(model);
  if (report.calls_inlined > 0) {
    std::string note =
        "inlined " + std::to_string(report.calls_inlined) + " call(s) of local functions";
    if (report.functions_removed > 0)
      note += "; " + std::to_string(report.functions_removed) +
              " function(s) no longer called were dropped";
    notes.push_back(note);
  }
  notes.insert(notes.end(), report.kept.begin(), report.kept.end());
  return undo;
}

/// Adds the counters of `round` to `total` (the same rules in the same order).
void accumulate(DriverStats& total, const DriverStats& round) {
  total.converged = round.converged;
  total.iterations += round.iterations;
  total.rewrites += round.rewrites;
  if (total.cap_hit.empty()) total.cap_hit = round.cap_hit;
  total.nodes_after = round.nodes_after;
  total.seconds += round.seconds;
  for (size_t i = 0; i < total.rules.size() && i < round.rules.size(); ++i) {
    total.rules[i].tried += round.rules[i].tried;
    total.rules[i].matched += round.rules[i].matched;
    total.rules[i].applied += round.rules[i].applied;
    total.rules[i].unsound += round.rules[i].unsound;
    total.rules[i].seconds += round.rules[i].seconds;
  }
}

}  // namespace

Result rewrite(onnx::ModelProto& model, const RuleSet& rules, const Options& options) {
  if (options.max_positions < 0)
    throw std::invalid_argument("max_positions must be >= 0 (0: unknown), not " +
                                std::to_string(options.max_positions));
  if (options.max_inference_rounds < 1)
    throw std::invalid_argument("max_inference_rounds must be >= 1, not " +
                                std::to_string(options.max_inference_rounds));
  // Before shape inference (ONNX code that trusts tensors) or import see the model.
  validateModel(model);
  Result result;
  std::unique_ptr<InliningUndo> inlining;
  if (options.inline_functions) inlining = inlineFunctions(model, result.notes);
  if (inlining) try {
      // A body may hold If/Loop bodies: the call site's nesting adds to theirs.
      validateModel(model);
    } catch (...) {
      inlining->restore(model);
      throw;
    }
  if (const int forgotten = nameNegativeDims(model))
    result.notes.push_back(
        std::to_string(forgotten) +
        " declared dim(s) below 0 (exporters' -1 for any size) named onnx_rewrite_any_dim_N");
  std::vector<const RewritePattern*> selected = selectRules(rules, options.filter);
  int64_t budget = options.max_rewrites;
  for (int round = 0;; ++round) {
    auto phase = [&](const char* name) {
      if (!options.progress) return;
      options.progress->phase(round == 0 ? std::string(name)
                                         : std::string(name) + " (round " +
                                               std::to_string(round + 1) + ")");
    };
    std::unique_ptr<InferredShapes> shapes;
    auto infer = [&] {
      if (!options.shape_inference) return;
      phase("shape inference");
      shapes = std::make_unique<InferredShapes>(model, /*forget_unknown_dims=*/round > 0);
    };
    infer();
    bool again = false;
    // Outside the try: on an error, inferred types are undone while the IR still holds
    // the value_info they point into (its destructor exports, and deletes, value_info).
    std::unique_ptr<Model> model_ir;
    try {
      phase("import");
      model_ir = std::make_unique<Model>(model, options.base_dir);
      if (round == 0) {
        const std::vector<std::string> notes = model_ir->importNotes();
        result.notes.insert(result.notes.end(), notes.begin(), notes.end());
        if (shapes && model_ir->repaired()) {
          // Inference read the values defined twice before import chose between them:
          // save the repaired graph and infer again.
          shapes->undo();
          model_ir->finish();
          model_ir.reset();
          infer();
          model_ir = std::make_unique<Model>(model, options.base_dir);
        }
        if (shapes && !shapes->note().empty()) result.notes.push_back(shapes->note());
      }
      Model& ir = *model_ir;
      ModelAssumptions assumptions;
      assumptions.max_positions = options.max_positions;
      ir.setAssumptions(assumptions);
      DriverConfig config;
      config.max_iterations = options.max_iterations;
      // One budget for the whole run, every round of inference included: the default one
      // is sized by the model as loaded, which the first round's driver counts.
      config.default_budget = options.max_rewrites == DriverConfig::kProportional;
      config.max_rewrites =
          budget == DriverConfig::kNoLimit || budget == DriverConfig::kProportional
              ? budget
              : budget - static_cast<int64_t>(result.stats.rewrites);
      config.listener = options.listener;
      config.verify_rewrites = options.verify_rewrites;
      config.time_rules = options.time_rules;
      config.progress = options.progress;
      phase("rewrite");
      const DriverStats stats = runDriver(ir, selected, config);
      if (budget == DriverConfig::kProportional)
        budget = proportionalRewriteBudget(stats.nodes_before);
      if (round == 0)
        result.stats = stats;
      else
        accumulate(result.stats, stats);
      result.external_bytes_read += ir.externalBytesRead();
      again = shapes && shapes->ran() && stats.rewrites > 0 && stats.cap_hit.empty() &&
              round + 1 < options.max_inference_rounds && fusedOutputsLackShapes(ir);
      // Inferred types are undone while the IR still holds the nodes, then the nodes go back.
      phase("export");
      if (shapes) shapes->undo();
      ir.finish();
    } catch (...) {
      if (shapes) shapes->undo();
      if (round == 0 && inlining) inlining->restore(model);
      throw;
    }
    result.inference_rounds = round + 1;
    if (!again) break;
  }
  if (!result.stats.cap_hit.empty()) result.notes.push_back(result.stats.cap_hit);
  return result;
}

Result rewrite(onnx::ModelProto& model, const Options& options) {
  static const RuleSet rules = builtinRules();
  return rewrite(model, rules, options);
}

}  // namespace onnx_rewrite
