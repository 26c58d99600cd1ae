//===- RuleLexer.h - tokens of the match/rewrite statement language -------===//
//
// The statements inside a YAML rule's `match:` and `rewrite:` block scalars
// (`d = Sub(x, ReduceMean(x, axes=[-1]))`) are a small language of their own,
// described in docs/dsl.md. This lexer turns one block of statements into
// tokens; RuleExprParser turns the tokens into Rule IR. A TextLocator maps a
// byte offset in the block back to the line and column in the rule file, so
// every diagnostic and every IR node points at what the author wrote.
//
// Lexing never fails: a character that starts no token becomes a kError token
// carrying the message, and the parser reports it when it reaches it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite::yaml {

/// Maps byte offsets of a statement text to locations in the file it came from.
class TextLocator {
 public:
  /// A text that is the whole of `file` from line 1, column 1 (unit tests).
  static TextLocator forText(const std::string& file, const std::string& text);

  /// A text whose byte `i` was written at `positions[i]` (line, col), for i in
  /// [0, text size]; the last entry is the position just past the text.
  TextLocator(std::string file, std::vector<std::pair<uint32_t, uint32_t>> positions);

  /// The file location of byte `offset` (clamped to the end of the text).
  ir::SourceLoc at(size_t offset) const;

 private:
  std::string file_;
  std::vector<std::pair<uint32_t, uint32_t>> positions_;
};

/// What a token is.
enum class TokenKind {
  kName,      ///< x, _, ReduceMean, com.microsoft.Gelu (dotted names are op names)
  kInt,       ///< 2, -1
  kFloat,     ///< 2.0, 1e-3, -.5
  kString,    ///< 'constant' or "constant" (text holds the contents)
  kLParen,    ///< (
  kRParen,    ///< )
  kLBracket,  ///< [
  kRBracket,  ///< ]
  kComma,     ///< ,
  kEquals,    ///< =
  kPipe,      ///< |
  kAt,        ///< @
  kQuestion,  ///< ?
  kEllipsis,  ///< ... (after a name: the rest of an op's inputs)
  kNewline,   ///< end of a line (statements end here unless inside parentheses)
  kEnd,       ///< end of the text
  kError,     ///< a character or literal that is not valid; text holds the message
};

/// One token: its kind, its text and where it is in the statement text.
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;   ///< the spelling; a string's contents; an error's message
  size_t offset = 0;  ///< first byte
  size_t end = 0;     ///< one past the last byte
  int64_t int_value = 0;
  double float_value = 0;
};

/// Splits `text` into tokens, ending with one kEnd token. `#` starts a comment that runs to
/// the end of the line; spaces, tabs and carriage returns separate tokens.
std::vector<Token> lexStatements(const std::string& text);

/// How a token is quoted in messages: "'Add'", "'2.0'", "')'", "end of line", "end of input".
std::string describeToken(const Token& token);

}  // namespace onnx_rewrite::yaml
