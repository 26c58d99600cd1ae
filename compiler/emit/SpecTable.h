//===- SpecTable.h - a rule's gen::RuleSpec as a C++ constant table -------===//
//
// The plan's RuleSpec (runtime/match/RuleSpec.h) printed as one aggregate
// initialiser, members in declaration order, each row stopping at its last
// non-default member. The interpreter uses the very same RuleSpec value, so the
// checks and messages of both back ends read equal data by construction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/emit/CppText.h"
#include "runtime/match/RuleSpec.h"

namespace onnx_rewrite::cpp {

/// The aliases spec tables use for enum values; emitted once per generated file.
std::string specTableAliases();

/// `spec` as an initializer; `expr_notes[i]` is printed above expr i's row.
Init specTable(const gen::RuleSpec& spec, const std::vector<std::string>& expr_notes);

/// `lit` as an expression of type gen::Literal.
std::string literalText(const gen::Literal& lit);

}  // namespace onnx_rewrite::cpp
