//===- BuiltinRules.cc - the rule set onnx-rewrite ships ------------------===//
#include "runtime/builtin/BuiltinRules.h"

#include "generated/registry.gen.h"

namespace onnx_rewrite {

RuleSet builtinRules() {
  RuleSet rules;
  populateGeneratedRules(rules);  // rules/, compiled by rulec into generated/
  return rules;
}

}  // namespace onnx_rewrite
