//===- BuiltinRules.h - the rule set onnx-rewrite ships -------------------===//
#pragma once

#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite {

/// A fresh copy of the shipped rules, in declaration order.
RuleSet builtinRules();

}  // namespace onnx_rewrite
