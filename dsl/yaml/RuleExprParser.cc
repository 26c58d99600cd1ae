//===- RuleExprParser.cc - match/rewrite statements to Rule IR ------------===//
//
// Two stages. The Parser reads tokens into a small syntax tree (Statement,
// Node, AttrValue) that knows nothing of matches or rewrites, reporting syntax
// errors and skipping to the next statement after each. PatternBuilder and
// TargetBuilder then check the tree against what a match or a rewrite allows
// (`|` only in a match, value(eps) only in a rewrite, ...) and build the IR,
// with the binding rules described in RuleExprParser.h.
//
//===----------------------------------------------------------------------===//
#include "dsl/yaml/RuleExprParser.h"

#include <algorithm>

namespace onnx_rewrite::yaml {
namespace {

using ir::SourceLoc;

/// Nesting deeper than this is reported rather than recursed into.
constexpr int kMaxNesting = 200;

//===----------------------------------------------------------------------===//
// Syntax tree
//===----------------------------------------------------------------------===//

/// An attribute's value as written: `1`, `[-1]`, `'x'`, `eps`, `range(0, 1)`, `value(eps)`.
struct AttrValue {
  enum class Kind { kLiteral, kName, kCall };
  Kind kind = Kind::kLiteral;
  ir::Literal literal;
  std::string name;  ///< kName: the name; kCall: the function
  std::vector<AttrValue> args;
  SourceLoc loc;
};

/// `name=value` inside a call.
struct AttrArg {
  std::string name;
  AttrValue value;
  SourceLoc loc;
};

/// An expression as written.
struct Node {
  enum class Kind { kName, kNumber, kString, kList, kCall, kAlternatives, kTuple };
  Kind kind = Kind::kName;
  std::string name;  ///< kName: the name; kCall: the op as spelled (com.microsoft.Gelu)
  std::string domain, op;
  bool optional = false;
  std::vector<Node> children;  ///< kCall: inputs; kAlternatives: the alternatives; kTuple: items
  std::vector<AttrArg> attrs;
  ir::Literal literal;  ///< kNumber, kString, kList
  std::string tag;      ///< `@tag` written after this node
  SourceLoc tag_loc;
  bool splice = false;  ///< kName followed by `...`: a rest of inputs
  SourceLoc splice_loc;
  SourceLoc loc;  ///< kAlternatives: the first '|'; kTuple: its '('
};

/// `names = value`.
struct Statement {
  std::vector<std::pair<std::string, SourceLoc>> names;
  Node value;
};

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
 public:
  Parser(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag)
      : tokens_(lexStatements(text)), locator_(locator), diag_(diag) {}

  /// Reads every statement; returns false if any had a syntax error.
  bool parseStatements(std::vector<Statement>& out) {
    while (true) {
      skipNewlines();
      if (tokens_[pos_].kind == TokenKind::kEnd) break;
      Statement s;
      depth_ = 0;
      nesting_ = 0;
      if (parseStatement(s)) {
        out.push_back(std::move(s));
      } else {
        recover();
      }
    }
    return !failed_;
  }

  /// Reads `name(a, b, ...)` and nothing else.
  bool parseNativeCall(std::string& name, std::vector<std::string>& args) {
    skipNewlines();
    const Token& t = peek();
    if (t.kind != TokenKind::kName || t.text.find('.') != std::string::npos)
      return error(t, "expected 'name(args...)' naming a native predicate");
    name = take().text;
    if (peek().kind != TokenKind::kLParen)
      return error(peek(), "expected '(' after '" + name + "'");
    const Token open = take();
    ++depth_;
    if (peek().kind == TokenKind::kRParen) {
      take();
    } else {
      while (true) {
        const Token& arg = peek();
        if (arg.kind != TokenKind::kName || !isIdentifier(arg.text))
          return error(arg, "expected a name as an argument of '" + name + "'");
        args.push_back(take().text);
        if (peek().kind == TokenKind::kComma) {
          take();
          continue;
        }
        if (peek().kind == TokenKind::kRParen) {
          take();
          break;
        }
        return missingClose(open);
      }
    }
    --depth_;
    skipNewlines();
    if (peek().kind != TokenKind::kEnd)
      return error(peek(), "unexpected " + describeToken(peek()) + " after '" + name + "(...)'");
    return true;
  }

  /// Reads a fragment's signature, `name(a, b, attr=default, attr2=_)`, and nothing else.
  bool parseSignature(ir::Fragment& out) {
    skipNewlines();
    const Token& t = peek();
    if (t.kind != TokenKind::kName || !isIdentifier(t.text))
      return error(t, "expected a fragment signature such as 'head_split(t)'");
    out.name = t.text;
    out.loc = loc(t);
    take();
    if (peek().kind != TokenKind::kLParen)
      return error(peek(),
                   "expected '(' after '" + out.name + "': a fragment lists its parameters");
    const Token open = take();
    ++depth_;
    bool seen_attr = false;
    while (peek().kind != TokenKind::kRParen) {
      const Token& p = peek();
      if (p.kind != TokenKind::kName || !isIdentifier(p.text) || p.text == "_")
        return error(p, "expected a parameter name");
      ir::Fragment::Param param;
      param.name = p.text;
      param.loc = loc(p);
      take();
      for (const ir::Fragment::Param& q : out.params)
        if (q.name == param.name) return error(p, "parameter '" + param.name + "' is listed twice");
      if (peek().kind == TokenKind::kEquals) {
        take();
        param.attribute = true;
        const Token& d = peek();
        if (d.kind == TokenKind::kName && d.text == "_") {
          take();
        } else {
          AttrValue value;
          if (!parseAttrValue(value, param.name)) return false;
          if (value.kind != AttrValue::Kind::kLiteral)
            return error(d, "an attribute parameter's default is a literal or '_' (none)");
          param.default_value = value.literal;
        }
        seen_attr = true;
      } else if (seen_attr) {
        return error(p, "value parameters come before attribute parameters ('name=default')");
      }
      out.params.push_back(std::move(param));
      if (peek().kind == TokenKind::kComma) {
        take();
        continue;
      }
      if (peek().kind != TokenKind::kRParen) return missingClose(open);
    }
    take();
    --depth_;
    skipNewlines();
    if (peek().kind != TokenKind::kEnd)
      return error(peek(), "unexpected " + describeToken(peek()) + " after the signature");
    return true;
  }

 private:
  //===--------------------------------------------------------------------===//
  // Token utilities
  //===--------------------------------------------------------------------===//

  /// The next token; line breaks are invisible inside parentheses and brackets.
  const Token& peek() {
    if (depth_ > 0) skipNewlines();
    return tokens_[pos_];
  }

  /// The token after peek() (same newline rule).
  const Token& peekNext() {
    peek();
    size_t i = pos_ + 1;
    if (depth_ > 0)
      while (i < tokens_.size() && tokens_[i].kind == TokenKind::kNewline) ++i;
    return tokens_[std::min(i, tokens_.size() - 1)];
  }

  Token take() {
    const Token& t = peek();
    if (t.kind != TokenKind::kEnd) ++pos_;
    if (t.kind != TokenKind::kNewline) prev_end_ = t.end;
    return t;
  }

  void skipNewlines() {
    while (tokens_[pos_].kind == TokenKind::kNewline) ++pos_;
  }

  SourceLoc loc(size_t offset) const { return locator_.at(offset); }
  SourceLoc loc(const Token& t) const { return loc(t.offset); }

  /// Reports `message` at `t`, or just after the previous token when `t` is a line break or
  /// the end (so the caret sits where something is missing). Always returns false.
  bool error(const Token& t, const std::string& message) {
    const bool at_end = t.kind == TokenKind::kNewline || t.kind == TokenKind::kEnd;
    diag_.error(at_end ? loc(prev_end_) : loc(t), t.kind == TokenKind::kError ? t.text : message);
    failed_ = true;
    return false;
  }

  /// Reports the token where ',' or ')' was expected, with a note at the '('.
  bool missingClose(const Token& open) {
    const Token& t = peek();
    if (t.kind == TokenKind::kError) return error(t, t.text);
    // A token on a later line than the argument means the ')' was forgotten: point at the
    // end of the argument rather than at the next statement.
    const bool next_line = t.kind == TokenKind::kEnd || loc(t).line != loc(prev_end_).line;
    diag_.error(next_line ? loc(prev_end_) : loc(t),
                next_line ? "expected ')'" : "expected ',' or ')', found " + describeToken(t));
    diag_.note(loc(open), "to match this '('");
    failed_ = true;
    return false;
  }

  /// After an error: skip to the end of the statement (a line break outside parentheses).
  void recover() {
    int depth = depth_;
    depth_ = 0;
    while (tokens_[pos_].kind != TokenKind::kEnd) {
      const TokenKind k = tokens_[pos_].kind;
      if (k == TokenKind::kNewline && depth <= 0) break;
      if (k == TokenKind::kLParen || k == TokenKind::kLBracket) ++depth;
      if (k == TokenKind::kRParen || k == TokenKind::kRBracket) --depth;
      ++pos_;
    }
  }

  /// Counts recursion; false (after reporting) when too deep.
  bool enter(const Token& at) {
    if (++nesting_ <= kMaxNesting) return true;
    return error(at, "expression is nested too deeply");
  }

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//

  /// statement := names '=' expr
  bool parseStatement(Statement& s) {
    while (true) {
      const Token& t = peek();
      if (t.kind != TokenKind::kName) {
        if (s.names.empty()) return error(t, "expected a statement: 'name = expression'");
        return error(t, "expected a name after ','");
      }
      if (!isIdentifier(t.text))
        return error(t, "'" + t.text + "' is not a name that can be bound");
      s.names.emplace_back(t.text, loc(t));
      take();
      if (peek().kind != TokenKind::kComma) break;
      take();
    }
    const Token& eq = peek();
    if (eq.kind != TokenKind::kEquals) {
      if (s.names.size() == 1 && (eq.kind == TokenKind::kLParen || eq.kind == TokenKind::kQuestion))
        return error(tokens_[pos_ - 1],
                     "a statement binds its value to a name: 'y = " + s.names[0].first + "(...)'");
      return error(eq, "expected '=' after '" + s.names.back().first + "'");
    }
    take();
    if (!parseExpr(s.value)) return false;
    const Token& end = peek();
    if (end.kind == TokenKind::kNewline || end.kind == TokenKind::kEnd) return true;
    if (end.kind == TokenKind::kRParen) return error(end, "unbalanced ')'");
    return error(end, "unexpected " + describeToken(end) + " after the end of the statement");
  }

  /// expr := tagged ('|' tagged)*
  bool parseExpr(Node& out) {
    if (!enter(peek())) return false;
    Node first;
    if (!parseTagged(first)) return false;
    if (peek().kind != TokenKind::kPipe) {
      out = std::move(first);
      --nesting_;
      return true;
    }
    out = Node{};
    out.kind = Node::Kind::kAlternatives;
    out.loc = loc(peek());
    out.children.push_back(std::move(first));
    while (peek().kind == TokenKind::kPipe) {
      take();
      Node next;
      if (!parseTagged(next)) return false;
      out.children.push_back(std::move(next));
    }
    --nesting_;
    return true;
  }

  /// tagged := term ('@' NAME)?
  bool parseTagged(Node& out) {
    if (!parseTerm(out)) return false;
    if (peek().kind != TokenKind::kAt) return true;
    const Token at = take();
    const Token& name = peek();
    if (name.kind != TokenKind::kName || !isIdentifier(name.text))
      return error(name, "expected a tag name after '@'");
    if (!out.tag.empty())
      return error(at, "this alternative already has the tag '@" + out.tag + "'");
    out.tag = name.text;
    out.tag_loc = loc(at);
    take();
    return true;
  }

  /// term := call | NAME | number | string | list | '(' expr ')'
  bool parseTerm(Node& out) {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::kName: {
        const TokenKind next = peekNext().kind;
        if (next == TokenKind::kLParen || next == TokenKind::kQuestion) return parseCall(out);
        if (t.text.find('.') != std::string::npos)
          return error(t, "'" + t.text + "' is not a value name; an op needs its arguments: '" +
                              t.text + "(...)'");
        out.kind = Node::Kind::kName;
        out.name = t.text;
        out.loc = loc(t);
        take();
        return true;
      }
      case TokenKind::kInt:
      case TokenKind::kFloat:
        out.kind = Node::Kind::kNumber;
        out.literal = number(t);
        out.loc = loc(t);
        take();
        return true;
      case TokenKind::kString:
        out.kind = Node::Kind::kString;
        out.literal.kind = ir::Literal::Kind::kString;
        out.literal.strings = {t.text};
        out.loc = loc(t);
        take();
        return true;
      case TokenKind::kLBracket:
        out.kind = Node::Kind::kList;
        out.loc = loc(t);
        return parseList(out.literal);
      case TokenKind::kLParen: {
        const Token open = take();
        ++depth_;
        if (!parseExpr(out)) return false;
        if (peek().kind == TokenKind::kComma) {
          // `(a, b)`: a tuple, one value per name of a statement binding several.
          Node tuple;
          tuple.kind = Node::Kind::kTuple;
          tuple.loc = loc(open);
          tuple.children.push_back(std::move(out));
          while (peek().kind == TokenKind::kComma) {
            take();
            if (peek().kind == TokenKind::kRParen) break;  // a trailing comma
            Node item;
            if (!parseExpr(item)) return false;
            tuple.children.push_back(std::move(item));
          }
          out = std::move(tuple);
        }
        if (peek().kind != TokenKind::kRParen) return missingClose(open);
        --depth_;
        take();
        return true;
      }
      case TokenKind::kPipe:
        return error(t, "expected an expression before '|'");
      case TokenKind::kError:
        return error(t, t.text);
      default:
        if (pos_ > 0 && tokens_[pos_ - 1].kind != TokenKind::kNewline)
          return error(t, "expected an expression after '" + tokens_[pos_ - 1].text + "'");
        return error(t, "expected an expression, found " + describeToken(t));
    }
  }

  /// call := OP '?'? '(' (arg (',' arg)*)? ')' ; arg := expr | NAME '=' attr
  bool parseCall(Node& out) {
    const Token op = take();
    out.kind = Node::Kind::kCall;
    out.name = op.text;
    out.loc = loc(op);
    const size_t dot = op.text.rfind('.');
    out.domain = dot == std::string::npos ? "" : op.text.substr(0, dot);
    out.op = dot == std::string::npos ? op.text : op.text.substr(dot + 1);
    if (peek().kind == TokenKind::kQuestion) {
      take();
      out.optional = true;
      if (peek().kind != TokenKind::kLParen)
        return error(peek(), "expected '(' after '" + op.text + "?'");
    }
    const Token open = take();
    ++depth_;
    bool seen_attr = false;
    if (peek().kind == TokenKind::kRParen) {
      take();
      --depth_;
      return true;
    }
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::kName && peekNext().kind == TokenKind::kEquals) {
        if (!isIdentifier(t.text)) return error(t, "'" + t.text + "' is not an attribute name");
        for (const AttrArg& a : out.attrs)
          if (a.name == t.text) return error(t, "attribute '" + t.text + "' is given twice");
        AttrArg attr;
        attr.name = t.text;
        attr.loc = loc(t);
        take();
        take();  // '='
        if (!parseAttrValue(attr.value, attr.name)) return false;
        out.attrs.push_back(std::move(attr));
        seen_attr = true;
      } else {
        if (seen_attr && t.kind != TokenKind::kRParen && t.kind != TokenKind::kEnd)
          return error(t, "inputs come before attributes");
        Node input;
        if (!parseExpr(input)) return false;
        if (peek().kind == TokenKind::kEllipsis) {
          if (input.kind != Node::Kind::kName)
            return error(peek(), "'...' follows a name: 'rest...' is the rest of the inputs");
          input.splice = true;
          input.splice_loc = loc(take());
        }
        out.children.push_back(std::move(input));
      }
      if (peek().kind == TokenKind::kComma) {
        take();
        if (peek().kind != TokenKind::kRParen) continue;  // else a trailing comma
      }
      if (peek().kind == TokenKind::kRParen) {
        take();
        --depth_;
        return true;
      }
      return missingClose(open);
    }
  }

  /// attr := literal | NAME | NAME '(' (attr (',' attr)*)? ')'
  bool parseAttrValue(AttrValue& out, const std::string& attr) {
    const Token& t = peek();
    if (!enter(t)) return false;
    out.loc = loc(t);
    switch (t.kind) {
      case TokenKind::kInt:
      case TokenKind::kFloat:
        out.kind = AttrValue::Kind::kLiteral;
        out.literal = number(t);
        take();
        break;
      case TokenKind::kString:
        out.kind = AttrValue::Kind::kLiteral;
        out.literal.kind = ir::Literal::Kind::kString;
        out.literal.strings = {t.text};
        take();
        break;
      case TokenKind::kLBracket:
        out.kind = AttrValue::Kind::kLiteral;
        if (!parseList(out.literal)) return false;
        break;
      case TokenKind::kName: {
        out.name = t.text;
        if (peekNext().kind != TokenKind::kLParen) {
          out.kind = AttrValue::Kind::kName;
          take();
          break;
        }
        out.kind = AttrValue::Kind::kCall;
        take();
        const Token open = take();
        ++depth_;
        if (peek().kind == TokenKind::kRParen) {
          take();
          --depth_;
          break;
        }
        while (true) {
          AttrValue arg;
          if (!parseAttrValue(arg, attr)) return false;
          out.args.push_back(std::move(arg));
          if (peek().kind == TokenKind::kComma) {
            take();
            continue;
          }
          if (peek().kind == TokenKind::kRParen) {
            take();
            break;
          }
          return missingClose(open);
        }
        --depth_;
        break;
      }
      case TokenKind::kError:
        return error(t, t.text);
      default:
        return error(t, "expected a value for attribute '" + attr + "'");
    }
    --nesting_;
    return true;
  }

  /// literal list := '[' (literal (',' literal)*)? ']'
  bool parseList(ir::Literal& out) {
    const Token open = take();
    ++depth_;
    bool any_float = false, any_string = false, any_number = false;
    std::vector<Token> items;
    while (peek().kind != TokenKind::kRBracket) {
      const Token& t = peek();
      if (t.kind == TokenKind::kLBracket) return error(t, "lists cannot be nested");
      if (t.kind != TokenKind::kInt && t.kind != TokenKind::kFloat &&
          t.kind != TokenKind::kString) {
        if (t.kind == TokenKind::kEnd) return error(t, "expected ']' to close the list");
        return error(t, "expected a number or a string in a list, found " + describeToken(t));
      }
      any_float |= t.kind == TokenKind::kFloat;
      any_string |= t.kind == TokenKind::kString;
      any_number |= t.kind != TokenKind::kString;
      items.push_back(take());
      if (peek().kind == TokenKind::kComma) {
        take();
        continue;
      }
      if (peek().kind != TokenKind::kRBracket) {
        if (peek().kind == TokenKind::kEnd) return error(peek(), "expected ']' to close the list");
        return error(peek(), "expected ',' or ']' in a list, found " + describeToken(peek()));
      }
    }
    take();
    --depth_;
    if (any_string && any_number) {
      diag_.error(loc(open), "a list mixes strings and numbers");
      failed_ = true;
      return false;
    }
    out = ir::Literal{};
    out.kind = any_string  ? ir::Literal::Kind::kStrings
               : any_float ? ir::Literal::Kind::kFloats
                           : ir::Literal::Kind::kInts;
    for (const Token& t : items) {
      if (any_string)
        out.strings.push_back(t.text);
      else if (any_float)
        out.floats.push_back(t.kind == TokenKind::kFloat ? t.float_value
                                                         : static_cast<double>(t.int_value));
      else
        out.ints.push_back(t.int_value);
    }
    return true;
  }

  static ir::Literal number(const Token& t) {
    ir::Literal l;
    if (t.kind == TokenKind::kFloat) {
      l.kind = ir::Literal::Kind::kFloat;
      l.floats = {t.float_value};
    } else {
      l.kind = ir::Literal::Kind::kInt;
      l.ints = {t.int_value};
    }
    return l;
  }

  std::vector<Token> tokens_;
  const TextLocator& locator_;
  DiagnosticEngine& diag_;
  size_t pos_ = 0;
  size_t prev_end_ = 0;
  int depth_ = 0;    ///< open parentheses and brackets
  int nesting_ = 0;  ///< recursion depth
  bool failed_ = false;
};

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

std::string opKey(const std::string& domain, const std::string& op) {
  return domain.empty() ? op : domain + "." + op;
}

/// Reports a statement that binds more names than its op declares outputs.
bool checkDeclaredOutputs(const Statement& s, const DeclaredOutputs& declared,
                          DiagnosticEngine& diag) {
  const std::string key = opKey(s.value.domain, s.value.op);
  auto it = declared.find(key);
  if (it == declared.end() || it->second < 0 || s.names.size() <= static_cast<size_t>(it->second))
    return true;
  diag.error(s.names[it->second].second, "'" + key + "' declares " + std::to_string(it->second) +
                                             " output" + (it->second == 1 ? "" : "s") + ", but " +
                                             std::to_string(s.names.size()) + " names are bound");
  return false;
}

/// Reports names bound twice (by any two left-hand sides). Fills `where` with the
/// statement index of each name.
bool collectBoundNames(const std::vector<Statement>& statements, const char* context,
                       DiagnosticEngine& diag, std::map<std::string, size_t>& where) {
  bool ok = true;
  std::map<std::string, SourceLoc> first;
  for (size_t i = 0; i < statements.size(); ++i) {
    for (const auto& [name, loc] : statements[i].names) {
      if (name == "_") continue;
      auto [it, inserted] = first.emplace(name, loc);
      if (!inserted) {
        diag.error(loc, "'" + name + "' is bound twice" + context);
        diag.note(it->second, "'" + name + "' is first bound here");
        ok = false;
        continue;
      }
      where[name] = i;
    }
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// PatternBuilder
//===----------------------------------------------------------------------===//

class PatternBuilder {
 public:
  /// `attr_params`: in a fragment's body, the attribute parameters an attribute may name.
  PatternBuilder(DiagnosticEngine& diag, const DeclaredOutputs& declared, ir::Pattern& out,
                 const std::set<std::string>& attr_params = {})
      : diag_(diag), declared_(declared), out_(out), attr_params_(attr_params) {}

  /// Builds every statement. The root is the last statement's value; `results` (a
  /// fragment's) are further values every statement may be read by instead.
  bool build(const std::vector<Statement>& statements,
             const std::vector<std::string>& results = {}) {
    bool ok = collectBoundNames(statements, "", diag_, bound_at_);
    for (current_ = 0; current_ < statements.size(); ++current_) {
      const Statement& s = statements[current_];
      std::vector<ir::ExprId> ids;
      bool built = false;
      if (isTupleStatement(s)) {
        built = tuple(s, ids);
        for (size_t k = 0; k < s.names.size(); ++k) {
          const std::string& name = s.names[k].first;
          if (name == "_" || bound_.count(name)) continue;
          bound_[name] = built ? ids[k] : ir::kNoExpr;
        }
      } else {
        ir::ExprId id = ir::kNoExpr;
        built = expr(s.value, false, id) && bind(s, id);
        ids = {id};
        for (size_t k = 0; k < s.names.size(); ++k) {
          const std::string& name = s.names[k].first;
          if (name == "_" || bound_.count(name)) continue;  // twice: already reported
          // Output 0 is the node itself; a later output is a capture made at its first use.
          // kNoExpr without `secondary_` marks a name whose statement failed.
          bound_[name] = k == 0 && built ? id : ir::kNoExpr;
          if (k > 0 && built) secondary_.insert(name);
        }
      }
      ok &= built;
      if (current_ + 1 == statements.size()) out_.root = built ? ids[0] : ir::kNoExpr;
      statement_ids_.push_back(built ? ids : std::vector<ir::ExprId>{});
    }
    return ok && checkReachable(statements, results);
  }

  /// A fragment's result `name`: boundExpr(name), or for a further output of a statement
  /// (`m, fill = masked(s)`) the capture that stands for it, made if nothing read it.
  ir::ExprId resultExpr(const std::string& name, const SourceLoc& loc) {
    const ir::ExprId id = boundExpr(name);
    if (id != ir::kNoExpr || !secondary_.count(name)) return id;
    ir::Expr e;
    e.kind = ir::Expr::Kind::kCapture;
    e.name = name;
    e.loc = loc;
    const ir::ExprId capture = add(std::move(e));
    captures_[name] = capture;
    return capture;
  }

  /// The expr bound to `name` by a statement, or else its capture, or kNoExpr.
  ir::ExprId boundExpr(const std::string& name) const {
    auto it = bound_.find(name);
    if (it != bound_.end()) return it->second;
    auto c = captures_.find(name);
    return c == captures_.end() ? ir::kNoExpr : c->second;
  }

 private:
  ir::ExprId add(ir::Expr e) {
    out_.exprs.push_back(std::move(e));
    return static_cast<ir::ExprId>(out_.exprs.size() - 1);
  }

  bool fail(const SourceLoc& loc, const std::string& message) {
    diag_.error(loc, message);
    return false;
  }

  /// Reports statements whose value the root never reads: they would never be matched.
  /// (Reading a secondary output does not connect a node: it is a capture.)
  bool checkReachable(const std::vector<Statement>& statements,
                      const std::vector<std::string>& results) {
    std::vector<bool> reached(out_.exprs.size(), false);
    std::vector<ir::ExprId> stack = {out_.root};
    for (const std::string& r : results) stack.push_back(boundExpr(r));
    while (!stack.empty()) {
      const ir::ExprId id = stack.back();
      stack.pop_back();
      if (id >= reached.size() || reached[id]) continue;
      reached[id] = true;
      const ir::Expr& e = out_.exprs[id];
      for (ir::ExprId in : e.inputs) stack.push_back(in);
      // A further result of a fragment use (`r, h = heads(t)`; fragments are snake_case, ops
      // are not) is that use's value once expanded: reading it reaches the use.
      if (e.kind == ir::Expr::Kind::kCapture && secondary_.count(e.name)) {
        const size_t at = bound_at_.at(e.name);
        const std::vector<ir::ExprId>& ids = statement_ids_[at];
        const Statement& s = statements[at];
        if (!ids.empty() && s.value.kind == Node::Kind::kCall && !s.value.op.empty() &&
            s.value.op[0] >= 'a' && s.value.op[0] <= 'z')
          stack.push_back(ids[0]);
      }
    }
    bool ok = true;
    for (size_t i = 0; i + 1 < statements.size(); ++i) {
      const std::vector<ir::ExprId>& ids = statement_ids_[i];
      if (ids.empty() || std::any_of(ids.begin(), ids.end(), [&](ir::ExprId id) {
            return id != ir::kNoExpr && reached[id];
          }))
        continue;
      const ir::ExprId id = ids[0];
      if (id == ir::kNoExpr) continue;
      const Statement& s = statements[i];
      diag_.error(s.names[0].second,
                  "this statement's value is not read by the root of the match (the last "
                  "statement), so it would never be matched");
      if (!out_.exprs[id].other_outputs.empty() && s.names[0].first == "_")
        diag_.note(out_.exprs[id].loc,
                   "reading an output other than 0 does not connect a node to the root; bind "
                   "output 0 and read it");
      ok = false;
    }
    return ok;
  }

  /// `a, b = X | (Y, Z)` or `a, b = (Y, Z)`: several names, each alternative a tuple of
  /// values or an op whose outputs they are.
  static bool isTupleStatement(const Statement& s) {
    if (s.names.size() < 2) return false;
    if (s.value.kind == Node::Kind::kTuple) return true;
    if (s.value.kind != Node::Kind::kAlternatives) return false;
    return std::any_of(s.value.children.begin(), s.value.children.end(),
                       [](const Node& c) { return c.kind == Node::Kind::kTuple; });
  }

  /// Builds a tuple statement: one alternatives expr per name, all in one group (they take
  /// the same alternative). An op alternative gives output k to name k: its outputs after
  /// the first are bound to names of their own ("b.1": b of alternative 1) read there.
  bool tuple(const Statement& s, std::vector<ir::ExprId>& ids) {
    const size_t k = s.names.size();
    std::vector<const Node*> alternatives;
    if (s.value.kind == Node::Kind::kTuple)
      alternatives.push_back(&s.value);
    else
      for (const Node& c : s.value.children) alternatives.push_back(&c);
    const uint32_t group = next_group_++;
    std::vector<ir::Expr> members(k);
    for (size_t i = 0; i < k; ++i) {
      members[i].kind = ir::Expr::Kind::kAlternatives;
      members[i].loc = s.value.loc;
      members[i].group = group;
      if (s.names[i].first != "_") members[i].name = s.names[i].first;
    }
    bool ok = true;
    for (size_t j = 0; j < alternatives.size(); ++j) {
      const Node& a = *alternatives[j];
      if (a.kind == Node::Kind::kTuple) {
        if (a.children.size() != k) {
          ok = fail(a.loc, "this tuple has " + std::to_string(a.children.size()) +
                               " values, but the statement binds " + std::to_string(k) + " names");
          continue;
        }
        for (size_t i = 0; i < k; ++i) {
          ir::ExprId c = ir::kNoExpr;
          if (!expr(a.children[i], false, c)) {
            ok = false;
            continue;
          }
          members[i].inputs.push_back(c);
          members[i].tags.push_back(a.tag);
        }
        continue;
      }
      if (a.kind != Node::Kind::kCall || a.optional) {
        ok = fail(a.loc,
                  "an alternative of a statement binding several names is a tuple '(a, b)' "
                  "or an op whose outputs they are");
        continue;
      }
      Statement one;
      one.names = s.names;
      one.value = a;
      if (!checkDeclaredOutputs(one, declared_, diag_)) {
        ok = false;
        continue;
      }
      ir::ExprId c = ir::kNoExpr;
      if (!call(a, c)) {
        ok = false;
        continue;
      }
      members[0].inputs.push_back(c);
      members[0].tags.push_back(a.tag);
      for (size_t i = 1; i < k; ++i) {
        ir::Expr out;
        out.kind = ir::Expr::Kind::kCapture;
        out.name = (s.names[i].first == "_" ? std::string("_") : s.names[i].first) + "." +
                   std::to_string(j);
        out.loc = s.names[i].second;
        out_.exprs[c].other_outputs.emplace_back(static_cast<uint32_t>(i), out.name);
        members[i].inputs.push_back(add(std::move(out)));
        members[i].tags.push_back(a.tag);
      }
    }
    if (!ok) return false;
    for (size_t i = 0; i < k; ++i) {
      if (std::all_of(members[i].tags.begin(), members[i].tags.end(),
                      [](const std::string& t) { return t.empty(); }))
        members[i].tags.clear();
      ids.push_back(add(std::move(members[i])));
    }
    return true;
  }

  /// Names a statement's value (or its outputs) after its right-hand side was built.
  bool bind(const Statement& s, ir::ExprId id) {
    const Node& v = s.value;
    if (s.names.size() == 1) {
      const std::string& name = s.names[0].first;
      if (name == "_") return true;
      if (v.kind == Node::Kind::kName)
        return fail(s.names[0].second, "'" + name + " = " + v.name + "' only renames '" + v.name +
                                           "'; bind names to op calls or alternatives");
      if (v.kind != Node::Kind::kCall && v.kind != Node::Kind::kAlternatives)
        return fail(s.names[0].second, "cannot bind '" + name +
                                           "' to a constant; bind names to op calls or "
                                           "alternatives");
      out_.exprs[id].name = name;
      return true;
    }
    if (v.kind != Node::Kind::kCall)
      return fail(s.names[1].second, "several names need a single op call on the right of '='");
    if (v.optional)
      return fail(s.names[1].second, "an optional op ('" + v.name + "?') binds only one name");
    if (!checkDeclaredOutputs(s, declared_, diag_)) return false;
    ir::Expr& e = out_.exprs[id];
    if (s.names[0].first != "_") e.name = s.names[0].first;
    for (size_t k = 1; k < s.names.size(); ++k)
      if (s.names[k].first != "_")
        e.other_outputs.emplace_back(static_cast<uint32_t>(k), s.names[k].first);
    return true;
  }

  /// A use of a name: an earlier statement's value, a secondary output's capture, a
  /// capture shared by every use, or (for `_`) a fresh capture.
  bool name(const Node& n, ir::ExprId& id) {
    if (n.name == "_") {
      ir::Expr e;
      e.kind = ir::Expr::Kind::kCapture;
      e.name = "_";
      e.loc = n.loc;
      id = add(std::move(e));
      return true;
    }
    if (n.name == "none")
      return fail(n.loc, "'none' (an omitted input) can only be an input of an op");
    auto at = bound_at_.find(n.name);
    if (at != bound_at_.end()) {
      if (at->second == current_)
        return fail(n.loc, "'" + n.name + "' is used in the statement that binds it");
      if (at->second > current_)
        return fail(n.loc, "'" + n.name + "' is used before the statement that binds it");
      auto b = bound_.find(n.name);
      if (b == bound_.end()) return false;
      if (b->second != ir::kNoExpr) {
        id = b->second;
        return true;
      }
      if (!secondary_.count(n.name)) return false;  // its statement failed; already reported
    }
    auto c = captures_.find(n.name);
    if (c != captures_.end()) {
      id = c->second;
      return true;
    }
    ir::Expr e;
    e.kind = ir::Expr::Kind::kCapture;
    e.name = n.name;
    e.loc = n.loc;
    id = add(std::move(e));
    captures_[n.name] = id;
    return true;
  }

  bool expr(const Node& n, bool in_alternatives, ir::ExprId& id) {
    if (!n.tag.empty() && !in_alternatives)
      return fail(n.tag_loc, "a tag ('@" + n.tag + "') labels an alternative of '|'");
    switch (n.kind) {
      case Node::Kind::kName:
        return name(n, id);
      case Node::Kind::kNumber: {
        ir::Expr e;
        e.kind = ir::Expr::Kind::kConstant;
        e.literal = n.literal;
        e.loc = n.loc;
        id = add(std::move(e));
        return true;
      }
      case Node::Kind::kString:
        return fail(n.loc, "a string is not a value; strings are attribute values");
      case Node::Kind::kList:
        return fail(n.loc, "a list is not a value; lists are attribute values");
      case Node::Kind::kTuple:
        return fail(n.loc,
                    "a tuple '(a, b)' is the value, or an alternative, of a statement "
                    "binding as many names: 'a, b = Split(x) | (Slice(..), Slice(..))'");
      case Node::Kind::kAlternatives: {
        ir::Expr e;
        e.kind = ir::Expr::Kind::kAlternatives;
        e.loc = n.loc;
        bool ok = true;
        for (const Node& child : n.children) {
          ir::ExprId c = ir::kNoExpr;
          if (expr(child, true, c)) {
            e.inputs.push_back(c);
            e.tags.push_back(child.tag);
          } else {
            ok = false;
          }
        }
        if (!ok) return false;
        if (std::all_of(e.tags.begin(), e.tags.end(),
                        [](const std::string& t) { return t.empty(); }))
          e.tags.clear();
        id = add(std::move(e));
        return true;
      }
      case Node::Kind::kCall:
        return call(n, id);
    }
    return false;
  }

  bool call(const Node& n, ir::ExprId& id) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kOp;
    e.domain = n.domain;
    e.op = n.op;
    e.optional = n.optional;
    e.loc = n.loc;
    bool ok = true;
    for (size_t i = 0; i < n.children.size(); ++i) {
      const Node& child = n.children[i];
      if (child.splice) {
        if (i + 1 != n.children.size())
          ok = fail(child.splice_loc, "'" + child.name +
                                          "...' must be the last input: it stands for every "
                                          "input after the ones written");
        else if (n.optional)
          ok = fail(child.splice_loc,
                    "an optional op ('" + n.name + "?') cannot take '" + child.name + "...'");
        else if (child.name == "none")
          ok = fail(child.loc, "'none...' is not a name; write 'rest...' or '_...'");
        e.rest = child.name;
        e.rest_loc = child.loc;
        continue;
      }
      if (child.kind == Node::Kind::kName && child.name == "none" && child.tag.empty()) {
        if (i == 0 && n.optional) {
          ok = fail(child.loc, "an optional op ('" + n.name +
                                   "?') stands for its first input, which cannot be 'none'");
          continue;
        }
        ir::Expr none;
        none.kind = ir::Expr::Kind::kNone;
        none.loc = child.loc;
        e.inputs.push_back(add(std::move(none)));
        continue;
      }
      ir::ExprId c = ir::kNoExpr;
      if (expr(child, false, c))
        e.inputs.push_back(c);
      else
        ok = false;
    }
    if (n.optional && n.children.empty())
      ok = fail(n.loc, "an optional op ('" + n.name + "?') needs an input to stand for");
    for (const AttrArg& a : n.attrs) {
      ir::AttrMatch m;
      if (attr(a, m))
        e.attrs.push_back(std::move(m));
      else
        ok = false;
    }
    if (!ok) return false;
    id = add(std::move(e));
    return true;
  }

  bool attr(const AttrArg& a, ir::AttrMatch& m) {
    m.name = a.name;
    m.loc = a.loc;
    const AttrValue& v = a.value;
    switch (v.kind) {
      case AttrValue::Kind::kLiteral:
        m.kind = ir::AttrMatch::Kind::kEquals;
        m.values = {v.literal};
        return true;
      case AttrValue::Kind::kName:
        if (attr_params_.count(v.name)) {
          m.kind = ir::AttrMatch::Kind::kParam;
          m.capture = v.name;
          return true;
        }
        return fail(v.loc, "attribute '" + a.name +
                               "' needs a literal, any(...), range(lo, hi) "
                               "or capture(name); quote strings: '" +
                               v.name + "'");
      case AttrValue::Kind::kCall:
        break;
    }
    if (v.name == "any") {
      if (v.args.empty()) return fail(v.loc, "any(...) needs at least one literal");
      for (const AttrValue& arg : v.args) {
        if (arg.kind != AttrValue::Kind::kLiteral)
          return fail(arg.loc, "any(...) takes literals: any(1, 10)");
        m.values.push_back(arg.literal);
      }
      m.kind = ir::AttrMatch::Kind::kOneOf;
      return true;
    }
    if (v.name == "range") {
      auto numeric = [](const AttrValue& x) {
        return x.kind == AttrValue::Kind::kLiteral && (x.literal.kind == ir::Literal::Kind::kInt ||
                                                       x.literal.kind == ir::Literal::Kind::kFloat);
      };
      if (v.args.size() != 2 || !numeric(v.args[0]) || !numeric(v.args[1]))
        return fail(v.loc, "range takes two numbers: range(lo, hi)");
      auto value = [](const ir::Literal& l) {
        return l.kind == ir::Literal::Kind::kInt ? static_cast<double>(l.ints[0]) : l.floats[0];
      };
      m.kind = ir::AttrMatch::Kind::kRange;
      m.min = value(v.args[0].literal);
      m.max = value(v.args[1].literal);
      if (m.min > m.max) return fail(v.loc, "range(lo, hi) is empty: lo is greater than hi");
      return true;
    }
    if (v.name == "capture") {
      if (v.args.size() != 1 || v.args[0].kind != AttrValue::Kind::kName || v.args[0].name == "_")
        return fail(v.loc, "capture takes one name: capture(name)");
      m.kind = ir::AttrMatch::Kind::kCapture;
      m.capture = v.args[0].name;
      return true;
    }
    if (v.name == "value" || v.name == "attr" || v.name == "helper")
      return fail(v.loc, "'" + v.name + "(...)' is only allowed in a rewrite");
    return fail(v.loc, "unknown attribute condition '" + v.name +
                           "'; expected any(...), range(lo, hi) or capture(name)" +
                           didYouMean(v.name, {"any", "range", "capture"}));
  }

  DiagnosticEngine& diag_;
  const DeclaredOutputs& declared_;
  ir::Pattern& out_;
  const std::set<std::string>& attr_params_;
  std::map<std::string, size_t> bound_at_;   ///< left-hand name -> its statement
  std::map<std::string, ir::ExprId> bound_;  ///< names of finished statements
  std::set<std::string> secondary_;          ///< names of outputs other than 0
  std::map<std::string, ir::ExprId> captures_;
  /// Each statement's values (one per name of a tuple statement; none if it failed).
  std::vector<std::vector<ir::ExprId>> statement_ids_;
  uint32_t next_group_ = 0;
  size_t current_ = 0;
};

//===----------------------------------------------------------------------===//
// TargetBuilder
//===----------------------------------------------------------------------===//

bool isFloatType(const std::string& t) {
  return t == "float" || t == "float16" || t == "bfloat16" || t == "double";
}

class TargetBuilder {
 public:
  /// `attr_params`: in a fragment's body, the attribute parameters an attribute may name.
  TargetBuilder(DiagnosticEngine& diag, const DeclaredOutputs& declared,
                const std::set<std::string>& match_names, ir::Target& out,
                const std::set<std::string>& attr_params = {})
      : diag_(diag),
        declared_(declared),
        match_names_(match_names),
        out_(out),
        attr_params_(attr_params) {}

  bool build(const std::vector<Statement>& statements) {
    bool ok = collectBoundNames(statements, " in this rewrite", diag_, bound_at_);
    for (const Statement& s : statements)
      for (const auto& [name, loc] : s.names)
        if (name == "none" || name == "tensor")
          ok = fail(loc, "'" + name + "' is a keyword of rewrites and cannot be bound");
    for (current_ = 0; current_ < statements.size(); ++current_) {
      const Statement& s = statements[current_];
      uint32_t id = 0;
      if (!expr(s.value, id)) {
        ok = false;
        continue;
      }
      ok &= bind(s, id);
    }
    return ok;
  }

 private:
  uint32_t add(ir::TargetExpr e) {
    out_.exprs.push_back(std::move(e));
    return static_cast<uint32_t>(out_.exprs.size() - 1);
  }

  bool fail(const SourceLoc& loc, const std::string& message) {
    diag_.error(loc, message);
    return false;
  }

  void bindName(const std::string& name, uint32_t id) {
    if (name == "_") return;
    bound_[name] = id;
    if (match_names_.count(name)) out_.replacements.emplace_back(name, id);
  }

  bool bind(const Statement& s, uint32_t id) {
    if (s.names.size() == 1) {
      bindName(s.names[0].first, id);
      return true;
    }
    const Node& v = s.value;
    if (v.kind != Node::Kind::kCall || out_.exprs[id].kind != ir::TargetExpr::Kind::kOp)
      return fail(s.names[1].second, "several names need a single op call on the right of '='");
    if (!checkDeclaredOutputs(s, declared_, diag_)) return false;
    const uint32_t n = static_cast<uint32_t>(s.names.size());
    out_.exprs[id].num_outputs = n;
    bindName(s.names[0].first, id);
    for (uint32_t k = 1; k < n; ++k) {
      if (s.names[k].first == "_") continue;
      // A secondary output refers to its node through inputs[0] with an empty op.
      ir::TargetExpr out;
      out.kind = ir::TargetExpr::Kind::kOp;
      out.output = k;
      out.num_outputs = n;
      out.inputs = {id};
      out.loc = s.names[k].second;
      bindName(s.names[k].first, add(std::move(out)));
    }
    return true;
  }

  bool name(const Node& n, uint32_t& id) {
    if (n.name == "_")
      return fail(n.loc, "'_' cannot be read; it skips an output on the left of '='");
    if (n.name == "none") {
      ir::TargetExpr e;
      e.kind = ir::TargetExpr::Kind::kNone;
      e.loc = n.loc;
      id = add(std::move(e));
      return true;
    }
    auto b = bound_.find(n.name);
    if (b != bound_.end()) {
      id = b->second;
      return true;
    }
    auto at = bound_at_.find(n.name);
    if (at != bound_at_.end() && !match_names_.count(n.name)) {
      if (at->second == current_)
        return fail(n.loc, "'" + n.name + "' is used in the statement that defines it");
      if (at->second > current_)
        return fail(n.loc, "'" + n.name + "' is used before the statement that defines it");
      return false;  // its statement failed; already reported
    }
    auto r = refs_.find(n.name);
    if (r != refs_.end()) {
      id = r->second;
      return true;
    }
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRef;
    e.name = n.name;
    e.loc = n.loc;
    id = add(std::move(e));
    refs_[n.name] = id;
    return true;
  }

  bool expr(const Node& n, uint32_t& id) {
    if (!n.tag.empty())
      return fail(n.tag_loc, "tags ('@" + n.tag + "') are only allowed in a match");
    switch (n.kind) {
      case Node::Kind::kName:
        return name(n, id);
      case Node::Kind::kNumber:
        return fail(n.loc,
                    "a number is not a value in a rewrite; write a constant as tensor(" +
                        std::string(n.literal.kind == ir::Literal::Kind::kInt ? "int64" : "float") +
                        ", " + n.literal.str() + ")");
      case Node::Kind::kString:
        return fail(n.loc, "a string is not a value; strings are attribute values");
      case Node::Kind::kList:
        return fail(n.loc, "a list is not a value; write a constant as tensor(int64, " +
                               n.literal.str() + ")");
      case Node::Kind::kAlternatives:
        return fail(n.loc, "alternatives ('|') are only allowed in a match");
      case Node::Kind::kTuple:
        return fail(n.loc, "tuples '(a, b)' are only allowed in a match");
      case Node::Kind::kCall:
        if (n.optional)
          return fail(n.loc, "optional ops ('" + n.name + "?') are only allowed in a match");
        if (n.name == "tensor") return tensor(n, id);
        return call(n, id);
    }
    return false;
  }

  bool call(const Node& n, uint32_t& id) {
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    e.domain = n.domain;
    e.op = n.op;
    e.loc = n.loc;
    bool ok = true;
    for (const Node& child : n.children) {
      uint32_t c = 0;
      if (child.splice) {
        ir::TargetExpr rest;
        rest.kind = ir::TargetExpr::Kind::kRest;
        rest.name = child.name;
        rest.loc = child.loc;
        e.inputs.push_back(add(std::move(rest)));
      } else if (expr(child, c)) {
        e.inputs.push_back(c);
      } else {
        ok = false;
      }
    }
    for (const AttrArg& a : n.attrs) {
      ir::TargetAttr t;
      if (attr(a, t))
        e.attrs.push_back(std::move(t));
      else
        ok = false;
    }
    if (!ok) return false;
    id = add(std::move(e));
    return true;
  }

  /// tensor(TYPE, literal (, dims)?) | tensor(like(x), literal (, dims)?)
  /// | tensor(helper, NAME, args...)
  bool tensor(const Node& n, uint32_t& id) {
    static const char* kUsage =
        "tensor takes a type, a value and optional dims: tensor(float, [1.0, 2.0], [2]), "
        "tensor(like(x), 0.0) (x's floating element type), or tensor(helper, name, args...)";
    if (!n.attrs.empty()) return fail(n.attrs[0].loc, "tensor(...) takes no attributes");
    for (const Node& child : n.children)
      if (child.splice) return fail(child.splice_loc, "tensor(...) cannot take a rest of inputs");
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.loc = n.loc;
    const std::vector<Node>& args = n.children;
    if (!args.empty() && args[0].kind == Node::Kind::kCall && args[0].name == "like")
      return likeTensor(n, id, std::move(e));
    if (args.empty() || args[0].kind != Node::Kind::kName) return fail(n.loc, kUsage);
    if (args[0].name == "helper") {
      if (args.size() < 2 || args[1].kind != Node::Kind::kName)
        return fail(n.loc, "tensor(helper, name, args...) needs a helper name");
      e.helper = args[1].name;
      for (size_t i = 2; i < args.size(); ++i) {
        if (args[i].kind != Node::Kind::kName)
          return fail(args[i].loc, "helper arguments are names: tensor(helper, name, a, b)");
        e.args.push_back(args[i].name);
      }
      id = add(std::move(e));
      return true;
    }
    const std::vector<std::string>& types = elemTypeNames();
    if (std::find(types.begin(), types.end(), args[0].name) == types.end())
      return fail(args[0].loc,
                  "unknown element type '" + args[0].name + "'" + didYouMean(args[0].name, types));
    e.elem_type = args[0].name;
    if (args.size() < 2 || args.size() > 3) return fail(n.loc, kUsage);
    const Node& value = args[1];
    if (value.kind != Node::Kind::kNumber && value.kind != Node::Kind::kList &&
        value.kind != Node::Kind::kString)
      return fail(value.loc, kUsage);
    e.literal = value.literal;
    using K = ir::Literal::Kind;
    const bool strings = e.literal.kind == K::kString || e.literal.kind == K::kStrings;
    if ((e.elem_type == "string") != strings)
      return fail(value.loc, "a " + e.elem_type + " tensor needs " +
                                 (strings ? "numbers" : "strings") + " as its value");
    if (isFloatType(e.elem_type)) {
      e.literal.toFloats();  // tensor(float, [1, 2])
    } else if (e.literal.kind == K::kFloat || e.literal.kind == K::kFloats) {
      return fail(value.loc, "a " + e.elem_type + " tensor needs integer values");
    }
    return tensorDims(args, e, id);
  }

  /// The optional third argument of tensor(...), its dims; then adds `e`.
  bool tensorDims(const std::vector<Node>& args, ir::TargetExpr& e, uint32_t& id) {
    if (args.size() == 3) {
      const Node& dims = args[2];
      if (dims.kind != Node::Kind::kList || dims.literal.kind != ir::Literal::Kind::kInts)
        return fail(dims.loc, "the dims of a tensor are a list of integers: [2, 3]");
      e.dims = dims.literal.ints;
    }
    id = add(std::move(e));
    return true;
  }

  /// tensor(like(x), literal (, dims)?): a float literal, stored in x's element type.
  bool likeTensor(const Node& n, uint32_t& id, ir::TargetExpr e) {
    const std::vector<Node>& args = n.children;
    const Node& like = args[0];
    if (like.children.size() != 1 || like.children[0].kind != Node::Kind::kName ||
        !like.attrs.empty() || !like.domain.empty())
      return fail(like.loc, "like takes one bound name: tensor(like(x), 0.0)");
    if (args.size() < 2 || args.size() > 3)
      return fail(n.loc, "tensor(like(x), value) takes a value and optional dims");
    e.like = like.children[0].name;
    const Node& value = args[1];
    if (value.kind != Node::Kind::kNumber && value.kind != Node::Kind::kList)
      return fail(value.loc, "tensor(like(x), value) takes numbers: tensor(like(x), 0.0)");
    e.literal = value.literal;
    e.literal.toFloats();  // a floating type, known when the rule applies
    return tensorDims(args, e, id);
  }

  bool attr(const AttrArg& a, ir::TargetAttr& t) {
    t.name = a.name;
    t.loc = a.loc;
    const AttrValue& v = a.value;
    switch (v.kind) {
      case AttrValue::Kind::kLiteral:
        t.kind = ir::TargetAttr::Kind::kLiteral;
        t.literal = v.literal;
        return true;
      case AttrValue::Kind::kName:
        if (attr_params_.count(v.name)) {
          t.kind = ir::TargetAttr::Kind::kParam;
          t.ref = v.name;
          return true;
        }
        return fail(v.loc, "attribute '" + a.name +
                               "' needs a literal, value(name), attr(name) or "
                               "helper(name, ...); quote strings: '" +
                               v.name + "'");
      case AttrValue::Kind::kCall:
        break;
    }
    if (v.name == "value" || v.name == "attr") {
      if (v.args.size() != 1 || v.args[0].kind != AttrValue::Kind::kName || v.args[0].name == "_")
        return fail(v.loc, v.name + " takes one name: " + v.name + "(name)");
      t.kind = v.name == "value" ? ir::TargetAttr::Kind::kValueOf : ir::TargetAttr::Kind::kCaptured;
      t.ref = v.args[0].name;
      return true;
    }
    if (v.name == "helper") {
      if (v.args.empty() || v.args[0].kind == AttrValue::Kind::kCall ||
          (v.args[0].kind == AttrValue::Kind::kLiteral &&
           v.args[0].literal.kind != ir::Literal::Kind::kString))
        return fail(v.loc, "helper takes a helper name and then names: helper(name, a, b)");
      t.kind = ir::TargetAttr::Kind::kHelper;
      t.ref =
          v.args[0].kind == AttrValue::Kind::kName ? v.args[0].name : v.args[0].literal.strings[0];
      for (size_t i = 1; i < v.args.size(); ++i) {
        if (v.args[i].kind != AttrValue::Kind::kName)
          return fail(v.args[i].loc, "helper arguments are names: helper(name, a, b)");
        t.args.push_back(v.args[i].name);
      }
      return true;
    }
    if (v.name == "any" || v.name == "range" || v.name == "capture")
      return fail(v.loc, "'" + v.name + "(...)' is only allowed in a match");
    return fail(v.loc, "unknown function '" + v.name +
                           "' in a rewrite attribute; expected value(name), attr(name) or "
                           "helper(name, ...)" +
                           didYouMean(v.name, {"value", "attr", "helper"}));
  }

  DiagnosticEngine& diag_;
  const DeclaredOutputs& declared_;
  const std::set<std::string>& match_names_;
  ir::Target& out_;
  const std::set<std::string>& attr_params_;
  std::map<std::string, size_t> bound_at_;  ///< left-hand name -> its statement
  std::map<std::string, uint32_t> bound_;   ///< names bound by finished statements
  std::map<std::string, uint32_t> refs_;    ///< one kRef per source name
  size_t current_ = 0;
};

/// Edits (insert, delete, replace, swap two neighbours) turning `a` into `b`.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

bool parseMatch(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                ir::Pattern& out, const DeclaredOutputs& declared) {
  std::vector<Statement> statements;
  if (!Parser(text, locator, diag).parseStatements(statements)) return false;
  if (statements.empty()) {
    diag.error(locator.at(0), "the match has no statements");
    return false;
  }
  return PatternBuilder(diag, declared, out).build(statements);
}

std::set<std::string> patternValueNames(const ir::Pattern& pattern) {
  std::set<std::string> names;
  for (const ir::Expr& e : pattern.exprs) {
    if (!e.name.empty() && e.name != "_") names.insert(e.name);
    for (const auto& [index, name] : e.other_outputs) names.insert(name);
  }
  return names;
}

bool parseRewrite(const std::string& text, const TextLocator& locator,
                  const std::set<std::string>& match_names, DiagnosticEngine& diag, ir::Target& out,
                  const DeclaredOutputs& declared, const RewriteOptions& options) {
  std::vector<Statement> statements;
  bool ok = true;
  if (options.let_text) {
    // The rule's `let:` runs first; a syntax error there is reported once per variant
    // only if the caller parses it again, so callers check the block once beforehand.
    ok &= Parser(*options.let_text, *options.let_locator, diag).parseStatements(statements);
  }
  const size_t lets = statements.size();
  ok &= Parser(text, locator, diag).parseStatements(statements);
  if (!ok) return false;
  if (statements.size() == lets) {
    diag.error(locator.at(0), "the rewrite has no statements");
    return false;
  }
  size_t kept = 0;
  for (const auto& [name, loc] : options.keep) {
    if (!match_names.count(name)) {
      diag.error(loc, "'keep' names values of the match; '" + name + "' is not one");
      return false;
    }
    Statement keep;
    keep.names = {{name, loc}};
    keep.value.kind = Node::Kind::kName;
    keep.value.name = name;
    keep.value.loc = loc;
    // After the lets, in the order written (`cos = cos` then `sin = sin`).
    statements.insert(statements.begin() + lets + kept, std::move(keep));
    ++kept;
  }
  std::set<std::string> replaced = match_names;
  if (options.results) {
    if (options.results->empty()) {
      const std::string& last = statements.back().names[0].first;
      if (last == "_") {
        diag.error(statements.back().names[0].second,
                   "a fragment's last statement names its result; '_' names nothing");
        return false;
      }
      options.results->push_back(last);
    }
    replaced.insert(options.results->begin(), options.results->end());
  }
  return TargetBuilder(diag, declared, replaced, out, options.attr_params).build(statements);
}

bool checkStatements(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag) {
  std::vector<Statement> statements;
  return Parser(text, locator, diag).parseStatements(statements);
}

bool parseFragmentMatch(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                        ir::Fragment& out, const DeclaredOutputs& declared) {
  std::vector<Statement> statements;
  if (!Parser(text, locator, diag).parseStatements(statements)) return false;
  if (statements.empty()) {
    diag.error(locator.at(0), "the fragment's match has no statements");
    return false;
  }
  std::set<std::string> attr_params;
  for (const ir::Fragment::Param& p : out.params) {
    if (p.attribute) {
      attr_params.insert(p.name);
      continue;
    }
    for (const Statement& s : statements)
      for (const auto& [name, loc] : s.names)
        if (name == p.name) {
          diag.error(loc, "'" + name + "' is a parameter of fragment '" + out.name +
                              "'; the uses pass its value, the body cannot bind it");
          return false;
        }
  }
  if (out.results.empty()) {
    const std::string& last = statements.back().names[0].first;
    if (last == "_") {
      diag.error(statements.back().names[0].second,
                 "a fragment's last statement names its result; '_' names nothing");
      return false;
    }
    out.results.push_back(last);
  }
  PatternBuilder builder(diag, declared, out.match, attr_params);
  if (!builder.build(statements, out.results)) return false;
  for (const std::string& r : out.results) {
    const ir::ExprId id = builder.resultExpr(r, out.loc);
    if (id == ir::kNoExpr) {
      diag.error(out.loc,
                 "fragment '" + out.name + "' returns '" + r + "', which its match never reads");
      return false;
    }
    out.result_exprs.push_back(id);
  }
  return true;
}

bool parseSignature(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                    ir::Fragment& out) {
  return Parser(text, locator, diag).parseSignature(out);
}

bool parseNativeCall(const std::string& text, const TextLocator& locator, DiagnosticEngine& diag,
                     std::string& name, std::vector<std::string>& args) {
  return Parser(text, locator, diag).parseNativeCall(name, args);
}

std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, std::min<size_t>(2, word.size() / 3));
  for (const std::string& c : candidates) {
    const size_t d = editDistance(word, c);
    if (d <= best_distance && d < c.size() && (best.empty() || d < editDistance(word, best)))
      best = c;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

const std::vector<std::string>& elemTypeNames() {
  static const std::vector<std::string> kNames = {
      "float", "float16", "bfloat16", "double", "int8",   "int16", "int32",
      "int64", "uint8",   "uint16",   "uint32", "uint64", "bool",  "string"};
  return kNames;
}

bool isIdentifier(const std::string& s) {
  if (s.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

}  // namespace onnx_rewrite::yaml
