//===- RuleSet.cc - owning collection of rules and their selection -------===//
#include "runtime/driver/RuleSet.h"

#include <stdexcept>

#include <re2/re2.h>

namespace onnx_rewrite {
namespace {

std::unique_ptr<RE2> compile(const std::string& pattern, const char* option) {
  if (pattern.empty()) return nullptr;
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok())
    throw std::invalid_argument(std::string("bad ") + option + " pattern '" + pattern +
                                "': " + re->error());
  return re;
}

/// What of `rule` `re` finds: "its name", "its tag 'ort'", or empty.
std::string matchedPart(const RE2& re, const RewritePattern& rule) {
  if (RE2::PartialMatch(rule.name(), re)) return "its name";
  for (const std::string& tag : rule.info().tags)
    if (RE2::PartialMatch(tag, re)) return "its tag '" + tag + "'";
  return {};
}

bool selects(const RE2& re, const RewritePattern& rule) { return !matchedPart(re, rule).empty(); }

/// An opt-in rule that `enable` (null: no --enable) does not select.
bool heldBack(const RE2* enable, const RewritePattern& rule) {
  return isOptIn(rule) && !(enable && selects(*enable, rule));
}

}  // namespace

void RuleSet::add(std::unique_ptr<RewritePattern> rule) {
  if (find(rule->name())) throw std::invalid_argument("two rules are named '" + rule->name() + "'");
  rules_.push_back(std::move(rule));
}

void RuleSet::append(RuleSet&& other) {
  for (auto& rule : other.rules_) add(std::move(rule));
  other.rules_.clear();
}

const RewritePattern* RuleSet::find(const std::string& name) const {
  for (const auto& rule : rules_)
    if (rule->name() == name) return rule.get();
  return nullptr;
}

bool isOptIn(const RewritePattern& rule) {
  for (const std::string& tag : rule.info().tags)
    if (tag == kOptInTag) return true;
  return false;
}

std::vector<const RewritePattern*> selectRules(const RuleSet& set, const RuleFilter& filter) {
  auto only = compile(filter.only, "--only");
  auto skip = compile(filter.skip, "--skip");
  auto enable = compile(filter.enable, "--enable");
  std::vector<const RewritePattern*> result;
  for (const auto& rule : set.rules()) {
    if (heldBack(enable.get(), *rule)) continue;
    if (only && !selects(*only, *rule)) continue;
    if (skip && selects(*skip, *rule)) continue;
    result.push_back(rule.get());
  }
  return result;
}

std::string whyFilteredOut(const RewritePattern& rule, const RuleFilter& filter) {
  auto only = compile(filter.only, "--only");
  auto skip = compile(filter.skip, "--skip");
  auto enable = compile(filter.enable, "--enable");
  if (heldBack(enable.get(), rule))
    return std::string("it is tagged ") + kOptInTag + " and runs only when --enable matches it" +
           (filter.enable.empty() ? std::string() : " ('" + filter.enable + "' does not)");
  if (only && !selects(*only, rule)) {
    std::string tags;
    for (const std::string& t : rule.info().tags) tags += (tags.empty() ? "" : ", ") + t;
    return "--only '" + filter.only + "' matches neither its name nor its tags" +
           (tags.empty() ? std::string(" (it has none)") : " (" + tags + ")");
  }
  if (skip && selects(*skip, rule))
    return "--skip '" + filter.skip + "' matches " + matchedPart(*skip, rule);
  return {};
}

}  // namespace onnx_rewrite
