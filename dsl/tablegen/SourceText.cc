//===- SourceText.cc - where each part of a TableGen value was written ----===//
//
// A recursive-descent reader of TableGen's value grammar that only records
// positions. It follows TGParser where positions matter (a dag operator takes
// value suffixes, so `(axes [-1])` is a slice there too) and skips what it
// does not need to understand (bang operators, bit ranges, code blocks) as
// balanced text. It never reads past `end` and gives up on anything it does
// not know, so a wrong guess only costs precision.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/SourceText.h"

#include <cctype>
#include <cstddef>
#include <cstring>

namespace onnx_rewrite::tablegen {
namespace {

/// Deeper values than this are left without locations rather than risk the stack.
constexpr int kMaxDepth = 200;

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class TextParser {
 public:
  TextParser(const char* text, const char* end) : p_(text), end_(end) {}

  /// `name = value`.
  bool field(TextNode& out) {
    if (!word()) return false;
    skipBlanks();
    if (peek() != '=') return false;
    ++p_;
    return value(out, 0);
  }

  /// `def name : Class<...>` (from `def` or from the name): the first parent class.
  bool defParent(TextNode& out) {
    const char* start = p_;
    if (!word()) return false;
    if (p_ - start == 3 && std::strncmp(start, "def", 3) == 0) {
      skipBlanks();
      if (peek() != ':' && !word()) return false;  // the name, unless anonymous
    }
    skipBlanks();
    if (peek() != ':') return false;
    ++p_;
    skipBlanks();
    return simple(out, 0);  // no suffixes: a `{` after it opens the body
  }

  /// A value with its suffixes.
  bool value(TextNode& out, int depth) {
    if (depth > kMaxDepth) return false;
    skipBlanks();
    if (!simple(out, depth)) return false;
    return suffixes(out, depth);
  }

 private:
  char peek(size_t ahead = 0) const {
    return end_ - p_ > static_cast<std::ptrdiff_t>(ahead) ? p_[ahead] : '\0';
  }

  /// Blanks and comments (`// ...`, nested `/* ... */`).
  void skipBlanks() {
    while (p_ < end_) {
      char c = *p_;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++p_;
      } else if (c == '/' && peek(1) == '/') {
        while (p_ < end_ && *p_ != '\n') ++p_;
      } else if (c == '/' && peek(1) == '*') {
        int nesting = 0;
        while (p_ < end_) {
          if (*p_ == '/' && peek(1) == '*') {
            ++nesting;
            p_ += 2;
          } else if (*p_ == '*' && peek(1) == '/') {
            p_ += 2;
            if (--nesting == 0) break;
          } else {
            ++p_;
          }
        }
      } else {
        return;
      }
    }
  }

  /// An identifier or number: [+-]?[A-Za-z0-9_]+.
  bool word() {
    const char* start = p_;
    if (peek() == '+' || peek() == '-') ++p_;
    while (p_ < end_ && isWordChar(*p_)) ++p_;
    if (p_ == start || (p_ == start + 1 && !isWordChar(*start))) {
      p_ = start;
      return false;
    }
    return true;
  }

  /// Text from `open` to its matching `close`, skipping strings.
  bool balanced(char open, char close) {
    int nesting = 0;
    while (p_ < end_) {
      char c = *p_;
      if (c == '"') {
        if (!string()) return false;
        continue;
      }
      ++p_;
      if (c == open) ++nesting;
      if (c == close && --nesting == 0) return true;
    }
    return false;
  }

  /// A string literal (with escapes).
  bool string() {
    ++p_;  // opening quote
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\n') return false;
      if (*p_ == '\\') ++p_;
      ++p_;
    }
    if (p_ >= end_) return false;
    ++p_;
    return true;
  }

  /// `$name`.
  bool variable() {
    ++p_;  // '$'
    return word();
  }

  /// Everything but suffixes.
  bool simple(TextNode& out, int depth) {
    out.begin = out.head = p_;
    char c = peek();
    if (c == '(') return dag(out, depth);
    if (c == '[' && peek(1) == '{') {  // a code block [{ ... }]
      const char* close = nullptr;
      for (const char* q = p_ + 2; q + 1 < end_; ++q)
        if (q[0] == '}' && q[1] == ']') {
          close = q;
          break;
        }
      if (!close) return false;
      p_ = close + 2;
      return true;
    }
    if (c == '[') return list(out, depth);
    if (c == '"') {
      while (peek() == '"') {
        if (!string()) return false;
        skipBlanks();
      }
      return true;
    }
    if (c == '$') {
      out.kind = TextNode::Kind::kVariable;
      return variable();
    }
    if (c == '?') {
      ++p_;
      return true;
    }
    if (c == '!') {  // a bang operator: !name<type>(...)
      ++p_;
      if (!word()) return false;
      skipBlanks();
      if (peek() == '<' && !balanced('<', '>')) return false;
      skipBlanks();
      return peek() == '(' && balanced('(', ')');
    }
    if (c == '{') return balanced('{', '}');
    if (!word()) return false;
    const char* after_word = p_;
    skipBlanks();
    if (peek() == '<' && isWordChar(*out.begin)) return classRef(out, depth);
    p_ = after_word;
    return true;
  }

  /// `(op:$name arg:$name, ...)`.
  bool dag(TextNode& out, int depth) {
    out.kind = TextNode::Kind::kDag;
    ++p_;  // '('
    skipBlanks();
    out.head = p_;
    TextNode op;
    if (!value(op, depth + 1)) return false;
    skipBlanks();
    if (peek() == ':') {
      ++p_;
      skipBlanks();
      if (peek() != '$' || !variable()) return false;
    }
    skipBlanks();
    if (peek() == ')') {
      ++p_;
      return true;
    }
    while (true) {
      skipBlanks();
      TextNode arg;
      if (peek() == '$') {
        arg.begin = arg.head = p_;
        arg.kind = TextNode::Kind::kVariable;
        if (!variable()) return false;
      } else {
        if (!value(arg, depth + 1)) return false;
        skipBlanks();
        if (peek() == ':') {
          ++p_;
          skipBlanks();
          if (peek() != '$' || !variable()) return false;
        }
      }
      out.items.push_back(std::move(arg));
      skipBlanks();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() == ')') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  /// `[a, b]` with an optional `<type>`.
  bool list(TextNode& out, int depth) {
    out.kind = TextNode::Kind::kList;
    ++p_;  // '['
    skipBlanks();
    if (peek() != ']') {
      while (true) {
        TextNode element;
        if (!value(element, depth + 1)) return false;
        out.items.push_back(std::move(element));
        skipBlanks();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        break;
      }
    }
    if (peek() != ']') return false;
    ++p_;
    const char* after = p_;
    skipBlanks();
    if (peek() == '<') return balanced('<', '>');
    p_ = after;
    return true;
  }

  /// `Class<a, b>`; p_ is at '<'.
  bool classRef(TextNode& out, int depth) {
    out.kind = TextNode::Kind::kClassRef;
    ++p_;  // '<'
    skipBlanks();
    if (peek() == '>') {
      ++p_;
      return true;
    }
    while (true) {
      TextNode arg;
      if (!value(arg, depth + 1)) return false;
      out.items.push_back(std::move(arg));
      skipBlanks();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() == '>') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  /// `.field`, `[slice]`, `{bits}`, `#paste`: the value is then something else.
  bool suffixes(TextNode& out, int depth) {
    while (true) {
      const char* before = p_;
      skipBlanks();
      char c = peek();
      if (c == '.' && peek(1) != '.') {
        ++p_;
        skipBlanks();
        if (!word()) return false;
      } else if (c == '[' && peek(1) != '{') {
        if (!balanced('[', ']')) return false;
      } else if (c == '{') {
        if (!balanced('{', '}')) return false;
      } else if (c == '#') {
        ++p_;
        skipBlanks();
        char next = peek();
        if (next != ',' && next != ')' && next != ']' && next != '>' && next != ';') {
          TextNode rhs;
          if (!value(rhs, depth + 1)) return false;
        }
      } else {
        p_ = before;
        return true;
      }
      out.kind = TextNode::Kind::kOther;
      out.items.clear();
      out.head = out.begin;
    }
  }

  const char* p_;
  const char* end_;
};

}  // namespace

bool parseFieldValue(const char* text, const char* end, TextNode& out) {
  if (!text || !end || text >= end) return false;
  return TextParser(text, end).field(out);
}

bool parseValue(const char* text, const char* end, TextNode& out) {
  if (!text || !end || text >= end) return false;
  return TextParser(text, end).value(out, 0);
}

bool parseDefParent(const char* text, const char* end, TextNode& out) {
  if (!text || !end || text >= end) return false;
  return TextParser(text, end).defParent(out) && out.kind == TextNode::Kind::kClassRef;
}

const char* defNameStart(const char* text, const char* end) {
  if (!text || end - text < 4 || std::strncmp(text, "def", 3) != 0 || isWordChar(text[3]))
    return text;
  const char* p = text + 3;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  return p < end && isWordChar(*p) ? p : text;
}

}  // namespace onnx_rewrite::tablegen
