//===- OpsetForms.h - attributes that later opsets turned into inputs -----===//
//
// Some ONNX ops took a parameter as an attribute up to some opset and as an input
// from then on: ReduceMean's `axes` is an attribute up to opset 17 and input 1 from
// 18, Squeeze's `axes` input 1 from 13, Slice's starts/ends/axes/steps inputs 1-4
// from 10. Rules write such a parameter once, as an attribute; matchers read
// whichever form a node has, and the checks accept the attribute at every opset.
//
// This table is plain data with no ONNX schema dependency, so the runtime (the
// interpreter and rulec's generated code) and the compiler's checks share it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace onnx_rewrite {

/// One parameter that moved from an attribute to an input.
struct OpsetForm {
  std::string_view domain;  ///< "" for ONNX
  std::string_view op;      ///< ReduceMean
  std::string_view attr;    ///< axes
  uint32_t input_index;     ///< the input it occupies from `since_version` on
  int64_t since_version;    ///< first opset of the domain in which it is an input
};

/// The form of parameter `attr` of op (`domain`, `op`) if it is one that moved to an input,
/// else null. `domain` "" and "ai.onnx" both mean ONNX.
const OpsetForm* findOpsetForm(std::string_view domain, std::string_view op, std::string_view attr);

/// The moved parameter that occupies input `input_index` of op (`domain`, `op`) from its
/// `since_version` on, or null: Slice's input 3 is `axes`.
const OpsetForm* findOpsetFormAtInput(std::string_view domain, std::string_view op,
                                      uint32_t input_index);

/// Every entry, in a fixed order (ops alphabetically, then input index).
const std::vector<OpsetForm>& allOpsetForms();

}  // namespace onnx_rewrite
