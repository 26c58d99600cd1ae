//===- RecordConverter.h - TableGen records to Rule IR --------------------===//
//
// The back half of the TableGen front end: given the records TableGen parsed
// from a rule file (and the files it includes), builds one ir::Rule per `Rule`
// record, one ir::OpDecl per `OpDecl` record and one ir::Fragment per
// `Fragment` record, in file order. Records are read only through typed
// accessors that check a field before reading it (LLVM 14's getValueAs* exit
// the process on an unset or mistyped field), and every problem is reported to
// the DiagnosticEngine with the most precise location the source text gives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace llvm {
class RecordKeeper;
class SourceMgr;
}  // namespace llvm

namespace onnx_rewrite::tablegen {

/// Converts the Rule, OpDecl and Fragment records of `records` into `out` (appending).
/// `sources` holds the parsed buffers (for locations); `path` is the rule file, for messages
/// without a better place. A rule, declaration or fragment with errors is reported and left
/// out.
void convertRecords(const llvm::RecordKeeper& records, const llvm::SourceMgr& sources,
                    const std::string& path, ir::RuleFile& out, DiagnosticEngine& diag);

}  // namespace onnx_rewrite::tablegen
