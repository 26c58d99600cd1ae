//===- RuleSet.h - owning collection of rules and their selection --------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/driver/RewritePattern.h"

namespace onnx_rewrite {

/// Owns rules in declaration order (the tie-break among equal priorities).
class RuleSet {
 public:
  /// Adds a rule. Throws std::invalid_argument if a rule of that name exists.
  void add(std::unique_ptr<RewritePattern> rule);
  /// Adds every rule of `other`, moving them.
  void append(RuleSet&& other);
  const std::vector<std::unique_ptr<RewritePattern>>& rules() const { return rules_; }
  /// The rule named `name`, or null.
  const RewritePattern* find(const std::string& name) const;
  size_t size() const { return rules_.size(); }

 private:
  std::vector<std::unique_ptr<RewritePattern>> rules_;
};

/// Which rules of a set to run. Patterns are RE2 regular expressions searched in the rule
/// name or any of its tags (like grep: "gelu" selects "bias_gelu").
struct RuleFilter {
  std::string only;  ///< if non-empty, keep only rules matching this
  std::string skip;  ///< if non-empty, drop rules matching this
  /// Rules tagged kOptInTag run only when this matches their name or one of their tags
  /// (e.g. "approximation"); the others are not affected.
  std::string enable;
};

/// The tag of rules that are off unless RuleFilter::enable selects them: rewrites that
/// change what the model computes within a tolerance (Gelu's tanh approximation), or
/// on inputs outside an assumption the model does not state (BERT's mask as mask_index:
/// a 0/1 attention_mask), which ONNX Runtime also leaves to an explicit option.
inline constexpr const char* kOptInTag = "opt_in";

/// Whether `rule` carries kOptInTag.
bool isOptIn(const RewritePattern& rule);

/// The rules of `set` that pass `filter`, in declaration order. Throws
/// std::invalid_argument naming the option and RE2's reason for a malformed pattern.
std::vector<const RewritePattern*> selectRules(const RuleSet& set, const RuleFilter& filter);

/// Why `filter` drops `rule` ("--skip 'norm' matches its name"), or empty if it keeps it.
/// Throws like selectRules for a malformed pattern.
std::string whyFilteredOut(const RewritePattern& rule, const RuleFilter& filter);

}  // namespace onnx_rewrite
