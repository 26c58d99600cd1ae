//===- YamlFrontEnd.cc - YAML rule files to Rule IR -----------------------===//
//
// yaml-cpp gives a node tree whose marks are byte offsets into the file. The
// Reader walks it with a typed reader per field (readInteger, readNames, ...),
// each reporting a wrong type at the value and an unknown or repeated key at
// the key. Statements are parsed by RuleExprParser; their locations come from
// a TextLocator that aligns the scalar's value with the file text, so a name in
// the third line of a `match: |` block points at its real line and column
// (literal, folded, quoted and plain scalars alike, CRLF line ends included).
//
//===----------------------------------------------------------------------===//
#include "dsl/yaml/YamlFrontEnd.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "dsl/RegularFileText.h"
#include "dsl/yaml/RuleExprParser.h"
#include "dsl/yaml/RuleLexer.h"

namespace onnx_rewrite {
namespace {

using yaml::TextLocator;

//===----------------------------------------------------------------------===//
// Positions in the file
//===----------------------------------------------------------------------===//

/// Byte offsets of a text to 1-based lines and columns.
class LineTable {
 public:
  explicit LineTable(const std::string& text) : size_(text.size()) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }

  std::pair<uint32_t, uint32_t> position(size_t offset) const {
    offset = std::min(offset, size_);
    const size_t line = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin();
    return {static_cast<uint32_t>(line), static_cast<uint32_t>(offset - starts_[line - 1] + 1)};
  }

  /// The offset of 0-based `line` and `column`, clamped to the text.
  size_t offset(int line, int column) const {
    if (line < 0 || static_cast<size_t>(line) >= starts_.size()) return size_;
    return std::min(size_, starts_[line] + static_cast<size_t>(std::max(column, 0)));
  }

 private:
  size_t size_;
  std::vector<size_t> starts_;
};

/// One `key: value` of a mapping.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

const Entry* find(const std::vector<Entry>& entries, const std::string& key) {
  for (const Entry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

bool toInteger(std::string s, int64_t& v) {
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool toNumber(std::string s, double& v) {
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool isSnakeCase(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// yaml-cpp 0.7 ends a plain scalar in flow context at any '?', so `[input, beta?]` (how
/// docs/dsl.md writes optional op inputs) and `{ match: y = Cast?(x) }` fail to parse. The
/// reader gives yaml-cpp a copy of the text in which every '?' that follows a byte other than
/// a blank or a flow indicator (so never a YAML `? ` key indicator) is replaced by a byte the
/// file does not use, and turns that byte back into '?' in every scalar it reads. Offsets
/// stay the same, so marks still point into the original text.
char questionStandIn(const std::string& text) {
  for (char c : {'^', ';', '$', '~'})
    if (text.find(c) == std::string::npos) return c;
  return 0;
}

std::string hideQuestionMarks(std::string text, char stand_in) {
  if (stand_in == 0) return text;
  for (size_t i = 1; i < text.size(); ++i) {
    const char before = text[i - 1];
    if (text[i] == '?' && before != ' ' && before != '\t' && before != '\n' && before != '\r' &&
        before != '{' && before != '[' && before != ',')
      text[i] = stand_in;
  }
  return text;
}

const std::vector<std::string> kTopKeys = {"defaults", "rules", "ops", "fragments"};
const std::vector<std::string> kDefaultKeys = {"tags", "requires", "priority"};
const std::vector<std::string> kRuleKeys = {"rule",  "priority", "tags", "doc",  "requires",
                                            "match", "where",    "let",  "keep", "rewrite"};
const std::vector<std::string> kFragmentKeys = {"fragment", "doc",   "returns",
                                                "match",    "where", "rewrite"};
const std::vector<std::string> kRequireKeys = {"domain", "opset"};
const std::vector<std::string> kVariantKeys = {"when", "do"};
const std::vector<std::string> kWhenKeys = {"opset", "domain", "tags"};
const std::vector<std::string> kConstraintKeys = {"constant", "scalar",    "equals", "tolerance",
                                                  "rank",     "dtype",     "shape",  "consumers",
                                                  "native",   "equivalent"};
const std::vector<std::string> kOpKeys = {"op",    "since", "inputs",     "outputs",
                                          "attrs", "doc",   "commutative"};
const std::vector<std::string> kAttrDeclKeys = {"type", "default", "required"};
const std::vector<std::string> kAttrTypes = {"int", "float", "string", "ints", "floats", "strings"};

constexpr const char* kOpsetForms = "expected '>=N', '<=N', 'N' or '>=N,<=M'";

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

class Reader {
 public:
  Reader(const std::string& path, const std::string& text, DiagnosticEngine& diag)
      : path_(path), text_(text), lines_(text), diag_(diag), stand_in_(questionStandIn(text)) {}

  void run(ir::RuleFile& out) {
    // YAML::Load, not LoadAll: yaml-cpp 0.7's LoadAll loops forever on inputs such as ","
    // (jbeder/yaml-cpp#1040). A second document is found with a bounded event parse.
    const std::string hidden = hideQuestionMarks(text_, stand_in_);
    YAML::Node top;
    try {
      top = YAML::Load(hidden);
    } catch (const YAML::Exception& e) {
      ir::SourceLoc loc{path_, 0, 0};
      if (e.mark.line >= 0) {
        loc.line = static_cast<uint32_t>(e.mark.line) + 1;
        loc.col = static_cast<uint32_t>(std::max(e.mark.column, 0)) + 1;
      }
      // yaml-cpp names a tab in indentation in several ways ("end of map not found", ...);
      // say what it is when the failing line is indented with one.
      const size_t tab = indentationTab(e.mark.line);
      if (tab != std::string::npos)
        error(at(tab), "invalid YAML: a tab in indentation; YAML indents with spaces");
      else
        diag_.error(loc, "invalid YAML: " + e.msg);
      return;
    }
    if (top.IsNull()) {
      const size_t content = firstContent();
      if (content == std::string::npos)
        diag_.error(ir::SourceLoc{path_, 1, 1},
                    "the rule file is empty; expected a mapping with a 'rules:' list");
      else
        error(at(content), "expected a mapping with a 'rules:' list");
      return;
    }
    const size_t second = secondDocument(hidden);
    if (second != std::string::npos)
      error(at(second), "a rule file holds one YAML document; remove the '---' and what follows");
    if (top.IsSequence()) {
      error(top, "a rule file is a mapping with a 'rules:' list; put these entries under 'rules:'");
      return;
    }
    if (!top.IsMap()) {
      error(top, "a rule file is a mapping with a 'rules:' list, found " + describe(top));
      return;
    }
    std::vector<Entry> fields = entries(top, kTopKeys, "key", " at the top level");
    const Entry* rules = find(fields, "rules");
    const Entry* ops = find(fields, "ops");
    const Entry* fragments = find(fields, "fragments");
    if (!rules && !ops && !fragments) {
      error(top, "the rule file has no 'rules:' list");
      return;
    }
    if (ops) readOps(*ops, out);
    if (fragments) readFragments(*fragments, out);
    if (const Entry* d = find(fields, "defaults")) readDefaults(*d);
    if (rules) {
      if (rules->value.IsSequence()) {
        for (const YAML::Node& rule : rules->value) readRule(rule, out);
      } else if (!rules->value.IsNull()) {
        error(valueLoc(*rules), "'rules' must be a list of rules, found " + describe(rules->value));
      }
    }
  }

 private:
  //===--------------------------------------------------------------------===//
  // Locations and messages
  //===--------------------------------------------------------------------===//

  /// The offset of a tab in the indentation of 0-based `line`, or npos.
  size_t indentationTab(int line) const {
    if (line < 0) return std::string::npos;
    for (size_t i = lines_.offset(line, 0); i < text_.size(); ++i) {
      if (text_[i] == '\t') return i;
      if (text_[i] != ' ') break;
    }
    return std::string::npos;
  }

  /// The offset of the first byte that is not blank or in a comment, or npos.
  size_t firstContent() const {
    bool comment = false;
    for (size_t i = 0; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '\n') comment = false;
      if (comment || c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
      if (c == '#') {
        comment = true;
        continue;
      }
      return i;
    }
    return std::string::npos;
  }

  /// Where a second YAML document starts, or npos. Reads at most two documents' events.
  static size_t secondDocument(const std::string& text) {
    struct Starts : YAML::EventHandler {
      std::vector<YAML::Mark> marks;
      void OnDocumentStart(const YAML::Mark& m) override { marks.push_back(m); }
      void OnDocumentEnd() override {}
      void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
      void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
      void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    const std::string&) override {}
      void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                           YAML::EmitterStyle::value) override {}
      void OnSequenceEnd() override {}
      void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                      YAML::EmitterStyle::value) override {}
      void OnMapEnd() override {}
    } starts;
    try {
      std::istringstream in(text);
      YAML::Parser parser(in);
      if (parser.HandleNextDocument(starts)) parser.HandleNextDocument(starts);
    } catch (const YAML::Exception&) {
      // The second document's own errors are beside the point: it should not be there.
    }
    // yaml-cpp may report a document again at the same place after a stray token.
    if (starts.marks.size() < 2 || starts.marks[1].pos <= starts.marks[0].pos)
      return std::string::npos;
    return static_cast<size_t>(starts.marks[1].pos);
  }

  /// A scalar's text, with the '?'s yaml-cpp was not shown put back.
  std::string scalar(const YAML::Node& n) const {
    std::string s = n.Scalar();
    if (stand_in_ != 0) std::replace(s.begin(), s.end(), stand_in_, '?');
    return s;
  }

  /// How a node is named in messages: "a list", "a mapping", "nothing", "'text'".
  std::string describe(const YAML::Node& n) const {
    if (!n.IsDefined() || n.IsNull()) return "nothing";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a mapping";
    std::string s = scalar(n);
    s = s.substr(0, s.find('\n'));
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return "'" + s + "'";
  }

  size_t offsetOf(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.pos >= 0 && static_cast<size_t>(m.pos) <= text_.size()) return m.pos;
    return lines_.offset(m.line, m.column);
  }

  ir::SourceLoc at(size_t offset) const {
    const auto [line, col] = lines_.position(offset);
    return ir::SourceLoc{path_, line, col};
  }

  ir::SourceLoc loc(const YAML::Node& n) const { return at(offsetOf(n)); }

  /// The value's location, or the key's when there is no value to point at.
  ir::SourceLoc valueLoc(const Entry& e) const {
    return e.value.IsNull() ? loc(e.key_node) : loc(e.value);
  }

  void error(const ir::SourceLoc& loc, const std::string& message) { diag_.error(loc, message); }
  void error(const YAML::Node& n, const std::string& message) { diag_.error(loc(n), message); }

  /// Maps each byte of a scalar's value to where it is in the file: skips the node's tag
  /// and anchor, a block scalar's header line or a quote, then finds the value's characters
  /// in order (indentation, folded line breaks and escapes are what lies between).
  TextLocator scalarLocator(const YAML::Node& n) const {
    const std::string value = scalar(n);
    const size_t size = text_.size();
    size_t p = offsetOf(n);
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (p < size && (text_[p] == '!' || text_[p] == '&')) {
      while (p < size && !blank(text_[p])) ++p;
      while (p < size && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    }
    if (p < size && (text_[p] == '|' || text_[p] == '>')) {
      while (p < size && text_[p] != '\n') ++p;
      if (p < size) ++p;
    } else if (p < size && (text_[p] == '"' || text_[p] == '\'')) {
      ++p;
    }
    std::vector<std::pair<uint32_t, uint32_t>> positions;
    positions.reserve(value.size() + 1);
    for (char c : value) {
      size_t q = p;
      if (blank(c)) {
        while (q < size && text_[q] != c && blank(text_[q])) ++q;
      } else {
        while (q < size && text_[q] != c &&
               (blank(text_[q]) || text_[q] == '\\' || text_[q] == '\'' || text_[q] == '"'))
          ++q;
      }
      if (q < size && text_[q] == c) {
        positions.push_back(lines_.position(q));
        p = q + 1;
      } else {
        positions.push_back(lines_.position(p));  // an escape: stay close
        if (p < size) ++p;
      }
    }
    positions.push_back(lines_.position(p));
    return TextLocator(path_, std::move(positions));
  }

  /// The keys of a mapping, in order. Reports keys that are not names, keys not in
  /// `allowed` (unless it is empty) and repeated keys, and leaves them out.
  std::vector<Entry> entries(const YAML::Node& map, const std::vector<std::string>& allowed,
                             const std::string& noun, const std::string& context) {
    std::vector<Entry> out;
    std::map<std::string, YAML::Node> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        error(key, "expected a key name, found " + describe(key));
        continue;
      }
      const std::string name = scalar(key);
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string hint = yaml::didYouMean(name, allowed);
        if (hint.empty()) {
          hint = "; expected ";
          for (size_t i = 0; i < allowed.size(); ++i)
            hint += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
        }
        error(key, "unknown " + noun + " '" + name + "'" + context + hint);
        continue;
      }
      auto [first, inserted] = seen.emplace(name, key);
      if (!inserted) {
        error(key, "duplicate key '" + name + "'");
        diag_.note(loc(first->second), "'" + name + "' is first given here");
        continue;
      }
      out.push_back({name, key, it->second});
    }
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Typed values
  //===--------------------------------------------------------------------===//

  bool readString(const Entry& e, std::string& out) {
    if (!e.value.IsScalar()) {
      error(valueLoc(e), "'" + e.key + "' must be text, found " + describe(e.value));
      return false;
    }
    out = scalar(e.value);
    return true;
  }

  bool readInteger(const Entry& e, int64_t& out) {
    if (e.value.IsScalar() && toInteger(scalar(e.value), out)) return true;
    error(valueLoc(e), "'" + e.key + "' must be an integer, found " + describe(e.value));
    return false;
  }

  bool readBool(const Entry& e, bool& out) {
    const std::string s = e.value.IsScalar() ? scalar(e.value) : "";
    if (s == "true" || s == "True" || s == "TRUE") {
      out = true;
      return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      out = false;
      return true;
    }
    error(valueLoc(e), "'" + e.key + "' must be true or false, found " + describe(e.value));
    return false;
  }

  /// A list of names (`tags: [ort, onnx]`).
  bool readNames(const Entry& e, std::vector<std::string>& out) {
    if (!e.value.IsSequence()) {
      error(valueLoc(e), "'" + e.key + "' must be a list of names, such as [ort, onnx], found " +
                             describe(e.value));
      return false;
    }
    bool ok = true;
    for (const YAML::Node& item : e.value) {
      if (!item.IsScalar() || !yaml::isIdentifier(scalar(item))) {
        error(item, "'" + e.key + "' holds names, found " + describe(item));
        ok = false;
        continue;
      }
      out.push_back(scalar(item));
    }
    return ok;
  }

  /// `">=N"`, `"<=N"`, `"N"` or `">=N,<=M"`; N alone means exactly N.
  bool readOpset(const Entry& e, int64_t& min, int64_t& max) {
    const std::string text = e.value.IsScalar() ? scalar(e.value) : "";
    std::string compact;
    for (char c : text)
      if (c != ' ' && c != '\t') compact += c;
    bool ok = !compact.empty();
    bool has_min = false, has_max = false;
    size_t start = 0;
    int parts = 0;
    while (ok && start <= compact.size()) {
      size_t comma = compact.find(',', start);
      if (comma == std::string::npos) comma = compact.size();
      std::string part = compact.substr(start, comma - start);
      ++parts;
      int64_t v = 0;
      if (part.rfind(">=", 0) == 0 && !has_min && toInteger(part.substr(2), v) && v >= 1) {
        has_min = true;
        min = v;
      } else if (part.rfind("<=", 0) == 0 && !has_max && toInteger(part.substr(2), v) && v >= 1) {
        has_max = true;
        max = v;
      } else if (parts == 1 && comma == compact.size() && std::isdigit(part[0] & 0xff) &&
                 toInteger(part, v) && v >= 1) {
        has_min = has_max = true;
        min = max = v;
      } else {
        ok = false;
      }
      start = comma + 1;
    }
    if (!ok || parts > 2) {
      error(valueLoc(e), "bad opset " + describe(e.value) + "; " + kOpsetForms);
      return false;
    }
    if (has_min && has_max && min > max) {
      error(valueLoc(e), "opset range " + describe(e.value) + " is empty");
      return false;
    }
    return true;
  }

  /// A domain name; "ai.onnx" is the default domain, written "".
  bool readDomain(const Entry& e, std::string& out) {
    if (!readString(e, out)) return false;
    if (out == "ai.onnx") out.clear();
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Rules
  //===--------------------------------------------------------------------===//

  void readRule(const YAML::Node& node, ir::RuleFile& out) {
    const unsigned errors = diag_.errorCount();
    if (!node.IsMap()) {
      error(node,
            "a rule is a mapping with 'rule:', 'match:' and 'rewrite:', found " + describe(node));
      return;
    }
    std::vector<Entry> fields = entries(node, kRuleKeys, "key", " in a rule");
    ir::Rule rule;
    rule.loc = loc(node);
    std::string what = "the rule";
    if (const Entry* e = find(fields, "rule")) {
      if (readString(*e, rule.name)) {
        what = "rule '" + rule.name + "'";
        if (!isSnakeCase(rule.name)) {
          error(valueLoc(*e), "rule name " + describe(e->value) +
                                  " is not snake_case (lowercase letters, digits and '_')");
        } else {
          auto [first, inserted] = rule_names_.emplace(rule.name, valueLoc(*e));
          if (!inserted) {
            error(valueLoc(*e), "duplicate rule name '" + rule.name + "'");
            diag_.note(first->second, "'" + rule.name + "' is first defined here");
          }
        }
      }
    } else {
      error(node, "a rule needs a name: 'rule: my_rule'");
    }
    rule.priority = default_priority_;
    if (const Entry* e = find(fields, "priority")) readPriority(*e, rule.priority);
    if (const Entry* e = find(fields, "tags"))
      readNames(*e, rule.tags);
    else
      rule.tags = default_tags_;
    if (const Entry* e = find(fields, "doc")) {
      if (readString(*e, rule.doc)) {
        while (!rule.doc.empty() && (rule.doc.back() == '\n' || rule.doc.back() == ' '))
          rule.doc.pop_back();
      }
    }
    if (const Entry* e = find(fields, "requires"))
      readRequires(*e, rule);
    else
    rule.requires = default_requires_;
    const Entry* match = find(fields, "match");
    if (!match) {
      error(node, what + " has no 'match'");
    } else if (statements(*match)) {
      yaml::parseMatch(scalar(match->value), scalarLocator(match->value), diag_, rule.pattern,
                       declared_);
    }
    if (const Entry* e = find(fields, "where")) readWhere(*e, rule.pattern);
    yaml::RewriteOptions options;
    std::string let_text;
    std::optional<TextLocator> let_locator;
    if (const Entry* e = find(fields, "let")) {
      if (statements(*e)) {
        let_text = scalar(e->value);
        let_locator.emplace(scalarLocator(e->value));
        // Syntax errors once here, not once per variant.
        if (yaml::checkStatements(let_text, *let_locator, diag_)) {
          options.let_text = &let_text;
          options.let_locator = &*let_locator;
        }
      }
    }
    if (const Entry* e = find(fields, "keep")) {
      std::vector<std::string> names;
      if (readNames(*e, names))
        for (const std::string& n : names) options.keep.emplace_back(n, valueLoc(*e));
    }
    if (const Entry* e = find(fields, "rewrite")) {
      readRewrite(*e, yaml::patternValueNames(rule.pattern), options, rule.targets);
    } else {
      error(node, what + " has no 'rewrite'");
    }
    if (diag_.errorCount() == errors) out.rules.push_back(std::move(rule));
  }

  //===--------------------------------------------------------------------===//
  // Fragments
  //===--------------------------------------------------------------------===//

  void readFragments(const Entry& e, ir::RuleFile& out) {
    if (e.value.IsNull()) return;
    if (!e.value.IsSequence()) {
      error(valueLoc(e), "'fragments' must be a list of fragments, found " + describe(e.value));
      return;
    }
    for (const YAML::Node& node : e.value) readFragment(node, out);
  }

  void readFragment(const YAML::Node& node, ir::RuleFile& out) {
    const unsigned errors = diag_.errorCount();
    if (!node.IsMap()) {
      error(node,
            "a fragment is a mapping with 'fragment: name(params)' and a 'match:' or a "
            "'rewrite:', found " +
                describe(node));
      return;
    }
    std::vector<Entry> fields = entries(node, kFragmentKeys, "key", " in a fragment");
    ir::Fragment fragment;
    const Entry* sig = find(fields, "fragment");
    if (!sig) {
      error(node, "a fragment needs a signature: 'fragment: head_split(t)'");
      return;
    }
    std::string text;
    if (!readString(*sig, text) ||
        !yaml::parseSignature(text, scalarLocator(sig->value), diag_, fragment))
      return;
    if (!isSnakeCase(fragment.name)) {
      error(fragment.loc, "fragment name '" + fragment.name +
                              "' is not snake_case (lowercase letters, digits and '_'), so it "
                              "could be taken for an op");
      return;
    }
    if (const Entry* d = find(fields, "doc")) readString(*d, fragment.doc);
    if (const Entry* r = find(fields, "returns")) readNames(*r, fragment.results);
    const Entry* match = find(fields, "match");
    const Entry* rewrite = find(fields, "rewrite");
    if (match && rewrite) {
      error(rewrite->key_node, "a fragment is a piece of a match or of a rewrite, not both");
      return;
    }
    if (!match && !rewrite) {
      error(node, "fragment '" + fragment.name + "' needs a 'match:' or a 'rewrite:'");
      return;
    }
    if (match) {
      fragment.is_match = true;
      if (statements(*match))
        yaml::parseFragmentMatch(scalar(match->value), scalarLocator(match->value), diag_, fragment,
                                 declared_);
      if (const Entry* w = find(fields, "where")) readWhere(*w, fragment.match);
    } else {
      fragment.is_match = false;
      if (const Entry* w = find(fields, "where"))
        error(w->key_node, "'where' constrains a match; a rewrite fragment has none");
      yaml::RewriteOptions options;
      for (const ir::Fragment::Param& p : fragment.params)
        if (p.attribute) options.attr_params.insert(p.name);
      options.results = &fragment.results;
      std::set<std::string> none;
      readRewrite(*rewrite, none, options, fragment.rewrite);
    }
    if (diag_.errorCount() == errors) out.fragments.push_back(std::move(fragment));
  }

  /// True if `e` holds statements (a non-empty scalar); reports it otherwise.
  bool statements(const Entry& e) {
    if (e.value.IsScalar() && !scalar(e.value).empty()) return true;
    if (e.value.IsNull() || e.value.IsScalar())
      error(valueLoc(e), "'" + e.key + "' is empty; write its statements after '" + e.key + ": |'");
    else
      error(valueLoc(e), "'" + e.key + "' must be statements, one per line after '" + e.key +
                             ": |', found " + describe(e.value));
    return false;
  }

  void readPriority(const Entry& e, int& out) {
    int64_t priority = 0;
    if (!readInteger(e, priority)) return;
    if (priority < std::numeric_limits<int>::min() || priority > std::numeric_limits<int>::max())
      error(valueLoc(e), "'priority' is out of range");
    else
      out = static_cast<int>(priority);
  }

  /// `defaults: { tags: [...], requires: {...}, priority: N }`: what a rule of this file
  /// without its own `tags`, `requires` or `priority` has.
  void readDefaults(const Entry& e) {
    if (!e.value.IsMap()) {
      error(valueLoc(e),
            "'defaults' must be a mapping such as { tags: [ort], requires: { opset: "
            "\">=9\" }, priority: 10 }, found " +
                describe(e.value));
      return;
    }
    std::vector<Entry> fields = entries(e.value, kDefaultKeys, "key", " in 'defaults'");
    if (const Entry* t = find(fields, "tags")) readNames(*t, default_tags_);
    if (const Entry* p = find(fields, "priority")) readPriority(*p, default_priority_);
    if (const Entry* r = find(fields, "requires")) {
      ir::Rule holder;
      readRequires(*r, holder);
      default_requires_ = std::move(holder.requires);
    }
  }

  void readRequires(const Entry& e, ir::Rule& rule) {
    auto one = [&](const YAML::Node& node) {
      if (!node.IsMap()) {
        error(node.IsNull() ? loc(e.key_node) : loc(node),
              "'requires' entries are mappings, such as { opset: \">=17\" }, found " +
                  describe(node));
        return;
      }
      std::vector<Entry> fields = entries(node, kRequireKeys, "key", " in 'requires'");
      ir::Applicability a;
      a.loc = loc(node);
      if (const Entry* d = find(fields, "domain")) readDomain(*d, a.domain);
      if (const Entry* o = find(fields, "opset")) {
        readOpset(*o, a.min_opset, a.max_opset);
      } else {
        error(node, "'requires' needs an opset, such as { opset: \">=17\" }");
      }
      rule.requires.push_back(std::move(a));
    };
    if (e.value.IsSequence()) {
      for (const YAML::Node& item : e.value) one(item);
    } else {
      one(e.value);
    }
  }

  void readRewrite(const Entry& e, const std::set<std::string>& match_names,
                   const yaml::RewriteOptions& options, std::vector<ir::Target>& targets) {
    if (e.value.IsScalar() || e.value.IsNull()) {
      if (!statements(e)) return;
      ir::Target target;
      target.loc = loc(e.key_node);
      yaml::parseRewrite(scalar(e.value), scalarLocator(e.value), match_names, diag_, target,
                         declared_, options);
      targets.push_back(std::move(target));
      return;
    }
    if (!e.value.IsSequence()) {
      error(valueLoc(e), "'rewrite' must be statements or a list of {when, do} variants, found " +
                             describe(e.value));
      return;
    }
    if (e.value.size() == 0) {
      error(valueLoc(e), "'rewrite' needs at least one variant");
      return;
    }
    for (const YAML::Node& item : e.value) {
      if (!item.IsMap()) {
        error(item, "a rewrite variant is a mapping with 'do:' (and optionally 'when:'), found " +
                        describe(item));
        continue;
      }
      std::vector<Entry> fields = entries(item, kVariantKeys, "key", " in a rewrite variant");
      ir::Target target;
      target.loc = loc(item);
      if (const Entry* w = find(fields, "when")) readWhen(*w, target);
      const Entry* d = find(fields, "do");
      if (!d) {
        error(item, "a rewrite variant needs 'do:' with its statements");
      } else if (statements(*d)) {
        yaml::parseRewrite(scalar(d->value), scalarLocator(d->value), match_names, diag_, target,
                           declared_, options);
      }
      targets.push_back(std::move(target));
    }
  }

  void readWhen(const Entry& e, ir::Target& target) {
    target.when.emplace();
    if (!e.value.IsMap()) {
      error(valueLoc(e),
            "'when' must be a mapping such as { opset: \">=23\" }, found " + describe(e.value));
      return;
    }
    std::vector<Entry> fields = entries(e.value, kWhenKeys, "key", " in 'when'");
    if (const Entry* o = find(fields, "opset"))
      readOpset(*o, target.when->min_opset, target.when->max_opset);
    if (const Entry* d = find(fields, "domain")) readDomain(*d, target.when->domain);
    if (const Entry* t = find(fields, "tags")) readNames(*t, target.when->tags);
  }

  //===--------------------------------------------------------------------===//
  // Constraints
  //===--------------------------------------------------------------------===//

  void readWhere(const Entry& e, ir::Pattern& pattern) {
    if (!e.value.IsMap()) {
      error(valueLoc(e),
            "'where' must be a mapping from names to constraints, such as "
            "{ scale: { rank: 1 } }, found " +
                describe(e.value));
      return;
    }
    for (const Entry& subject : entries(e.value, {}, "name", "")) {
      if (!yaml::isIdentifier(subject.key) || subject.key == "_") {
        error(subject.key_node, "'" + subject.key + "' is not a name of the match");
        continue;
      }
      if (!subject.value.IsMap()) {
        error(valueLoc(subject), "constraints on '" + subject.key +
                                     "' must be a mapping, such as { rank: 1 }, found " +
                                     describe(subject.value));
        continue;
      }
      std::vector<Entry> kinds =
          entries(subject.value, kConstraintKeys, "constraint", " on '" + subject.key + "'");
      for (const Entry& kind : kinds) {
        ir::Constraint c;
        c.subject = subject.key;
        c.loc = loc(kind.key_node);
        if (readConstraint(kind, kinds, c)) pattern.constraints.push_back(std::move(c));
      }
    }
  }

  /// A number or a list of numbers as a literal (ints stay ints).
  bool numericLiteral(const YAML::Node& n, ir::Literal& out) {
    int64_t i = 0;
    double d = 0;
    if (n.IsScalar()) {
      if (toInteger(scalar(n), i)) {
        out.kind = ir::Literal::Kind::kInt;
        out.ints = {i};
        return true;
      }
      if (toNumber(scalar(n), d)) {
        out.kind = ir::Literal::Kind::kFloat;
        out.floats = {d};
        return true;
      }
      return false;
    }
    if (!n.IsSequence() || n.size() == 0) return false;
    bool all_ints = true;
    std::vector<double> values;
    for (const YAML::Node& item : n) {
      if (!item.IsScalar() || !toNumber(scalar(item), d)) return false;
      all_ints &= toInteger(scalar(item), i);
      values.push_back(d);
    }
    out.kind = all_ints ? ir::Literal::Kind::kInts : ir::Literal::Kind::kFloats;
    for (const YAML::Node& item : n) {
      if (all_ints && toInteger(scalar(item), i)) out.ints.push_back(i);
    }
    if (!all_ints) out.floats = values;
    return true;
  }

  /// `[lo, hi]` of two numbers.
  bool numberPair(const YAML::Node& n, double& lo, double& hi) {
    return n.IsSequence() && n.size() == 2 && n[0].IsScalar() && n[1].IsScalar() &&
           toNumber(scalar(n[0]), lo) && toNumber(scalar(n[1]), hi);
  }

  bool readConstraint(const Entry& e, const std::vector<Entry>& siblings, ir::Constraint& c) {
    using K = ir::Constraint::Kind;
    const YAML::Node& v = e.value;
    const std::string found = ", found " + describe(v);
    if (e.key == "constant") {
      c.kind = K::kConstant;
      bool yes = false;
      if (!readBool(e, yes)) return false;
      if (!yes) error(valueLoc(e), "'constant' only takes true; remove it to allow any value");
      return yes;
    }
    if (e.key == "scalar") {
      c.kind = K::kScalar;
      if (v.IsScalar() && scalar(v) == "true") return true;
      if (!numberPair(v, c.min, c.max)) {
        error(valueLoc(e), "'scalar' takes true or [lo, hi]" + found);
        return false;
      }
      c.has_min = c.has_max = true;
      if (c.min > c.max) {
        error(valueLoc(e), "'scalar' range is empty: lo is greater than hi");
        return false;
      }
      return true;
    }
    if (e.key == "equals") {
      c.kind = K::kConstantEquals;
      if (!numericLiteral(v, c.literal)) {
        error(valueLoc(e), "'equals' takes a number or a list of numbers" + found);
        return false;
      }
      if (const Entry* t = find(siblings, "tolerance")) {
        if (!t->value.IsScalar() || !toNumber(scalar(t->value), c.tolerance) || c.tolerance < 0) {
          error(valueLoc(*t), "'tolerance' takes a number >= 0, found " + describe(t->value));
          return false;
        }
      }
      return true;
    }
    if (e.key == "tolerance") {
      if (!find(siblings, "equals")) error(e.key_node, "'tolerance' needs 'equals'");
      return false;  // read with equals
    }
    if (e.key == "rank") {
      c.kind = K::kRank;
      if (!readIntegers(e, c.ints, "'rank' takes an integer or a list of integers")) return false;
      return true;
    }
    if (e.key == "dtype") {
      c.kind = K::kElemType;
      std::vector<YAML::Node> items;
      if (v.IsSequence() && v.size() > 0) {
        for (const YAML::Node& item : v) items.push_back(item);
      } else if (v.IsScalar()) {
        items.push_back(v);
      } else {
        error(valueLoc(e), "'dtype' takes an element type or a list of them" + found);
        return false;
      }
      const std::vector<std::string>& types = yaml::elemTypeNames();
      bool ok = true;
      for (const YAML::Node& item : items) {
        const std::string t = item.IsScalar() ? scalar(item) : "";
        if (std::find(types.begin(), types.end(), t) == types.end()) {
          error(item, "unknown element type " + describe(item) + yaml::didYouMean(t, types));
          ok = false;
          continue;
        }
        c.strings.push_back(t);
      }
      return ok;
    }
    if (e.key == "shape") {
      c.kind = K::kShape;
      if (!v.IsSequence()) {
        error(valueLoc(e), "'shape' takes a list of dims, such as [_, _, H]" + found);
        return false;
      }
      bool ok = true;
      for (const YAML::Node& item : v) {
        int64_t dim = 0;
        const std::string s = item.IsScalar() ? scalar(item) : "";
        if (toInteger(s, dim) && dim >= 0) {
          c.dims.push_back(std::to_string(dim));
        } else if (yaml::isIdentifier(s)) {
          c.dims.push_back(s);
        } else {
          error(item, "a dim is an integer >= 0, a name or _, found " + describe(item));
          ok = false;
        }
      }
      return ok;
    }
    if (e.key == "consumers") {
      c.kind = K::kConsumers;
      int64_t n = 0;
      double lo = 0, hi = 0;
      if (v.IsScalar() && toInteger(scalar(v), n) && n >= 0) {
        c.min = c.max = static_cast<double>(n);
      } else if (numberPair(v, lo, hi) && lo >= 0 && lo <= hi) {
        c.min = lo;
        c.max = hi;
      } else {
        error(valueLoc(e), "'consumers' takes an integer or [min, max]" + found);
        return false;
      }
      c.has_min = c.has_max = true;
      return true;
    }
    if (e.key == "equivalent") {
      c.kind = K::kEquivalent;
      const std::string other = v.IsScalar() ? scalar(v) : "";
      if (!yaml::isIdentifier(other) || other == "_") {
        error(valueLoc(e), "'equivalent' takes the name of another matched value" + found);
        return false;
      }
      c.args = {other};
      return true;
    }
    // native
    c.kind = K::kNative;
    if (!v.IsScalar() || scalar(v).empty()) {
      error(valueLoc(e), "'native' takes a call such as 'is_causal_mask(mask, q)'" + found);
      return false;
    }
    return yaml::parseNativeCall(scalar(v), scalarLocator(v), diag_, c.native, c.args);
  }

  bool readIntegers(const Entry& e, std::vector<int64_t>& out, const std::string& usage) {
    int64_t n = 0;
    if (e.value.IsScalar() && toInteger(scalar(e.value), n) && n >= 0) {
      out.push_back(n);
      return true;
    }
    if (e.value.IsSequence() && e.value.size() > 0) {
      bool ok = true;
      for (const YAML::Node& item : e.value) {
        if (item.IsScalar() && toInteger(scalar(item), n) && n >= 0) {
          out.push_back(n);
        } else {
          error(item, usage + ", found " + describe(item));
          ok = false;
        }
      }
      return ok;
    }
    error(valueLoc(e), usage + ", found " + describe(e.value));
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Op declarations
  //===--------------------------------------------------------------------===//

  void readOps(const Entry& e, ir::RuleFile& out) {
    if (e.value.IsNull()) return;
    if (!e.value.IsSequence()) {
      error(valueLoc(e), "'ops' must be a list of op declarations, found " + describe(e.value));
      return;
    }
    std::map<std::string, ir::SourceLoc> seen;
    for (const YAML::Node& node : e.value) {
      const unsigned errors = diag_.errorCount();
      if (!node.IsMap()) {
        error(node, "an op declaration is a mapping with 'op:', found " + describe(node));
        continue;
      }
      std::vector<Entry> fields = entries(node, kOpKeys, "key", " in an op declaration");
      ir::OpDecl decl;
      decl.loc = loc(node);
      const Entry* op = find(fields, "op");
      std::string key;
      if (!op) {
        error(node, "an op declaration needs 'op: domain.Name'");
      } else if (readString(*op, key)) {
        const size_t dot = key.rfind('.');
        decl.domain = dot == std::string::npos ? "" : key.substr(0, dot);
        decl.op = dot == std::string::npos ? key : key.substr(dot + 1);
        if (!yaml::isIdentifier(decl.op) || (dot != std::string::npos && decl.domain.empty())) {
          error(valueLoc(*op), "bad op name " + describe(op->value) + "; expected domain.Name");
        } else {
          auto [first, inserted] = seen.emplace(key, valueLoc(*op));
          if (!inserted) {
            error(valueLoc(*op), "op '" + key + "' is declared twice");
            diag_.note(first->second, "'" + key + "' is first declared here");
          }
        }
      }
      if (const Entry* s = find(fields, "since")) {
        if (readInteger(*s, decl.since_version) && decl.since_version < 1)
          error(valueLoc(*s), "'since' must be an opset version >= 1");
      }
      if (const Entry* i = find(fields, "inputs")) readParams(*i, decl.inputs);
      if (const Entry* o = find(fields, "outputs")) readParams(*o, decl.outputs);
      if (const Entry* a = find(fields, "attrs")) readAttrDecls(*a, decl);
      if (const Entry* d = find(fields, "doc")) readString(*d, decl.doc);
      if (const Entry* c = find(fields, "commutative")) readBool(*c, decl.commutative);
      if (diag_.errorCount() != errors) continue;
      int outputs = static_cast<int>(decl.outputs.size());
      for (const ir::OpDecl::Param& p : decl.outputs)
        if (p.variadic) outputs = -1;
      declared_[key] = outputs;
      out.ops.push_back(std::move(decl));
    }
  }

  /// `[input, skip, beta?, inputs...]`: '?' marks optional, '...' variadic.
  void readParams(const Entry& e, std::vector<ir::OpDecl::Param>& out) {
    if (!e.value.IsSequence()) {
      error(valueLoc(e), "'" + e.key + "' must be a list of names, such as [input, bias?], found " +
                             describe(e.value));
      return;
    }
    for (const YAML::Node& item : e.value) {
      ir::OpDecl::Param p;
      p.name = item.IsScalar() ? scalar(item) : "";
      if (p.name.size() > 3 && p.name.compare(p.name.size() - 3, 3, "...") == 0) {
        p.variadic = true;
        p.name.resize(p.name.size() - 3);
      }
      if (!p.name.empty() && p.name.back() == '?') {
        p.optional = true;
        p.name.pop_back();
      }
      if (!yaml::isIdentifier(p.name)) {
        error(item, "bad " + std::string(e.key == "inputs" ? "input" : "output") + " " +
                        describe(item) + "; expected a name, 'name?' or 'name...'");
        continue;
      }
      out.push_back(std::move(p));
    }
  }

  void readAttrDecls(const Entry& e, ir::OpDecl& decl) {
    if (!e.value.IsMap()) {
      error(valueLoc(e), "'attrs' must be a mapping such as { epsilon: { type: float } }, found " +
                             describe(e.value));
      return;
    }
    for (const Entry& attr : entries(e.value, {}, "attribute", "")) {
      if (!yaml::isIdentifier(attr.key)) {
        error(attr.key_node, "bad attribute name '" + attr.key + "'");
        continue;
      }
      if (!attr.value.IsMap()) {
        error(valueLoc(attr), "attribute '" + attr.key +
                                  "' needs a mapping such as { type: float }, found " +
                                  describe(attr.value));
        continue;
      }
      std::vector<Entry> fields = entries(attr.value, kAttrDeclKeys, "key",
                                          " in the declaration of attribute '" + attr.key + "'");
      ir::OpDecl::Attr a;
      a.name = attr.key;
      const Entry* type = find(fields, "type");
      if (!type) {
        error(attr.key_node, "attribute '" + attr.key + "' needs a 'type'");
        continue;
      }
      if (!readString(*type, a.type)) continue;
      if (std::find(kAttrTypes.begin(), kAttrTypes.end(), a.type) == kAttrTypes.end()) {
        error(valueLoc(*type), "unknown attribute type '" + a.type +
                                   "'; expected int, float, string, ints, floats or strings" +
                                   yaml::didYouMean(a.type, kAttrTypes));
        continue;
      }
      if (const Entry* r = find(fields, "required")) readBool(*r, a.required);
      if (const Entry* d = find(fields, "default")) {
        if (a.required) error(d->key_node, "a required attribute has no default");
        ir::Literal value;
        if (attrDefault(d->value, a.type, value))
          a.default_value = std::move(value);
        else
          error(valueLoc(*d), "the default of '" + a.name + "' must be a value of type " + a.type +
                                  ", found " + describe(d->value));
      }
      decl.attrs.push_back(std::move(a));
    }
  }

  /// The default of an attribute of `type` (int, float, string or a list of one of them).
  bool attrDefault(const YAML::Node& n, const std::string& type, ir::Literal& out) {
    using K = ir::Literal::Kind;
    const bool list = type == "ints" || type == "floats" || type == "strings";
    const std::string element = list ? type.substr(0, type.size() - 1) : type;
    std::vector<YAML::Node> items;
    if (list) {
      if (!n.IsSequence()) return false;
      for (const YAML::Node& item : n) items.push_back(item);
    } else {
      items.push_back(n);
    }
    out.kind = element == "int"     ? (list ? K::kInts : K::kInt)
               : element == "float" ? (list ? K::kFloats : K::kFloat)
                                    : (list ? K::kStrings : K::kString);
    for (const YAML::Node& item : items) {
      if (!item.IsScalar()) return false;
      int64_t i = 0;
      double d = 0;
      if (element == "int") {
        if (!toInteger(scalar(item), i)) return false;
        out.ints.push_back(i);
      } else if (element == "float") {
        if (!toNumber(scalar(item), d)) return false;
        out.floats.push_back(d);
      } else {
        out.strings.push_back(scalar(item));
      }
    }
    return true;
  }

  const std::string& path_;
  const std::string& text_;
  LineTable lines_;
  DiagnosticEngine& diag_;
  char stand_in_;  ///< what '?' became in the text yaml-cpp read (0: nothing changed)
  yaml::DeclaredOutputs declared_;
  std::map<std::string, ir::SourceLoc> rule_names_;
  std::vector<std::string> default_tags_;
  std::vector<ir::Applicability> default_requires_;
  int default_priority_ = 0;
};

}  // namespace

bool parseYamlRules(const std::string& path, const std::string& text, ir::RuleFile& out,
                    DiagnosticEngine& diag) {
  diag.addSource(path, text);
  const unsigned errors = diag.errorCount();
  try {
    Reader(path, text, diag).run(out);
  } catch (const std::exception& e) {
    // The reader avoids every throwing yaml-cpp accessor; this is a last line of defence.
    diag.error(ir::SourceLoc{path, 0, 0}, std::string("internal error reading rules: ") + e.what());
  }
  return diag.errorCount() == errors;
}

bool parseYamlRuleFile(const std::string& path, ir::RuleFile& out, DiagnosticEngine& diag) {
  std::string text, error;
  if (!readRegularFile(path, text, error)) {
    diag.error(ir::SourceLoc{path, 0, 0}, cannotReadRuleFile(error));
    return false;
  }
  return parseYamlRules(path, text, out, diag);
}

}  // namespace onnx_rewrite
