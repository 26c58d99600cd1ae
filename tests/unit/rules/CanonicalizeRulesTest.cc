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
#include <cmath>

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

// ---- softmax_nan_guard ------------------------------------------------------------------

/// Attention weights p = Softmax(MatMul(q, k) + mask) guarded as torchlib's SDPA and Hugging
/// Face's BART SDPA export guard them, Where(IsNaN(p), 0, p), then times v. `mask` is the
/// mask's body (it defines `mf`; empty: no mask), `inputs` more graph inputs, `inits` more
/// initializers, `type` the element type.
std::string guardModel(const std::string& mask, const std::string& inputs = "",
                       const std::string& inits = "", const std::string& type = "float") {
  const std::string t = type;
  std::string body = "s = MatMul(q, k)\n";
  body += mask.empty() ? "a = Identity(s)\n" : mask + "a = Add(s, mf)\n";
  body += "p = Softmax <axis = -1> (a)\nn = IsNaN(p)\ng = Where(n, zero, p)\ny = MatMul(g, v)\n";
  return model("(" + t + "[2, 4, 3] q, " + t + "[2, 3, 4] k, " + t + "[2, 4, 3] v" + inputs +
                   ") => (" + t + "[2, 4, 3] y)",
               body, 17, t + " zero = {0.0}" + (inits.empty() ? "" : ", " + inits));
}

const char* kBoolMask = "mf = Where(m, zero, fill)\n";

TEST(SoftmaxNanGuardRule, GoesWhenTheScoresAreProductsOfActivations) {
  const std::string text = guardModel("");
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Softmax", "MatMul"}));
  expectSameInOrt(text);
}

TEST(SoftmaxNanGuardRule, GoesUnderABooleanMaskOfAFiniteFill) {
  // BART's SDPA export: Where(mask, 0, -1e9) added to the scores.
  const std::string text = guardModel(kBoolMask, ", bool[2, 4, 4] m", "float fill = {-1e9}");
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Where", "Add", "Softmax", "MatMul"}));
  expectSameInOrt(text);
}

TEST(SoftmaxNanGuardRule, GoesUnderAFinfoMinMaskPlusScaledScores) {
  // Hugging Face's masks hold float's lowest; scores and their scaled copy add below the
  // value that rounds to -inf.
  const std::string text =
      guardModel("ms = Div(s, c)\nm0 = Where(m, zero, fill)\nmf = Add(ms, m0)\n",
                 ", bool[2, 4, 4] m", "float fill = {-3.4028234663852886e38}, float c = {2.0}");
  EXPECT_EQ(fuse(text), (Ops{"MatMul", "Div", "Where", "Add", "Add", "Softmax", "MatMul"}));
  expectSameInOrt(text);
}

TEST(SoftmaxNanGuardRule, StaysUnderTwoFinfoMinMasksAdded) {
  // A causal and a padding mask of float's lowest, added: -inf where both mask.
  expectUnchanged(
      guardModel("c1 = Where(m, zero, fill)\nc2 = Where(m2, zero, fill)\n"
                 "mf = Add(c1, c2)\n",
                 ", bool[2, 4, 4] m, bool[2, 4, 4] m2", "float fill = {-3.4028234663852886e38}"),
      "softmax_nan_guard");
}

TEST(SoftmaxNanGuardRule, StaysUnderAMinusInfinityFill) {
  // torchlib's boolean mask: -inf, so a query row masked whole is NaN, and the guard's 0 is
  // what the model computes (ONNX Runtime's attention ops would give NaN there). The text
  // format has no -inf literal: the fill is set afterwards.
  onnx::ModelProto masked =
      testing::parseModel(guardModel(kBoolMask, ", bool[2, 4, 4] m", "float fill = {-1.0}"));
  for (onnx::TensorProto& t : *masked.mutable_graph()->mutable_initializer()) {
    if (t.name() != "fill") continue;
    t.clear_raw_data();
    t.clear_float_data();
    t.add_float_data(-INFINITY);
  }
  const std::vector<std::string> before = testing::opTypes(masked);
  rewrite(masked, testing::shippedRules(), Options{});
  EXPECT_EQ(testing::opTypes(masked), before);
}

TEST(SoftmaxNanGuardRule, StaysUnderAFloatMaskInput) {
  // An additive mask given to the model may hold -inf.
  expectUnchanged(guardModel("mf = Identity(mask)\n", ", float[2, 4, 4] mask"),
                  "softmax_nan_guard");
}

TEST(NanGuardAfterHeadsRule, StaysWhereNoHeadsAreMerged) {
  // The weights times V is the output: no Transpose and Reshape to move the guard past.
  expectUnchanged(guardModel("mf = Identity(mask)\n", ", float[2, 4, 4] mask"),
                  "nan_guard_after_heads");
}

TEST(SoftmaxNanGuardRule, StaysInFp16) {
  // fp16's lowest plus a negative score is -inf: no bound holds there. (The text format has
  // no fp16 literal: the zero becomes fp16 afterwards.)
  onnx::ModelProto fp16 = testing::parseModel(
      model("(float16[2, 4, 3] q, float16[2, 3, 4] k) => (float16[2, 4, 4] y)",
            "s = MatMul(q, k)\np = Softmax <axis = -1> (s)\nn = IsNaN(p)\ny = Where(n, zero, p)\n",
            17, "float zero = {0.0}"));
  onnx::TensorProto& zero = *fp16.mutable_graph()->mutable_initializer(0);
  zero.clear_float_data();
  zero.clear_raw_data();
  zero.set_data_type(onnx::TensorProto::FLOAT16);
  zero.add_int32_data(0);  // fp16 0.0
  const std::vector<std::string> before = testing::opTypes(fp16);
  rewrite(fp16, testing::shippedRules(), Options{});
  EXPECT_EQ(testing::opTypes(fp16), before);
}

}  // namespace
}  // namespace onnx_rewrite
