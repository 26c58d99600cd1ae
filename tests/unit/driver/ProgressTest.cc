//===- ProgressTest.cc - a run tells where it is -------------------------===//
//
// Specifies what rewrite() reports to a ProgressSink: each phase as it starts, every
// round of shape inference, and, while rewriting, every kSweepReportEvery candidates,
// how far the sweep has come.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/Progress.h"
#include "runtime/driver/RuleSet.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::makeFusePairRule;
using testing::makeRenameRule;
using testing::parseModel;

OpId op(const char* type) { return OpId::get("", type); }

struct Sweep {
  int graph, graphs, iteration;
  uint64_t done, seeded, rewrites;
  bool operator==(const Sweep& o) const {
    return graph == o.graph && graphs == o.graphs && iteration == o.iteration && done == o.done &&
           seeded == o.seeded && rewrites == o.rewrites;
  }
};

class Recorder : public ProgressSink {
 public:
  void phase(std::string_view name) override { phases.emplace_back(name); }
  void sweep(int graph, int graphs, int iteration, uint64_t done, uint64_t seeded,
             uint64_t rewrites) override {
    sweeps.push_back({graph, graphs, iteration, done, seeded, rewrites});
  }
  std::vector<std::string> phases;
  std::vector<Sweep> sweeps;
};

TEST(Progress, ReportsEachPhaseAsItStarts) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Neg(x)
}
)");
  RuleSet rules;
  rules.add(makeRenameRule("neg_to_abs", op("Neg"), op("Abs"), 1));
  Recorder progress;
  Options options;
  options.progress = &progress;
  rewrite(model, rules, options);
  EXPECT_EQ(progress.phases,
            (std::vector<std::string>{"shape inference", "import", "rewrite", "export"}));
  EXPECT_TRUE(progress.sweeps.empty()) << "two candidates: no sweep report";
}

TEST(Progress, ReportsASweepEveryThousandCandidates) {
  // 3000 Negs in a chain, each a candidate of a rule that never applies: one sweep, with
  // reports at 1024 and 2048 candidates taken.
  std::string text =
      "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n";
  std::string last = "x";
  for (int i = 0; i < 3000; ++i) {
    const std::string next = i == 2999 ? "y" : "n" + std::to_string(i);
    text += "  " + next + " = Neg(" + last + ")\n";
    last = next;
  }
  text += "}\n";
  onnx::ModelProto model = parseModel(text);
  RuleSet rules;
  rules.add(makeFusePairRule("relu_neg", op("Neg"), op("Relu"), op("Sigmoid"), 1));
  Recorder progress;
  Options options;
  options.shape_inference = false;
  options.progress = &progress;
  Result result = rewrite(model, rules, options);
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(progress.sweeps,
            (std::vector<Sweep>{{1, 1, 1, 1024, 3000, 0}, {1, 1, 1, 2048, 3000, 0}}));
  EXPECT_EQ(progress.phases, (std::vector<std::string>{"import", "rewrite", "export"}));
}

}  // namespace
}  // namespace onnx_rewrite
