//===- BuiltinRules.h - the rule set onnx-rewrite ships -------------------===//
#pragma once

#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite {

/// A fresh copy of the shipped rules: the rules of rules/ as rulec compiled them
/// (generated/), files in byte order of their names, rules in file order.
RuleSet builtinRules();

}  // namespace onnx_rewrite
