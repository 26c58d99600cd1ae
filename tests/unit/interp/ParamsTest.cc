//===- ParamsTest.cc - parameters in either opset form, axes, constants ---===//
//
// Specifies runtime/match/Params.h: a parameter that a later opset moved from an
// attribute to an input reads the same in both forms; an absent one takes the
// caller's default; axes normalise by rank; small constants read from every
// tensor layout without touching anything else.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/graph/Model.h"
#include "runtime/match/Params.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;

/// A parsed model and its IR, with lookups by value name.
struct Loaded {
  explicit Loaded(const std::string& text) : proto(parseModel(text)), model(proto) {}
  Graph& g() { return model.mainGraph(); }
  ValueId value(const std::string& name) { return g().findValue(name); }
  NodeId producer(const std::string& name) { return g().value(value(name)).producer(); }

  onnx::ModelProto proto;
  Model model;
};

const char* kReduceMean17 = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m, float[2, 3, 4] y) {
  m = ReduceMean <axes = [-1]> (x)
  y = Identity(x)
}
)";

const char* kReduceMean18 = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m, float[2, 3, 4] n) <int64[1] axes = {-1}> {
  m = ReduceMean <keepdims = 0> (x, axes)
  x_axes = Shape(x)
  n = ReduceMean (x, x_axes)
}
)";

TEST(Params, ReadsAnAttributeAtTheOpsetWhereItIsOne) {
  Loaded m(kReduceMean17);
  ParamRef ref = findParam(m.g(), m.producer("m"), "axes");
  EXPECT_EQ(ref.kind, ParamRef::Kind::kAttribute);
  EXPECT_EQ(intsParam(m.model, m.g(), m.producer("m"), "axes"), std::vector<int64_t>{-1});
}

TEST(Params, ReadsTheConstantInputAtTheOpsetWhereItMoved) {
  Loaded m(kReduceMean18);
  ParamRef ref = findParam(m.g(), m.producer("m"), "axes");
  EXPECT_EQ(ref.kind, ParamRef::Kind::kInput);
  EXPECT_EQ(ref.input_index, 1);
  EXPECT_EQ(ref.input, m.value("axes"));
  EXPECT_EQ(intsParam(m.model, m.g(), m.producer("m"), "axes"), std::vector<int64_t>{-1});
}

TEST(Params, AMovedInputThatIsNotConstantHasNoValue) {
  Loaded m(kReduceMean18);
  EXPECT_EQ(findParam(m.g(), m.producer("n"), "axes").kind, ParamRef::Kind::kInput);
  EXPECT_EQ(intsParam(m.model, m.g(), m.producer("n"), "axes"), std::nullopt);
}

TEST(Params, AnAbsentParameterTakesTheCallersDefault) {
  Loaded m17(kReduceMean17);
  EXPECT_EQ(intParam(m17.model, m17.g(), m17.producer("m"), "keepdims", 1), 1);
  EXPECT_EQ(intParam(m17.model, m17.g(), m17.producer("m"), "keepdims"), std::nullopt);
  Loaded m18(kReduceMean18);
  EXPECT_EQ(intParam(m18.model, m18.g(), m18.producer("m"), "keepdims", 1), 0);
  EXPECT_EQ(findParam(m17.g(), m17.producer("m"), "keepdims").kind, ParamRef::Kind::kAbsent);
}

TEST(Params, TypedReadersRejectAnAttributeOfAnotherType) {
  Loaded m(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] y) {
  y = LeakyRelu <alpha = 0.25> (x)
}
)");
  NodeId n = m.producer("y");
  EXPECT_FLOAT_EQ(*floatParam(m.model, m.g(), n, "alpha"), 0.25);
  EXPECT_EQ(intParam(m.model, m.g(), n, "alpha"), std::nullopt);
  EXPECT_EQ(stringParam(m.g(), n, "alpha"), std::nullopt);
  EXPECT_EQ(stringParam(m.g(), n, "mode", std::string_view("constant")), "constant");
}

TEST(Params, TheOpsetDecidesWhetherAnInputIsAMovedParameter) {
  EXPECT_EQ(movedParamInput("", "ReduceMean", "axes", 17), -1);
  EXPECT_EQ(movedParamInput("", "ReduceMean", "axes", 18), 1);
  EXPECT_EQ(movedParamInput("ai.onnx", "ReduceSum", "axes", 13), 1);
  EXPECT_EQ(movedParamInput("", "Squeeze", "axes", 13), 1);
  EXPECT_EQ(movedParamInput("", "Split", "split", 12), -1);
  EXPECT_EQ(movedParamInput("", "Slice", "steps", 10), 4);
  EXPECT_EQ(movedParamInput("", "ReduceMean", "keepdims", 18), -1);
  EXPECT_EQ(movedParamInput("com.microsoft", "ReduceMean", "axes", 18), -1);
  EXPECT_EQ(movedParamInput("", "ReduceMean", "axes", -1), 1) << "unknown opset: inputs decide";
  EXPECT_TRUE(isParamInput("", "Slice", 3, 13));
  EXPECT_FALSE(isParamInput("", "Slice", 3, 9));
  EXPECT_FALSE(isParamInput("", "Gemm", 2, 13));
}

TEST(Params, SliceParametersReadFromInputsOneToFour) {
  Loaded m(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4, 8] x) => (float[4, 2] y) <int64[1] s = {2}, int64[1] e = {6}, int32[1] a = {-1}, int64[1] st = {2}> {
  y = Slice(x, s, e, a, st)
}
)");
  NodeId n = m.producer("y");
  EXPECT_EQ(intsParam(m.model, m.g(), n, "starts"), std::vector<int64_t>{2});
  EXPECT_EQ(intsParam(m.model, m.g(), n, "ends"), std::vector<int64_t>{6});
  EXPECT_EQ(intsParam(m.model, m.g(), n, "axes"), std::vector<int64_t>{-1}) << "int32 input";
  EXPECT_EQ(intsParam(m.model, m.g(), n, "steps"), std::vector<int64_t>{2});
}

TEST(Params, NegativeAxesCountFromTheEnd) {
  std::vector<int64_t> axes = {-1, 0, -3};
  EXPECT_TRUE(normalizeAxes(axes, 3));
  EXPECT_EQ(axes, (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(3, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(-4, 3), std::nullopt);
  std::vector<int64_t> bad = {5};
  EXPECT_FALSE(normalizeAxes(bad, 3));
}

TEST(Params, UnsqueezeAxesCountAgainstTheOutputRank) {
  Loaded m(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] x) => (float[2, 3, 1] y, float[2, 3] z) <int64[1] a = {-1}> {
  y = Unsqueeze(x, a)
  z = Relu(x)
}
)");
  EXPECT_EQ(axesRank(m.g(), m.producer("y")), 3);
  EXPECT_EQ(axesRank(m.g(), m.producer("z")), 2);
  EXPECT_EQ(valueRank(m.g(), m.value("a")), 1) << "a constant's rank comes from its tensor";
}

TEST(Params, SmallConstantsReadFromEveryLayout) {
  onnx::ModelProto proto = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] f = {1.5, -2.0}, int32[2] i = {7, -3}, double d = {0.25}> {
  c = Constant <value = int64[3] {4, 5, 6}> ()
  y = Identity(x)
}
)");
  // A raw_data copy of f, as exporters write it.
  onnx::TensorProto* raw = proto.mutable_graph()->add_initializer();
  raw->set_name("raw");
  raw->set_data_type(onnx::TensorProto::FLOAT);
  raw->add_dims(2);
  const float values[2] = {3.0f, 4.5f};
  raw->set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof values));
  Model model(proto);
  Graph& g = model.mainGraph();
  std::vector<double> doubles;
  std::vector<int64_t> ints;
  ASSERT_TRUE(readConstantDoubles(model, g, g.findValue("f"), doubles, 8));
  EXPECT_EQ(doubles, (std::vector<double>{1.5, -2.0}));
  ASSERT_TRUE(readConstantDoubles(model, g, g.findValue("raw"), doubles, 8));
  EXPECT_EQ(doubles, (std::vector<double>{3.0, 4.5}));
  ASSERT_TRUE(readConstantDoubles(model, g, g.findValue("d"), doubles, 1));
  EXPECT_EQ(doubles, std::vector<double>{0.25});
  ASSERT_TRUE(readConstantInts(model, g, g.findValue("i"), ints, 8));
  EXPECT_EQ(ints, (std::vector<int64_t>{7, -3}));
  ASSERT_TRUE(readConstantInts(model, g, g.findValue("c"), ints, 8)) << "a Constant node";
  EXPECT_EQ(ints, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_FALSE(readConstantInts(model, g, g.findValue("c"), ints, 2)) << "too many elements";
  EXPECT_FALSE(readConstantInts(model, g, g.findValue("f"), ints, 8)) << "not integers";
  EXPECT_FALSE(readConstantDoubles(model, g, g.findValue("x"), doubles, 8)) << "a graph input";
}

}  // namespace
}  // namespace onnx_rewrite
