//===- CanonicalizeRulesTest.cc - the no-op and layout canonicalizations --===//
//
// rules/canonicalize.yaml: what runs first so that fusion rules never see an exporter's
// incidental ops. The rules with one-line matches are tested as data instead
// (tests/rules/canonicalize.test.yaml); the ones below need model builders. Each rule has
// models of the forms exporters emit, the op list it leaves, ONNX Runtime confirming equal
// outputs, and negatives that change one thing each.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/Oracle.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using Ops = std::vector<std::string>;

/// A model `name` (inputs) => (outputs) of `body`, importing ONNX at `opset`.
std::string model(const std::string& signature, const std::string& body, int opset = 13,
                  const std::string& inits = "") {
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng " + signature +
         "\n" + (inits.empty() ? "" : "<" + inits + ">\n") + "{\n" + body + "}\n";
}

// identity, cast_to_same_type, dropout_in_inference, add_zero and transpose_pair are tested
// as data: tests/rules/canonicalize.test.yaml (onnx-rewrite test, ctest rule_tests_as_data).

// ---- gemm_of_flattened_rows, reshape_to_own_shape -------------------------------------------

const char* kBias = "float[6] b = {0.5, 1, 2, 3, 4, 5}";

/// torch 1.x's Conv1D on x [B, S, 8] (GPT-2): addmm(b, x.view(-1, x.size(-1)), w), viewed
/// back to [B, S, 6] with B, S read at run time. The arguments vary one thing each.
std::string conv1dModel(const std::string& gemm_attrs = "", const std::string& bias = kBias,
                        bool last_dim_at_run_time = true,
                        const std::string& x_type = "float[B, S, 8]") {
  std::string body = "xs = Shape(x)\n";
  if (last_dim_at_run_time)
    body +=
        "l1 = Slice(xs, neg1, big, zero)\nl2 = Squeeze(l1, zero)\nl3 = Unsqueeze(l2, zero)\n"
        "flat = Concat <axis = 0> (neg1, l3)\n";
  else
    body += "flat = Identity(flat_const)\n";
  body += "x2 = Reshape(x, flat)\ng = Gemm " + gemm_attrs + " (x2, w, b)\n";
  body +=
      "d0 = Gather <axis = 0> (xs, i0)\nd1 = Gather <axis = 0> (xs, i1)\n"
      "u0 = Unsqueeze(d0, zero)\nu1 = Unsqueeze(d1, zero)\n"
      "back = Concat <axis = 0> (u0, u1, six)\ny = Reshape(g, back)\n";
  std::string w;
  for (int i = 0; i < 48; ++i) w += (i ? ", " : "") + std::to_string((i % 7 - 3) / 8.0);
  return model("(" + x_type + " x) => (float[B, S, 6] y)", body, 13,
               "float[8, 6] w = {" + w + "}, " + bias +
                   ", int64[1] neg1 = {-1}, int64[1] big = {9223372036854775807}, "
                   "int64[1] zero = {0}, int64 i0 = {0}, int64 i1 = {1}, int64[1] six = {6}, "
                   "int64[2] flat_const = {-1, 8}");
}

TEST(GemmOfFlattenedRowsRule, FusesTorchConv1dIntoMatMulAndAdd) {
  // The Reshape back goes too: reshape_to_own_shape proves [B, S, 6] is the Add's shape.
  const std::string text = conv1dModel();
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Add"}));
  expectSameInOrt(text);
}

TEST(GemmOfFlattenedRowsRule, FusesAFlattenToAConstantShapeWhenXsLastDimIsKnown) {
  const std::string text = conv1dModel("", kBias, /*last_dim_at_run_time=*/false);
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Add"}));
  expectSameInOrt(text);
}

TEST(GemmOfFlattenedRowsRule, FusesAScalarBias) {
  const std::string text = conv1dModel("", "float b = {0.5}");
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Add"}));
  expectSameInOrt(text);
}

TEST(GemmOfFlattenedRowsRule, KeepsTheReshapeBackWhenItCannotProveTheShape) {
  // x's dims are unnamed: the Reshape back stays, the Gemm still becomes MatMul + Add.
  const std::string text = conv1dModel("", kBias, true, "float[?, ?, 8]");
  onnx::ModelProto after;
  const Ops ops = fuse(text, &after);
  EXPECT_EQ(ops.back(), "Reshape");
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Gemm"), 0);
  // The output [B, S, 6] names dims the input does not: the run fixes both.
  const testing::OracleVerdict verdict =
      testing::compareInOrt(testing::parseModel(text), after, {"B=2", "S=3"}, "--shape x=2,3,8");
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

TEST(GemmOfFlattenedRowsRule, DoesNotFuseATransposedWeight) {
  expectUnchanged(conv1dModel("<transB = 1>"), "gemm_of_flattened_rows");
}

TEST(GemmOfFlattenedRowsRule, DoesNotFuseAnAlphaOtherThanOne) {
  expectUnchanged(conv1dModel("<alpha = 0.5>"), "gemm_of_flattened_rows");
}

TEST(GemmOfFlattenedRowsRule, DoesNotFuseABiasWithRows) {
  // C [2, 6] broadcasts over the flattened rows, not over x's.
  expectUnchanged(conv1dModel("", "float[2, 6] b = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}", true,
                              "float[1, 2, 8]"),
                  "gemm_of_flattened_rows");
}

TEST(GemmOfFlattenedRowsRule, DoesNotFuseAFlattenOfUnknownRowLength) {
  // [-1, 8] of an x whose last dim is unknown may cut across x's rows.
  expectUnchanged(conv1dModel("", kBias, false, "float[B, S, ?]"), "gemm_of_flattened_rows");
}

TEST(ReshapeToOwnShapeRule, RemovesAReshapeToZerosAndMinusOne) {
  const std::string text =
      model("(float[B, S, 8] x) => (float[B, S, 8] y)",
            "a = Relu(x)\nr = Reshape(a, s)\ny = Neg(r)\n", 13, "int64[3] s = {0, 0, -1}");
  EXPECT_EQ(fuse(text), (Ops{"Relu", "Neg"}));
  expectSameInOrt(text);
}

TEST(ReshapeToOwnShapeRule, KeepsAReshapeThatMovesElements) {
  expectUnchanged(model("(float[B, 4, 8] x) => (float[B, 8, 4] y)",
                        "a = Relu(x)\nr = Reshape(a, s)\ny = Neg(r)\n", 13,
                        "int64[3] s = {0, 8, 4}"));
}

TEST(ReshapeToOwnShapeRule, KeepsAReshapeWithTwoDimsLeftOpen) {
  // [0, -1, 2] on [B, S, 8]... is not the identity; neither proven dim forces the others.
  expectUnchanged(model("(float[B, S, 8] x) => (float[B, ?, 2] y)",
                        "a = Relu(x)\nr = Reshape(a, s)\ny = Neg(r)\n", 13,
                        "int64[3] s = {0, -1, 2}"));
}

/// transformers 4.x's Conv1D shape x.size()[:-1] + (nf,): Concat(Slice(Shape(x), start,
/// end), [6]) as the Reshape back after a projection of x [B, S, 8] to 6 columns.
std::string sizeSliceModel(const std::string& start, const std::string& end,
                           const std::string& out = "float[B, S, 6]") {
  std::string w;
  for (int i = 0; i < 48; ++i) w += (i ? ", " : "") + std::to_string((i % 5 - 2) / 4.0);
  return model("(float[B, S, 8] x) => (" + out + " y)",
               "p = MatMul(x, w)\nxs = Shape(x)\nlead = Slice(xs, st, en, zero)\n"
               "s = Concat <axis = 0> (lead, six)\nr = Reshape(p, s)\ny = Neg(r)\n",
               13,
               "float[8, 6] w = {" + w + "}, int64[1] st = {" + start + "}, int64[1] en = {" + end +
                   "}, int64[1] zero = {0}, int64[1] six = {6}");
}

TEST(ReshapeToOwnShapeRule, RemovesAReshapeToLeadingDimsSlicedFromAShape) {
  // x.size()[:-1] + (6,) of p = x @ w: p's own shape, its first dims read together.
  const std::string text = sizeSliceModel("0", "-1");
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Neg"}));
  expectSameInOrt(text);
}

TEST(ReshapeToOwnShapeRule, KeepsAReshapeToDimsSlicedFromTheWrongPlace) {
  // x.size()[1:] + (6,) = [S, 8, 6]: moves elements.
  expectUnchanged(sizeSliceModel("1", "3", "float[S, 8, 6]"), "reshape_to_own_shape");
}

TEST(ReshapeToOwnShapeRule, KeepsAReshapeToPartsOfUnknownLength) {
  // [lead..., 6] with lead = Shape(u)[:-1] of a u of unknown rank: two parts, not two
  // elements. (A merged decoder's branch, before its shapes were inferred, lost GPT-2's
  // Conv1D view(*lead, out) this way.)
  expectUnchanged(model("(float[N, 6] m, float[B, S, 6] x, int64[R] dyn) => (float[?, ?, 6] y)",
                        "u = Reshape(x, dyn)\nus = Shape(u)\nlead = Slice(us, zero, neg1)\n"
                        "back = Concat <axis = 0> (lead, six)\nr = Reshape(m, back)\ny = Neg(r)\n",
                        13, "int64[1] zero = {0}, int64[1] neg1 = {-1}, int64[1] six = {6}"),
                  "reshape_to_own_shape");
}

}  // namespace
}  // namespace onnx_rewrite
