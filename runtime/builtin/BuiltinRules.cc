//===- BuiltinRules.cc - the rule set onnx-rewrite ships ------------------===//
#include "runtime/builtin/BuiltinRules.h"

#include "runtime/builtin/GeluRules.h"

namespace onnx_rewrite {

RuleSet builtinRules() {
  RuleSet rules;
  rules.add(makeGeluErfRule());
  rules.add(makeBiasGeluRule());
  return rules;
}

}  // namespace onnx_rewrite
