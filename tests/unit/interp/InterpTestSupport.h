//===- InterpTestSupport.h - running hand-built rules on text models -----===//
#pragma once

#include <string>
#include <vector>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"
#include "runtime/interp/RuleInterpreter.h"
#include "tests/support/TestModels.h"
#include "tests/unit/interp/RuleBuilder.h"

namespace onnx_rewrite::interp_test {

/// Records every match failure's reason, as explain mode will.
class FailureLog : public RewriteListener {
 public:
  bool wantsMatchFailures() const override { return true; }
  void onMatchFailure(const RewritePattern& rule, Graph& g, NodeId root,
                      const std::string& reason) override {
    reasons.push_back(reason);
    roots.push_back(g.value(g.node(root).output(0)).name());
  }
  std::vector<std::string> reasons;
  /// The first output of each failed attempt's root node.
  std::vector<std::string> roots;
};

/// A model after the rules ran, with what the driver and the listener saw.
struct Outcome {
  onnx::ModelProto model;
  Result result;
  FailureLog log;

  std::vector<std::string> ops() const { return testing::opTypes(model); }
  uint64_t rewrites() const { return result.stats.rewrites; }
  /// The first failure reason, or "" if none.
  std::string reason() const { return log.reasons.empty() ? "" : log.reasons.front(); }
  /// The first failure reason of an attempt rooted at the node computing `output`.
  std::string reasonFor(const std::string& output) const {
    for (size_t i = 0; i < log.roots.size(); ++i)
      if (log.roots[i] == output) return log.reasons[i];
    return "";
  }
  /// The main graph's node that computes `output`, or null.
  const onnx::NodeProto* producer(const std::string& output) const {
    for (const onnx::NodeProto& n : model.graph().node())
      for (const std::string& o : n.output())
        if (o == output) return &n;
    return nullptr;
  }
  /// Node `i` of the main graph.
  const onnx::NodeProto& node(int i) const { return model.graph().node(i); }
};

/// Runs the interpreted `rules` on the model in ONNX text `text`.
inline Outcome runRules(const std::string& text, const std::vector<const Rule*>& rules,
                        bool shape_inference = true, bool inline_functions = true) {
  Outcome out;
  out.model = testing::parseModel(text);
  RuleSet set;
  for (const Rule* r : rules)
    for (auto& p : makeInterpretedRules(r->build())) set.add(std::move(p));
  Options options;
  options.shape_inference = shape_inference;
  options.inline_functions = inline_functions;
  options.listener = &out.log;
  out.result = rewrite(out.model, set, options);
  return out;
}

inline Outcome runRules(const std::string& text, const Rule& rule, bool shape_inference = true,
                        bool inline_functions = true) {
  return runRules(text, std::vector<const Rule*>{&rule}, shape_inference, inline_functions);
}

using testing::attribute;

}  // namespace onnx_rewrite::interp_test
