//===- InterpretedMode.cc - rule_tests runs the rules of rules/ -----------===//
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite::testing {

RuleMode shippedRuleMode() { return RuleMode::kInterpreted; }

}  // namespace onnx_rewrite::testing
