//===- NativeHelpersTest.cc - the registry of named C++ functions ---------===//
//
// Specifies runtime/match/NativeHelpers.h: built-ins are always registered,
// other units register by name at static-initialisation time, names are unique
// per kind, and each built-in says yes exactly when its documentation says so.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/graph/Model.h"
#include "runtime/match/NativeHelpers.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;

bool alwaysTrue(const MatchContext&, ValueArgs) { return true; }
bool firstIsGraphInput(const MatchContext& ctx, ValueArgs args) {
  return args.size() == 1 && args[0] != kNoId && ctx.graph.value(args[0]).isGraphInput();
}

// Registration from a test unit, the way a user's unit would do it.
const bool kRegistered = registerNativePredicate(
    {"test_first_is_graph_input", 1, &firstIsGraphInput, "the argument is a graph input"});

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(NativeHelpers, BuiltinsAreAlwaysRegistered) {
  EXPECT_TRUE(contains(nativePredicateNames(), "last_axis"));
  EXPECT_TRUE(contains(nativePredicateNames(), "last_dim_of"));
  EXPECT_TRUE(contains(nativePredicateNames(), "static_last_dim"));
  EXPECT_TRUE(contains(tensorHelperNames(), "ones_of_last_dim"));
  EXPECT_TRUE(contains(attributeHelperNames(), "num_heads_from_shape"));
  EXPECT_TRUE(contains(tensorHelperNames(), "static_shape"));
  const NativePredicate* p = findNativePredicate("last_axis");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->arity, 2);
  EXPECT_TRUE(p->accepts(2));
  EXPECT_FALSE(p->accepts(1));
  EXPECT_FALSE(p->doc.empty());
}

TEST(NativeHelpers, StaticRegistrationFromAnotherUnitIsFoundByName) {
  EXPECT_TRUE(kRegistered);
  const NativePredicate* p = findNativePredicate("test_first_is_graph_input");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->fn, &firstIsGraphInput);
  EXPECT_EQ(findNativePredicate("no_such_predicate"), nullptr);
  EXPECT_EQ(findAttributeHelper("last_axis"), nullptr) << "kinds have separate names";
}

TEST(NativeHelpers, ANameIsRegisteredOnlyOncePerKind) {
  EXPECT_FALSE(registerNativePredicate({"last_axis", 2, &alwaysTrue, "impostor"}));
  EXPECT_NE(findNativePredicate("last_axis")->fn, &alwaysTrue) << "the first entry stays";
  EXPECT_FALSE(registerNativePredicate({"", 0, &alwaysTrue, "nameless"}));
  EXPECT_FALSE(registerNativePredicate({"null_fn", 0, nullptr, "no function"}));
  EXPECT_TRUE(registerNativePredicate({"test_variadic", kVariadic, &alwaysTrue, "any"}));
  EXPECT_TRUE(findNativePredicate("test_variadic")->accepts(0));
  EXPECT_TRUE(findNativePredicate("test_variadic")->accepts(5));
}

/// The models the built-ins are tried on.
struct Loaded {
  explicit Loaded(const std::string& text) : proto(parseModel(text)), model(proto) {}
  ValueId v(const std::string& name) { return model.mainGraph().findValue(name); }
  MatchContext ctx() { return MatchContext{model, model.mainGraph()}; }
  onnx::ModelProto proto;
  Model model;
};

const char* kAxesForms = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3, 4] x, float[4] b) => (float[2, 3, 1] m1, float[2, 3, 1] m2, float[2, 3, 4] s, float[2, 3, 1] m3, float[2, 3, 4] s1)
  <int64[1] last = {-1}, int64[1] two = {2}, int64[1] first = {0}, int64[4] shape = {2, 3, 8, 16}, float[3] b3 = {1.0, 2.0, 3.0}> {
  m1 = ReduceMean(x, last)
  m2 = ReduceMean(x, two)
  s = Softmax <axis = -1> (x)
  m3 = ReduceMean(x, first)
  s1 = Softmax <axis = 1> (x)
}
)";

TEST(NativeHelpers, LastAxisAcceptsConstantsAxesInputsAndAxisAttributes) {
  Loaded m(kAxesForms);
  const NativePredicateFn last_axis = findNativePredicate("last_axis")->fn;
  auto holds = [&](const char* a, const char* x) {
    std::vector<ValueId> args = {m.v(a), m.v(x)};
    return last_axis(m.ctx(), ValueArgs(args));
  };
  EXPECT_TRUE(holds("last", "x")) << "a constant [-1]";
  EXPECT_TRUE(holds("two", "x")) << "[2] on rank 3";
  EXPECT_FALSE(holds("two", "b")) << "[2] is not the last axis of a rank-1 value";
  EXPECT_TRUE(holds("m1", "x")) << "the axes input of m1's ReduceMean";
  EXPECT_TRUE(holds("m2", "x"));
  EXPECT_FALSE(holds("m3", "x"));
  EXPECT_TRUE(holds("s", "x")) << "Softmax's axis attribute";
  EXPECT_FALSE(holds("s1", "x"));
  std::vector<ValueId> unbound = {kNoId, m.v("x")};
  EXPECT_FALSE(last_axis(m.ctx(), ValueArgs(unbound)));
}

TEST(NativeHelpers, LastDimOfComparesStaticSizesOrSymbols) {
  Loaded m(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] x, float[4] b, float[N, K] s, float[K] k, float[M] n, float[2, 4] b2) => (float[2, 3, 4] y) <float[3] b3 = {1.0, 2.0, 3.0}, float[1] one = {1.0}> {
  u = Relu(x)
  y = Identity(u)
}
)");
  const NativePredicateFn fn = findNativePredicate("last_dim_of")->fn;
  auto holds = [&](const char* v, const char* x) {
    std::vector<ValueId> args = {m.v(v), m.v(x)};
    return fn(m.ctx(), ValueArgs(args));
  };
  EXPECT_TRUE(holds("b", "x"));
  EXPECT_FALSE(holds("b3", "x")) << "3 is not 4";
  EXPECT_TRUE(holds("k", "s")) << "the same symbol";
  EXPECT_FALSE(holds("n", "s")) << "another symbol";
  EXPECT_FALSE(holds("b", "s")) << "a static size is not a symbol";
  EXPECT_FALSE(holds("b2", "x")) << "not 1-D";
  EXPECT_TRUE(holds("b", "u")) << "u's shape is unknown: a static size > 1 cannot broadcast";
  EXPECT_FALSE(holds("one", "u")) << "a length-1 v might be broadcasting";
  std::vector<ValueId> unbound = {kNoId, m.v("x")};
  EXPECT_FALSE(fn(m.ctx(), ValueArgs(unbound)));
  const NativePredicateFn static_last = findNativePredicate("static_last_dim")->fn;
  std::vector<ValueId> x = {m.v("x")}, s = {m.v("s")};
  EXPECT_TRUE(static_last(m.ctx(), ValueArgs(x)));
  EXPECT_FALSE(static_last(m.ctx(), ValueArgs(s)));
}

TEST(NativeHelpers, OnesOfLastDimHasTheElementTypeOfItsArgument) {
  Loaded m(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x, float16[2, 5] h, float[N, K] s, int64[2] i) => (float[2, 3] y) {
  y = Identity(x)
}
)");
  const TensorHelperFn fn = findTensorHelper("ones_of_last_dim")->fn;
  auto ones = [&](const char* v) {
    std::vector<ValueId> args = {m.v(v)};
    return fn(m.ctx(), ValueArgs(args));
  };
  std::optional<onnx::TensorProto> f = ones("x");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(f->dims(0), 3);
  EXPECT_EQ(std::vector<float>(f->float_data().begin(), f->float_data().end()),
            (std::vector<float>{1, 1, 1}));
  std::optional<onnx::TensorProto> h = ones("h");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(h->int32_data_size(), 5);
  EXPECT_EQ(h->int32_data(0), 0x3c00) << "1.0 in float16";
  EXPECT_FALSE(ones("s")) << "a symbolic last dim";
  EXPECT_FALSE(ones("i")) << "not a float type";
}

TEST(NativeHelpers, NumHeadsIsDimTwoOfAConstantFourElementShape) {
  Loaded m(kAxesForms);
  const AttributeHelperFn fn = findAttributeHelper("num_heads_from_shape")->fn;
  std::vector<ValueId> shape = {m.v("shape")};
  std::optional<onnx::AttributeProto> a = fn(m.ctx(), ValueArgs(shape));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(a->i(), 8);
  std::vector<ValueId> not_a_shape = {m.v("two")};
  EXPECT_FALSE(fn(m.ctx(), ValueArgs(not_a_shape)));
}

TEST(NativeHelpers, StaticShapeIsAnInt64Tensor) {
  Loaded m(kAxesForms);
  const TensorHelperFn fn = findTensorHelper("static_shape")->fn;
  std::vector<ValueId> x = {m.v("x")};
  std::optional<onnx::TensorProto> t = fn(m.ctx(), ValueArgs(x));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(std::vector<int64_t>(t->dims().begin(), t->dims().end()), std::vector<int64_t>{3});
  EXPECT_EQ(std::vector<int64_t>(t->int64_data().begin(), t->int64_data().end()),
            (std::vector<int64_t>{2, 3, 4}));
}

}  // namespace
}  // namespace onnx_rewrite
