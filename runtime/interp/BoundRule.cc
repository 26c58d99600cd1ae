//===- BoundRule.cc - a rule's plan, bound to the running program ---------===//
#include "runtime/interp/BoundRule.h"

#include <stdexcept>
#include <string>

#include "runtime/match/GeneratedSupport.h"

namespace onnx_rewrite::interp {
namespace {

/// Resolves what the plan names but only the program has.
class Binder {
 public:
  explicit Binder(std::shared_ptr<const ir::Rule> rule) {
    bound_.rule = std::move(rule);
    bound_.plan = plan::planRule(*bound_.rule);
  }

  BoundRule bind() {
    const ir::Rule& r = *bound_.rule;
    for (const ir::Expr& e : r.pattern.exprs)
      bound_.ops.push_back(e.kind == ir::Expr::Kind::kOp ? OpId::get(e.domain, e.op) : OpId());
    for (size_t i = 0; i < r.pattern.constraints.size(); ++i)
      bindConstraint(r.pattern.constraints[i], bound_.plan.spec.constraints[i]);
    for (const plan::TargetPlan& tp : bound_.plan.targets) {
      std::vector<BoundTargetExpr>& exprs = bound_.targets.emplace_back();
      for (size_t i = 0; i < tp.exprs.size(); ++i)
        exprs.push_back(bindTargetExpr(tp.target->exprs[i], tp.exprs[i]));
    }
    for (const plan::Root& root : bound_.plan.roots)
      bound_.roots.emplace_back(OpId::get(root.op.domain, root.op.op), root.output);
    for (const plan::OpName& op : bound_.plan.creates)
      bound_.creates.push_back(OpId::get(op.domain, op.op));
    return std::move(bound_);
  }

 private:
  [[noreturn]] void error(const ir::SourceLoc& loc, const std::string& what) const {
    const ir::Rule& r = *bound_.rule;
    const ir::SourceLoc& at = loc.known() || !loc.file.empty() ? loc : r.loc;
    throw plan::PlanError(at, r.name, what);
  }

  /// The registry entry `name` of a kind, taking `args` arguments.
  template <typename Entry, typename Find>
  const Entry* lookUp(Find find, const char* kind, const std::string& name, size_t args,
                      const ir::SourceLoc& loc) const {
    const Entry* entry = find(name);
    if (!entry) error(loc, std::string("no ") + kind + " named '" + name + "'");
    if (!entry->accepts(args))
      error(loc, std::string(kind) + " " + name + " takes " + std::to_string(entry->arity) +
                     " arguments, not " + std::to_string(args));
    return entry;
  }

  void bindConstraint(const ir::Constraint& c, gen::ConstraintSpec& spec) const {
    if (c.kind == ir::Constraint::Kind::kNative)
      spec.predicate = lookUp<NativePredicate>(findNativePredicate, "native predicate", c.native,
                                               c.args.size(), c.loc);
  }

  BoundTargetExpr bindTargetExpr(const ir::TargetExpr& te, const plan::TargetExprPlan& xp) const {
    BoundTargetExpr out;
    if (te.kind == ir::TargetExpr::Kind::kTensor) {
      if (!te.helper.empty()) {
        out.helper = lookUp<TensorHelper>(findTensorHelper, "tensor helper", te.helper,
                                          te.args.size(), te.loc);
        for (const std::string& a : te.args) out.arg_names.push_back(a.c_str());
      } else if (!te.like.empty()) {
        out.like_values = plan::specLiteral(te.literal);
      } else {
        out.tensor = literalTensor(te, xp);
      }
    }
    if (te.kind != ir::TargetExpr::Kind::kOp || te.op.empty()) return out;
    out.op = OpId::get(te.domain, te.op);
    for (const ir::TargetAttr& a : te.attrs) {
      BoundAttr& ba = out.attrs.emplace_back();
      const ir::SourceLoc& loc = a.loc.known() ? a.loc : te.loc;
      if (a.kind == ir::TargetAttr::Kind::kLiteral)
        ba.literal = gen::literalAttribute(plan::specLiteral(a.literal), a.name);
      if (a.kind != ir::TargetAttr::Kind::kHelper) continue;
      ba.helper = lookUp<AttributeHelper>(findAttributeHelper, "attribute helper", a.ref,
                                          a.args.size(), loc);
      for (const std::string& arg : a.args) ba.arg_names.push_back(arg.c_str());
    }
    return out;
  }

  /// One implementation with the generated rules (gen::literalTensor), over the plan's
  /// element type and dims.
  onnx::TensorProto literalTensor(const ir::TargetExpr& te, const plan::TargetExprPlan& xp) const {
    std::optional<onnx::TensorProto> t =
        gen::literalTensor(plan::specLiteral(te.literal), xp.elem_type, xp.dims);
    if (!t) error(te.loc, "tensor literals of element type " + te.elem_type + " are not supported");
    return std::move(*t);
  }

  BoundRule bound_;
};

}  // namespace

BoundRule bindRule(std::shared_ptr<const ir::Rule> rule) { return Binder(std::move(rule)).bind(); }

}  // namespace onnx_rewrite::interp
