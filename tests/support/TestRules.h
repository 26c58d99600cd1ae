//===- TestRules.h - small hand-written rules that exercise the driver ----===//
#pragma once

#include <memory>
#include <string>

#include "runtime/driver/RewritePattern.h"

namespace onnx_rewrite::testing {

/// Replaces each unary node of op `from` by a node of op `to` on the same input.
std::unique_ptr<RewritePattern> makeRenameRule(const std::string& name, OpId from, OpId to,
                                               int priority = 0);

/// outer(inner(x)) with single-use inner -> to(x).
std::unique_ptr<RewritePattern> makeFusePairRule(const std::string& name, OpId outer, OpId inner,
                                                 OpId to, int priority = 0);

/// op(x) -> x: the node disappears and its readers read x (e.g. Identity elimination).
std::unique_ptr<RewritePattern> makeBypassRule(const std::string& name, OpId op, int priority = 0);

/// Mul(x, c) with c a scalar constant equal to `value` -> Identity(x); reads the constant.
std::unique_ptr<RewritePattern> makeMulByConstantRule(const std::string& name, double value,
                                                      int priority = 0);

}  // namespace onnx_rewrite::testing
