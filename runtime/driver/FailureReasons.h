//===- FailureReasons.h - the reasons one rule did not apply --------------===//
//
// A listener that keeps what --explain RULE would print for one rule: the failure
// reasons of the rule, and of its per-root-op parts ("rule/Op": an interpreted rule
// whose alternatives are rooted at different ops runs as several patterns). Rule tests
// (onnx-rewrite test) and the driver's tests check reasons with it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/driver/RewriteListener.h"
#include "runtime/driver/RewritePattern.h"

namespace onnx_rewrite {

/// True when `pattern` is rule `rule` or one of its per-root-op parts ("rule/Op").
inline bool isPartOfRule(const std::string& pattern, const std::string& rule) {
  return pattern == rule || pattern.rfind(rule + "/", 0) == 0;
}

class FailureReasons : public RewriteListener {
 public:
  explicit FailureReasons(std::string rule) : rule_(std::move(rule)) {}
  bool wantsMatchFailures() const override { return true; }
  void onMatchFailure(const RewritePattern& rule, Graph&, NodeId,
                      const std::string& reason) override {
    if (isPartOfRule(rule.name(), rule_)) reasons.push_back(reason);
  }
  /// In the order they were reported.
  std::vector<std::string> reasons;

 private:
  std::string rule_;
};

}  // namespace onnx_rewrite
