//===- QuotedName.h - names from a model, safe to print in one line ------===//
//
// Value, node and tensor names come from the model file, which we do not
// trust: a name may hold a newline, a terminal escape or megabytes of text.
// Every message that names one goes through quoted(), so an error stays one
// line and reads the same whatever the model holds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace onnx_rewrite {

/// `name` in single quotes, control characters, quotes and backslashes escaped C-style
/// (\n, \t, \', \\, \xNN) and anything past 200 bytes cut to "...".
std::string quoted(std::string_view name);

/// `message` with control characters escaped as by quoted() (no quotes added), so it
/// prints as exactly one line.
std::string oneLine(std::string_view message);

}  // namespace onnx_rewrite
