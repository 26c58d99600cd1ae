//===- RuleFileWire.h - Rule IR and diagnostics as bytes ------------------===//
//
// The TableGen front end parses in a child process (LLVM 14's TableGen keeps
// state in process-wide globals; see TableGenFrontEnd.cc) and sends what it
// built back through a pipe in this form. Every field of the Rule IR and of a
// Diagnostic is carried, so decode(encode(x)) == x. The format is private to
// one build: both ends are the same binary.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite::tablegen {

/// Appends `file` to `out`.
void encodeRuleFile(const ir::RuleFile& file, std::string& out);
/// Reads a RuleFile from the front of `in` (consuming it). False if `in` is cut short.
bool decodeRuleFile(std::string_view& in, ir::RuleFile& file);

/// Appends `d` to `out`.
void encodeDiagnostic(const Diagnostic& d, std::string& out);
/// Reads a Diagnostic from the front of `in` (consuming it). False if `in` is cut short.
bool decodeDiagnostic(std::string_view& in, Diagnostic& d);

}  // namespace onnx_rewrite::tablegen
