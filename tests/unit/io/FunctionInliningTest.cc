//===- FunctionInliningTest.cc - local function calls expanded before fusing ===//
//
// The spec of inlineLocalFunctions (run by rewrite() unless Options::inline_functions is
// off): every call of a model-local function becomes the function's nodes, nested calls
// too, with the call's values for the formal inputs and outputs, fresh names for every
// other value, the call's attributes (or the function's defaults) for attribute
// references; functions nothing calls any more are dropped. A function that cannot be
// inlined stays, with its calls, and a note says why.
//
//===----------------------------------------------------------------------===//
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/graph/ModelError.h"
#include "runtime/io/FunctionInlining.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::opTypes;
using testing::parseModel;

// RMSNorm as torch 2.1's dynamo exporter writes it: a module function whose body calls
// torchlib functions, one of them with an attribute reference.
const char* kRmsNorm = R"(
<ir_version: 8, opset_import: ["" : 18, "pkg.transformers" : 1, "pkg.onnxscript.torch_lib" : 1]>
g (float[2,4,8] x, float[8] w) => (float[2,4,8] y) {
  y = pkg.transformers.LlamaRMSNorm(x, w)
}
<domain: "pkg.transformers", opset_import: ["" : 18, "pkg.onnxscript.torch_lib" : 1]>
LlamaRMSNorm (hidden, weight) => (out) {
  two = Constant<value = float {2.0}>()
  p = pkg.onnxscript.torch_lib.aten_pow(hidden, two)
  m = pkg.onnxscript.torch_lib.aten_mean_dim<keepdim = 1>(p)
  eps = Constant<value = float {1e-6}>()
  a = Add(m, eps)
  r = pkg.onnxscript.torch_lib.aten_rsqrt(a)
  n = Mul(hidden, r)
  out = Mul(weight, n)
}
<domain: "pkg.onnxscript.torch_lib", opset_import: ["" : 18]>
aten_pow (self, exponent) => (result) {
  result = Pow(self, exponent)
}
<domain: "pkg.onnxscript.torch_lib", opset_import: ["" : 18]>
aten_mean_dim <keepdim> (self) => (result) {
  axes = Constant<value = int64[1] {-1}>()
  result = ReduceMean<keepdims: int = @keepdim>(self, axes)
}
<domain: "pkg.onnxscript.torch_lib", opset_import: ["" : 18]>
aten_rsqrt (self) => (result) {
  s = Sqrt(self)
  result = Reciprocal(s)
}
)";

const onnx::NodeProto& nodeOf(const onnx::ModelProto& m, const std::string& op) {
  for (const onnx::NodeProto& n : m.graph().node())
    if (n.op_type() == op) return n;
  throw std::runtime_error("no " + op);
}

TEST(FunctionInlining, ExpandsNestedCallsInPlaceAndDropsTheFunctions) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 4);
  EXPECT_EQ(r.functions_removed, 4);
  EXPECT_TRUE(r.kept.empty());
  EXPECT_EQ(m.functions_size(), 0);
  EXPECT_EQ(opTypes(m),
            (std::vector<std::string>{"Constant", "Pow", "Constant", "ReduceMean", "Constant",
                                      "Add", "Sqrt", "Reciprocal", "Mul", "Mul"}));
  // The call's values stand for the formal ones: x in, y out.
  EXPECT_EQ(nodeOf(m, "Pow").input(0), "x");
  EXPECT_EQ(m.graph().node(m.graph().node_size() - 1).output(0), "y");
}

TEST(FunctionInlining, ResolvesAnAttributeReferenceWithTheCallsValue) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  inlineLocalFunctions(m);
  const onnx::NodeProto& mean = nodeOf(m, "ReduceMean");
  ASSERT_EQ(mean.attribute_size(), 1);
  EXPECT_EQ(mean.attribute(0).name(), "keepdims");
  EXPECT_TRUE(mean.attribute(0).ref_attr_name().empty());
  EXPECT_EQ(mean.attribute(0).i(), 1);
}

TEST(FunctionInlining, DropsAReferencedAttributeTheCallDoesNotGive) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  onnx::NodeProto& call = *m.mutable_functions(0)->mutable_node(2);
  ASSERT_EQ(call.op_type(), "aten_mean_dim");
  call.clear_attribute();
  inlineLocalFunctions(m);
  EXPECT_EQ(nodeOf(m, "ReduceMean").attribute_size(), 0);  // ONNX's default, keepdims 1
}

TEST(FunctionInlining, TakesAnAttributeDefaultTheCallDoesNotOverride) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  m.mutable_functions(0)->mutable_node(2)->clear_attribute();
  // FunctionProto.attribute_proto (field 11, ONNX >= 1.15) is unknown to ONNX 1.12's classes.
  onnx::AttributeProto keepdim;
  keepdim.set_name("keepdim");
  keepdim.set_type(onnx::AttributeProto::INT);
  keepdim.set_i(0);
  onnx::FunctionProto& mean_dim = *m.mutable_functions(2);
  ASSERT_EQ(mean_dim.name(), "aten_mean_dim");
  mean_dim.GetReflection()->MutableUnknownFields(&mean_dim)->AddLengthDelimited(
      11, keepdim.SerializeAsString());
  inlineLocalFunctions(m);
  const onnx::NodeProto& mean = nodeOf(m, "ReduceMean");
  ASSERT_EQ(mean.attribute_size(), 1);
  EXPECT_EQ(mean.attribute(0).i(), 0);
}

TEST(FunctionInlining, GivesEachCallFreshNamesForTheBodysValues) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y) {
  t = local.Twice(x)
  y = local.Twice(t)
}
<domain: "local", opset_import: ["" : 17]>
Twice (a) => (b) {
  s = Add(a, a)
  b = Identity(s)
}
)");
  inlineLocalFunctions(m);
  ASSERT_EQ(opTypes(m), (std::vector<std::string>{"Add", "Identity", "Add", "Identity"}));
  const auto& n = m.graph().node();
  EXPECT_EQ(n[0].input(0), "x");
  EXPECT_EQ(n[1].output(0), "t");
  EXPECT_EQ(n[2].input(0), "t");
  EXPECT_EQ(n[3].output(0), "y");
  EXPECT_NE(n[0].output(0), n[2].output(0));
  EXPECT_EQ(n[1].input(0), n[0].output(0));
  EXPECT_EQ(n[3].input(0), n[2].output(0));
  std::set<std::string> defined;
  for (const auto& node : n)
    for (const std::string& out : node.output()) EXPECT_TRUE(defined.insert(out).second) << out;
}

TEST(FunctionInlining, NamesAnOutputThatIsAnInputWithAnIdentity) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y, float[4] z) {
  y, z = local.PassAndNeg(x)
}
<domain: "local", opset_import: ["" : 17]>
PassAndNeg (a) => (a, b) {
  b = Neg(a)
}
)");
  inlineLocalFunctions(m);
  ASSERT_EQ(opTypes(m), (std::vector<std::string>{"Neg", "Identity"}));
  EXPECT_EQ(m.graph().node(1).input(0), "x");
  EXPECT_EQ(m.graph().node(1).output(0), "y");
  EXPECT_EQ(m.graph().node(0).output(0), "z");
}

TEST(FunctionInlining, InlinesCallsInsideIfBranches) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (bool c, float[4] x) => (float[4] y) {
  y = If(c) <then_branch = t () => (float[4] ty) { ty = local.Neg(x) },
             else_branch = e () => (float[4] ey) { ey = Identity(x) }>
}
<domain: "local", opset_import: ["" : 17]>
Neg (a) => (b) {
  b = Neg(a)
}
)");
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 1);
  const onnx::GraphProto& then_branch = m.graph().node(0).attribute(0).g();
  EXPECT_EQ(opTypes(then_branch), std::vector<std::string>{"Neg"});
  EXPECT_EQ(then_branch.node(0).input(0), "x");
  EXPECT_EQ(m.functions_size(), 0);
}

TEST(FunctionInlining, ImportsTheDomainsABodyUsesThatTheModelDoesNot) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,4] x) => (float[2,4] y) {
  y = local.Act(x)
}
<domain: "local", opset_import: ["" : 17, "com.microsoft" : 1]>
Act (a) => (b) {
  b = com.microsoft.QuickGelu<alpha = 1.0>(a)
}
)");
  inlineLocalFunctions(m);
  bool imported = false;
  for (const auto& o : m.opset_import())
    imported |= o.domain() == "com.microsoft" && o.version() == 1;
  EXPECT_TRUE(imported);
}

TEST(FunctionInlining, KeepsAFunctionWhoseOpsetDiffersFromTheModels) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y) {
  y = local.Neg(x)
}
<domain: "local", opset_import: ["" : 13]>
Neg (a) => (b) {
  b = Neg(a)
}
)");
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 0);
  EXPECT_EQ(opTypes(m), std::vector<std::string>{"local::Neg"});
  EXPECT_EQ(m.functions_size(), 1);
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_EQ(r.kept[0],
            "local function 'Neg' (domain 'local') kept as calls: it imports 'ai.onnx' version "
            "13, the model version 17");
}

TEST(FunctionInlining, KeepsAFunctionThatCallsItself) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y) {
  y = local.Loop(x)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
Loop (a) => (b) {
  n = Neg(a)
  b = local.Loop(n)
}
)");
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 1);
  EXPECT_EQ(opTypes(m), (std::vector<std::string>{"Neg", "local::Loop"}));
  EXPECT_EQ(m.functions_size(), 1);
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_EQ(r.kept[0], "local function 'Loop' (domain 'local') kept as calls: it calls itself");
}

TEST(FunctionInlining, KeepsCallsNestedDeeperThan64Functions) {
  // f0 calls f1 calls ... f99: inlining recurses once per level, so it stops at 64.
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y) {
  y = local.f0(x)
}
)");
  for (int i = 0; i < 100; ++i) {
    onnx::FunctionProto& f = *m.add_functions();
    f.set_name("f" + std::to_string(i));
    f.set_domain("local");
    f.add_input("a");
    f.add_output("b");
    onnx::NodeProto& n = *f.add_node();
    n.set_op_type(i + 1 < 100 ? "f" + std::to_string(i + 1) : "Neg");
    if (i + 1 < 100) n.set_domain("local");
    n.add_input("a");
    n.add_output("b");
    *f.add_opset_import() = m.opset_import(0);
    *f.add_opset_import() = m.opset_import(1);
  }
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 64);
  EXPECT_EQ(opTypes(m), std::vector<std::string>{"local::f64"});
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_EQ(r.kept[0],
            "local function 'f64' (domain 'local') kept as calls: its calls nest deeper than 64 "
            "functions");
  EXPECT_EQ(m.functions_size(), 36);  // f64 to f99, which the kept call still reaches
}

TEST(FunctionInlining, LeavesAModelWithoutCallsUntouched) {
  onnx::ModelProto m = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y) {
  y = Neg(x)
}
<domain: "local", opset_import: ["" : 17]>
Unused (a) => (b) {
  b = Neg(a)
}
)");
  const std::string before = testing::serialize(m);
  EXPECT_FALSE(callsLocalFunctions(m));
  const InliningReport r = inlineLocalFunctions(m);
  EXPECT_EQ(r.calls_inlined, 0);
  EXPECT_EQ(testing::serialize(m), before);
}

// ---- through rewrite() -------------------------------------------------------------------

TEST(FunctionInliningInRewrite, FusesAPatternSpreadOverFunctionsAndSaysItInlined) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  const Result r = rewrite(m);
  EXPECT_EQ(opTypes(m), std::vector<std::string>{"SimplifiedLayerNormalization"});
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0],
            "inlined 4 call(s) of local functions; 4 function(s) no longer called "
            "were dropped");
}

TEST(FunctionInliningInRewrite, KeepsTheCallsWhenAskedTo) {
  onnx::ModelProto m = parseModel(kRmsNorm);
  Options options;
  options.inline_functions = false;
  rewrite(m, options);
  EXPECT_EQ(opTypes(m), std::vector<std::string>{"pkg.transformers::LlamaRMSNorm"});
  EXPECT_EQ(m.functions_size(), 4);
}

TEST(FunctionInliningInRewrite, GivesBackAModelImportRefusesAsItWas) {
  // The main graph reads 'nowhere', which nothing defines: import refuses the model after
  // inlining ran, and the caller gets its model back with its calls.
  onnx::ModelProto m = parseModel(kRmsNorm);
  m.mutable_graph()->mutable_node(0)->set_input(1, "nowhere");
  const std::string before = testing::serialize(m);
  EXPECT_THROW(rewrite(m), ModelError);
  EXPECT_EQ(testing::serialize(m), before);
}

}  // namespace
}  // namespace onnx_rewrite
