//===- RuleLexerTest.cc - tokens of the statement language ----------------===//
//
// What the lexer makes of names, numbers, strings, punctuation, comments and
// line breaks, and how it turns bad characters into error tokens rather than
// failing. TextLocator's plain-text mapping is tested here too.
//
//===----------------------------------------------------------------------===//
#include "dsl/yaml/RuleLexer.h"

#include <gtest/gtest.h>

namespace onnx_rewrite::yaml {
namespace {

/// "kind:text" per token, without the final end token.
std::vector<std::string> lex(const std::string& text) {
  std::vector<std::string> out;
  for (const Token& t : lexStatements(text)) {
    if (t.kind == TokenKind::kEnd) break;
    const char* kind = "?";
    switch (t.kind) {
      case TokenKind::kName:
        kind = "name";
        break;
      case TokenKind::kInt:
        kind = "int";
        break;
      case TokenKind::kFloat:
        kind = "float";
        break;
      case TokenKind::kString:
        kind = "string";
        break;
      case TokenKind::kNewline:
        kind = "nl";
        break;
      case TokenKind::kError:
        kind = "error";
        break;
      default:
        kind = "punct";
        break;
    }
    out.push_back(std::string(kind) + ":" + (t.kind == TokenKind::kNewline ? "" : t.text));
  }
  return out;
}

using Tokens = std::vector<std::string>;

TEST(RuleLexer, SplitsAStatementIntoTokens) {
  EXPECT_EQ(lex("y = Add(x, b)"), (Tokens{"name:y", "punct:=", "name:Add", "punct:(", "name:x",
                                          "punct:,", "name:b", "punct:)"}));
}

TEST(RuleLexer, ADottedNameIsOneToken) {
  EXPECT_EQ(lex("com.microsoft.Gelu(x)"),
            (Tokens{"name:com.microsoft.Gelu", "punct:(", "name:x", "punct:)"}));
}

TEST(RuleLexer, NumbersTakeTheirSign) {
  EXPECT_EQ(lex("[-1, 2.0, 1e-3, -.5, 7]"),
            (Tokens{"punct:[", "int:-1", "punct:,", "float:2.0", "punct:,", "float:1e-3", "punct:,",
                    "float:-.5", "punct:,", "int:7", "punct:]"}));
}

TEST(RuleLexer, NumbersHaveTheirValues) {
  std::vector<Token> t = lexStatements("-12 2.5e1");
  EXPECT_EQ(t[0].int_value, -12);
  EXPECT_DOUBLE_EQ(t[1].float_value, 25.0);
}

TEST(RuleLexer, StringsTakeEitherQuote) {
  EXPECT_EQ(lex("'constant' \"reflect\""), (Tokens{"string:constant", "string:reflect"}));
}

TEST(RuleLexer, PunctuationOfAlternativesTagsAndOptionalOps) {
  EXPECT_EQ(lex("Cast?(x) | y @t"), (Tokens{"name:Cast", "punct:?", "punct:(", "name:x", "punct:)",
                                            "punct:|", "name:y", "punct:@", "name:t"}));
}

TEST(RuleLexer, ACommentRunsToTheEndOfTheLine) {
  EXPECT_EQ(lex("a = b # c = d\ne"), (Tokens{"name:a", "punct:=", "name:b", "nl:", "name:e"}));
}

TEST(RuleLexer, TabsAndCarriageReturnsAreBlanks) {
  EXPECT_EQ(lex("a\t=\tb\r\nc"), (Tokens{"name:a", "punct:=", "name:b", "nl:", "name:c"}));
}

TEST(RuleLexer, TokensKnowTheirOffsets) {
  std::vector<Token> t = lexStatements("ab = Cd");
  EXPECT_EQ(t[0].offset, 0u);
  EXPECT_EQ(t[0].end, 2u);
  EXPECT_EQ(t[2].offset, 5u);
  EXPECT_EQ(t.back().kind, TokenKind::kEnd);
}

TEST(RuleLexer, AStrayCharacterIsAnErrorToken) {
  EXPECT_EQ(lex("a = b ; c"), (Tokens{"name:a", "punct:=", "name:b",
                                      "error:unexpected character ';'; statements end at a line "
                                      "break",
                                      "name:c"}));
  EXPECT_EQ(lex("$x"), (Tokens{"error:unexpected character '$'; names are written without '$' "
                               "in YAML rules",
                               "name:x"}));
}

TEST(RuleLexer, NonAsciiAndControlCharactersAreNamedInTheMessage) {
  EXPECT_EQ(lex("\xc3\xa9"), (Tokens{"error:unexpected character '\xc3\xa9'"}));
  EXPECT_EQ(lex("\x01"), (Tokens{"error:unexpected character '\\x01'"}));
}

TEST(RuleLexer, BadLiteralsAreErrorTokens) {
  EXPECT_EQ(lex("2x"), (Tokens{"error:invalid number '2x'"}));
  EXPECT_EQ(lex("1e"), (Tokens{"error:invalid number '1e'"}));
  EXPECT_EQ(lex("'abc"), (Tokens{"error:unterminated string", "name:abc"}));
  EXPECT_EQ(lex("99999999999999999999"),
            (Tokens{"error:integer '99999999999999999999' is out of range"}));
}

TEST(TextLocator, MapsOffsetsToLinesAndColumns) {
  TextLocator locator = TextLocator::forText("f", "ab\ncd");
  EXPECT_EQ(locator.at(0).str(), "f:1:1");
  EXPECT_EQ(locator.at(2).str(), "f:1:3");
  EXPECT_EQ(locator.at(4).str(), "f:2:2");
  EXPECT_EQ(locator.at(5).str(), "f:2:3");
  EXPECT_EQ(locator.at(99).str(), "f:2:3");  // clamped
}

}  // namespace
}  // namespace onnx_rewrite::yaml
