//===- ConstraintTest.cc - `where` constraints in the interpreter ---------===//
//
// Each constraint kind holds on one model and fails on another, with the
// reason explain mode prints. The rule is always y = Mul(x, w) -> Sub(x, w),
// so only the constraint differs.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/unit/interp/InterpTestSupport.h"

namespace onnx_rewrite {
namespace {

using namespace interp_test;
using Ops = std::vector<std::string>;

Rule mulRule() {
  Rule r("mul");
  r.root(r.op("Mul", {r.cap("x"), r.cap("w")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Sub", {t.ref("x"), t.ref("w")}));
  return r;
}

/// y = Mul(x, w), with x and w declared as graph inputs or initializers.
std::string mulModel(const std::string& inputs, const std::string& initializers = "",
                     const std::string& extra = "", const std::string& outputs = "float[2, 4] y") {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (" + inputs + ") => (" + outputs + ")" +
         (initializers.empty() ? "" : " <" + initializers + ">") + " {\n  y = Mul(x, w)\n" + extra +
         "}\n";
}

bool fused(const Outcome& out) { return out.ops() == Ops{"Sub"}; }

TEST(InterpConstraint, ConstantHoldsForInitializersAndConstantNodes) {
  Rule r = mulRule();
  r.constant("w");
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x", "float[4] w = {1, 2, 3, 4}"), r)));
  Outcome constant_node = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) {
  w = Constant <value = float[4] {1, 2, 3, 4}> ()
  y = Mul(x, w)
}
)",
                                   r);
  EXPECT_EQ(constant_node.ops(), (Ops{"Constant", "Sub"})) << "the Constant is not matched";
  Outcome input = runRules(mulModel("float[2, 4] x, float[4] w"), r);
  EXPECT_FALSE(fused(input));
  EXPECT_EQ(input.reason(), "test.yaml:50:5: w: 'w' is not a constant");
}

TEST(InterpConstraint, ScalarChecksOneElementAndItsRange) {
  Rule r = mulRule();
  r.scalar("w", 0.0, 1.0);
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x", "float w = {0.5}"), r)));
  Outcome big = runRules(mulModel("float[2, 4] x", "float w = {2.0}"), r);
  EXPECT_FALSE(fused(big));
  EXPECT_EQ(big.reason(), "test.yaml:50:5: w: 'w' is 2.0, expected a scalar in [0.0, 1.0]");
  Outcome two =
      runRules(mulModel("float[2, 2] x", "float[2] w = {0.5, 0.5}", "", "float[2, 2] y"), r);
  EXPECT_EQ(two.reason(), "test.yaml:50:5: w: 'w' has 2 elements, expected 1");
  Rule any = mulRule();
  any.scalar("w");
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x", "float w = {7.0}"), any)));
}

TEST(InterpConstraint, ConstantEqualsComparesEveryElement) {
  Rule r = mulRule();
  r.equals("w", F(2.0));
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x", "float w = {2.0000001}"), r)));
  Outcome three = runRules(mulModel("float[2, 4] x", "float w = {3.0}"), r);
  EXPECT_EQ(three.reason(), "test.yaml:50:5: w: 'w' is 3.0, expected 2.0");
  Rule ints = mulRule();
  ints.equals("w", Is({1, 2}));
  EXPECT_TRUE(
      fused(runRules(mulModel("int64[2, 2] x", "int64[2] w = {1, 2}", "", "int64[2, 2] y"), ints)));
  Outcome other =
      runRules(mulModel("int64[2, 2] x", "int64[2] w = {1, 3}", "", "int64[2, 2] y"), ints);
  EXPECT_EQ(other.reason(), "test.yaml:50:5: w: 'w' is [1, 3], expected [1, 2]");
}

TEST(InterpConstraint, RankIsOneOfTheAllowedRanks) {
  Rule r = mulRule();
  r.rank("x", {2, 3});
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x, float[4] w"), r)));
  Outcome rank1 = runRules(mulModel("float[4] x, float[4] w", "", "", "float[4] y"), r);
  EXPECT_EQ(rank1.reason(), "test.yaml:50:5: x: 'x' has rank 1, expected one of [2, 3]");
  Rule exact = mulRule();
  exact.rank("w", {1});
  Outcome unknown = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, float[4] v) => (float[2, 4] y) {
  w = Identity(v)
  y = Mul(x, w)
}
)",
                             exact, /*shape_inference=*/false);
  EXPECT_EQ(unknown.ops(), (Ops{"Identity", "Mul"}));
  EXPECT_EQ(unknown.reason(), "test.yaml:50:5: w: the rank of 'w' is unknown");
}

TEST(InterpConstraint, ElementTypeIsOneOfTheAllowedTypes) {
  Rule r = mulRule();
  r.dtype("x", {"float", "float16"});
  EXPECT_TRUE(
      fused(runRules(mulModel("float16[2, 4] x, float16[4] w", "", "", "float16[2, 4] y"), r)));
  Outcome dbl = runRules(mulModel("double[2, 4] x, double[4] w", "", "", "double[2, 4] y"), r);
  EXPECT_EQ(dbl.reason(),
            "test.yaml:50:5: x: 'x' has element type double, expected one of [float, float16]");
}

TEST(InterpConstraint, ShapeSymbolsAgreeAcrossConstraints) {
  Rule r = mulRule();
  r.shape("x", {"_", "H"});
  r.shape("w", {"H"});
  EXPECT_TRUE(fused(runRules(mulModel("float[N, 4] x, float[4] w", "", "", "float[N, 4] y"), r)));
  EXPECT_TRUE(fused(runRules(mulModel("float[N, K] x, float[K] w", "", "", "float[N, K] y"), r)))
      << "the same dim_param is the same dim";
  Outcome static_mismatch =
      runRules(mulModel("float[N, 4] x, float[1] w", "", "", "float[N, 4] y"), r);
  EXPECT_EQ(static_mismatch.reason(),
            "test.yaml:51:5: w: dim 0 of 'w' is 1, but H is 4 (dim 1 of 'x')");
  Outcome symbol_mismatch =
      runRules(mulModel("float[N, K] x, float[M] w", "", "", "float[N, K] y"), r);
  EXPECT_EQ(symbol_mismatch.reason(),
            "test.yaml:51:5: w: dim 0 of 'w' is M, but H is K (dim 1 of 'x')");
  Rule fixed = mulRule();
  fixed.shape("x", {"2", "_"});
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x, float[4] w"), fixed)));
  Outcome three = runRules(mulModel("float[3, 4] x, float[4] w", "", "", "float[3, 4] y"), fixed);
  EXPECT_EQ(three.reason(), "test.yaml:50:5: x: dim 0 of 'x' is 3, expected 2");
  Outcome rank = runRules(mulModel("float[4] x, float[4] w", "", "", "float[4] y"), fixed);
  EXPECT_EQ(rank.reason(), "test.yaml:50:5: x: 'x' has rank 1, expected 2");
}

TEST(InterpConstraint, ConsumersCountReadersAndGraphOutputs) {
  Rule r("relu_neg");
  r.root(r.op("Relu", {r.named(r.op("Neg", {r.cap("x")}), "n")}), "y");
  r.consumers("n", 1, 1);
  Target t = r.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("x")}));
  Outcome one = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  n = Neg(x)
  y = Relu(n)
}
)",
                         r);
  EXPECT_EQ(one.ops(), Ops{"Sigmoid"});
  Outcome exported = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] n) {
  n = Neg(x)
  y = Relu(n)
}
)",
                              r);
  EXPECT_EQ(exported.ops(), (Ops{"Neg", "Relu"}));
  EXPECT_EQ(exported.reason(), "test.yaml:50:5: n: 'n' has 2 consumers, expected 1");
}

TEST(InterpConstraint, NativePredicatesRunByName) {
  Rule r = mulRule();
  r.native("last_dim_of", {"w", "x"});
  EXPECT_TRUE(fused(runRules(mulModel("float[2, 4] x", "float[4] w = {1, 2, 3, 4}"), r)));
  Outcome other = runRules(mulModel("float[2, 4] x", "float[1] w = {1}"), r);
  EXPECT_FALSE(fused(other));
  EXPECT_EQ(other.reason(),
            "test.yaml:50:5: last_dim_of(w, x): does not hold (v is 1-D and its dim is x's last "
            "dim (the same static size or the same symbol); if x's shape is unknown, v's static "
            "size is > 1)");
}

/// y = Add(a, b) where b is computed as a -> y = Mul(a, 2).
Rule doubledRule() {
  Rule r("doubled");
  r.root(r.op("Add", {r.cap("a"), r.cap("b")}), "y");
  r.equivalent("b", "a");
  Target t = r.rewrite();
  t.replace("y", t.op("Mul", {t.ref("a"), t.tensor("float", F(2.0))}));
  return r;
}

/// y = Add(a, b) with a and b each sliced by `row` from their own table, `ta` and `tb`.
std::string twoSlices(const std::string& ta, const std::string& tb, const std::string& rb = "r") {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (int64[1] r, int64[1] r2) => (float[1, 3] y) <float[2, 3] ta = {" +
         ta + "}, float[2, 3] tb = {" + tb +
         "}, int64[1] zero = {0}> {\n"
         "  a = Slice(ta, r, r, zero)\n"  // never run: only how a and b are computed counts
         "  b = Slice(tb, " +
         rb + ", " + rb + ", zero)\n  y = Add(a, b)\n}\n";
}

TEST(InterpConstraint, EquivalentValuesAreComputedAlikeFromEqualConstants) {
  EXPECT_EQ(runRules(twoSlices("1, 2, 3, 4, 5, 6", "1, 2, 3, 4, 5, 6"), doubledRule()).ops(),
            (Ops{"Slice", "Mul"}))
      << "equal tables sliced by the same input";
  Outcome other_table = runRules(twoSlices("1, 2, 3, 4, 5, 6", "1, 2, 3, 4, 5, 7"), doubledRule());
  EXPECT_EQ(other_table.ops(), (Ops{"Slice", "Slice", "Add"}));
  EXPECT_EQ(other_table.reason(), "test.yaml:50:5: b: 'b' is not computed as 'a' (a) is");
  Outcome other_input =
      runRules(twoSlices("1, 2, 3, 4, 5, 6", "1, 2, 3, 4, 5, 6", "r2"), doubledRule());
  EXPECT_EQ(other_input.ops(), (Ops{"Slice", "Slice", "Add"})) << "different graph inputs";
  EXPECT_EQ(runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Add(x, x)
}
)",
                     doubledRule())
                .ops(),
            Ops{"Mul"})
      << "a value is equivalent to itself";
}

TEST(InterpConstraint, EquivalentNeedsEqualAttributesAndNoRandomness) {
  Outcome attrs = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 1] y) {
  a = ReduceSum <keepdims = 1> (x)
  b = ReduceMax <keepdims = 1> (x)
  y = Add(a, b)
}
)",
                           doubledRule());
  EXPECT_EQ(attrs.ops(), (Ops{"ReduceSum", "ReduceMax", "Add"})) << "different ops";
  Outcome keep = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] y) {
  a = Softmax <axis = 1> (x)
  b = Softmax <axis = 0> (x)
  y = Add(a, b)
}
)",
                          doubledRule());
  EXPECT_EQ(keep.ops(), (Ops{"Softmax", "Softmax", "Add"})) << "different attributes";
  Outcome same = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] y) {
  a = Softmax <axis = 1> (x)
  b = Softmax <axis = 1> (x)
  y = Add(a, b)
}
)",
                          doubledRule());
  EXPECT_EQ(same.ops(), (Ops{"Softmax", "Mul"})) << "the same op and attributes on one input";
  Outcome random = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] y) {
  a = RandomUniformLike <seed = 1.0> (x)
  b = RandomUniformLike <seed = 1.0> (x)
  y = Add(a, b)
}
)",
                            doubledRule());
  EXPECT_EQ(random.ops(), (Ops{"RandomUniformLike", "RandomUniformLike", "Add"}))
      << "two draws are two values";
}

TEST(InterpConstraint, AConstraintOnANameOfAnUntakenAlternativeHolds) {
  // y = Sqrt(Pow(d, p) | Mul(d, d)) where p == 2: the Mul form binds no p.
  Rule r("sqrt_square");
  ExprId pow = r.op("Pow", {r.cap("d"), r.cap("p")});
  ExprId mul = r.op("Mul", {r.cap("d"), r.cap("d")});
  r.root(r.op("Sqrt", {r.alt({pow, mul})}), "y");
  r.equals("p", F(2.0));
  Target t = r.rewrite();
  t.replace("y", t.op("Abs", {t.ref("d")}));
  EXPECT_EQ(runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] d) => (float[2] y) {
  m = Mul(d, d)
  y = Sqrt(m)
}
)",
                     r)
                .ops(),
            Ops{"Abs"});
  Outcome cube = runRules(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] d) => (float[2] y) <float three = {3.0}> {
  m = Pow(d, three)
  y = Sqrt(m)
}
)",
                          r);
  EXPECT_EQ(cube.ops(), (Ops{"Pow", "Sqrt"}));
  EXPECT_EQ(cube.reason(), "test.yaml:50:5: p: 'three' is 3.0, expected 2.0");
}

}  // namespace
}  // namespace onnx_rewrite
