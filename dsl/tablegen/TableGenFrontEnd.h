//===- TableGenFrontEnd.h - TableGen rule files to Rule IR ----------------===//
//
// Reads a `.td` rule file (records deriving from Rule, OpDecl and Fragment, see
// dsl/td/onnx_rewrite/Rule.td and docs/dsl.md) with LLVM's TableGen parser and
// builds the same Rule IR the YAML front end builds. TableGen's own errors
// (syntax, undefined records, missing includes) and the front end's (a dag the
// rule language does not allow, a rule without a match, ...) all go to the
// DiagnosticEngine as `file:line:col: error: ...`; nothing is printed and the
// process never exits. This header has no LLVM types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// Parses the TableGen rule file `path` and appends its rules, op declarations and
/// fragments (those of the files it includes too) to `out`.
///
/// Args:
///   path: the `.td` file; locations name it as given.
///   include_dirs: folders searched by `include "..."` (the one holding
///     `onnx_rewrite/Rule.td`, dsl/td, must be among them).
///   out: receives one ir::Rule per Rule record, one ir::OpDecl per OpDecl record and one
///     ir::Fragment per Fragment record, in file order. A rule (or fragment) with errors is
///     left out. Fragment uses stay op calls for compiler/sema/ExpandFragments to expand;
///     commutativity and attribute defaults are left for the checks to fill.
///   diag: receives every error, warning and note.
///
/// Returns: true if no error was reported.
///
/// LLVM 14's TableGen keeps its state in process-wide globals (the source manager, its
/// command-line options, and uniquing pools that cache records by address, which makes a
/// second parse in one process read freed records), so each call parses in a child
/// process that sends the IR and the diagnostics back. Calls may come from several
/// threads; a TableGen error that is fatal inside LLVM ends only the child.
bool parseTableGenRules(const std::string& path, const std::vector<std::string>& include_dirs,
                        ir::RuleFile& out, DiagnosticEngine& diag);

}  // namespace onnx_rewrite
