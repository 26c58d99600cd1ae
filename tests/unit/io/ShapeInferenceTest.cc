//===- ShapeInferenceTest.cc - inference for opsets ONNX 1.12 lacks --------===//
//
// NewerOpsetSchemas lets ONNX 1.12's inference type opset 18+ models: Reduce* with
// axes as an input, the shape-preserving ops new after 17, and opset-17 schemas for
// ops whose shapes did not change. Ops whose shape semantics changed stay untyped.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/io/ShapeInference.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;

/// Dims of value `name` after inference ("?" unknown, symbols by name), or "untyped".
std::string inferred(const onnx::ModelProto& model, const std::string& name) {
  for (const onnx::ValueInfoProto& v : model.graph().value_info()) {
    if (v.name() != name) continue;
    if (!v.type().tensor_type().has_shape()) return "no shape";
    std::string out = "[";
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (out.size() > 1) out += ", ";
      out += d.has_dim_value()   ? std::to_string(d.dim_value())
             : d.has_dim_param() ? d.dim_param()
                                 : "?";
    }
    return out + "]";
  }
  return "untyped";
}

TEST(ShapeInference, ReadsReduceMeanAxesFromItsInputAtOpset18) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64[1] axes = {-1}> {
  mean = ReduceMean <keepdims = 1> (x, axes)
  flat = ReduceMean <keepdims = 0> (x, axes)
  y = Sub(x, mean)
}
)");
  InferredShapes shapes(model);
  EXPECT_TRUE(shapes.ran());
  EXPECT_EQ(shapes.note(), "");
  EXPECT_EQ(inferred(model, "mean"), "[B, S, 1]");
  EXPECT_EQ(inferred(model, "flat"), "[B, S]");
  shapes.undo();
  EXPECT_EQ(model.graph().value_info_size(), 0) << "nothing inferred is kept";
}

TEST(ShapeInference, UsesOpset17SchemasForOpsThatDidNotChange) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 21]>
g (float[B, S, 8] x, float[8, 4] w) => (float[B, S, 4] y) {
  m = MatMul(x, w)
  y = Relu(m)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "m"), "[B, S, 4]");
}

TEST(ShapeInference, InfersShapePreservingOpsNewerThan17) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[B, S, 8] x, float[8] scale) => (float[B, S, 8] y) {
  n = RMSNormalization <axis = -1> (x, scale)
  g1 = Gelu(n)
  y = Relu(g1)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "n"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "g1"), "[B, S, 8]");
}

TEST(ShapeInference, LeavesOpsWhoseShapesChangedAfter17Untyped) {
  // Pad-18 takes an axes input; the opset-17 schema would read the pads wrongly.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[B, 8] x) => (float[B, 10] y) <int64[2] pads = {1, 1}, int64[1] axes = {1}> {
  p = Pad(x, pads, , axes)
  y = Relu(p)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "p"), "untyped");
}

// Without control flow or local functions no whole-model ONNX pass runs: the symbolic pass
// types every value, and an op it has no rule of its own for (CumSum, Trilu, Hardmax)
// through that op's ONNX inference function, node by node, so what follows it is typed too.
TEST(ShapeInference, TypesOpsWithoutASymbolicRuleThroughTheirOwnInferenceFunction) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 8] x, int64 axis) => (float[B, S, 8] y) {
  c = CumSum(x, axis)
  t = Trilu <upper = 0> (c)
  h = Hardmax <axis = -1> (t)
  r = Relu(h)
  y = Neg(r)
}
)");
  InferredShapes shapes(model);
  EXPECT_TRUE(shapes.ran());
  EXPECT_EQ(shapes.note(), "");
  EXPECT_EQ(inferred(model, "c"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "t"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "h"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "r"), "[B, S, 8]");
  shapes.undo();
  EXPECT_EQ(model.graph().value_info_size(), 0);
}

TEST(ShapeInference, AnOpItsInferenceFunctionRejectsStaysUntyped) {
  // Trilu of a 1-D tensor: ONNX's function throws (rank < 2); nothing is said of t or r.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[8] v) => (float[8] y) {
  t = Trilu(v)
  r = Relu(t)
  y = Neg(r)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(shapes.note(), "");
  EXPECT_EQ(inferred(model, "t"), "untyped");
  EXPECT_EQ(inferred(model, "r"), "untyped");
}

// An If's output is what both branches agree on, and what reads it in the graph around
// is sized from that (no whole-model ONNX pass: the symbolic pass types branches itself).
TEST(ShapeInference, TypesTheOutputsOfAnIfFromItsBranches) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[B, 8] x) => (float[B, 8] y) {
  i = If (cond) <
    then_branch = t () => (float[B, 8] a) { a = Relu(x) },
    else_branch = e () => (float[B, 8] b) { b = Neg(x) }>
  y = Sigmoid(i)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "i"), "[B, 8]");
}

TEST(ShapeInference, KeepsOnlyTheDimsBothBranchesOfAnIfAgreeOn) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[B, 8] x, float[B, 4] z) => (float[B, 8] y) {
  i = If (cond) <
    then_branch = t () => (float[B, 8] a) { a = Relu(x) },
    else_branch = e () => (float[B, 4] b) { b = Neg(z) }>
  s = Sigmoid(i)
  y = Identity(x)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "i"), "[B, ?]");
  // Sized again after the If; the dim it cannot size gets a name of its own (below).
  EXPECT_EQ(inferred(model, "s"), "[B, unk__s[1]]");
  shapes.undo();
  EXPECT_EQ(model.graph().value_info_size(), 0);
}

TEST(ShapeInference, KeepsTheRankOfASliceWithBoundsComputedAtRunTime) {
  // tril[:T, :T] with T read from x: the length is not known; the rank stays, and so do
  // the dims of axes not sliced.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 8] x) => (bool[A, C] y)
  <float[16, 16] tril = {1.0}, int64[1] zero = {0}, int64[1] one = {1}, float fzero = {0.0}> {
  t = Shape <start = 1, end = 2> (x)
  rows = Slice(tril, zero, t, zero, one)
  both = Slice(rows, zero, t, one, one)
  any = Slice(tril, zero, t)
  e = Equal(both, fzero)
  y = Not(e)
}
)");
  InferredShapes shapes(model);
  // A dim the pass cannot size is named after its value and axis, as ONNX names such dims
  // unk__N; the values computed from it carry the same name, so a rule can see that they
  // agree. The unk__ prefix keeps it unknown to whatever asks for a size.
  EXPECT_EQ(inferred(model, "rows"), "[unk__rows[0], 16]");
  EXPECT_EQ(inferred(model, "both"), "[unk__rows[0], unk__both[1]]");
  EXPECT_EQ(inferred(model, "any"), "[unk__any[0], unk__any[1]]")
      << "axes not given: any may be sliced";
  EXPECT_EQ(inferred(model, "e"), "[unk__rows[0], unk__both[1]]");
  for (const onnx::ValueInfoProto& v : model.graph().value_info())
    if (v.name() == "rows") {
      EXPECT_TRUE(isUnknownDim(v.type().tensor_type().shape().dim(0)));
    }
}

// The model's own names stand: a value it types keeps the dims it declares.
TEST(ShapeInference, NamesNoDimOfAValueTheModelTypes) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 8] x) => (float[A, C] y)
  <float[16, 16] tril = {1.0}, int64[1] zero = {0}, int64[1] one = {1}> {
  t = Shape <start = 1, end = 2> (x)
  y = Slice(tril, zero, t, zero, one)
}
)");
  InferredShapes shapes(model);
  const auto& dims = model.graph().output(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[0].dim_param(), "A");
  EXPECT_EQ(dims[1].dim_param(), "C");
}

TEST(ShapeInference, InfersTheOnnxRuntimeOpsRulesEmit) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[B, S, 16] q, float[B, L, 16] k, float[B, L, 8] v, float[B, 2, L, 4] vh,
   float[B, S, 16] skip, float[16] gamma) => (float[B, S, 16] y) {
  a = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)
  b = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, vh)
  n, mean, inv, sum = com.microsoft.SkipLayerNormalization (q, skip, gamma)
  g1 = com.microsoft.QuickGelu(n)
  y = Relu(g1)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "a"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "b"), "[B, S, 8]");
  EXPECT_EQ(inferred(model, "n"), "[B, S, 16]");
  EXPECT_EQ(inferred(model, "sum"), "[B, S, 16]");
  EXPECT_EQ(inferred(model, "g1"), "[B, S, 16]");
}

// The presents are the cache with the new positions behind it: [B, G, P + S, H].
TEST(ShapeInference, InfersGroupQueryAttentionPresentsAsTheCacheExtendedByTheStep) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[B, 1, 32] q, float[B, 1, 16] k, float[B, 1, 16] v, float[B, 2, 3, 8] pk,
   float[B, 2, 3, 8] pv, float[B, 2, P, 8] sk, float[B, 2, P, 8] sv, int32[B] seqlens,
   int32 total) => (float[B, 1, 32] o) {
  y, kp, vp = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2>
                  (q, k, v, pk, pv, seqlens, total)
  z, ks, vs = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2>
                  (q, k, v, sk, sv, seqlens, total)
  o = Relu(y)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "y"), "[B, 1, 32]");
  EXPECT_EQ(inferred(model, "kp"), "[B, 2, 4, 8]");
  EXPECT_EQ(inferred(model, "vp"), "[B, 2, 4, 8]");
  const std::string symbolic = inferred(model, "ks");
  EXPECT_EQ(symbolic.rfind("[B, 2, ", 0), 0u) << symbolic;
  EXPECT_EQ(symbolic.substr(symbolic.size() - 4), ", 8]") << symbolic;
}

TEST(ShapeInference, InfersFusedMatMulLikeMatMulOfTheTransposedInputs) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[B, S, 8] x, float[4, 8] wt, float[8] v, float[2, 1, 8, 4] w4, float[8, 3] m)
   => (float[B, S, 4] y) {
  f = com.microsoft.FusedMatMul <alpha = 2.0, transB = 1> (x, wt)
  y = Relu(f)
  row = com.microsoft.FusedMatMul (v, m)
  batch = com.microsoft.FusedMatMul (x, w4)
  ta = com.microsoft.FusedMatMul <transA = 1> (m, m)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "f"), "[B, S, 4]");
  EXPECT_EQ(inferred(model, "row"), "[3]") << "a 1-D A is a row whose M axis is dropped";
  EXPECT_EQ(inferred(model, "batch"), "[2, B, S, 4]") << "batch axes broadcast";
  EXPECT_EQ(inferred(model, "ta"), "[3, 3]");
}

TEST(ShapeInference, InfersFusedMatMulWithBatchTransposes) {
  // transBatchA reads A [M, b0, b1, K] as [b0, b1, M, K]; transB then swaps B's last two.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[S, 2, 3, 4] a, float[6, 2, 3, 4] b, float[2, 3, 4] c) => (float y) {
  f = com.microsoft.FusedMatMul <transBatchA = 1, transBatchB = 1, transB = 1> (a, b)
  g = com.microsoft.FusedMatMul <transBatchA = 1> (a, c)
  y = Relu(f)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "f"), "[2, 3, S, 6]");
  EXPECT_EQ(inferred(model, "g"), "untyped") << "ONNX Runtime wants equal ranks";
}

TEST(ShapeInference, InfersEinsumDimsFromItsEquation) {
  // tf2onnx's projections and attention: each output letter takes its input's dim.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[B, S, 16] x, float[16, 4, 4] w, float[B, S, 2, 4] q, float[B, T, 2, 4] k)
  => (float[B, S, 16] y) {
  p = Einsum <equation = "abc,cde->abde"> (x, w)
  s = Einsum <equation = "aecd, abcd -> acbe"> (k, q)
  m = Einsum <equation = "abcd,abcd->ab"> (q, k)
  y = Relu(x)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "p"), "[B, S, 4, 4]");
  EXPECT_EQ(inferred(model, "s"), "[B, 2, S, T]");
  EXPECT_EQ(inferred(model, "m").substr(0, 4), "[B, ") << "b is S in q and T in k: not one dim";
  EXPECT_EQ(inferred(model, "m").find("S"), std::string::npos);
}

TEST(ShapeInference, FusedMatMulRejectsAScalarAsOnnxRuntimeDoes) {
  // ONNX Runtime: "Input tensors of wrong rank (0)." Whole-model inference leaves such a
  // node untyped; the driver's soundness check refuses a rewrite that would create one.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float x, float[1, 4] b) => (float[4] y) {
  f = com.microsoft.FusedMatMul <alpha = 2.0> (x, b)
  y = Relu(f)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "f"), "untyped") << shapes.note();
}

TEST(ShapeInference, InfersOnnxAttentionOnThreeAndFourDimensionalInputs) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[B, S, 16] q, float[B, L, 8] k, float[B, L, 8] v, float[B, 4, S, 4] qh,
   float[B, 2, L, 4] kh, float[B, 2, L, 6] vh) => (float[B, S, 16] y) {
  a = Attention <q_num_heads = 4, kv_num_heads = 2> (q, k, v)
  b = Attention (qh, kh, vh)
  y = Relu(a)
}
)");
  InferredShapes shapes(model);
  EXPECT_EQ(inferred(model, "a"), "[B, S, 16]");
  EXPECT_EQ(inferred(model, "b"), "[B, 4, S, 6]");
}

TEST(ShapeInference, CanForgetTheDimsAnEarlierInferenceCouldNotKnow) {
  // A value_info from an earlier inference names an unknown dim unk__0; ONNX would keep it
  // over the S it infers now.
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, S, 8] x) => (float[B, S, 8] y) {
  r = Relu(x)
  y = Neg(r)
}
)";
  onnx::ModelProto model = parseModel(text);
  onnx::ValueInfoProto* info = model.mutable_graph()->add_value_info();
  info->set_name("r");
  auto* shape = info->mutable_type()->mutable_tensor_type();
  shape->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"B", "unk__0", "8"}) {
    auto* dim = shape->mutable_shape()->add_dim();
    if (d[0] == '8')
      dim->set_dim_value(8);
    else
      dim->set_dim_param(d);
  }
  const onnx::ModelProto given = model;
  {
    // ONNX keeps unk__0; the symbolic pass after it (SymbolicShapes.h) takes unk__ names
    // for unknown and fills the dim in anyway.
    InferredShapes keep(model);
    EXPECT_EQ(inferred(model, "r"), "[B, S, 8]");
    keep.undo();
    EXPECT_EQ(model.SerializeAsString(), given.SerializeAsString());
  }
  InferredShapes forget(model, /*forget_unknown_dims=*/true);
  EXPECT_EQ(inferred(model, "r"), "[B, S, 8]");
  forget.undo();
  EXPECT_EQ(model.SerializeAsString(), given.SerializeAsString()) << "undo restores the name";
}

TEST(ShapeInference, SkipsOpsetsNewerThanItKnows) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 10, opset_import: ["" : 30]>
g (float[B, 8] x) => (float[B, 8] y) { y = Relu(x) }
)");
  InferredShapes shapes(model);
  EXPECT_FALSE(shapes.ran());
  EXPECT_EQ(shapes.note(),
            "shape inference skipped: ai.onnx opset 30 is newer than 24, the newest whose shapes "
            "onnx-rewrite can infer");
}

TEST(ShapeInference, ReadsAiOnnxSpelledEitherWayInImportsAndNodes) {
  // ONNX 1.12 alone finds no opset for a node of domain "ai.onnx" when the model imports
  // "", and no schema under "ai.onnx" at all.
  for (const char* imported : {"", "ai.onnx"})
    for (const char* spelled : {"", "ai.onnx"}) {
      onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[B, 8] x) => (float[B, 8] y) {
  t = Neg(x)
  y = Abs(t)
}
)");
      model.mutable_opset_import(0)->set_domain(imported);
      model.mutable_graph()->mutable_node(0)->set_domain(spelled);
      const std::string given = model.SerializeAsString();
      InferredShapes shapes(model);
      EXPECT_EQ(inferred(model, "t"), "[B, 8]")
          << "import '" << imported << "', node '" << spelled << "'";
      EXPECT_EQ(shapes.note(), "");
      shapes.undo();
      EXPECT_EQ(model.SerializeAsString(), given) << "the imports are as loaded";
    }
}

TEST(ShapeInference, ReadsAModelWithoutAnOnnxImportAtTheNewestOpset) {
  // As ONNX Runtime does: ReduceMean takes its axes as an input there.
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["com.microsoft" : 1]>
g (float[B, S, 8] x) => (float[B, S, 1] y) <int64[1] axes = {-1}> {
  mean = ReduceMean <keepdims = 1> (x, axes)
  y = Identity(mean)
}
)");
  const std::string given = model.SerializeAsString();
  InferredShapes shapes(model);
  EXPECT_TRUE(shapes.ran());
  EXPECT_EQ(inferred(model, "mean"), "[B, S, 1]");
  shapes.undo();
  EXPECT_EQ(model.SerializeAsString(), given);
}

// ONNX's inference reaches a body through its node: a shape input declared huge there (or
// in the graph around it) must skip inference as it does in the main graph.
TEST(ShapeInference, IsSkippedWhenABodyReadsAHugeDeclaredShape) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, int64[4611686018427387904] x) => (float y) {
  y = If(c) <then_branch = t () => (float a) { z = ConstantOfShape(x)  a = ReduceSum(z) },
             else_branch = e () => (float b) { b = Constant <value = float {1.0}> () }>
}
)");
  InferredShapes shapes(model);
  EXPECT_FALSE(shapes.ran());
  EXPECT_NE(
      shapes.note().find("'x', the shape ConstantOfShape reads, declares 4611686018427387904"),
      std::string::npos)
      << shapes.note();
}

/// Dims of `name` in the value_info of `g` (as inferred() prints them), or "untyped".
std::string inferredIn(const onnx::GraphProto& g, const std::string& name) {
  onnx::ModelProto wrapper;
  *wrapper.mutable_graph() = g;
  return inferred(wrapper, name);
}

// A later round forgets the names an earlier inference made up for dims (unk__N) in bodies
// too. (Hardmax: an op the symbolic pass has no rule for, typed through its ONNX function;
// the pass fills a made-up name in either way.)
TEST(ShapeInference, ForgetsMadeUpDimNamesInBodies) {
  const char* text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[S] x) => (float y) {
  y = If(c) <then_branch = t () => (float a) { n = Hardmax(x)  a = Relu(n) },
             else_branch = e () => (float b) { b = Abs(x) }>
}
)";
  onnx::ModelProto model = parseModel(text);
  onnx::GraphProto* then_g =
      model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  onnx::ValueInfoProto* n = then_g->add_value_info();
  n->set_name("n");
  n->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  n->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("unk__0");
  onnx::ModelProto again = model;
  InferredShapes first(model);
  EXPECT_EQ(inferredIn(model.graph().node(0).attribute(0).g(), "n"), "[S]");
  InferredShapes second(again, /*forget_unknown_dims=*/true);
  EXPECT_EQ(inferredIn(again.graph().node(0).attribute(0).g(), "n"), "[S]");
}

// A body's inputs are what its node gives it (Scan's slices, Loop's carried values): inference
// leaves them as declared, types what the body computes, and undo() restores the model.
TEST(ShapeInference, UndoRestoresTheInputsOfBodies) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] init, float[N, 4] xs) => (float[4] last, float[N, 4] ys) {
  last, ys = Scan <num_scan_inputs = 1, body = step (float s, float x) => (float s2, float y) {
    s2 = Add(s, x)
    y = Identity(s2)
  }> (init, xs)
}
)");
  onnx::GraphProto* body = nullptr;
  for (onnx::AttributeProto& a : *model.mutable_graph()->mutable_node(0)->mutable_attribute())
    if (a.name() == "body") body = a.mutable_g();
  ASSERT_NE(body, nullptr);
  // The text format gives "float x" an empty shape (a scalar): no shape at all, as exporters
  // declare a body's inputs.
  for (onnx::ValueInfoProto& in : *body->mutable_input())
    in.mutable_type()->mutable_tensor_type()->clear_shape();
  const std::string before = testing::serialize(model);
  InferredShapes shapes(model);
  EXPECT_FALSE(body->input(1).type().tensor_type().has_shape()) << "x stays as declared";
  shapes.undo();
  EXPECT_EQ(testing::serialize(model), before);
}

}  // namespace
}  // namespace onnx_rewrite
