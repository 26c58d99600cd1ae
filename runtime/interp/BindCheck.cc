//===- BindCheck.cc - would the interpreter and generated code run a rule? ===//
#include "runtime/interp/BindCheck.h"

#include <memory>

#include "runtime/interp/BoundRule.h"

namespace onnx_rewrite::interp {

std::optional<plan::PlanError> bindError(const ir::Rule& rule) {
  try {
    (void)bindRule(std::make_shared<const ir::Rule>(rule));
  } catch (const plan::PlanError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace onnx_rewrite::interp
