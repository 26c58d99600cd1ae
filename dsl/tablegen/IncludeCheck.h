//===- IncludeCheck.h - which files a TableGen rule file may include -----===//
//
// LLVM's TableGen opens whatever an `include` names: an absolute path, a path
// relative to the working folder, /dev/zero (a read that never ends), the
// file itself (a recursion that ends in a stack overflow). Before TableGen
// runs, this walks the include graph the way TableGen resolves it and refuses,
// with the include's file:line:col, any include that resolves outside the
// rule file's folder, the -I folders and the shipped dsl/td; that is not a
// regular file; that closes a cycle or goes deeper than kMaxIncludeDepth. It
// also refuses brackets nested deeper than kMaxBracketNesting, which TableGen's
// recursive parser would overflow its stack on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"

namespace onnx_rewrite::tablegen {

/// Files included from files included ... from the rule file, at most.
constexpr int kMaxIncludeDepth = 16;
/// Parentheses and brackets open at once, at most (real rules nest about 10 deep).
constexpr int kMaxBracketNesting = 256;

/// Checks the includes of `path` and of every file they include (see the file comment).
/// `include_dirs` are the folders TableGen searches, in order; the rule file's own folder
/// is allowed too. Reports each problem to `diag`; returns false if there was one.
bool checkIncludes(const std::string& path, const std::vector<std::string>& include_dirs,
                   DiagnosticEngine& diag);

}  // namespace onnx_rewrite::tablegen
