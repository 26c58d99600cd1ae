//===- Rewrite.cc - the library entry point -------------------------------===//
#include "runtime/api/Rewrite.h"

#include <stdexcept>
#include <string>

#include "runtime/builtin/BuiltinRules.h"
#include "runtime/graph/Model.h"
#include "runtime/io/ShapeInference.h"

namespace onnx_rewrite {

std::string Result::toJson() const {
  std::string out = stats.toJson();
  out.erase(out.find_last_not_of("}\n") + 1);  // reopen the object to append our fields
  out += ",\n  \"external_bytes_read\": " + std::to_string(external_bytes_read);
  out += ",\n  \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "") + jsonQuote(notes[i]);
  out += "]\n}";
  return out;
}

Result rewrite(onnx::ModelProto& model, const RuleSet& rules, const Options& options) {
  if (options.max_positions < 0)
    throw std::invalid_argument("max_positions must be >= 0 (0: unknown), not " +
                                std::to_string(options.max_positions));
  Result result;
  std::vector<const RewritePattern*> selected = selectRules(rules, options.filter);
  std::unique_ptr<InferredShapes> shapes;
  if (options.shape_inference) {
    shapes = std::make_unique<InferredShapes>(model);
    if (!shapes->note().empty()) result.notes.push_back(shapes->note());
  }
  try {
    Model ir(model, options.base_dir);
    ModelAssumptions assumptions;
    assumptions.max_positions = options.max_positions;
    ir.setAssumptions(assumptions);
    DriverConfig config;
    config.max_iterations = options.max_iterations;
    config.max_rewrites = options.max_rewrites;
    config.listener = options.listener;
    result.stats = runDriver(ir, selected, config);
    result.external_bytes_read = ir.externalBytesRead();
    // Inferred types are undone while the IR still holds the nodes, then the nodes go back.
    if (shapes) shapes->undo();
    ir.finish();
  } catch (...) {
    if (shapes) shapes->undo();
    throw;
  }
  if (!result.stats.cap_hit.empty()) result.notes.push_back(result.stats.cap_hit);
  return result;
}

Result rewrite(onnx::ModelProto& model, const Options& options) {
  static const RuleSet rules = builtinRules();
  return rewrite(model, rules, options);
}

}  // namespace onnx_rewrite
