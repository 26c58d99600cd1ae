//===- ExpandFragments.h - fragments copied into the rules that use them ---===//
//
// Both front ends read a fragment use as an op call (`qr = head_split(q)`,
// `(head_split:$qr $q)`); this pass, run on everything loaded together before the
// checks, replaces each use by a copy of the fragment's body, so later passes
// (checks, plans, interpreter, C++ emitter) see plain Rule IR, the same for YAML
// and TableGen.
//
// A copy is hygienic: value parameters become the use's arguments, attribute
// parameters the use's `name=...` (or their default), and every name the body
// binds or captures becomes `<fragment>.<n>.<name>` (the n-th use in the rule),
// except a result, which takes the name the use binds it to. Alternative tags
// are not renamed: a rule's variants may test the tags of its fragments. Each
// copied piece keeps its location in the fragment and records the use it was
// expanded at (SourceLoc::via), so diagnostics and explain name both.
//
// A rewrite fragment may have variants (`when:`): a rule variant using it becomes
// one variant per fragment variant, in order, with both `when`s combined.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// Expands every fragment use in `file.rules`; reports unknown parameters, wrong
/// argument counts, fragments that use themselves and fragments defined twice. Returns
/// false if an error was reported. `file.fragments` stay as parsed.
bool expandFragments(ir::RuleFile& file, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
