//===- RuleExprParser.h - match/rewrite statements to Rule IR -------------===//
//
// Parses the statement language of docs/dsl.md ("Match statements", "Rewrite
// statements") into ir::Pattern and ir::Target. The text is one YAML block
// scalar; a TextLocator maps its bytes back to the rule file, so every expr and
// attribute carries the line and column the author wrote it at.
//
// Binding, as built here (the TableGen front end builds the same shapes):
//  - match: a name on the left of '=' names the statement's op (or
//    alternatives) expr, and every later use is that same ExprId. A name never
//    bound on a left side is a kCapture; all its uses share one ExprId. Each
//    `_` is a fresh kCapture named "_". The root is the last statement's value.
//  - match, several outputs: `a, b = Split(x)` gives one kOp expr (output 0,
//    name "a", other_outputs {(1, "b")}); a later use of `b` is the kCapture
//    named "b", which the matcher binds when it matches the Split node.
//  - rewrite: statements run in order. A left-hand name that the match binds
//    (any value name of the pattern) becomes a replacement; other names are
//    target-local. Either way a later statement that reads the name reads the
//    new value. A name read but bound by neither side stays a kRef (the checks
//    report it). Each source name has one kRef expr; `none`, tensors and calls
//    get one expr per occurrence.
//  - rewrite, several outputs: `y, _, _, s = Op(...)` gives one kOp TargetExpr
//    (output 0, num_outputs 4). A secondary output refers to its node through
//    inputs[0] with an empty op: TargetExpr{kOp, op "", domain "", output k,
//    num_outputs 4, inputs {id of the output-0 expr}}. `_` outputs get no expr.
//  - match: every statement but the last must be read by the root (directly or
//    through other statements); one that is not would never be matched: an error.
//  - Commutativity and attribute defaults are not set here: the checks fill
//    them from the ONNX schemas and the declared ops.
//
// Locations: an op expr points at its op name, a capture at its first use, a
// constant at its number, an alternatives expr at its first '|', an attribute
// at its name, a secondary output at its name on the left of '='.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/ir/RuleIR.h"
#include "dsl/yaml/RuleLexer.h"

namespace onnx_rewrite::yaml {

/// Ops declared in the rule file's `ops:` section, by "domain.Op": the number of outputs
/// they declare (-1 if the last one is variadic). A statement binding more names than an
/// op declares is an error.
using DeclaredOutputs = std::map<std::string, int>;

/// Parses the statements of a `match:` block into `out.exprs` and `out.root` (constraints
/// are left alone). Reports syntax and binding errors; returns false if there were any.
bool parseMatch(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                ir::Pattern& out, const DeclaredOutputs& declared = {});

/// The value names a pattern binds: statement names (every output) and captures, not `_`.
std::set<std::string> patternValueNames(const ir::Pattern& pattern);

/// What a rewrite is built with besides its own statements.
struct RewriteOptions {
  /// A rule's `let:` block: statements every variant runs first (null: none).
  const std::string* let_text = nullptr;
  const TextLocator* let_locator = nullptr;
  /// A rule's `keep: [cos, sin]`: values of the match re-exported unchanged (`cos = cos`).
  std::vector<std::pair<std::string, ir::SourceLoc>> keep;
  /// A fragment's body: the attribute parameters an attribute may name (`interleaved=il`).
  std::set<std::string> attr_params;
  /// A fragment's body: its results, which become `out.replacements`; when empty, filled
  /// with the first name of the last statement.
  std::vector<std::string>* results = nullptr;
};

/// Parses the statements of a `rewrite:` block (or one variant's `do:`) into `out.exprs`
/// and `out.replacements`; `match_names` are the pattern's value names. `out.when` and
/// `out.loc` are left alone. Returns false if an error was reported.
bool parseRewrite(const std::string& text, const TextLocator& locator,
                  const std::set<std::string>& match_names, DiagnosticEngine& diag, ir::Target& out,
                  const DeclaredOutputs& declared = {}, const RewriteOptions& options = {});

/// Reports the syntax errors of a block of statements (a `let:` before it is used).
bool checkStatements(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag);

/// Parses `head_split(t, axis=_)`, a fragment's signature, into out.name, out.params and
/// out.loc.
bool parseSignature(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                    ir::Fragment& out);

/// Parses a match fragment's statements into out.match and out.result_exprs (out.params
/// and, if given, out.results must be set; out.results is filled with the last statement's
/// first name otherwise). Value parameters become captures; a name the body never binds is
/// a capture of its own for each use.
bool parseFragmentMatch(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                        ir::Fragment& out, const DeclaredOutputs& declared = {});

/// Parses `name(a, b)`, the form of a `native:` constraint. Returns false on an error.
bool parseNativeCall(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                     std::string& name, std::vector<std::string>& args);

//===----------------------------------------------------------------------===//
// Helpers shared with the YAML front end
//===----------------------------------------------------------------------===//

/// "; did you mean 'x'?" when one of `candidates` is a likely misspelling of `word`, else "".
std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates);

/// The element type names a rule may write: float, float16, bfloat16, double, int8 ... bool,
/// string.
const std::vector<std::string>& elemTypeNames();

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
bool isIdentifier(const std::string& s);

}  // namespace onnx_rewrite::yaml
