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

}  // namespace
}  // namespace onnx_rewrite
