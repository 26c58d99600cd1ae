//===- RulePlanTest.cc - the plan both back ends consume ------------------===//
//
// What compiler/plan decides for the interpreter and the C++ emitter alike:
// slot and symbol numbering, roots, each variant's build order and outputs, the
// ops a rule creates, and the rules it refuses. Rules are built with the
// interpreter tests' RuleBuilder (locations: exprs at line = creation order,
// constraints at 50 + index, target exprs at 100 + index).
//
//===----------------------------------------------------------------------===//
#include "compiler/plan/RulePlan.h"

#include <gtest/gtest.h>

#include "tests/unit/interp/RuleBuilder.h"

namespace onnx_rewrite {
namespace {

using interp_test::at;
using interp_test::Rule;
using interp_test::Target;
using Strings = std::vector<std::string>;

/// y = Relu(Neg(x)) -> Sigmoid(x).
Rule reluNeg() {
  Rule r("relu_neg");
  const ir::ExprId x = r.cap("x");
  r.root(r.op("Relu", {r.named(r.op("Neg", {x}), "n")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("x")}));
  return r;
}

std::string planError(const Rule& r) {
  try {
    plan::planRule(*r.build());
  } catch (const plan::PlanError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RulePlan, NumbersSlotsByFirstAppearanceInExprOrder) {
  const plan::RulePlan p = plan::planRule(*reluNeg().build());
  EXPECT_EQ(p.spec.slot_names, (Strings{"x", "n", "y"}));
  EXPECT_EQ(p.spec.exprs[0].slot, 0u);
  EXPECT_EQ(p.spec.exprs[1].slot, 1u);
  EXPECT_EQ(p.spec.exprs[2].slot, 2u);
  EXPECT_EQ(p.spec.exprs[1].label, "Neg");
  EXPECT_EQ(p.spec.exprs[1].num_inputs, 1u);
}

TEST(RulePlan, RootsAreTheDistinctOpsOfRootAlternatives) {
  Rule r("div_or_mul");
  const ir::ExprId d = r.cap("d"), s = r.cap("s");
  r.root(r.alt({r.op("Div", {d, s}), r.op("Mul", {d, s}), r.op("Div", {s, d})}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Div", {t.ref("d"), t.ref("s")}));
  const plan::RulePlan p = plan::planRule(*r.build());
  ASSERT_EQ(p.roots.size(), 2u);
  EXPECT_EQ(p.roots[0].op.op, "Div");
  EXPECT_EQ(p.roots[1].op.op, "Mul");
}

TEST(RulePlan, BuildsInputsFirstAndOmitsOutputsNothingReads) {
  Rule r("skip");
  const ir::ExprId x = r.cap("x"), s = r.cap("s");
  r.root(r.named(r.op("Add", {x, s}), "sum"), "sum");
  Target t = r.rewrite();
  const uint32_t node = t.op("com.microsoft.SkipLayerNormalization", {t.ref("x"), t.ref("s")});
  t.replace("sum", t.out(node, 3));
  const plan::RulePlan p = plan::planRule(*r.build());
  const plan::TargetPlan& tp = p.targets[0];
  EXPECT_EQ(tp.order, (std::vector<uint32_t>{0, 1, 2, 3})) << "refs, the node, its output";
  EXPECT_EQ(tp.exprs[node].num_outputs, 4u);
  EXPECT_EQ(tp.exprs[node].omitted, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(p.creates.size(), 1u);
  EXPECT_EQ(p.creates[0].domain, "com.microsoft");
  ASSERT_EQ(tp.replacements.size(), 1u);
  EXPECT_EQ(tp.replacements[0].slot, 2u) << "sum, after x and s";
}

TEST(RulePlan, NumbersShapeSymbolsAcrossConstraints) {
  Rule r = reluNeg();
  r.shape("x", {"B", "7", "_"});
  r.shape("n", {"B", "H"});
  const plan::RulePlan p = plan::planRule(*r.build());
  EXPECT_EQ(p.spec.num_symbols, 2u);
  using Kind = gen::ConstraintSpec::Dim::Kind;
  const auto& dims = p.spec.constraints[1].dim_plans;
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0].kind, Kind::kSymbol);
  EXPECT_EQ(dims[0].symbol, 0u);
  EXPECT_EQ(dims[1].symbol, 1u);
  EXPECT_EQ(p.spec.constraints[0].dim_plans[1].kind, Kind::kStatic);
  EXPECT_EQ(p.spec.constraints[0].dim_plans[1].value, 7);
}

TEST(RulePlan, TensorLiteralsDefaultToInt64OrFloatAndListsAreOneDimensional) {
  Rule r = reluNeg();
  Target t(r.get(), 0);
  const uint32_t ints = t.tensor("", interp_test::Is({1, 2, 3}));
  const uint32_t half = t.tensor("float16", interp_test::F(0.5));
  const plan::RulePlan p = plan::planRule(*r.build());
  EXPECT_EQ(p.targets[0].exprs[ints].elem_type, 7);
  EXPECT_EQ(p.targets[0].exprs[ints].dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(p.targets[0].exprs[half].elem_type, 10);
  EXPECT_TRUE(p.targets[0].exprs[half].dims.empty());
}

TEST(RulePlan, RejectsARewriteReadingANameTheMatchNeverBinds) {
  Rule r("unbound");
  r.root(r.op("Relu", {r.cap("x")}), "y");
  Target t = r.rewrite();
  t.replace("y", t.op("Sigmoid", {t.ref("w")}));
  EXPECT_EQ(planError(r),
            "test.yaml:100:1: unbound: the rewrite reads 'w', which the match never binds");
}

TEST(RulePlan, RejectsUnknownElementTypes) {
  Rule r = reluNeg();
  r.dtype("x", {"float32"});
  EXPECT_EQ(planError(r), "test.yaml:50:5: relu_neg: unknown element type 'float32'");
}

TEST(RulePlan, LeavesNativeFunctionsToTheBackEnds) {
  Rule r = reluNeg();
  r.native("no_such_check", {"x"});
  const plan::RulePlan p = plan::planRule(*r.build());
  EXPECT_EQ(p.spec.constraints[0].native, "no_such_check");
  EXPECT_EQ(p.spec.constraints[0].arg_slots, (std::vector<uint32_t>{0}));
  EXPECT_EQ(p.spec.constraints[0].predicate, nullptr)
      << "bound by the interpreter or generated code";
}

}  // namespace
}  // namespace onnx_rewrite
