//===- RuleLexer.cc - tokens of the match/rewrite statement language ------===//
//
// A hand-written scanner over bytes. Numbers take an optional leading '-' so
// `axes=[-1]` and `Add(x, -1.0)` need no unary operator in the grammar; names
// take dotted continuations so `com.microsoft.Gelu` is one token.
//
//===----------------------------------------------------------------------===//
#include "dsl/yaml/RuleLexer.h"

#include <charconv>
#include <cstdio>
#include <system_error>

namespace onnx_rewrite::yaml {

//===----------------------------------------------------------------------===//
// TextLocator
//===----------------------------------------------------------------------===//

TextLocator TextLocator::forText(const std::string& file, const std::string& text) {
  std::vector<std::pair<uint32_t, uint32_t>> positions;
  positions.reserve(text.size() + 1);
  uint32_t line = 1, col = 1;
  for (char c : text) {
    positions.emplace_back(line, col);
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  positions.emplace_back(line, col);
  return TextLocator(file, std::move(positions));
}

TextLocator::TextLocator(std::string file, std::vector<std::pair<uint32_t, uint32_t>> positions)
    : file_(std::move(file)), positions_(std::move(positions)) {}

ir::SourceLoc TextLocator::at(size_t offset) const {
  ir::SourceLoc loc;
  loc.file = file_;
  if (positions_.empty()) return loc;
  const auto& [line, col] = positions_[offset < positions_.size() ? offset : positions_.size() - 1];
  loc.line = line;
  loc.col = col;
  return loc;
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

namespace {

bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// "'$'" for a printable character, "'\x07'" for a control byte, the whole UTF-8 sequence
/// for a non-ASCII character.
std::string describeChar(const std::string& text, size_t i, size_t& length) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  length = 1;
  if (c >= 0x20 && c < 0x7f) return std::string("'") + text[i] + "'";
  if (c >= 0xc0 && c < 0xf8) {
    size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    size_t n = 1;
    while (n < want && i + n < text.size() &&
           (static_cast<unsigned char>(text[i + n]) & 0xc0) == 0x80)
      ++n;
    if (n == want) {
      length = n;
      return "'" + text.substr(i, n) + "'";
    }
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "'\\x%02X'", c);
  return buf;
}

class Lexer {
 public:
  explicit Lexer(const std::string& text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      Token t = next();
      const bool end = t.kind == TokenKind::kEnd;
      tokens.push_back(std::move(t));
      if (end) return tokens;
    }
  }

 private:
  Token make(TokenKind kind, size_t start, size_t end) {
    Token t;
    t.kind = kind;
    t.offset = start;
    t.end = end;
    t.text = text_.substr(start, end - start);
    pos_ = end;
    return t;
  }

  Token error(size_t start, size_t end, std::string message) {
    Token t = make(TokenKind::kError, start, end);
    t.text = std::move(message);
    return t;
  }

  Token next() {
    // Blanks and comments.
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    const size_t start = pos_;
    if (pos_ >= text_.size()) return make(TokenKind::kEnd, start, start);
    const char c = text_[pos_];
    switch (c) {
      case '\n':
        return make(TokenKind::kNewline, start, start + 1);
      case '(':
        return make(TokenKind::kLParen, start, start + 1);
      case ')':
        return make(TokenKind::kRParen, start, start + 1);
      case '[':
        return make(TokenKind::kLBracket, start, start + 1);
      case ']':
        return make(TokenKind::kRBracket, start, start + 1);
      case ',':
        return make(TokenKind::kComma, start, start + 1);
      case '=':
        return make(TokenKind::kEquals, start, start + 1);
      case '|':
        return make(TokenKind::kPipe, start, start + 1);
      case '@':
        return make(TokenKind::kAt, start, start + 1);
      case '?':
        return make(TokenKind::kQuestion, start, start + 1);
      case '\'':
      case '"':
        return string(start);
      case '.':
        if (text_.compare(start, 3, "...") == 0)
          return make(TokenKind::kEllipsis, start, start + 3);
        break;
      default:
        break;
    }
    if (isNameStart(c)) return name(start);
    if (isDigit(c) || ((c == '-' || c == '.') && startsNumber(start))) return number(start);
    size_t length = 1;
    std::string what = describeChar(text_, start, length);
    std::string message = "unexpected character " + what;
    if (c == ';') message += "; statements end at a line break";
    if (c == '$') message += "; names are written without '$' in YAML rules";
    return error(start, start + length, message);
  }

  bool startsNumber(size_t i) const {
    if (text_[i] == '-') ++i;
    if (i < text_.size() && isDigit(text_[i])) return true;
    return i + 1 < text_.size() && text_[i] == '.' && isDigit(text_[i + 1]);
  }

  Token name(size_t start) {
    size_t i = start;
    while (true) {
      while (i < text_.size() && isNameChar(text_[i])) ++i;
      if (i + 1 < text_.size() && text_[i] == '.' && isNameStart(text_[i + 1])) {
        ++i;
        continue;
      }
      break;
    }
    return make(TokenKind::kName, start, i);
  }

  Token number(size_t start) {
    size_t i = start;
    if (text_[i] == '-') ++i;
    bool is_float = false;
    while (i < text_.size() && isDigit(text_[i])) ++i;
    if (i < text_.size() && text_[i] == '.') {
      is_float = true;
      ++i;
      while (i < text_.size() && isDigit(text_[i])) ++i;
    }
    bool bad = false;
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      is_float = true;
      ++i;
      if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
      if (i >= text_.size() || !isDigit(text_[i])) bad = true;
      while (i < text_.size() && isDigit(text_[i])) ++i;
    }
    // `2x`, `1.2.3`: one bad token rather than a number followed by a surprise.
    while (i < text_.size() && (isNameChar(text_[i]) || text_[i] == '.')) {
      bad = true;
      ++i;
    }
    const std::string spelling = text_.substr(start, i - start);
    if (bad) return error(start, i, "invalid number '" + spelling + "'");
    Token t = make(is_float ? TokenKind::kFloat : TokenKind::kInt, start, i);
    const char* first = spelling.data();
    const char* last = first + spelling.size();
    if (is_float) {
      auto [ptr, ec] = std::from_chars(first, last, t.float_value);
      if (ec != std::errc() || ptr != last)
        return error(start, i, "number '" + spelling + "' is out of range");
    } else {
      auto [ptr, ec] = std::from_chars(first, last, t.int_value);
      if (ec != std::errc() || ptr != last)
        return error(start, i, "integer '" + spelling + "' is out of range");
    }
    return t;
  }

  Token string(size_t start) {
    const char quote = text_[start];
    std::string value;
    size_t i = start + 1;
    while (i < text_.size() && text_[i] != quote && text_[i] != '\n') {
      if (text_[i] == '\\' && i + 1 < text_.size() && text_[i + 1] != '\n') ++i;
      value += text_[i++];
    }
    if (i >= text_.size() || text_[i] != quote)
      return error(start, start + 1, "unterminated string");
    Token t = make(TokenKind::kString, start, i + 1);
    t.text = std::move(value);
    return t;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<Token> lexStatements(const std::string& text) { return Lexer(text).run(); }

std::string describeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kNewline:
      return "end of line";
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kString:
      return "string '" + token.text + "'";
    case TokenKind::kError:
      return "invalid text";
    default:
      return "'" + token.text + "'";
  }
}

}  // namespace onnx_rewrite::yaml
