//===- TargetTest.cc - what an interpreted rule builds, and when it may ---===//
//
// Specifies the target side: attribute kinds (literal, captured, value of a
// constant, helper), new constants, omitted inputs, multi-output nodes with
// omitted middle outputs, re-exported intermediates, the escape check, and
// variants chosen by opset.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/unit/interp/InterpTestSupport.h"

namespace onnx_rewrite {
namespace {

using namespace interp_test;
using Ops = std::vector<std::string>;

const char* kRelu = R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2, 4] x) => (float[2, 4] y) {
  y = Relu(x)
}
)";

/// y = Relu(x) -> y = com.test.Op(x, attrs...).
Rule reluTo(std::vector<ir::TargetAttr> attrs) {
  Rule r("relu_to_op");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("com.test.Op", {t.ref("x")}, std::move(attrs)));
  return r;
}

TEST(InterpTarget, LiteralAttributesHaveTheLiteralsType) {
  Outcome out = runRules(
      kRelu, reluTo({lit("i", I(-1)), lit("f", F(1e-5)), lit("s", S("tanh")), lit("is", Is({0, 2})),
                     lit("fs", Fs({0.5, 1.5})), lit("ss", Ss({"a", "b"}))}));
  ASSERT_EQ(out.ops(), Ops{"com.test::Op"});
  const onnx::NodeProto& n = out.node(0);
  ASSERT_EQ(n.attribute_size(), 6);
  EXPECT_EQ(attribute(n, "i")->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(attribute(n, "i")->i(), -1);
  EXPECT_EQ(attribute(n, "f")->type(), onnx::AttributeProto::FLOAT);
  EXPECT_FLOAT_EQ(attribute(n, "f")->f(), 1e-5f);
  EXPECT_EQ(attribute(n, "s")->type(), onnx::AttributeProto::STRING);
  EXPECT_EQ(attribute(n, "s")->s(), "tanh");
  EXPECT_EQ(attribute(n, "is")->type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(attribute(n, "is")->ints_size(), 2);
  EXPECT_EQ(attribute(n, "fs")->type(), onnx::AttributeProto::FLOATS);
  EXPECT_FLOAT_EQ(attribute(n, "fs")->floats(1), 1.5f);
  EXPECT_EQ(attribute(n, "ss")->type(), onnx::AttributeProto::STRINGS);
  EXPECT_EQ(attribute(n, "ss")->strings(1), "b");
}

TEST(InterpTarget, CapturedAttributesAreCopiedUnderTheTargetsName) {
  // y = LeakyRelu(x, alpha=capture(a)) -> com.test.Leaky(x, slope=attr(a)).
  Rule r("leaky");
  r.root(r.op("LeakyRelu", {r.cap("x")}, {capture("alpha", "a", F(0.01))}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("com.test.Leaky", {t.ref("x")}, {attrOf("slope", "a")}));
  const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2] x, float[2] z) => (float[2] y, float[2] w) {
  y = LeakyRelu <alpha = 0.25> (x)
  w = LeakyRelu (z)
}
)";
  Outcome out = runRules(kModel, r);
  ASSERT_EQ(out.ops(), (Ops{"com.test::Leaky", "com.test::Leaky"}));
  const onnx::AttributeProto* slope = attribute(*out.producer("y"), "slope");
  ASSERT_NE(slope, nullptr);
  EXPECT_EQ(slope->type(), onnx::AttributeProto::FLOAT);
  EXPECT_FLOAT_EQ(slope->f(), 0.25f);
  EXPECT_EQ(attribute(*out.producer("y"), "alpha"), nullptr);
  EXPECT_FLOAT_EQ(attribute(*out.producer("w"), "slope")->f(), 0.01f) << "an absent one: default";
}

TEST(InterpTarget, AnAttributeCapturedTwiceMustBeOneValue) {
  // y = Add(LeakyRelu(a, alpha=capture(s)), LeakyRelu(b, alpha=capture(s))) -> Leaky(Add(a, b)).
  Rule r("leaky_sum");
  ExprId left = r.op("LeakyRelu", {r.cap("a")}, {capture("alpha", "s", F(0.01))});
  ExprId right = r.op("LeakyRelu", {r.cap("b")}, {capture("alpha", "s", F(0.01))});
  r.root(r.op("Add", {left, right}), "y");
  Target t = r.rewrite();
  t.replace("y",
            t.op("LeakyRelu", {t.op("Add", {t.ref("a"), t.ref("b")})}, {attrOf("alpha", "s")}));
  auto model = [](const char* second_alpha) {
    return std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[2] b) => (float[2] y) {
  p = LeakyRelu <alpha = 0.5> (a)
  q = LeakyRelu )") +
           second_alpha + R"( (b)
  y = Add(p, q)
}
)";
  };
  Outcome same = runRules(model("<alpha = 0.5>"), r);
  ASSERT_EQ(same.ops(), (Ops{"Add", "LeakyRelu"}));
  EXPECT_FLOAT_EQ(attribute(same.node(1), "alpha")->f(), 0.5f);
  Outcome differ = runRules(model(""), r);
  EXPECT_EQ(differ.ops(), (Ops{"LeakyRelu", "LeakyRelu", "Add"}));
  EXPECT_EQ(differ.reason(),
            "test.yaml:5:5: LeakyRelu: attribute alpha differs from the one captured as s earlier");
}

TEST(InterpTarget, ACapturedMovedParameterIsBuiltInTheModelsForm) {
  Rule r("capture_axes");
  r.root(r.op("ReduceMean", {r.cap("x")}, {capture("axes", "ax")}), "m");
  Target t = r.rewrite();
  t.replace("m", t.op("ReduceMax", {t.ref("x")}, {attrOf("axes", "ax")}));
  // Opset 18: axes are an input, read from the matched node's input and passed on as one.
  Outcome input = runRules(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) <int64[1] axes = {-1}> {
  m = ReduceMean(x, axes)
}
)",
                           r);
  ASSERT_EQ(input.ops(), Ops{"ReduceMax"});
  EXPECT_EQ(attribute(input.node(0), "axes"), nullptr);
  const onnx::GraphProto& g = input.model.graph();
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(std::vector<int64_t>(g.initializer(0).int64_data().begin(),
                                 g.initializer(0).int64_data().end()),
            std::vector<int64_t>{-1});
  // Opset 13: an INTS attribute.
  Outcome attr = runRules(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3, 4] x) => (float[2, 3, 1] m) {
  m = ReduceMean<axes = [-1]>(x)
}
)",
                          r);
  ASSERT_EQ(attr.ops(), Ops{"ReduceMax"});
  const onnx::AttributeProto* axes = attribute(attr.node(0), "axes");
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(axes->type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(std::vector<int64_t>(axes->ints().begin(), axes->ints().end()),
            std::vector<int64_t>{-1});
}

TEST(InterpTarget, AConstantParameterInputBecomesTheAttributeOlderOpsetsTake) {
  // Unsqueeze(x, tensor(int64, [0])) at opset 11: axes=[0].
  Rule r("unsqueeze_literal");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Unsqueeze", {t.ref("x"), t.tensor("int64", Is({0}))}));
  Outcome out = runRules(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[3] x) => (float[1, 3] y) {
  y = Relu(x)
}
)",
                         r);
  ASSERT_EQ(out.ops(), Ops{"Unsqueeze"});
  EXPECT_EQ(out.node(0).input_size(), 1);
  const onnx::AttributeProto* axes = attribute(out.node(0), "axes");
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(std::vector<int64_t>(axes->ints().begin(), axes->ints().end()),
            std::vector<int64_t>{0});
  EXPECT_EQ(out.model.graph().initializer_size(), 0) << "the literal is not left behind";
}

TEST(InterpTarget, ValueOfAConstantIsAFloatOrIntAttribute) {
  // y = Add(Mul(x, s), k) -> com.test.Affine(x, scale=value(s), shift=value(k)).
  Rule r("affine");
  r.root(r.op("Add", {r.op("Mul", {r.cap("x"), r.cap("s")}), r.cap("k")}), "y");
  r.scalar("s");
  r.scalar("k");
  Target t = r.rewrite();
  t.replace("y",
            t.op("com.test.Affine", {t.ref("x")}, {valueOf("scale", "s"), valueOf("shift", "k")}));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (int64[2] x) => (int64[2] y) <int64 s = {3}, int64[1] k = {-7}> {
  m = Mul(x, s)
  y = Add(m, k)
}
)",
                         r);
  ASSERT_EQ(out.ops(), Ops{"com.test::Affine"});
  EXPECT_EQ(attribute(out.node(0), "scale")->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(attribute(out.node(0), "scale")->i(), 3);
  EXPECT_EQ(attribute(out.node(0), "shift")->i(), -7);
  Outcome floats = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2] x) => (float[2] y) <float s = {0.5}, float k = {1e-5}> {
  m = Mul(s, x)
  y = Add(k, m)
}
)",
                            r);
  ASSERT_EQ(floats.ops(), Ops{"com.test::Affine"});
  EXPECT_EQ(attribute(floats.node(0), "shift")->type(), onnx::AttributeProto::FLOAT);
  EXPECT_FLOAT_EQ(attribute(floats.node(0), "shift")->f(), 1e-5f);
}

TEST(InterpTarget, HelpersComputeAttributesAndTensors) {
  // y = Reshape(x, shape) -> com.test.Heads(x, new_shape, num_heads=helper(num_heads_from_shape)).
  Rule r("heads");
  r.root(r.op("Reshape", {r.cap("x"), r.cap("shape")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("com.test.Heads", {t.ref("x"), t.tensorHelper("static_shape", {"x"})},
                      {helper("num_heads", "num_heads_from_shape", {"shape"})}));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2, 5, 64] x) => (float[2, 5, 4, 16] y) <int64[4] shape = {2, 5, 4, 16}> {
  y = Reshape(x, shape)
}
)",
                         r);
  ASSERT_EQ(out.ops(), Ops{"com.test::Heads"});
  EXPECT_EQ(attribute(out.node(0), "num_heads")->i(), 4);
  ASSERT_EQ(out.model.graph().initializer_size(), 1) << "the shape tensor replaced 'shape'";
  const onnx::TensorProto& made = out.model.graph().initializer(0);
  EXPECT_EQ(made.name(), out.node(0).input(1));
  EXPECT_EQ(made.int64_data_size(), 3);

  Outcome dynamic = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2, 5, 64] x, int64[4] shape) => (float[2, 5, 4, 16] y) {
  y = Reshape(x, shape)
}
)",
                             r);
  EXPECT_EQ(dynamic.ops(), Ops{"Reshape"});
  EXPECT_EQ(dynamic.reason(),
            "test.yaml:102:1: num_heads=helper(num_heads_from_shape): gave no value");
}

TEST(InterpTarget, TensorLiteralsAndNoneInputs) {
  // y = Relu(x) -> y = Clip(x, none, tensor(float, 6.0)); and a float16 tensor.
  Rule r("relu6");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Clip", {t.ref("x"), t.none(), t.tensor("float", F(6.0))}));
  Outcome out = runRules(kRelu, r);
  ASSERT_EQ(out.ops(), Ops{"Clip"});
  ASSERT_EQ(out.node(0).input_size(), 3);
  EXPECT_EQ(out.node(0).input(1), "") << "none leaves the input empty";
  const onnx::TensorProto& six = out.model.graph().initializer(0);
  EXPECT_EQ(six.name(), out.node(0).input(2));
  EXPECT_EQ(six.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(six.dims_size(), 0) << "a scalar";
  EXPECT_FLOAT_EQ(six.float_data(0), 6.0f);

  Rule half("half");
  half.root(half.op("Relu", {half.cap("x")}), "y");
  Target h = half.rewrite();
  h.replace("y", h.op("Mul", {h.ref("x"), h.tensor("float16", Fs({1.0, -2.0}), {2, 1})}));
  // An fp16 model: the driver refuses a Mul of float x and a float16 constant (one type T).
  Outcome f16 = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float16[2, 4] x) => (float16[2, 4] y) {
  y = Relu(x)
}
)",
                         half);
  ASSERT_EQ(f16.ops(), Ops{"Mul"});
  const onnx::TensorProto& t16 = f16.model.graph().initializer(0);
  EXPECT_EQ(t16.data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(std::vector<int64_t>(t16.dims().begin(), t16.dims().end()),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(t16.int32_data(0), 0x3c00);
  EXPECT_EQ(t16.int32_data(1), 0xc000);
}

TEST(InterpTarget, ATensorLikeAValueTakesThatValuesFloatingType) {
  // y = Relu(x) -> y = Max(x, tensor(like(x), 0.0)): float in a float model, float16 in a
  // float16 one; an int32 x (Relu takes it from opset 14) gets no rewrite.
  Rule r("relu_as_max");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Max", {t.ref("x"), t.tensorLike("x", F(0.0))}));
  auto model = [](const std::string& type) {
    return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (" + type + "[2, 4] x) => (" + type +
           "[2, 4] y) {\n  y = Relu(x)\n}\n";
  };
  Outcome f32 = runRules(model("float"), r);
  ASSERT_EQ(f32.ops(), Ops{"Max"});
  EXPECT_EQ(f32.model.graph().initializer(0).data_type(), onnx::TensorProto::FLOAT);
  Outcome f16 = runRules(model("float16"), r);
  ASSERT_EQ(f16.ops(), Ops{"Max"});
  EXPECT_EQ(f16.model.graph().initializer(0).data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(f16.model.graph().initializer(0).int32_data(0), 0);
  Outcome i32 = runRules(model("int32"), r);
  EXPECT_EQ(i32.ops(), Ops{"Relu"});
  EXPECT_EQ(i32.reason(),
            "test.yaml:101:1: tensor(like(x)): x's element type int32 is not a floating type");
}

TEST(InterpTarget, InsideAFunctionANewConstantIsAConstantNode) {
  Rule r("relu6");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Clip", {t.ref("x"), t.none(), t.tensor("float", F(6.0))}));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y) {
  y = local.Block(x)
}
<domain: "local", opset_import: ["" : 17]>
Block (a) => (b) {
  b = Relu(a)
}
)",
                         r, false, /*inline_functions=*/false);
  ASSERT_EQ(out.model.functions_size(), 1);
  const onnx::FunctionProto& f = out.model.functions(0);
  ASSERT_EQ(f.node_size(), 2);
  EXPECT_EQ(f.node(0).op_type(), "Constant") << "functions have no initializers";
  EXPECT_EQ(f.node(1).op_type(), "Clip");
  EXPECT_EQ(f.node(1).input(2), f.node(0).output(0));
  EXPECT_EQ(f.node(1).output(0), "b") << "function outputs keep their names";
}

// ---- Several outputs, re-export and the escape check ------------------------------------------

/// s = Add(x, skip); y = LayerNormalization(s, g, b) ->
///   y, _, _, s = com.microsoft.SkipLayerNormalization(x, skip, g, b)   (re_export)
///   y = com.microsoft.SkipLayerNormalization(x, skip, g, b)            (otherwise)
Rule skipLayerNormRule(bool re_export) {
  Rule r("skip_layer_norm");
  ExprId s = r.named(r.op("Add", {r.cap("x"), r.cap("skip")}), "s");
  r.root(r.op("LayerNormalization", {s, r.cap("g"), r.cap("b")}, {eq("axis", I(-1), I(-1))}), "y");
  Target t = r.rewrite();
  uint32_t node =
      t.op("com.microsoft.SkipLayerNormalization",
           {t.ref("x"), t.ref("skip"), t.ref("g"), t.ref("b")}, {lit("epsilon", F(1e-5))});
  t.replace("y", node);
  if (re_export) t.replace("s", t.out(node, 3));
  return r;
}

const char* kSkipLayerNorm = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 8] x, float[2, 8] skip) => (float[2, 8] y, float[2, 8] z) <float[8] g = {1, 1, 1, 1, 1, 1, 1, 1}, float[8] b = {0, 0, 0, 0, 0, 0, 0, 0}> {
  s = Add(x, skip)
  y = LayerNormalization <axis = -1> (s, g, b)
  z = Relu(s)
}
)";

TEST(InterpTarget, AReExportedIntermediateIsAnOutputOfTheNewNode) {
  Outcome out = runRules(kSkipLayerNorm, skipLayerNormRule(true));
  ASSERT_EQ(out.ops(), (Ops{"com.microsoft::SkipLayerNormalization", "Relu"}));
  const onnx::NodeProto& fused = out.node(0);
  ASSERT_EQ(fused.output_size(), 4) << "outputs up to the last one used";
  EXPECT_EQ(fused.output(0), "y");
  EXPECT_EQ(fused.output(1), "") << "unused middle outputs are omitted";
  EXPECT_EQ(fused.output(2), "");
  EXPECT_EQ(out.node(1).input(0), fused.output(3)) << "Relu reads the re-exported sum";
  bool imports_ms = false;
  for (const auto& o : out.model.opset_import()) imports_ms |= o.domain() == "com.microsoft";
  EXPECT_TRUE(imports_ms);
}

TEST(InterpTarget, TheEscapeCheckBlocksAnIntermediateReadOutsideTheMatch) {
  Outcome out = runRules(kSkipLayerNorm, skipLayerNormRule(false));
  EXPECT_EQ(out.ops(), (Ops{"Add", "LayerNormalization", "Relu"}));
  EXPECT_EQ(out.result.stats.rules[0].matched, 1u) << "matched, then blocked";
  EXPECT_EQ(out.result.stats.rules[0].applied, 0u);
  EXPECT_NE(out.reason().find("'s' (output of Add"), std::string::npos) << out.reason();
  EXPECT_NE(out.reason().find("is also used by Relu"), std::string::npos) << out.reason();
  // Without the outside reader the same rule applies.
  std::string alone = kSkipLayerNorm;
  alone.replace(alone.find("  z = Relu(s)\n"), 14, "  z = Relu(x)\n");
  EXPECT_EQ(runRules(alone, skipLayerNormRule(false)).ops(),
            (Ops{"com.microsoft::SkipLayerNormalization", "Relu"}));
}

/// y = Reshape(Relu(x), shape) -> y = com.test.Fused(x) (or Fused(x, shape): `reads_shape`).
Rule reshapeOfReluRule(bool reads_shape) {
  Rule r("fused_reshape");
  ExprId relu = r.named(r.op("Relu", {r.cap("x")}), "t");
  r.root(r.op("Reshape", {relu, r.cap("shape")}), "y");
  Target t = r.rewrite();
  std::vector<uint32_t> inputs{t.ref("x")};
  if (reads_shape) inputs.push_back(t.ref("shape"));
  t.replace("y", t.op("com.test.Fused", inputs));
  return r;
}

/// The Reshape's target is computed from the matched Relu's own shape (as torch writes
/// x.view(x.size(0), -1)); `extra` adds nodes, `outputs` graph outputs.
std::string reshapeOfOwnShape(const std::string& extra = "", const std::string& outputs = "") {
  return R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2, 3, 4] x) => (float[2, 12] y)" +
         outputs + R"()
<int64[1] minus_one = {-1}, int64 zero = {0}> {
  t = Relu(x)
  ts = Shape(t)
  b = Gather <axis = 0> (ts, zero)
  bu = Unsqueeze(b, zero)
  shape = Concat <axis = 0> (bu, minus_one)
  y = Reshape(t, shape)
)" + extra +
         "}\n";
}

TEST(InterpTarget, AShapeChainFeedingOnlyTheMatchGoesWithIt) {
  // Shape(t) reads the matched Relu, but all it computes is the matched Reshape's target:
  // it dies with the match, so t escapes nowhere.
  Outcome out = runRules(reshapeOfOwnShape(), reshapeOfReluRule(false), false);
  EXPECT_EQ(out.ops(), Ops{"com.test::Fused"}) << out.reason();
}

TEST(InterpTarget, AShapeChainTheTargetReadsBlocksTheMatch) {
  // Fused(x, shape) would keep the chain, and with it the Relu it reads: computed twice.
  Outcome out = runRules(reshapeOfOwnShape(), reshapeOfReluRule(true), false);
  EXPECT_EQ(out.result.stats.rules[0].applied, 0u);
  EXPECT_NE(out.reason().find("the rewrite reads 'shape', which is computed from values inside "
                              "the match"),
            std::string::npos)
      << out.reason();
}

TEST(InterpTarget, AShapeChainAlsoReadElsewhereBlocksTheMatch) {
  Outcome graph_output = runRules(reshapeOfOwnShape("  z = Identity(b)\n", ", int64 z"),
                                  reshapeOfReluRule(false), false);
  EXPECT_EQ(graph_output.result.stats.rules[0].applied, 0u);
  EXPECT_NE(graph_output.reason().find("is also used by Shape"), std::string::npos)
      << graph_output.reason();
  // A chain that ends nowhere (a dead node) is not the match's either.
  Outcome dead_end =
      runRules(reshapeOfOwnShape("  unused = Neg(b)\n"), reshapeOfReluRule(false), false);
  EXPECT_EQ(dead_end.result.stats.rules[0].applied, 0u);
}

/// y = Reshape(Relu(x), Concat(Unsqueeze(Gather(Shape(s), 0), 0), -1)) -> com.test.Fused(x):
/// the shape computation, on s, is part of the match.
Rule reshapeWithMatchedShapeRule() {
  Rule r("fused_reshape");
  ExprId relu = r.named(r.op("Relu", {r.cap("x")}), "t");
  ExprId dim = r.named(
      r.op("Unsqueeze", {r.op("Gather", {r.op("Shape", {r.cap("s")}), r.cap("i")}), r.cap("i")}),
      "b");
  r.root(r.op("Reshape", {relu, r.op("Concat", {dim, r.cap("minus_one")})}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("com.test.Fused", {t.ref("x")}));
  return r;
}

/// The batch dim b read by the matched Reshape's shape and by `reader` outside the match.
std::string sharedBatchDim(const std::string& of, const std::string& reader) {
  return R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[2, 3, 4] x, float[2, 12] w) => (float[2, 12] y, float[2, 12] z)
<int64[1] minus_one = {-1}, int64 zero = {0}> {
  t = Relu(x)
  xs = Shape()" +
         of + R"()
  g0 = Gather <axis = 0> (xs, zero)
  b = Unsqueeze(g0, zero)
  shape = Concat <axis = 0> (b, minus_one)
  y = Reshape(t, shape)
)" + reader +
         "}\n";
}

const char* kOtherView = "  bw = Concat <axis = 0> (b, minus_one)\n  z = Reshape(w, bw)\n";

TEST(InterpTarget, AMatchedShapeComputationAlsoReadElsewhereStaysForThatReader) {
  // B read once (TorchScript's Unsqueeze(Gather(Shape(x), 0))) and used by two views: the
  // matched dim is computed from x, outside the match, so it stays for the other view.
  Outcome out = runRules(sharedBatchDim("x", kOtherView), reshapeWithMatchedShapeRule());
  EXPECT_EQ(out.ops(),
            (Ops{"Shape", "Gather", "Unsqueeze", "com.test::Fused", "Concat", "Reshape"}))
      << out.reason();
  // The dim a graph output: the same.
  std::string as_output = sharedBatchDim("x", "");
  as_output.replace(as_output.find("float[2, 12] z"), 14, "int64[1] b");
  Outcome kept = runRules(as_output, reshapeWithMatchedShapeRule());
  EXPECT_EQ(kept.ops(), (Ops{"Shape", "Gather", "Unsqueeze", "com.test::Fused"})) << kept.reason();
  // Read nowhere else, it goes with the match.
  Outcome alone = runRules(sharedBatchDim("x", "  z = Relu(w)\n"), reshapeWithMatchedShapeRule());
  EXPECT_EQ(alone.ops(), (Ops{"com.test::Fused", "Relu"}));
}

TEST(InterpTarget, AMatchedShapeComputationOfAMatchedValueStillBlocksTheMatch) {
  // Shape(t) of the matched Relu: keeping the dim for z would keep the Relu, computed twice.
  Outcome out = runRules(sharedBatchDim("t", kOtherView), reshapeWithMatchedShapeRule());
  EXPECT_EQ(out.result.stats.rules[0].applied, 0u);
  EXPECT_NE(out.reason().find("'b' (output of Unsqueeze"), std::string::npos) << out.reason();
  EXPECT_NE(out.reason().find("is also used by Concat"), std::string::npos) << out.reason();
}

TEST(InterpTarget, AMatchedValueThatIsNotAShapeStillBlocksTheMatch) {
  // A float value read elsewhere is a real intermediate, whatever op computes it.
  Outcome out =
      runRules(sharedBatchDim("x", "  z = Reshape(t, shape)\n"), reshapeWithMatchedShapeRule());
  EXPECT_EQ(out.result.stats.rules[0].applied, 0u);
  EXPECT_NE(out.reason().find("'t' (output of Relu"), std::string::npos) << out.reason();
}

TEST(InterpTarget, AnUnusedOutputZeroIsOmittedToo) {
  // _, b = Split(x); y = Relu(b) -> _, y = com.test.Pair(x).
  Rule r("second_half");
  ExprId split = r.op("Split", {r.cap("x")});
  r.expr(split).output = 1;
  r.root(r.op("Relu", {split}), "y");
  Target t = r.rewrite();
  uint32_t node = t.op("com.test.Pair", {t.ref("x")});
  t.replace("y", t.out(node, 1));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17, "com.test" : 1]>
g (float[4] x) => (float[2] y) {
  a, b = Split(x)
  y = Relu(b)
}
)",
                         r, false);
  ASSERT_EQ(out.ops(), Ops{"com.test::Pair"}) << "Split's unused output 0 does not block it";
  ASSERT_EQ(out.node(0).output_size(), 2);
  EXPECT_EQ(out.node(0).output(0), "");
  EXPECT_EQ(out.node(0).output(1), "y");
}

// ---- Variants ---------------------------------------------------------------------------------

Rule byOpsetRule() {
  Rule r("by_opset");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target modern = r.rewrite();
  modern.whenOpset(18);
  modern.replace("y", modern.op("Abs", {modern.ref("x")}));
  Target legacy = r.rewrite();
  legacy.replace("y", legacy.op("Neg", {legacy.ref("x")}));
  return r;
}

std::string reluAt(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
         "]>\ng (float[2] x) => (float[2] y) {\n  y = Relu(x)\n}\n";
}

TEST(InterpTarget, TheFirstVariantWhoseOpsetHoldsIsBuilt) {
  EXPECT_EQ(runRules(reluAt(18), byOpsetRule()).ops(), Ops{"Abs"});
  EXPECT_EQ(runRules(reluAt(17), byOpsetRule()).ops(), Ops{"Neg"});
  Rule only_new("only_new");
  only_new.root(only_new.op("Relu", {only_new.cap("x")}), "y");
  Target t = only_new.rewrite();
  t.whenOpset(18, 19);
  t.replace("y", t.op("Abs", {t.ref("x")}));
  EXPECT_EQ(runRules(reluAt(19), only_new).ops(), Ops{"Abs"});
  Outcome old = runRules(reluAt(17), only_new);
  EXPECT_EQ(old.ops(), Ops{"Relu"});
  EXPECT_EQ(old.reason(), "test.yaml:1:1: only_new: no rewrite variant applies");
  EXPECT_EQ(runRules(reluAt(20), only_new).ops(), Ops{"Relu"}) << "above the variant's maximum";
}

TEST(InterpTarget, ABypassNeverRenamesAGraphInputOrOutput) {
  // y = Identity(x) -> x: impossible when x is a graph input and y a graph output.
  Rule r("drop_identity");
  r.root(r.op("Identity", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.ref("x"));
  Outcome out = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z) {
  y = Identity(x)
  t = Identity(y)
  z = Relu(t)
}
)",
                         r);
  EXPECT_EQ(out.ops(), (Ops{"Identity", "Relu"})) << "t = Identity(y) is bypassed; y stays";
  EXPECT_EQ(out.node(1).input(0), "y");
  EXPECT_EQ(out.reason(), "test.yaml:100:1: y: cannot replace 'y' by 'x': both names must be kept");
}

TEST(InterpTarget, OnlyValuesTheMatchComputesCanBeReplaced) {
  // A (wrong) rule that replaces its input: the interpreter refuses rather than rewire x.
  Rule r("replaces_input");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  uint32_t neg = t.op("Neg", {t.ref("x")});
  t.replace("y", neg).replace("x", neg);
  Outcome out = runRules(kRelu, r);
  EXPECT_EQ(out.ops(), Ops{"Relu"});
  EXPECT_EQ(out.reason(),
            "test.yaml:99:3: x: 'x' is not computed by the match, so it cannot be replaced");
}

}  // namespace
}  // namespace onnx_rewrite
