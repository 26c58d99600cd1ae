//===- OracleTest.cc - rewritten models compute what the originals did ----===//
//
// Every positive model of the built-in rules runs in ONNX Runtime (through
// tests/oracle/compare.js) before and after the rewrite on the same seeded
// random inputs. A deliberately wrong rewrite proves the oracle can say no.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/RuleSet.h"
#include "tests/support/GeluModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::compareInOrt;
using testing::GeluForm;
using testing::geluModel;
using testing::parseModel;

/// Rewrites `text` with the built-in rules, expects `rewrites` rewrites and equal outputs.
void expectFusedAndEqual(const std::string& text, uint64_t rewrites,
                         const std::vector<std::string>& dims = {"N=3"}) {
  onnx::ModelProto before = parseModel(text);
  onnx::ModelProto after = before;
  Result result = rewrite(after);
  ASSERT_EQ(result.stats.rewrites, rewrites);
  auto verdict = compareInOrt(before, after, dims);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(Oracle, GeluTorchScriptFormIsExact) {
  expectFusedAndEqual(geluModel(GeluForm::kTorchScript), 1);
}
TEST(Oracle, GeluHuggingFaceFormIsExact) {
  expectFusedAndEqual(geluModel(GeluForm::kHuggingFace), 1);
}
TEST(Oracle, GeluHalfFirstFormIsExact) { expectFusedAndEqual(geluModel(GeluForm::kHalfFirst), 1); }
TEST(Oracle, GeluReciprocalScaleFormIsExact) {
  expectFusedAndEqual(geluModel(GeluForm::kReciprocalScale), 1);
}
TEST(Oracle, OnnxGeluAtOpset20IsExact) {
  expectFusedAndEqual(geluModel(GeluForm::kTorchScript, 20), 1);
}
TEST(Oracle, BiasGeluIsExact) {
  expectFusedAndEqual(geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4142135", true), 2);
}

TEST(Oracle, GeluInsideAnIfBranchIsExact) {
  expectFusedAndEqual(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[N, 4] x) => (float[N, 4] y)
  <float half = {0.5}, float one = {1.0}, float sqrt2 = {1.4142135}> {
  y = If(cond) <then_branch = then_g () => (float[N, 4] a) {
                  s = Div(x, sqrt2)
                  e = Erf(s)
                  p = Add(e, one)
                  m = Mul(x, p)
                  a = Mul(m, half)
                },
                else_branch = else_g () => (float[N, 4] b) { b = Neg(x) }>
}
)",
                      1);
}

TEST(Oracle, SaysNoToAWrongRewrite) {
  onnx::ModelProto before = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) }
)");
  onnx::ModelProto after = before;
  RuleSet wrong;
  wrong.add(
      testing::makeRenameRule("relu_to_sigmoid", OpId::get("", "Relu"), OpId::get("", "Sigmoid")));
  rewrite(after, wrong);
  auto verdict = compareInOrt(before, after, {"N=3"});
  EXPECT_FALSE(verdict.equal) << verdict.report;
  EXPECT_NE(verdict.report.find("output y"), std::string::npos) << verdict.report;
}

}  // namespace
}  // namespace onnx_rewrite
