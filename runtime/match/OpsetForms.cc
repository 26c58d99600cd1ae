//===- OpsetForms.cc - attributes that later opsets turned into inputs ----===//
//
// The entries follow the ONNX operator changelog: the Reduce ops other than
// ReduceSum moved `axes` to input 1 in opset 18 and ReduceSum in opset 13;
// Squeeze and Unsqueeze moved `axes` and Split moved `split` to input 1 in opset
// 13; Slice moved starts/ends/axes/steps to inputs 1-4 in opset 10.
//
//===----------------------------------------------------------------------===//
#include "runtime/match/OpsetForms.h"

namespace onnx_rewrite {
namespace {

bool isOnnx(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

}  // namespace

const std::vector<OpsetForm>& allOpsetForms() {
  static const std::vector<OpsetForm> kForms = {
      {"", "ReduceL1", "axes", 1, 18},     {"", "ReduceL2", "axes", 1, 18},
      {"", "ReduceLogSum", "axes", 1, 18}, {"", "ReduceLogSumExp", "axes", 1, 18},
      {"", "ReduceMax", "axes", 1, 18},    {"", "ReduceMean", "axes", 1, 18},
      {"", "ReduceMin", "axes", 1, 18},    {"", "ReduceProd", "axes", 1, 18},
      {"", "ReduceSum", "axes", 1, 13},    {"", "ReduceSumSquare", "axes", 1, 18},
      {"", "Slice", "starts", 1, 10},      {"", "Slice", "ends", 2, 10},
      {"", "Slice", "axes", 3, 10},        {"", "Slice", "steps", 4, 10},
      {"", "Split", "split", 1, 13},       {"", "Squeeze", "axes", 1, 13},
      {"", "Unsqueeze", "axes", 1, 13},
  };
  return kForms;
}

const OpsetForm* findOpsetForm(std::string_view domain, std::string_view op,
                               std::string_view attr) {
  if (!isOnnx(domain)) return nullptr;
  for (const OpsetForm& form : allOpsetForms())
    if (form.op == op && form.attr == attr) return &form;
  return nullptr;
}

const OpsetForm* findOpsetFormAtInput(std::string_view domain, std::string_view op,
                                      uint32_t input_index) {
  if (!isOnnx(domain)) return nullptr;
  for (const OpsetForm& form : allOpsetForms())
    if (form.op == op && form.input_index == input_index) return &form;
  return nullptr;
}

}  // namespace onnx_rewrite
