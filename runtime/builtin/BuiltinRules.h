//===- BuiltinRules.h - the rule set onnx-rewrite ships -------------------===//
#pragma once

#include "runtime/driver/RuleSet.h"

namespace onnx_rewrite {

/// A fresh copy of the shipped rules: the hand-written C++ ones (runtime/builtin), then the
/// rules of rules/ as rulec compiled them (generated/), in declaration order.
RuleSet builtinRules();

}  // namespace onnx_rewrite
