//===- OpsetFormsTest.cc - the attribute-to-input table -------------------===//
//
// Each entry of runtime/match/OpsetForms.h as the ONNX changelog has it: which
// input a moved attribute occupies and from which opset.
//
//===----------------------------------------------------------------------===//
#include "runtime/match/OpsetForms.h"

#include <gtest/gtest.h>

namespace onnx_rewrite {
namespace {

void expectForm(std::string_view op, std::string_view attr, uint32_t input, int64_t since) {
  const OpsetForm* form = findOpsetForm("", op, attr);
  ASSERT_NE(form, nullptr) << op << "." << attr;
  EXPECT_EQ(form->input_index, input) << op << "." << attr;
  EXPECT_EQ(form->since_version, since) << op << "." << attr;
}

TEST(OpsetForms, ReduceOpsMoveAxesToInput1AtOpset18) {
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    expectForm(op, "axes", 1, 18);
}

TEST(OpsetForms, ReduceSumMovesAxesAtOpset13) { expectForm("ReduceSum", "axes", 1, 13); }

TEST(OpsetForms, SqueezeAndUnsqueezeMoveAxesAtOpset13) {
  expectForm("Squeeze", "axes", 1, 13);
  expectForm("Unsqueeze", "axes", 1, 13);
}

TEST(OpsetForms, SplitMovesSplitAtOpset13) { expectForm("Split", "split", 1, 13); }

TEST(OpsetForms, SliceMovesItsFourParametersToInputs1To4AtOpset10) {
  expectForm("Slice", "starts", 1, 10);
  expectForm("Slice", "ends", 2, 10);
  expectForm("Slice", "axes", 3, 10);
  expectForm("Slice", "steps", 4, 10);
}

TEST(OpsetForms, AiOnnxIsTheOnnxDomain) {
  const OpsetForm* form = findOpsetForm("ai.onnx", "ReduceMean", "axes");
  ASSERT_NE(form, nullptr);
  EXPECT_EQ(form, findOpsetForm("", "ReduceMean", "axes"));
}

TEST(OpsetForms, AttributesThatNeverMovedHaveNoForm) {
  EXPECT_EQ(findOpsetForm("", "ReduceMean", "keepdims"), nullptr);
  EXPECT_EQ(findOpsetForm("", "Transpose", "perm"), nullptr);
}

TEST(OpsetForms, OtherDomainsHaveNoForms) {
  EXPECT_EQ(findOpsetForm("com.microsoft", "ReduceMean", "axes"), nullptr);
}

TEST(OpsetForms, FindsTheParameterAtAnInput) {
  const OpsetForm* form = findOpsetFormAtInput("", "Slice", 3);
  ASSERT_NE(form, nullptr);
  EXPECT_EQ(form->attr, "axes");
  EXPECT_EQ(findOpsetFormAtInput("", "Slice", 0), nullptr);
  EXPECT_EQ(findOpsetFormAtInput("", "Slice", 5), nullptr);
}

TEST(OpsetForms, TableListsSeventeenParameters) { EXPECT_EQ(allOpsetForms().size(), 17u); }

}  // namespace
}  // namespace onnx_rewrite
