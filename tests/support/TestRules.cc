//===- TestRules.cc - small hand-written rules that exercise the driver ---===//
#include "tests/support/TestRules.h"

#include "runtime/driver/Rewriter.h"
#include "runtime/match/MatchSupport.h"

namespace onnx_rewrite::testing {
namespace {

class RenameRule : public RewritePattern {
 public:
  RenameRule(const std::string& name, OpId from, OpId to, int priority)
      : RewritePattern(RuleInfo{name, from, priority, {"test"}, "tests/support", {to}}), to_(to) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable({root}, {y})) return false;
    NodeSpec spec;
    spec.op = to_;
    spec.inputs = {g.node(root).input(0)};
    NodeId n = rw.createNode(std::move(spec));
    return rw.replaceMatch({root}, {{y, g.node(n).output(0)}});
  }

 private:
  OpId to_;
};

class FusePairRule : public RewritePattern {
 public:
  FusePairRule(const std::string& name, OpId outer, OpId inner, OpId to, int priority)
      : RewritePattern(RuleInfo{name, outer, priority, {"test"}, "tests/support", {to}}),
        inner_(inner),
        to_(to) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    NodeId inner = producerIf(g, g.node(root).input(0), inner_);
    if (inner == kNoId)
      return rw.notifyMatchFailure([&] { return "input 0 is not produced by " + inner_.str(); });
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable({root, inner}, {y})) return false;
    NodeSpec spec;
    spec.op = to_;
    spec.inputs = {g.node(inner).input(0)};
    NodeId n = rw.createNode(std::move(spec));
    return rw.replaceMatch({root, inner}, {{y, g.node(n).output(0)}});
  }

 private:
  OpId inner_, to_;
};

class BypassRule : public RewritePattern {
 public:
  BypassRule(const std::string& name, OpId op, int priority)
      : RewritePattern(RuleInfo{name, op, priority, {"test"}, "tests/support", {}}) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    const ValueId y = g.node(root).output(0);
    if (!rw.checkReplaceable({root}, {y})) return false;
    return rw.replaceMatch({root}, {{y, g.node(root).input(0)}});
  }
};

class MulByConstantRule : public RewritePattern {
 public:
  MulByConstantRule(const std::string& name, double value, int priority)
      : RewritePattern(RuleInfo{name,
                                OpId::get("", "Mul"),
                                priority,
                                {"test"},
                                "tests/support",
                                {OpId::get("", "Identity")}}),
        value_(value) {}

  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    Graph& g = rw.graph();
    const Node& mul = g.node(root);
    for (int side = 0; side < 2; ++side) {
      if (!isScalarConstant(rw.model(), g, mul.input(1 - side), value_, 1e-6)) continue;
      const ValueId y = mul.output(0);
      if (!rw.checkReplaceable({root}, {y})) return false;
      NodeSpec spec;
      spec.op = OpId::get("", "Identity");
      spec.inputs = {mul.input(side)};
      NodeId n = rw.createNode(std::move(spec));
      return rw.replaceMatch({root}, {{y, g.node(n).output(0)}});
    }
    return rw.notifyMatchFailure(
        [&] { return "no operand is the constant " + std::to_string(value_); });
  }

 private:
  double value_;
};

}  // namespace

std::unique_ptr<RewritePattern> makeRenameRule(const std::string& name, OpId from, OpId to,
                                               int priority) {
  return std::make_unique<RenameRule>(name, from, to, priority);
}

std::unique_ptr<RewritePattern> makeFusePairRule(const std::string& name, OpId outer, OpId inner,
                                                 OpId to, int priority) {
  return std::make_unique<FusePairRule>(name, outer, inner, to, priority);
}

std::unique_ptr<RewritePattern> makeBypassRule(const std::string& name, OpId op, int priority) {
  return std::make_unique<BypassRule>(name, op, priority);
}

std::unique_ptr<RewritePattern> makeMulByConstantRule(const std::string& name, double value,
                                                      int priority) {
  return std::make_unique<MulByConstantRule>(name, value, priority);
}

}  // namespace onnx_rewrite::testing
