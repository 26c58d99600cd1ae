//===- CompiledMode.cc - rule_tests_compiled runs the rules of generated/ -===//
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite::testing {

RuleMode shippedRuleMode() { return RuleMode::kCompiled; }

}  // namespace onnx_rewrite::testing
