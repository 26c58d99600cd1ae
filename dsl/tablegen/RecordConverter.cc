//===- RecordConverter.cc - TableGen records to Rule IR -------------------===//
//
// Sections: locations (Locator pairs each Init with the text it was written
// as), typed field access (Fields), literals, the match (PatternBuilder), the
// rewrite (TargetBuilder), and the per-record converters (RuleConverter,
// FragmentConverter, which share BodyReader, and OpDeclConverter) driven by
// convertRecords in file order.
//
// The binding rules are docs/dsl.md's and Rule.td's: `(Op:$n ...)` binds n
// wherever it is written; `$n` is that value, or else a capture (one expr per
// name); `$_` is anonymous; the last match dag is the root. In a rewrite a name
// the match binds is replaced, a new name is local to the rewrite. `none` is an
// omitted input (of a matched op, or of a new node); `(Rest $r)`, the last input
// of a matched op, binds its further inputs to the list r, which a rewrite
// splices with `(Rest $r)` and nothing else may read.
//
// Fragments: a fragment's use is an op call named after its record (the shared
// pass compiler/sema/ExpandFragments expands it after every file is loaded);
// in a fragment's body, `(axis $ax)` reads attribute parameter ax. A Results
// over an AnyOf of Tuples and ops builds what YAML's `a, b = X | (Y, Z)` does:
// one alternatives expr per name, all of one group.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/RecordConverter.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Casting.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/TableGen/Record.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "dsl/tablegen/SourceText.h"

namespace onnx_rewrite::tablegen {
namespace {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;
using llvm::isa_and_nonnull;

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

/// A value read from a record, the text it was written as (when that is known and has
/// the value's shape), and where it is: the text's position, else the nearest enclosing
/// value's.
struct Located {
  llvm::Init* init = nullptr;
  const TextNode* text = nullptr;
  ir::SourceLoc loc;
};

/// Maps positions in the parsed buffers to file:line:col and walks values with their text.
class Locator {
 public:
  Locator(const llvm::SourceMgr& sources, std::string path)
      : sources_(sources), path_(std::move(path)) {}

  /// The location of a character of a parsed buffer (the rule file if unknown).
  ir::SourceLoc at(const char* p) const {
    unsigned id = bufferOf(p);
    if (id == 0) return ir::SourceLoc{path_, 0, 0};
    auto [line, col] = sources_.getLineAndColumn(llvm::SMLoc::getFromPointer(p), id);
    return ir::SourceLoc{sources_.getMemoryBuffer(id)->getBufferIdentifier().str(), line, col};
  }

  /// Where a record's name is written (its `def` keyword for an anonymous def).
  ir::SourceLoc ofRecord(const llvm::Record& r) const {
    llvm::ArrayRef<llvm::SMLoc> locs = r.getLoc();
    if (locs.empty()) return ir::SourceLoc{path_, 0, 0};
    const char* p = locs.front().getPointer();
    return at(defNameStart(p, bufferEnd(p)));
  }

  /// The value of field `name` of `r`, located at its `let` (or declaration), with the
  /// text read from there. `init` is null if `r` has no such field.
  Located field(const llvm::Record& r, llvm::StringRef name) {
    Located out;
    out.loc = ofRecord(r);
    const llvm::RecordVal* value = r.getValue(name);
    if (!value) return out;
    out.init = value->getValue();
    const char* p = value->getLoc().getPointer();
    if (!p || bufferOf(p) == 0) return out;
    out.loc = at(p);
    auto text = std::make_unique<TextNode>();
    if (parseFieldValue(p, bufferEnd(p), *text)) {
      out.text = text.get();
      texts_.push_back(std::move(text));
    }
    return out;
  }

  /// Element `i` of a located list.
  Located element(const Located& list, size_t i) const {
    Located out;
    out.loc = list.loc;
    auto* l = dyn_cast<llvm::ListInit>(list.init);
    if (!l || i >= l->size()) return out;
    out.init = l->getElement(i);
    if (list.text && list.text->kind == TextNode::Kind::kList &&
        list.text->items.size() == l->size())
      enter(out, list.text->items[i]);
    return out;
  }

  /// Argument `i` of a located dag.
  Located arg(const Located& dag, unsigned i) const {
    Located out;
    out.loc = dag.loc;
    auto* d = dyn_cast<llvm::DagInit>(dag.init);
    if (!d || i >= d->getNumArgs()) return out;
    out.init = d->getArg(i);
    if (dag.text && dag.text->kind == TextNode::Kind::kDag &&
        dag.text->items.size() == d->getNumArgs())
      enter(out, dag.text->items[i]);
    return out;
  }

  /// Template argument `i` of a located `Class<...>` whose field holding it is `init`.
  Located templateArg(const Located& ref, size_t i, llvm::Init* init) const {
    Located out;
    out.init = init;
    out.loc = ref.loc;
    if (ref.text && ref.text->kind == TextNode::Kind::kClassRef && i < ref.text->items.size())
      enter(out, ref.text->items[i]);
    return out;
  }

  /// The first parent class of `r` as written, `Class<a, b>`, when it is `cls`: template
  /// arguments are then located with templateArg(). Otherwise (another form, an anonymous
  /// def) it has no text, and its parts are located at the record's name.
  Located parent(const llvm::Record& r, llvm::StringRef cls) {
    Located out;
    out.loc = ofRecord(r);
    llvm::ArrayRef<llvm::SMLoc> locs = r.getLoc();
    if (locs.empty()) return out;
    const char* p = locs.front().getPointer();
    auto text = std::make_unique<TextNode>();
    if (!parseDefParent(p, bufferEnd(p), *text)) return out;
    const char* end = bufferEnd(p);
    const char* head = text->head;
    if (end - head < static_cast<std::ptrdiff_t>(cls.size()) ||
        llvm::StringRef(head, cls.size()) != cls ||
        (head + cls.size() < end && isIdentifierChar(head[cls.size()])))
      return out;
    out.text = text.get();
    texts_.push_back(std::move(text));
    return out;
  }

  const std::string& path() const { return path_; }

 private:
  static bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }
  unsigned bufferOf(const char* p) const {
    return p ? sources_.FindBufferContainingLoc(llvm::SMLoc::getFromPointer(p)) : 0;
  }
  const char* bufferEnd(const char* p) const {
    unsigned id = bufferOf(p);
    return id ? sources_.getMemoryBuffer(id)->getBufferEnd() : p;
  }
  void enter(Located& out, const TextNode& text) const {
    out.text = &text;
    bool headed = text.kind == TextNode::Kind::kDag || text.kind == TextNode::Kind::kClassRef;
    out.loc = at(headed ? text.head : text.begin);
  }

  const llvm::SourceMgr& sources_;
  std::string path_;
  std::vector<std::unique_ptr<TextNode>> texts_;
};

//===----------------------------------------------------------------------===//
// Typed field access
//===----------------------------------------------------------------------===//

/// How a record is named in messages: its name, or its class for an anonymous record.
std::string describe(const llvm::Record& r) {
  if (r.isAnonymous()) return const_cast<llvm::Record&>(r).getType()->getAsString();
  return r.getName().str();
}

/// Reads record fields through the typed getValueAs* accessors after checking that the
/// field exists, is set and has the type asked for (getValueAs* would exit the process
/// otherwise). A failed check is reported at `loc` and gives nullopt.
class Fields {
 public:
  explicit Fields(DiagnosticEngine& diag) : diag_(diag) {}

  static bool isSet(const llvm::Record& r, llvm::StringRef f) {
    const llvm::RecordVal* v = r.getValue(f);
    return v && !isa<llvm::UnsetInit>(v->getValue());
  }

  std::optional<std::string> str(const llvm::Record& r, llvm::StringRef f,
                                 const ir::SourceLoc& loc) {
    if (!check<llvm::StringInit>(r, f, loc, "string")) return std::nullopt;
    return r.getValueAsString(f).str();
  }

  std::optional<int64_t> integer(const llvm::Record& r, llvm::StringRef f,
                                 const ir::SourceLoc& loc) {
    if (!check<llvm::IntInit>(r, f, loc, "int")) return std::nullopt;
    return r.getValueAsInt(f);
  }

  std::optional<bool> bit(const llvm::Record& r, llvm::StringRef f, const ir::SourceLoc& loc) {
    if (!present(r, f, loc)) return std::nullopt;
    if (isa<llvm::IntInit>(r.getValue(f)->getValue())) return r.getValueAsInt(f) != 0;
    if (!check<llvm::BitInit>(r, f, loc, "bit")) return std::nullopt;
    return r.getValueAsBit(f);
  }

  std::optional<std::vector<std::string>> strings(const llvm::Record& r, llvm::StringRef f,
                                                  const ir::SourceLoc& loc) {
    if (!checkList<llvm::StringInit>(r, f, loc, "list of strings")) return std::nullopt;
    std::vector<std::string> out;
    for (llvm::StringRef s : r.getValueAsListOfStrings(f)) out.push_back(s.str());
    return out;
  }

  std::optional<std::vector<int64_t>> ints(const llvm::Record& r, llvm::StringRef f,
                                           const ir::SourceLoc& loc) {
    if (!checkList<llvm::IntInit>(r, f, loc, "list of ints")) return std::nullopt;
    return r.getValueAsListOfInts(f);
  }

  std::optional<std::vector<llvm::Record*>> defs(const llvm::Record& r, llvm::StringRef f,
                                                 const ir::SourceLoc& loc) {
    if (!checkList<llvm::DefInit>(r, f, loc, "list of records")) return std::nullopt;
    return r.getValueAsListOfDefs(f);
  }

  std::optional<llvm::Record*> def(const llvm::Record& r, llvm::StringRef f,
                                   const ir::SourceLoc& loc) {
    if (!check<llvm::DefInit>(r, f, loc, "record")) return std::nullopt;
    return r.getValueAsDef(f);
  }

 private:
  bool present(const llvm::Record& r, llvm::StringRef f, const ir::SourceLoc& loc) {
    const llvm::RecordVal* v = r.getValue(f);
    if (!v) {
      diag_.error(loc, "'" + describe(r) + "' has no field '" + f.str() + "'");
      return false;
    }
    if (isa<llvm::UnsetInit>(v->getValue())) {
      diag_.error(loc, "field '" + f.str() + "' of '" + describe(r) + "' is not set");
      return false;
    }
    return true;
  }

  template <typename T>
  bool check(const llvm::Record& r, llvm::StringRef f, const ir::SourceLoc& loc, const char* what) {
    if (!present(r, f, loc)) return false;
    if (isa<T>(r.getValue(f)->getValue())) return true;
    diag_.error(loc, "field '" + f.str() + "' of '" + describe(r) + "' is not a " + what);
    return false;
  }

  template <typename T>
  bool checkList(const llvm::Record& r, llvm::StringRef f, const ir::SourceLoc& loc,
                 const char* what) {
    if (!check<llvm::ListInit>(r, f, loc, what)) return false;
    for (llvm::Init* element : *cast<llvm::ListInit>(r.getValue(f)->getValue())) {
      if (!isa<T>(element)) {
        diag_.error(loc, "field '" + f.str() + "' of '" + describe(r) + "' is not a " + what +
                             ": '" + element->getAsString() + "'");
        return false;
      }
    }
    return true;
  }

  DiagnosticEngine& diag_;
};

/// What a converter needs: diagnostics, locations, fields.
struct Context {
  DiagnosticEngine& diag;
  Locator& locator;
  Fields& fields;

  void error(const ir::SourceLoc& loc, const std::string& message) { diag.error(loc, message); }
  void warning(const ir::SourceLoc& loc, const std::string& message) { diag.warning(loc, message); }
  void note(const ir::SourceLoc& loc, const std::string& message) { diag.note(loc, message); }
};

//===----------------------------------------------------------------------===//
// Records by role
//===----------------------------------------------------------------------===//

/// The record a dag's operator names, or null.
llvm::Record* operatorOf(llvm::Init* init) {
  auto* d = dyn_cast_or_null<llvm::DagInit>(init);
  if (!d) return nullptr;
  auto* def = dyn_cast<llvm::DefInit>(d->getOperator());
  return def ? def->getDef() : nullptr;
}

bool isOp(const llvm::Record* r) { return r && r->isSubClassOf("Op"); }
bool isAttrName(const llvm::Record* r) { return r && r->isSubClassOf("AttrName"); }
/// A record naming a fragment (a Fragment, or a FragmentName for one defined elsewhere).
bool isFragment(const llvm::Record* r) { return r && r->isSubClassOf("FragmentName"); }
/// What a dag may call as a node: an op, or a fragment (expanded into the rule later, by
/// compiler/sema/ExpandFragments, which finds uses as op calls named after the fragment).
bool isCallee(const llvm::Record* r) { return isOp(r) || isFragment(r); }

bool isSnakeCase(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// What a fragment's body may name besides its own values: its parameters.
struct FragmentScope {
  std::string name;
  std::vector<std::string> values;  ///< value parameters, passed by position
  std::vector<std::string> attrs;   ///< attribute parameters, read as `(axis $ax)`

  bool isValue(const std::string& n) const {
    return std::find(values.begin(), values.end(), n) != values.end();
  }
  bool isAttr(const std::string& n) const {
    return std::find(attrs.begin(), attrs.end(), n) != attrs.end();
  }
};

/// A marker's kind ("any_of", "value", ...), or "" if `r` is not a marker.
std::string markerOf(const llvm::Record* r) {
  if (!r || !r->isSubClassOf("Marker")) return "";
  const llvm::RecordVal* v = r->getValue("marker");
  if (!v || !isa<llvm::StringInit>(v->getValue())) return "";
  return r->getValueAsString("marker").str();
}

/// The arg's `$name` (or "").
std::string argName(const Located& dag, unsigned i) {
  auto* d = dyn_cast<llvm::DagInit>(dag.init);
  return d && i < d->getNumArgs() ? d->getArgNameStr(i).str() : "";
}

/// The dag's own `:$name` (or "").
std::string dagName(const Located& dag) {
  auto* d = dyn_cast<llvm::DagInit>(dag.init);
  return d ? d->getNameStr().str() : "";
}

unsigned numArgs(const Located& dag) {
  auto* d = dyn_cast<llvm::DagInit>(dag.init);
  return d ? d->getNumArgs() : 0;
}

/// True for a `$name` argument (no value).
bool isVariable(const Located& v) { return isa_and_nonnull<llvm::UnsetInit>(v.init); }

/// Where a marker belongs, for "cannot be used here" messages.
std::string markerUsage(const std::string& kind) {
  if (kind == "any_of")
    return "AnyOf lists alternatives in a match: (AnyOf (Div $d, $s), (Mul $d, $s))";
  if (kind == "tag") return "Tag<\"t\"> marks an alternative inside AnyOf";
  if (kind == "optional")
    return "Optional wraps an op dag in a match: (Optional (Cast $x, (to 1)))";
  if (kind == "range" || kind == "capture")
    return "it is an attribute condition in a match: (alpha (Range 0, 1)), (perm (Capture $p))";
  if (kind == "int" || kind == "float" || kind == "ints" || kind == "floats" || kind == "strings")
    return "it is a literal";
  if (kind == "value" || kind == "attr" || kind == "helper")
    return "it computes a rewrite attribute: (epsilon (value $eps))";
  if (kind == "none")
    return "it is an omitted input: an input of an op in a match, (Op $a, none, $b), or of a new "
           "node in a rewrite";
  if (kind == "tensor") return "it is an input of a new node in a rewrite";
  if (kind == "like") return "it is a tensor's element type: (tensor (like $x), (f 0))";
  if (kind == "rest")
    return "(Rest $rest) is the last input of an op in a match, (Concat $a, (Rest $rest)), and "
           "splices those inputs into a new node in a rewrite, (Concat $m, (Rest $rest))";
  if (kind == "replace") return "Replace is a whole rewrite dag: (Replace $y, $x)";
  if (kind == "results") return "Results lists output names, then the op dag";
  if (kind == "tuple")
    return "a Tuple is the value of a Results binding as many names, or one alternative of "
           "its AnyOf: (Results $a, $b, (AnyOf (Split $x), (Tuple (Neg $x), (Abs $x))))";
  return "it is not an op";
}

/// True for the bare record `none`.
bool isNone(const Located& v) {
  auto* def = dyn_cast_or_null<llvm::DefInit>(v.init);
  return def && markerOf(def->getDef()) == "none";
}

/// True for a `(Rest ...)` dag.
bool isRest(const Located& v) { return markerOf(operatorOf(v.init)) == "rest"; }

/// The name of `(Rest $name)` ("_" for `(Rest $_)`), or nullopt after reporting a malformed
/// one.
std::optional<std::string> restName(Context& cx, const Located& d) {
  constexpr const char* kUsage = "Rest takes one name: (Rest $rest), or (Rest $_) in a match";
  if (!dagName(d).empty()) {
    cx.error(d.loc, "(Rest ...) binds no name of its own: write (Rest $" + dagName(d) + ")");
    return std::nullopt;
  }
  if (numArgs(d) != 1) {
    cx.error(d.loc, kUsage);
    return std::nullopt;
  }
  Located arg = cx.locator.arg(d, 0);
  std::string name = argName(d, 0);
  if (!isVariable(arg) || name.empty()) {
    cx.error(arg.loc, kUsage);
    return std::nullopt;
  }
  return name;
}

/// The (domain, op) a call dag names: an op record's fields, or, for a fragment, its record's
/// name in the ONNX domain, the op call ExpandFragments takes for a use.
void calleeName(Context& cx, const llvm::Record& r, const ir::SourceLoc& loc, std::string& domain,
                std::string& op) {
  if (isFragment(&r)) {
    domain.clear();
    op = r.getName().str();
    return;
  }
  op = cx.fields.str(r, "op_name", loc).value_or("");
  domain = cx.fields.str(r, "op_domain", loc).value_or("");
}

/// `(axis $ax)`: true if ax is an attribute parameter of the fragment whose body this is.
/// Otherwise reports why not (outside a fragment, `outside`) and gives false.
bool isAttrParam(Context& cx, const FragmentScope* scope, const ir::SourceLoc& loc,
                 const std::string& name, const std::string& outside) {
  if (!scope) {
    cx.error(loc, outside);
    return false;
  }
  if (scope->isAttr(name)) return true;
  const std::string what =
      "'" + name + "' is not an attribute parameter of fragment '" + scope->name + "'";
  if (scope->isValue(name)) {
    cx.error(loc, what + ": it is a value parameter, passed as an input");
  } else if (scope->attrs.empty()) {
    cx.error(loc, what + ", which has none: declare it, as in Fragment<[...], [AttrParam<\"" +
                      name + "\">]>");
  } else {
    std::string list;
    for (const std::string& a : scope->attrs) list += (list.empty() ? "" : ", ") + a;
    cx.error(loc, what + " (those are: " + list + ")");
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
}

std::optional<int64_t> parseInt(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseNumber(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

std::vector<std::string> splitList(const std::string& inner) {
  std::vector<std::string> items;
  if (trim(inner).empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = inner.find(',', start);
    items.push_back(trim(inner.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

/// A literal written as text ("2.0", "[1, 2]", "'x'"), as `type` says ("int", "float",
/// "string", "ints", "floats", "strings") or, for "", as it looks (an int, else a float;
/// a list of ints, else of floats).
std::optional<ir::Literal> literalFromText(const std::string& text, const std::string& type) {
  using K = ir::Literal::Kind;
  ir::Literal lit;
  std::string s = trim(text);
  bool is_list = !s.empty() && s.front() == '[' && s.back() == ']';
  if (type == "string") {
    lit.kind = K::kString;
    lit.strings = {unquote(s)};
    return lit;
  }
  if (type == "int" || type == "float" || type.empty()) {
    if (is_list) {
      if (!type.empty()) return std::nullopt;
    } else {
      if (type != "float")
        if (auto v = parseInt(s)) {
          lit.kind = K::kInt;
          lit.ints = {*v};
          return lit;
        }
      if (type == "int") return std::nullopt;
      auto v = parseNumber(s);
      if (!v) return std::nullopt;
      lit.kind = K::kFloat;
      lit.floats = {*v};
      return lit;
    }
  }
  if (!is_list) return std::nullopt;
  std::vector<std::string> items = splitList(s.substr(1, s.size() - 2));
  if (type == "strings") {
    lit.kind = K::kStrings;
    for (const std::string& item : items) lit.strings.push_back(unquote(item));
    return lit;
  }
  bool all_ints = std::all_of(items.begin(), items.end(),
                              [](const std::string& item) { return parseInt(item).has_value(); });
  if (type == "ints" || (type.empty() && all_ints)) {
    if (!all_ints) return std::nullopt;
    lit.kind = K::kInts;
    for (const std::string& item : items) lit.ints.push_back(*parseInt(item));
    return lit;
  }
  if (type == "floats" || type.empty()) {
    lit.kind = K::kFloats;
    for (const std::string& item : items) {
      auto v = parseNumber(item);
      if (!v) return std::nullopt;
      lit.floats.push_back(*v);
    }
    return lit;
  }
  return std::nullopt;
}

/// Reads literals written in dags: 1, "s", [1, 2], (i 1), (f 2), (f "1e-5"), (ints ...),
/// (floats ...), (strings ...).
class LiteralReader {
 public:
  explicit LiteralReader(Context& cx) : cx_(cx) {}

  std::optional<ir::Literal> read(const Located& v) {
    using K = ir::Literal::Kind;
    ir::Literal lit;
    if (auto* i = dyn_cast_or_null<llvm::IntInit>(v.init)) {
      lit.kind = K::kInt;
      lit.ints = {i->getValue()};
      return lit;
    }
    if (auto* b = dyn_cast_or_null<llvm::BitInit>(v.init)) {
      lit.kind = K::kInt;
      lit.ints = {b->getValue() ? 1 : 0};
      return lit;
    }
    if (auto* s = dyn_cast_or_null<llvm::StringInit>(v.init)) {
      lit.kind = K::kString;
      lit.strings = {s->getValue().str()};
      return lit;
    }
    if (auto* l = dyn_cast_or_null<llvm::ListInit>(v.init)) return list(v, *l);
    std::string kind = markerOf(operatorOf(v.init));
    if (kind == "int" || kind == "float") {
      if (numArgs(v) != 1) {
        cx_.error(v.loc, "(" + std::string(kind == "int" ? "i" : "f") + " ...) takes one number");
        return std::nullopt;
      }
      Located arg = cx_.locator.arg(v, 0);
      if (kind == "int") {
        auto* i = dyn_cast_or_null<llvm::IntInit>(arg.init);
        if (!i) {
          cx_.error(arg.loc, "(i ...) takes an int, as in (i 1)");
          return std::nullopt;
        }
        lit.kind = K::kInt;
        lit.ints = {i->getValue()};
        return lit;
      }
      auto x = number(arg);
      if (!x) {
        cx_.error(arg.loc, "(f ...) takes an int or a numeric string, as in (f 2) or (f \"1e-5\")");
        return std::nullopt;
      }
      lit.kind = K::kFloat;
      lit.floats = {*x};
      return lit;
    }
    if (kind == "ints" || kind == "floats" || kind == "strings") {
      lit.kind = kind == "ints" ? K::kInts : kind == "floats" ? K::kFloats : K::kStrings;
      for (unsigned i = 0; i < numArgs(v); ++i) {
        Located arg = cx_.locator.arg(v, i);
        if (kind == "ints") {
          auto* n = dyn_cast_or_null<llvm::IntInit>(arg.init);
          if (!n) {
            cx_.error(arg.loc, "(ints ...) takes ints");
            return std::nullopt;
          }
          lit.ints.push_back(n->getValue());
        } else if (kind == "floats") {
          auto x = number(arg);
          if (!x) {
            cx_.error(arg.loc, "(floats ...) takes ints or numeric strings");
            return std::nullopt;
          }
          lit.floats.push_back(*x);
        } else {
          auto* s = dyn_cast_or_null<llvm::StringInit>(arg.init);
          if (!s) {
            cx_.error(arg.loc, "(strings ...) takes strings");
            return std::nullopt;
          }
          lit.strings.push_back(s->getValue().str());
        }
      }
      return lit;
    }
    cx_.error(v.loc,
              "expected a literal: 1, \"text\", (f 2), (f \"1e-5\"), (ints 0, 1), "
              "(floats \"0.5\"), (strings \"a\")");
    return std::nullopt;
  }

  /// An int, a numeric string, or (f x) / (i n).
  std::optional<double> number(const Located& v) {
    if (auto* i = dyn_cast_or_null<llvm::IntInit>(v.init))
      return static_cast<double>(i->getValue());
    if (auto* s = dyn_cast_or_null<llvm::StringInit>(v.init))
      return parseNumber(s->getValue().str());
    std::string kind = markerOf(operatorOf(v.init));
    if ((kind == "int" || kind == "float") && numArgs(v) == 1) return number(cx_.locator.arg(v, 0));
    return std::nullopt;
  }

 private:
  std::optional<ir::Literal> list(const Located& v, const llvm::ListInit& l) {
    using K = ir::Literal::Kind;
    ir::Literal lit;
    lit.kind = K::kInts;
    bool strings = l.size() > 0 && isa<llvm::StringInit>(l.getElement(0));
    if (strings) lit.kind = K::kStrings;
    for (llvm::Init* element : l) {
      if (auto* i = dyn_cast<llvm::IntInit>(element); i && !strings) {
        lit.ints.push_back(i->getValue());
      } else if (auto* s = dyn_cast<llvm::StringInit>(element); s && strings) {
        lit.strings.push_back(s->getValue().str());
      } else {
        cx_.error(v.loc,
                  "a list literal holds ints or strings only; write floats as "
                  "(floats \"0.5\", 1)");
        return std::nullopt;
      }
    }
    return lit;
  }

  Context& cx_;
};

//===----------------------------------------------------------------------===//
// The match
//===----------------------------------------------------------------------===//

/// Builds a Pattern from the located `match` list (of a rule, or of a fragment: `scope`).
class PatternBuilder {
 public:
  PatternBuilder(Context& cx, ir::Pattern& pattern, const FragmentScope* scope = nullptr)
      : cx_(cx), pattern_(pattern), literals_(cx), scope_(scope) {}

  /// Converts every dag of `match`; the last is the root. `results` (a fragment's) are
  /// values a use reads besides the root: a dag they read is not unreachable.
  void build(const Located& match, const std::vector<std::string>& results = {}) {
    auto* list = dyn_cast_or_null<llvm::ListInit>(match.init);
    if (!list) return;
    for (size_t i = 0; i < list->size(); ++i) collectBindings(cx_.locator.element(match, i));
    std::vector<std::pair<ir::ExprId, Located>> top_level;  // all but the root
    unsigned errors = cx_.diag.errorCount();
    for (size_t i = 0; i < list->size(); ++i) {
      Located element = cx_.locator.element(match, i);
      bool root = i + 1 == list->size();
      if (markerOf(operatorOf(element.init)) == "none") {  // `[none]` is a TableGen type error
        cx_.error(element.loc, std::string(root ? "'none' cannot be the root of a match"
                                                : "'none' cannot be an element of `match`") +
                                   ": it matches an omitted input, written bare as an input of "
                                   "an op: (Op $a, none, $b)");
        continue;
      }
      if (!isa<llvm::DagInit>(element.init)) {
        cx_.error(element.loc, root ? "the root (the last element of `match`) must be a dag"
                                    : "an element of `match` must be a dag");
        continue;
      }
      if (!root && !bindsAName(element)) {
        cx_.error(element.loc,
                  "this match dag binds no name, so nothing uses it: write (Op:$name ...)");
        continue;
      }
      ir::ExprId id = dag(element);
      if (root)
        pattern_.root = id;
      else
        top_level.emplace_back(id, element);
    }
    // Unreachable dags are reported only when nothing else was: a failed reference
    // disconnects its binder too.
    if (pattern_.root != ir::kNoExpr && cx_.diag.errorCount() == errors)
      checkReachable(top_level, results);
  }

  /// The expr a dag binds to `name` (valid after build()), or kNoExpr: captures, outputs of
  /// Results other than 0 and names never bound have none.
  ir::ExprId boundExpr(const std::string& name) const {
    auto it = built_.find(name);
    return it == built_.end() ? ir::kNoExpr : it->second;
  }

  /// Every name the match binds or captures (valid after build()); rests are not values
  /// and are not among them.
  const std::set<std::string>& names() const { return names_; }
  /// The names `(Rest $name)` binds (not "_").
  std::set<std::string> rests() const {
    std::set<std::string> out;
    for (const auto& [name, loc] : rest_binders_) out.insert(name);
    return out;
  }

 private:
  // ---- Symbols -------------------------------------------------------------------------

  /// The name a dag binds: `(Op:$n ...)`, `(AnyOf:$n ...)`, the op of an Optional, output 0
  /// of a Results.
  std::string bindingName(const Located& d) {
    std::string kind = markerOf(operatorOf(d.init));
    if (kind == "optional") {
      std::string outer = dagName(d);
      if (!outer.empty() || numArgs(d) == 0) return outer;
      return dagName(cx_.locator.arg(d, 0));
    }
    if (kind == "results") {
      Located first = cx_.locator.arg(d, 0);
      std::string name = argName(d, 0);
      return numArgs(d) > 1 && isVariable(first) && name != "_" ? name : "";
    }
    if (isCallee(operatorOf(d.init)) || kind == "any_of") return dagName(d);
    return "";
  }

  /// `(Results $a, $b, (AnyOf ...))` or `(Results $a, $b, (Tuple ...))`: the names are
  /// values of their own (each an alternatives expr), not outputs of one node.
  bool isTupleResults(const Located& d) const {
    if (markerOf(operatorOf(d.init)) != "results" || numArgs(d) < 2) return false;
    std::string last = markerOf(operatorOf(cx_.locator.arg(d, numArgs(d) - 1).init));
    return last == "any_of" || last == "tuple";
  }

  /// Every dag of `match` must be read, directly or not, by the root: the matcher walks
  /// from the root and would never see it.
  void checkReachable(const std::vector<std::pair<ir::ExprId, Located>>& top_level,
                      const std::vector<std::string>& results) {
    std::vector<bool> reached(pattern_.exprs.size(), false);
    std::vector<ir::ExprId> work = {pattern_.root};
    for (const std::string& r : results) work.push_back(boundExpr(r));
    while (!work.empty()) {
      ir::ExprId id = work.back();
      work.pop_back();
      if (id >= reached.size() || reached[id]) continue;
      reached[id] = true;
      for (ir::ExprId in : pattern_.exprs[id].inputs) work.push_back(in);
    }
    for (const auto& [id, element] : top_level) {
      if (id == ir::kNoExpr || reached[id]) continue;
      // A tuple is read when any of its values is.
      auto members = tuples_.find(id);
      if (members != tuples_.end() && std::any_of(members->second.begin(), members->second.end(),
                                                  [&](ir::ExprId m) { return reached[m]; }))
        continue;
      cx_.error(element.loc,
                "this dag's value is not read by the root of the match (the last "
                "dag), so it would never be matched");
      if (!pattern_.exprs[id].other_outputs.empty() && pattern_.exprs[id].name.empty())
        cx_.note(element.loc,
                 "reading an output other than 0 does not connect a node to the "
                 "root; bind output 0 and read it");
    }
  }

  /// True if the dag binds its value or, for Results, any output.
  bool bindsAName(const Located& d) {
    if (!bindingName(d).empty()) return true;
    if (markerOf(operatorOf(d.init)) != "results") return false;
    for (unsigned k = 1; k + 1 < numArgs(d); ++k)
      if (std::string n = argName(d, k); !n.empty() && n != "_") return true;
    return false;
  }

  /// Records which dag binds each name, so `$name` may come before its dag.
  void collectBindings(const Located& v) {
    if (!isa_and_nonnull<llvm::DagInit>(v.init)) return;
    llvm::Record* op = operatorOf(v.init);
    if (isAttrName(op)) return;
    std::string kind = markerOf(op);
    if (kind == "rest") {  // (Rest $name): checked when its op is built
      if (numArgs(v) != 1 || !isVariable(cx_.locator.arg(v, 0))) return;
      std::string n = argName(v, 0);
      if (n.empty() || n == "_") return;
      if (!reportBoundTwice(n, v.loc)) rest_binders_.emplace(n, v.loc);
      return;
    }
    std::string name = bindingName(v);
    if (!name.empty()) addBinder(name, v, v.loc);
    if (kind == "results") {
      const bool tuple = isTupleResults(v);
      for (unsigned i = 1; i + 1 < numArgs(v); ++i)
        if (std::string n = argName(v, i); isVariable(cx_.locator.arg(v, i)) && n != "_") {
          Located arg = cx_.locator.arg(v, i);
          if (tuple) {  // every name of a tuple is a value of its own
            addBinder(n, v, arg.loc);
            continue;
          }
          reportBoundAsRest(n, arg.loc);
          reportParameterBound(n, arg.loc);
          output_binders_.emplace(n, arg.loc);
          names_.insert(n);
        }
    }
    for (unsigned i = 0; i < numArgs(v); ++i) {
      Located arg = cx_.locator.arg(v, i);
      bool inner_op = (kind == "optional" && i == 0) || (kind == "results" && i + 1 == numArgs(v));
      if (inner_op && isa_and_nonnull<llvm::DagInit>(arg.init)) {
        for (unsigned j = 0; j < numArgs(arg); ++j) collectBindings(cx_.locator.arg(arg, j));
      } else {
        collectBindings(arg);
      }
    }
  }

  /// `name` is bound by the dag `at` (at `loc`, the dag or a name of its Results).
  void addBinder(const std::string& name, Located at, const ir::SourceLoc& loc) {
    at.loc = loc;
    reportParameterBound(name, loc);
    auto [it, inserted] = binders_.emplace(name, at);
    if (!inserted) {
      cx_.error(loc, "'" + name + "' is bound twice");
      cx_.note(it->second.loc, "first bound here");
    } else {
      reportBoundAsRest(name, loc);
    }
    names_.insert(name);
  }

  /// In a fragment's body, a value parameter is what the use passes: a dag cannot bind it.
  void reportParameterBound(const std::string& name, const ir::SourceLoc& loc) {
    if (scope_ && scope_->isValue(name))
      cx_.error(loc, "'" + name + "' is a parameter of fragment '" + scope_->name +
                         "'; the uses pass its value, the body cannot bind it");
  }

  /// A rest named `name` at `loc`: reports it if the name is already bound (by a dag, an
  /// output of Results or another Rest). True if it was.
  bool reportBoundTwice(const std::string& name, const ir::SourceLoc& loc) {
    const ir::SourceLoc* first = nullptr;
    if (auto b = binders_.find(name); b != binders_.end()) first = &b->second.loc;
    if (auto o = output_binders_.find(name); !first && o != output_binders_.end())
      first = &o->second;
    if (auto r = rest_binders_.find(name); !first && r != rest_binders_.end()) first = &r->second;
    if (!first) return false;
    cx_.error(loc, "'" + name + "' is bound twice");
    cx_.note(*first, "first bound here");
    return true;
  }

  /// A dag or a Results output binding `name` at `loc`, after a Rest bound it.
  void reportBoundAsRest(const std::string& name, const ir::SourceLoc& loc) {
    auto r = rest_binders_.find(name);
    if (r == rest_binders_.end()) return;
    cx_.error(loc, "'" + name + "' is bound twice");
    cx_.note(r->second, "first bound here");
  }

  ir::ExprId add(ir::Expr e) {
    pattern_.exprs.push_back(std::move(e));
    return static_cast<ir::ExprId>(pattern_.exprs.size() - 1);
  }

  /// The capture `name`: one expr for all its uses.
  ir::ExprId capture(const std::string& name, const ir::SourceLoc& loc) {
    auto found = captures_.find(name);
    if (found != captures_.end()) return found->second;
    ir::Expr e;
    e.kind = ir::Expr::Kind::kCapture;
    e.name = name;
    e.loc = loc;
    ir::ExprId id = add(std::move(e));
    captures_[name] = id;
    names_.insert(name);
    return id;
  }

  // ---- Values --------------------------------------------------------------------------

  /// Where a value is written, for `none`.
  enum class Slot {
    kInput,               ///< an input of an op
    kOptionalFirstInput,  ///< the first input of an optional op
    kAlternative,         ///< an alternative of AnyOf
    kTupleItem,           ///< a value of a Tuple
  };

  /// One argument in value position: `$x`, `$_`, a dag, an int constant, or (as an input
  /// of an op) `none`.
  ir::ExprId value(const Located& v, const std::string& name, Slot slot) {
    if (isNone(v)) return none(v, name, slot);
    if (isVariable(v)) {
      if (name.empty()) {
        cx_.error(v.loc, "`?` is not a value: write $name, $_ or a dag");
        return ir::kNoExpr;
      }
      if (name == "_") {  // anonymous: a fresh expr named "_" each time, as in YAML
        ir::Expr e;
        e.kind = ir::Expr::Kind::kCapture;
        e.name = "_";
        e.loc = v.loc;
        return add(std::move(e));
      }
      if (rest_binders_.count(name) && !binders_.count(name) && !output_binders_.count(name)) {
        cx_.error(v.loc, "'" + name + "' is a list of inputs, bound by (Rest $" + name +
                             "); the match cannot read it as a value");
        return ir::kNoExpr;
      }
      auto built = built_.find(name);
      if (built != built_.end()) return built->second;
      if (building_.count(name)) {
        cx_.error(v.loc, "'" + name + "' is used in the dag that binds it");
        return ir::kNoExpr;
      }
      if (binders_.count(name) || (output_binders_.count(name) && !outputs_built_.count(name))) {
        cx_.error(v.loc, "'" + name + "' is used before the dag that binds it");
        return ir::kNoExpr;
      }
      return capture(name, v.loc);
    }
    if (!name.empty())
      cx_.error(v.loc, "`:$" + name +
                           "` after an argument binds nothing: bind an op's value "
                           "with (Op:$" +
                           name + " ...)");
    if (isa_and_nonnull<llvm::DagInit>(v.init)) return dag(v);
    if (isa_and_nonnull<llvm::IntInit>(v.init)) return constant(v);
    if (auto* def = dyn_cast_or_null<llvm::DefInit>(v.init)) {
      llvm::Record* r = def->getDef();
      if (isOp(r))
        cx_.error(v.loc, "an op in value position is a dag: write (" + describe(*r) + " ...)");
      else if (isFragment(r))
        cx_.error(v.loc, "a fragment's use is a dag: write (" + describe(*r) + " ...)");
      else if (!markerOf(r).empty())
        cx_.error(v.loc, "'" + describe(*r) + "' cannot be used here: " + markerUsage(markerOf(r)));
      else
        cx_.error(v.loc, "unexpected record '" + describe(*r) +
                             "': an input is $name, a dag "
                             "or a number");
      return ir::kNoExpr;
    }
    cx_.error(v.loc, "unsupported argument '" + (v.init ? v.init->getAsString() : "?") +
                         "': an input is $name, a dag or a number");
    return ir::kNoExpr;
  }

  /// `none`: an omitted input, as an input of an op only.
  ir::ExprId none(const Located& v, const std::string& name, Slot slot) {
    if (slot == Slot::kAlternative) {
      cx_.error(v.loc,
                "'none' cannot be an alternative of AnyOf: it matches an omitted input only as "
                "an input of an op");
      return ir::kNoExpr;
    }
    if (slot == Slot::kOptionalFirstInput) {
      cx_.error(v.loc,
                "'none' cannot be the first input of an optional op: when the op is absent, it "
                "stands for its first input");
      return ir::kNoExpr;
    }
    if (slot == Slot::kTupleItem) {
      cx_.error(v.loc,
                "'none' cannot be a value of a Tuple: it matches an omitted input only as an "
                "input of an op");
      return ir::kNoExpr;
    }
    if (!name.empty()) {
      cx_.error(v.loc,
                "'none' binds no name: an omitted input has no value (write none, not "
                "none:$" +
                    name + ")");
      return ir::kNoExpr;
    }
    ir::Expr e;
    e.kind = ir::Expr::Kind::kNone;
    e.loc = v.loc;
    return add(std::move(e));
  }

  /// A constant input: 2, (i 2), (f 2), (f "0.5").
  ir::ExprId constant(const Located& v) {
    std::optional<ir::Literal> lit = literals_.read(v);
    if (!lit) return ir::kNoExpr;
    if (lit->isList() || lit->kind == ir::Literal::Kind::kString) {
      cx_.error(v.loc,
                "a constant input is a number: 2, (f 2), (f \"0.5\"); constrain other "
                "constants with ConstantEquals");
      return ir::kNoExpr;
    }
    ir::Expr e;
    e.kind = ir::Expr::Kind::kConstant;
    e.literal = *lit;
    e.loc = v.loc;
    return add(std::move(e));
  }

  /// A dag in value position, built once per bound name.
  ir::ExprId dag(const Located& d) {
    std::string name = bindingName(d);
    if (!name.empty()) {
      auto built = built_.find(name);
      if (built != built_.end()) return built->second;
      building_.insert(name);
    }
    ir::ExprId id = dispatch(d, name);
    if (!name.empty()) {
      building_.erase(name);
      built_[name] = id;
    }
    return id;
  }

  ir::ExprId dispatch(const Located& d, const std::string& name) {
    llvm::Record* r = operatorOf(d.init);
    if (!r) {
      cx_.error(d.loc, "a dag's operator must be a record (an op or a marker)");
      return ir::kNoExpr;
    }
    if (isCallee(r)) return op(d, name, /*optional=*/false);
    std::string kind = markerOf(r);
    if (kind == "any_of") return alternatives(d, name);
    if (kind == "optional") return optional(d, name);
    if (kind == "results") return results(d, name);
    if (kind == "int" || kind == "float") {
      if (!dagName(d).empty()) cx_.error(d.loc, "a constant binds no name");
      return constant(d);
    }
    if (kind == "none") {
      cx_.error(d.loc, "'none' is written bare, not as a dag: (Op $a, none, $b)");
      return ir::kNoExpr;
    }
    if (isAttrName(r)) {
      cx_.error(d.loc, "attribute '" + describe(*r) +
                           "' is not a value: attributes follow an "
                           "op's inputs, as in (ReduceMean $x, (axes (ints -1)))");
      return ir::kNoExpr;
    }
    if (!kind.empty()) {
      cx_.error(d.loc,
                "'" + describe(*r) + "' cannot be used in a match here: " + markerUsage(kind));
      return ir::kNoExpr;
    }
    cx_.error(d.loc, "'" + describe(*r) +
                         "' is not an op: ops are records deriving from Op, "
                         "as in def " +
                         describe(*r) + " : Op<\"" + describe(*r) + "\", \"my.domain\">");
    return ir::kNoExpr;
  }

  /// `(Op:$name inputs..., attributes...)`.
  ir::ExprId op(const Located& d, const std::string& name, bool is_optional) {
    llvm::Record* r = operatorOf(d.init);
    ir::Expr e;
    e.kind = ir::Expr::Kind::kOp;
    e.name = name;
    e.optional = is_optional;
    e.loc = d.loc;
    calleeName(cx_, *r, d.loc, e.domain, e.op);
    bool attributes = false;
    for (unsigned i = 0; i < numArgs(d); ++i) {
      Located arg = cx_.locator.arg(d, i);
      if (isAttrName(operatorOf(arg.init))) {
        attributes = true;
        if (auto m = attribute(arg)) e.attrs.push_back(std::move(*m));
        continue;
      }
      if (attributes) cx_.error(arg.loc, "an input after an attribute: an op's inputs come first");
      if (isRest(arg)) {
        restInput(d, i, e);
        continue;
      }
      Slot slot = is_optional && i == 0 ? Slot::kOptionalFirstInput : Slot::kInput;
      ir::ExprId in = value(arg, argName(d, i), slot);
      if (in != ir::kNoExpr) e.inputs.push_back(in);
    }
    return add(std::move(e));
  }

  /// `(Rest $name)`, argument `i` of op dag `d` (being built as `e`): the op's inputs after
  /// the ones written.
  void restInput(const Located& d, unsigned i, ir::Expr& e) {
    Located arg = cx_.locator.arg(d, i);
    auto name = restName(cx_, arg);
    if (!name) return;
    if (e.optional) {
      cx_.error(arg.loc, "an optional op cannot take (Rest $" + *name +
                             "): when the op is absent, it stands for its first input");
      return;
    }
    for (unsigned j = i + 1; j < numArgs(d); ++j) {
      if (isAttrName(operatorOf(cx_.locator.arg(d, j).init))) continue;
      cx_.error(arg.loc, "(Rest $" + *name + ") must be the last input of " + e.op +
                             ": it stands for the inputs after the ones written");
      return;
    }
    e.rest = *name;
    e.rest_loc = arg.loc;
  }

  /// `(axes (ints -1))`, `(to (AnyOf 1, 10))`, `(alpha (Range 0, 1))`, `(perm (Capture $p))`.
  std::optional<ir::AttrMatch> attribute(const Located& a) {
    llvm::Record* r = operatorOf(a.init);
    ir::AttrMatch m;
    m.loc = a.loc;
    m.name = cx_.fields.str(*r, "attr_name", a.loc).value_or("");
    if (!dagName(a).empty()) cx_.error(a.loc, "an attribute binds no name");
    if (numArgs(a) != 1) {
      cx_.error(a.loc,
                "attribute '" + m.name + "' takes one value, as in (" + describe(*r) + " 1)");
      return std::nullopt;
    }
    Located v = cx_.locator.arg(a, 0);
    if (isVariable(v)) {
      // In a fragment's body, `(axis $ax)`: the condition its use passes for parameter ax.
      std::string param = argName(a, 0);
      if (!isAttrParam(cx_, scope_, v.loc, param,
                       "an attribute value is a literal or a condition; to capture it write (" +
                           describe(*r) + " (Capture $" + param + "))"))
        return std::nullopt;
      m.kind = ir::AttrMatch::Kind::kParam;
      m.capture = param;
      return m;
    }
    std::string kind = markerOf(operatorOf(v.init));
    if (kind == "any_of") {
      m.kind = ir::AttrMatch::Kind::kOneOf;
      for (unsigned i = 0; i < numArgs(v); ++i)
        if (auto lit = literals_.read(cx_.locator.arg(v, i))) m.values.push_back(*lit);
      if (numArgs(v) == 0) cx_.error(v.loc, "AnyOf needs at least one value");
      return m;
    }
    if (kind == "range") {
      m.kind = ir::AttrMatch::Kind::kRange;
      std::optional<double> lo, hi;
      if (numArgs(v) == 2) {
        lo = literals_.number(cx_.locator.arg(v, 0));
        hi = literals_.number(cx_.locator.arg(v, 1));
      }
      if (!lo || !hi) {
        cx_.error(v.loc, "Range takes two numbers (ints or numeric strings): (Range 0, \"1.5\")");
        return std::nullopt;
      }
      m.min = *lo;
      m.max = *hi;
      return m;
    }
    if (kind == "capture") {
      std::string name = numArgs(v) == 1 ? argName(v, 0) : "";
      if (name.empty() || name == "_" || !isVariable(cx_.locator.arg(v, 0))) {
        cx_.error(v.loc, "Capture takes one name: (Capture $p)");
        return std::nullopt;
      }
      m.kind = ir::AttrMatch::Kind::kCapture;
      m.capture = name;
      return m;
    }
    auto lit = literals_.read(v);
    if (!lit) return std::nullopt;
    m.kind = ir::AttrMatch::Kind::kEquals;
    m.values = {*lit};
    return m;
  }

  /// `(AnyOf:$name a, (Tag<"t"> b), ...)`.
  ir::ExprId alternatives(const Located& d, const std::string& name) {
    ir::Expr e;
    e.kind = ir::Expr::Kind::kAlternatives;
    e.name = name;
    e.loc = d.loc;
    if (numArgs(d) == 0) cx_.error(d.loc, "AnyOf needs at least one alternative");
    for (unsigned i = 0; i < numArgs(d); ++i) {
      Located arg = cx_.locator.arg(d, i);
      std::string tag;
      llvm::Record* r = operatorOf(arg.init);
      if (markerOf(r) == "tag") {
        tag = cx_.fields.str(*r, "tag", arg.loc).value_or("");
        if (numArgs(arg) != 1) {
          cx_.error(arg.loc, "Tag<\"" + tag + "\"> wraps one alternative");
          continue;
        }
        Located inner = cx_.locator.arg(arg, 0);
        ir::ExprId id = value(inner, argName(arg, 0), Slot::kAlternative);
        if (id == ir::kNoExpr) continue;
        e.inputs.push_back(id);
      } else {
        ir::ExprId id = value(arg, argName(d, i), Slot::kAlternative);
        if (id == ir::kNoExpr) continue;
        e.inputs.push_back(id);
      }
      e.tags.push_back(tag);
    }
    return add(std::move(e));
  }

  /// `(Optional (Op ...))`.
  ir::ExprId optional(const Located& d, const std::string& name) {
    Located inner = cx_.locator.arg(d, 0);
    if (numArgs(d) == 1 && isFragment(operatorOf(inner.init))) {
      cx_.error(d.loc,
                "a fragment's use cannot be optional: make an op inside the fragment "
                "optional");
      return ir::kNoExpr;
    }
    if (numArgs(d) != 1 || !isOp(operatorOf(inner.init))) {
      cx_.error(d.loc, "Optional wraps one op dag: (Optional (Cast $x, (to 1)))");
      return ir::kNoExpr;
    }
    if (!dagName(d).empty() && !dagName(inner).empty())
      cx_.error(inner.loc,
                "name the optional op once: (Optional:$c (Cast ...)) or "
                "(Optional (Cast:$c ...))");
    return op(inner, name, /*optional=*/true);
  }

  /// `(Results $a, $b, (Op ...))`, or a tuple: `(Results $a, $b, (AnyOf ...))`.
  ir::ExprId results(const Located& d, const std::string& name) {
    unsigned n = numArgs(d);
    Located inner = cx_.locator.arg(d, n ? n - 1 : 0);
    if (isTupleResults(d)) return tuple(d);
    if (n < 2 || !isCallee(operatorOf(inner.init))) {
      cx_.error(d.loc,
                "Results lists output names and then the op dag: (Results $a, $b, "
                "(Split $x))");
      return ir::kNoExpr;
    }
    if (!dagName(d).empty()) cx_.error(d.loc, "name the outputs inside Results, not Results");
    if (!dagName(inner).empty())
      cx_.error(inner.loc, "name the outputs in Results, not the op: (Results $a, $b, (Op ...))");
    std::vector<std::pair<uint32_t, std::string>> others;
    for (unsigned k = 0; k + 1 < n; ++k) {
      Located arg = cx_.locator.arg(d, k);
      std::string out = argName(d, k);
      if (!isVariable(arg) || out.empty()) {
        cx_.error(arg.loc, "Results lists output names ($name or $_) before the op dag");
        continue;
      }
      if (k > 0 && out != "_") others.emplace_back(k, out);
    }
    for (const auto& other : others) building_.insert(other.second);
    ir::ExprId id = op(inner, name, /*optional=*/false);
    for (const auto& other : others) {
      building_.erase(other.second);
      outputs_built_.insert(other.second);
    }
    pattern_.exprs[id].other_outputs = std::move(others);
    return id;
  }

  /// `(Results $a, $b, (AnyOf alt, ...))` or `(Results $a, $b, (Tuple ...))`: one
  /// alternatives expr per name, all of one group (they take the same alternative), as the
  /// YAML front end builds `a, b = X | (Y, Z)`. An alternative is a Tuple of as many values,
  /// or an op (or fragment) whose outputs the names are: its output k > 0 is read through a
  /// capture named "<name k>.<alternative index>", bound by Expr::other_outputs.
  ir::ExprId tuple(const Located& d) {
    const unsigned n = numArgs(d);
    const size_t k = n - 1;
    Located values = cx_.locator.arg(d, n - 1);
    bool ok = true;
    if (!dagName(d).empty()) ok = fail(d.loc, "name the values inside Results, not Results");
    if (!dagName(values).empty())
      ok =
          fail(values.loc, "name the values in Results, not " + describe(*operatorOf(values.init)));
    std::vector<std::pair<std::string, ir::SourceLoc>> names;
    for (unsigned i = 0; i < k; ++i) {
      Located arg = cx_.locator.arg(d, i);
      std::string out = argName(d, i);
      if (!isVariable(arg) || out.empty()) {
        ok = fail(arg.loc, "Results lists names ($name or $_) before its value");
        out = "_";
      }
      names.emplace_back(out, arg.loc);
    }
    // A failed tuple binds its names to nothing, so reading them reports nothing more.
    auto failed = [&] {
      for (const auto& name : names)
        if (name.first != "_") built_[name.first] = ir::kNoExpr;
      return ir::kNoExpr;
    };
    // (tag, dag) of each alternative, in order.
    std::vector<std::pair<std::string, Located>> alternatives;
    if (markerOf(operatorOf(values.init)) == "tuple") {
      alternatives.emplace_back("", values);
    } else {
      if (numArgs(values) == 0) ok = fail(values.loc, "AnyOf needs at least one alternative");
      for (unsigned j = 0; j < numArgs(values); ++j) {
        Located alt = cx_.locator.arg(values, j);
        std::string tag;
        llvm::Record* r = operatorOf(alt.init);
        if (markerOf(r) == "tag") {
          tag = cx_.fields.str(*r, "tag", alt.loc).value_or("");
          if (numArgs(alt) != 1) ok = fail(alt.loc, "Tag<\"" + tag + "\"> wraps one alternative");
          alt = cx_.locator.arg(alt, 0);
        }
        alternatives.emplace_back(tag, alt);
      }
    }
    if (!ok) return failed();

    for (const auto& name : names) building_.insert(name.first);
    const uint32_t group = next_group_++;
    std::vector<ir::Expr> members(k);
    for (size_t i = 0; i < k; ++i) {
      members[i].kind = ir::Expr::Kind::kAlternatives;
      members[i].loc = values.loc;
      members[i].group = group;
      if (names[i].first != "_") members[i].name = names[i].first;
    }
    for (size_t j = 0; j < alternatives.size(); ++j) {
      const auto& [tag, a] = alternatives[j];
      llvm::Record* r = operatorOf(a.init);
      if (markerOf(r) == "tuple") {
        if (!dagName(a).empty())
          ok = fail(a.loc, "a Tuple binds no name: name its values in Results");
        if (numArgs(a) != k) {
          ok = fail(a.loc, "this tuple has " + std::to_string(numArgs(a)) +
                               (numArgs(a) == 1 ? " value" : " values") + ", but Results binds " +
                               std::to_string(k) + " names");
          continue;
        }
        for (unsigned i = 0; i < k; ++i) {
          ir::ExprId c = value(cx_.locator.arg(a, i), argName(a, i), Slot::kTupleItem);
          if (c == ir::kNoExpr) {
            ok = false;
            continue;
          }
          members[i].inputs.push_back(c);
          members[i].tags.push_back(tag);
        }
        continue;
      }
      if (!isCallee(r)) {
        ok = fail(a.loc,
                  "an alternative of a Results binding several names is a (Tuple ...) of as "
                  "many values, or an op dag whose outputs they are");
        continue;
      }
      if (!dagName(a).empty()) {
        ok = fail(a.loc,
                  "name the outputs in Results, not the op: (Results $a, $b, (AnyOf (Op "
                  "...), ...))");
        continue;
      }
      ir::ExprId c = op(a, "", /*is_optional=*/false);
      members[0].inputs.push_back(c);
      members[0].tags.push_back(tag);
      for (size_t i = 1; i < k; ++i) {
        ir::Expr out;
        out.kind = ir::Expr::Kind::kCapture;
        out.name = names[i].first + "." + std::to_string(j);
        out.loc = names[i].second;
        pattern_.exprs[c].other_outputs.emplace_back(static_cast<uint32_t>(i), out.name);
        members[i].inputs.push_back(add(std::move(out)));
        members[i].tags.push_back(tag);
      }
    }
    for (const auto& name : names) building_.erase(name.first);
    if (!ok) return failed();
    std::vector<ir::ExprId> ids;
    for (ir::Expr& m : members) {
      if (std::all_of(m.tags.begin(), m.tags.end(), [](const std::string& t) { return t.empty(); }))
        m.tags.clear();
      ids.push_back(add(std::move(m)));
    }
    for (size_t i = 0; i < k; ++i)
      if (names[i].first != "_") built_[names[i].first] = ids[i];
    tuples_[ids[0]] = ids;
    return ids[0];
  }

  bool fail(const ir::SourceLoc& loc, const std::string& message) {
    cx_.error(loc, message);
    return false;
  }

  Context& cx_;
  ir::Pattern& pattern_;
  LiteralReader literals_;
  const FragmentScope* scope_;
  uint32_t next_group_ = 0;
  std::map<ir::ExprId, std::vector<ir::ExprId>> tuples_;  ///< a tuple's first value -> all
  std::map<std::string, Located> binders_;                ///< name -> the dag binding it
  std::map<std::string, ir::ExprId> built_;               ///< bound names already built
  std::set<std::string> building_;                        ///< bound names being built (cycles)
  std::map<std::string, ir::SourceLoc> output_binders_;   ///< Results outputs other than 0
  std::set<std::string> outputs_built_;                   ///< ... whose Results dag is built
  std::map<std::string, ir::SourceLoc> rest_binders_;     ///< names bound by (Rest $name)
  std::map<std::string, ir::ExprId> captures_;            ///< capture name -> its one expr
  std::set<std::string> names_;
};

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

/// Builds one Target from located lists of rewrite dags (of a rule, or of a fragment:
/// `scope`). A rule's lets are built once and the builder copied for each variant, so the
/// lets' diagnostics are reported once.
class TargetBuilder {
 public:
  TargetBuilder(Context& cx, const std::set<std::string>& match_names,
                const std::set<std::string>& match_rests, const FragmentScope* scope = nullptr)
      : cx_(cx),
        match_names_(match_names),
        match_rests_(match_rests),
        scope_(scope),
        literals_(cx) {}

  /// Builds `dags` after what was built before. `later`: names dags built after these bind
  /// (a rule's variants, after its lets), which these cannot read.
  void build(const Located& dags, const std::set<std::string>& later = {}) {
    auto* list = dyn_cast_or_null<llvm::ListInit>(dags.init);
    if (!list) return;
    if (list->size() == 0) cx_.error(dags.loc, "the rewrite is empty");
    pending_ = later;
    for (size_t i = 0; i < list->size(); ++i) collectLocals(cx_.locator.element(dags, i), pending_);
    for (size_t i = 0; i < list->size(); ++i) {
      Located element = cx_.locator.element(dags, i);
      llvm::Record* r = operatorOf(element.init);
      std::string kind = markerOf(r);
      if (!r) {
        cx_.error(element.loc, "an element of a rewrite must be a dag");
      } else if (kind == "replace") {
        replace(element);
      } else if (kind == "results") {
        results(element);
      } else if (isCallee(r) && dagName(element).empty()) {
        cx_.error(element.loc,
                  "this rewrite dag binds no name, so nothing reads it: write "
                  "(Op:$name ...) with the name of the value it replaces");
      } else if (kind == "tensor") {
        cx_.error(element.loc, "a tensor is an input of a new node, not a whole rewrite dag");
      } else {
        dag(element);
      }
    }
  }

  /// `keep`: the matched value `name` re-exported unchanged (`(Replace $name, $name)`).
  void keep(const std::string& name, const ir::SourceLoc& loc) {
    if (match_rests_.count(name)) {
      cx_.error(loc, "'" + name + "' is a list of inputs the match binds with (Rest $" + name +
                         "); `keep` names single values");
      return;
    }
    if (match_names_.empty()) return;  // the match failed, and was reported
    if (!match_names_.count(name)) {
      cx_.error(loc, "`keep` names values of the match; '" + name + "' is not one");
      return;
    }
    bind(name, ref(name, loc), loc);
  }

  /// Names the located list of rewrite dags binds that the match does not.
  std::set<std::string> localsOf(const Located& dags) const {
    std::set<std::string> out;
    auto* list = dyn_cast_or_null<llvm::ListInit>(dags.init);
    if (!list) return out;
    for (size_t i = 0; i < list->size(); ++i) collectLocals(cx_.locator.element(dags, i), out);
    return out;
  }

  /// The target built so far.
  ir::Target take() { return std::move(target_); }

 private:
  /// Names the rewrite binds that the match does not: usable only after their dag. (A
  /// fragment's value parameters are what its use passes, wherever they are read.)
  void collectLocals(const Located& v, std::set<std::string>& out) const {
    if (!isa_and_nonnull<llvm::DagInit>(v.init)) return;
    llvm::Record* r = operatorOf(v.init);
    if (isAttrName(r)) return;
    auto local = [&](const std::string& n) {
      return !n.empty() && n != "_" && !match_names_.count(n) && !(scope_ && scope_->isValue(n));
    };
    std::string name = dagName(v);
    if (isCallee(r) && local(name)) out.insert(name);
    if (markerOf(r) == "results")
      for (unsigned k = 0; k + 1 < numArgs(v); ++k)
        if (std::string n = argName(v, k); local(n)) out.insert(n);
    for (unsigned i = 0; i < numArgs(v); ++i) collectLocals(cx_.locator.arg(v, i), out);
  }

  /// The matched value `name`: one kRef for all its reads.
  uint32_t ref(const std::string& name, const ir::SourceLoc& loc) {
    auto found = refs_.find(name);
    if (found != refs_.end()) return found->second;
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRef;
    e.name = name;
    e.loc = loc;
    uint32_t id = add(std::move(e));
    refs_[name] = id;
    return id;
  }

  uint32_t add(ir::TargetExpr e) {
    target_.exprs.push_back(std::move(e));
    return static_cast<uint32_t>(target_.exprs.size() - 1);
  }

  /// `name` now means the value `id`: a replacement if the match binds it, else a local.
  void bind(const std::string& name, uint32_t id, const ir::SourceLoc& loc) {
    if (scope_ && scope_->isValue(name)) {
      cx_.error(loc, "'" + name + "' is a parameter of fragment '" + scope_->name +
                         "'; the uses pass its value, the body cannot bind it");
      return;
    }
    if (match_rests_.count(name)) {
      cx_.error(loc, "'" + name + "' is a list of inputs the match binds with (Rest $" + name +
                         "); a rewrite cannot bind it");
      return;
    }
    if (match_names_.count(name)) {
      if (!replaced_.insert(name).second) {
        cx_.error(loc, "'" + name + "' is replaced twice in one rewrite");
        return;
      }
      target_.replacements.emplace_back(name, id);
    } else if (locals_.count(name)) {
      cx_.error(loc, "'" + name + "' is bound twice in one rewrite");
      return;
    }
    locals_[name] = id;
    pending_.erase(name);
  }

  /// An input of a new node (`input`: `(Rest $r)` splices in place) or the new value of a
  /// Replace: `$x`, `none`, an op dag, Results, tensor.
  uint32_t value(const Located& v, const std::string& name, bool input) {
    constexpr uint32_t kBad = UINT32_MAX;
    if (isVariable(v)) {
      if (name.empty() || name == "_") {
        cx_.error(v.loc, name.empty() ? "`?` is not a value: write $name or a dag"
                                      : "`$_` is not a value in a rewrite: an omitted optional "
                                        "input is `none`");
        return kBad;
      }
      if (match_rests_.count(name)) {
        cx_.error(v.loc,
                  "'" + name + "' is a list of inputs; write (Rest $" + name + ") to splice it");
        return kBad;
      }
      auto local = locals_.find(name);
      if (local != locals_.end()) return local->second;
      if (pending_.count(name)) {
        cx_.error(v.loc, "'" + name + "' is used before the rewrite dag that binds it");
        return kBad;
      }
      return ref(name, v.loc);
    }
    if (!name.empty())
      cx_.error(v.loc,
                "`:$" + name + "` after an argument binds nothing: write (Op:$" + name + " ...)");
    if (auto* def = dyn_cast_or_null<llvm::DefInit>(v.init)) {
      llvm::Record* r = def->getDef();
      if (markerOf(r) == "none") {
        ir::TargetExpr e;
        e.kind = ir::TargetExpr::Kind::kNone;
        e.loc = v.loc;
        return add(std::move(e));
      }
      cx_.error(v.loc,
                isOp(r) ? "an op in value position is a dag: write (" + describe(*r) + " ...)"
                : isFragment(r) ? "a fragment's use is a dag: write (" + describe(*r) + " ...)"
                                : "unexpected record '" + describe(*r) +
                                      "': an input is $name, a dag, none or a tensor");
      return kBad;
    }
    if (isa_and_nonnull<llvm::DagInit>(v.init)) {
      std::string kind = markerOf(operatorOf(v.init));
      if (kind == "results") return results(v);
      if (kind == "rest" && input) return rest(v);
      if (kind == "replace") {
        cx_.error(v.loc, "Replace is a whole rewrite dag, not an input");
        return kBad;
      }
      return dag(v);
    }
    if (isa_and_nonnull<llvm::IntInit>(v.init) || isa_and_nonnull<llvm::StringInit>(v.init)) {
      cx_.error(v.loc, "a constant input of a new node is a tensor: (tensor \"float\", (f 2))");
      return kBad;
    }
    cx_.error(v.loc, "unsupported argument '" + (v.init ? v.init->getAsString() : "?") +
                         "': an input is $name, a dag, none or a tensor");
    return kBad;
  }

  /// `(Rest $name)` as an input of a new node: the inputs the match bound to name.
  uint32_t rest(const Located& d) {
    constexpr uint32_t kBad = UINT32_MAX;
    auto name = restName(cx_, d);
    if (!name) return kBad;
    if (*name == "_") {
      cx_.error(cx_.locator.arg(d, 0).loc,
                "(Rest $_) splices nothing: name the rest in the match, (Rest $rest), and "
                "splice that");
      return kBad;
    }
    if (!match_rests_.count(*name)) {
      cx_.error(cx_.locator.arg(d, 0).loc, "'" + *name + "' is not a rest of the match: (Rest $" +
                                               *name + ") splices the inputs a match's (Rest $" +
                                               *name + ") bound");
      return kBad;
    }
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kRest;
    e.name = *name;
    e.loc = d.loc;
    return add(std::move(e));
  }

  /// An op dag or a tensor.
  uint32_t dag(const Located& d) {
    constexpr uint32_t kBad = UINT32_MAX;
    llvm::Record* r = operatorOf(d.init);
    if (!r) {
      cx_.error(d.loc, "a dag's operator must be a record (an op or a marker)");
      return kBad;
    }
    std::string kind = markerOf(r);
    if (isCallee(r)) {
      uint32_t id = op(d, 1);
      if (std::string name = dagName(d); !name.empty()) bind(name, id, d.loc);
      return id;
    }
    if (kind == "tensor") return tensor(d);
    if (kind == "int" || kind == "float") {
      cx_.error(d.loc, "a constant input of a new node is a tensor: (tensor \"float\", (f 2))");
      return kBad;
    }
    if (isAttrName(r)) {
      cx_.error(d.loc, "attribute '" + describe(*r) +
                           "' is not a value: attributes follow an "
                           "op's inputs, as in (LayerNormalization $x, $s, $b, (axis -1))");
      return kBad;
    }
    if (!kind.empty()) {
      cx_.error(d.loc,
                "'" + describe(*r) + "' cannot be used in a rewrite here: " + markerUsage(kind));
      return kBad;
    }
    cx_.error(d.loc, "'" + describe(*r) +
                         "' is not an op: ops are records deriving from Op, "
                         "as in def " +
                         describe(*r) + " : Op<\"" + describe(*r) + "\", \"my.domain\">");
    return kBad;
  }

  /// A new node with `num_outputs` outputs; its value is output 0.
  uint32_t op(const Located& d, uint32_t num_outputs) {
    llvm::Record* r = operatorOf(d.init);
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kOp;
    e.num_outputs = num_outputs;
    e.loc = d.loc;
    calleeName(cx_, *r, d.loc, e.domain, e.op);
    bool attributes = false;
    for (unsigned i = 0; i < numArgs(d); ++i) {
      Located arg = cx_.locator.arg(d, i);
      if (isAttrName(operatorOf(arg.init))) {
        attributes = true;
        if (auto a = attribute(arg)) e.attrs.push_back(std::move(*a));
        continue;
      }
      if (attributes) cx_.error(arg.loc, "an input after an attribute: an op's inputs come first");
      uint32_t in = value(arg, argName(d, i), /*input=*/true);
      if (in != UINT32_MAX) e.inputs.push_back(in);
    }
    return add(std::move(e));
  }

  /// `(Results $y, $_, $sum, (Op ...))`: one node, output k bound to the k-th name.
  uint32_t results(const Located& d) {
    unsigned n = numArgs(d);
    Located inner = cx_.locator.arg(d, n ? n - 1 : 0);
    if (n < 2 || !isCallee(operatorOf(inner.init))) {
      cx_.error(d.loc,
                "Results lists output names and then the op dag: (Results $y, $_, $sum, "
                "(MsSkipLayerNormalization ...))");
      return UINT32_MAX;
    }
    if (!dagName(inner).empty())
      cx_.error(inner.loc, "name the outputs in Results, not the op: (Results $y, $_, (Op ...))");
    uint32_t main = op(inner, n - 1);
    for (unsigned k = 0; k + 1 < n; ++k) {
      Located arg = cx_.locator.arg(d, k);
      std::string name = argName(d, k);
      if (!isVariable(arg) || name.empty()) {
        cx_.error(arg.loc, "Results lists output names ($name or $_) before the op dag");
        continue;
      }
      if (name == "_") continue;
      uint32_t id = main;
      if (k > 0) {
        ir::TargetExpr e;  // output k of the node: op "", input the node
        e.kind = ir::TargetExpr::Kind::kOp;
        e.output = k;
        e.num_outputs = n - 1;
        e.inputs = {main};
        e.loc = arg.loc;
        id = add(std::move(e));
      }
      bind(name, id, arg.loc);
    }
    return main;
  }

  /// `(Replace $y, value)`.
  void replace(const Located& d) {
    Located target = cx_.locator.arg(d, 0);
    std::string name = argName(d, 0);
    if (numArgs(d) != 2 || !isVariable(target) || name.empty() || name == "_") {
      cx_.error(d.loc, "Replace takes the replaced name and its new value: (Replace $y, $x)");
      return;
    }
    if (!match_names_.count(name)) {
      cx_.error(target.loc, "Replace names '" + name + "', which the match does not bind");
      return;
    }
    uint32_t id = value(cx_.locator.arg(d, 1), argName(d, 1), /*input=*/false);
    if (id != UINT32_MAX) bind(name, id, target.loc);
  }

  /// `(tensor "int64", (ints 0, -1)[, [2]])` or `(tensor (helper "name", $a, ...))`.
  uint32_t tensor(const Located& d) {
    constexpr const char* kUsage =
        "tensor is (tensor \"TYPE\", VALUE), (tensor \"TYPE\", VALUE, DIMS), "
        "(tensor (like $x), VALUE) or (tensor (helper \"name\", $a, ...))";
    ir::TargetExpr e;
    e.kind = ir::TargetExpr::Kind::kTensor;
    e.loc = d.loc;
    unsigned n = numArgs(d);
    Located first = cx_.locator.arg(d, 0);
    if (n == 1 && markerOf(operatorOf(first.init)) == "helper") {
      if (!helper(first, e.helper, e.args)) return UINT32_MAX;
      return add(std::move(e));
    }
    const bool like = (n == 2 || n == 3) && markerOf(operatorOf(first.init)) == "like";
    auto* type = dyn_cast_or_null<llvm::StringInit>(first.init);
    if ((n != 2 && n != 3) || (!type && !like)) {
      cx_.error(d.loc, kUsage);
      return UINT32_MAX;
    }
    if (like) {
      std::string name = numArgs(first) == 1 ? argName(first, 0) : "";
      if (name.empty()) {
        cx_.error(first.loc, "like takes one bound name: (tensor (like $x), 0.0)");
        return UINT32_MAX;
      }
      e.like = name;
    } else {
      e.elem_type = type->getValue().str();
    }
    auto lit = literals_.read(cx_.locator.arg(d, 1));
    if (!lit) return UINT32_MAX;
    e.literal = *lit;
    if (like) e.literal.toFloats();  // a floating type, known when the rule applies
    if (n == 3) {
      Located dims = cx_.locator.arg(d, 2);
      auto shape = literals_.read(dims);
      if (!shape) return UINT32_MAX;
      if (shape->kind != ir::Literal::Kind::kInts && shape->kind != ir::Literal::Kind::kInt) {
        cx_.error(dims.loc, "a tensor's dims are ints: [2, 3] or (ints 2, 3)");
        return UINT32_MAX;
      }
      e.dims = shape->ints;
    }
    return add(std::move(e));
  }

  /// `(helper "name", $a, $b)`.
  bool helper(const Located& h, std::string& name, std::vector<std::string>& args) {
    auto* s = dyn_cast_or_null<llvm::StringInit>(cx_.locator.arg(h, 0).init);
    if (numArgs(h) < 1 || !s) {
      cx_.error(h.loc, "helper takes the helper's name and bound names: (helper \"name\", $a)");
      return false;
    }
    name = s->getValue().str();
    for (unsigned i = 1; i < numArgs(h); ++i) {
      Located arg = cx_.locator.arg(h, i);
      std::string n = argName(h, i);
      if (!isVariable(arg) || n.empty() || n == "_") {
        cx_.error(arg.loc, "a helper's arguments are bound names: (helper \"" + name + "\", $a)");
        return false;
      }
      args.push_back(n);
    }
    return true;
  }

  /// `(axis -1)`, `(epsilon (value $eps))`, `(perm (attr $p))`, `(n (helper "f", $a))`.
  std::optional<ir::TargetAttr> attribute(const Located& a) {
    llvm::Record* r = operatorOf(a.init);
    ir::TargetAttr t;
    t.loc = a.loc;
    t.name = cx_.fields.str(*r, "attr_name", a.loc).value_or("");
    if (!dagName(a).empty()) cx_.error(a.loc, "an attribute binds no name");
    if (numArgs(a) != 1) {
      cx_.error(a.loc,
                "attribute '" + t.name + "' takes one value, as in (" + describe(*r) + " 1)");
      return std::nullopt;
    }
    Located v = cx_.locator.arg(a, 0);
    if (isVariable(v)) {
      // In a fragment's body, `(axis $ax)`: the value its use passes for parameter ax.
      std::string param = argName(a, 0);
      if (!isAttrParam(cx_, scope_, v.loc, param,
                       "an attribute value is a literal, (value $x), (attr $x) or (helper ...)"))
        return std::nullopt;
      t.kind = ir::TargetAttr::Kind::kParam;
      t.ref = param;
      return t;
    }
    std::string kind = markerOf(operatorOf(v.init));
    if (kind == "value" || kind == "attr") {
      std::string name = numArgs(v) == 1 ? argName(v, 0) : "";
      if (name.empty() || name == "_" || !isVariable(cx_.locator.arg(v, 0))) {
        cx_.error(v.loc, "(" + kind + " $name) takes one bound name");
        return std::nullopt;
      }
      t.kind = kind == "value" ? ir::TargetAttr::Kind::kValueOf : ir::TargetAttr::Kind::kCaptured;
      t.ref = name;
      return t;
    }
    if (kind == "helper") {
      t.kind = ir::TargetAttr::Kind::kHelper;
      if (!helper(v, t.ref, t.args)) return std::nullopt;
      return t;
    }
    auto lit = literals_.read(v);
    if (!lit) return std::nullopt;
    t.kind = ir::TargetAttr::Kind::kLiteral;
    t.literal = *lit;
    return t;
  }

  Context& cx_;
  const std::set<std::string>& match_names_;
  const std::set<std::string>& match_rests_;  ///< names bound by (Rest $name) in the match
  const FragmentScope* scope_;
  ir::Target target_;
  LiteralReader literals_;
  std::map<std::string, uint32_t> locals_;  ///< names bound so far in this rewrite
  std::map<std::string, uint32_t> refs_;    ///< matched names read: one kRef each
  std::set<std::string> pending_;           ///< local names whose dag comes later
  std::set<std::string> replaced_;
};

//===----------------------------------------------------------------------===//
// Rules and op declarations
//===----------------------------------------------------------------------===//

/// What Rule and Fragment records share: `where`, and `rewrite` or `variants`.
class BodyReader {
 protected:
  BodyReader(Context& cx, const llvm::Record& record) : cx_(cx), record_(record) {}

  /// `let where = [Scalar<"eps", "0", "1e-3">, ...]`.
  void constraints(std::vector<ir::Constraint>& out, const std::set<std::string>& names,
                   const std::set<std::string>& rests) {
    Located list = cx_.locator.field(record_, "where");
    auto defs = cx_.fields.defs(record_, "where", list.loc);
    if (!defs) return;
    for (size_t i = 0; i < defs->size(); ++i) {
      Located element = cx_.locator.element(list, i);
      if (auto c = constraint(*(*defs)[i], element.loc, names, rests)) out.push_back(std::move(*c));
    }
  }

  std::optional<ir::Constraint> constraint(const llvm::Record& r, const ir::SourceLoc& loc,
                                           const std::set<std::string>& names,
                                           const std::set<std::string>& rests) {
    using K = ir::Constraint::Kind;
    Fields& f = cx_.fields;
    ir::Constraint c;
    c.loc = loc;
    std::string what = describe(r);
    auto kind = f.str(r, "constraint", loc);
    auto subject = f.str(r, "subject", loc);
    if (!kind || !subject) return std::nullopt;
    c.subject = *subject;
    if (*kind == "constant") {
      c.kind = K::kConstant;
    } else if (*kind == "scalar") {
      c.kind = K::kScalar;
      if (!bound(r, "min_value", loc, c.has_min, c.min) ||
          !bound(r, "max_value", loc, c.has_max, c.max))
        return std::nullopt;
    } else if (*kind == "constant_equals") {
      c.kind = K::kConstantEquals;
      auto text = f.str(r, "equals", loc);
      auto tolerance = f.str(r, "tolerance_value", loc);
      if (!text || !tolerance) return std::nullopt;
      auto lit = literalFromText(*text, "");
      if (!lit) {
        cx_.error(loc, "ConstantEquals value \"" + *text +
                           "\" is not a number or a list of "
                           "numbers");
        return std::nullopt;
      }
      c.literal = *lit;
      auto t = parseNumber(*tolerance);
      if (!t || *t < 0) {
        cx_.error(loc, "ConstantEquals tolerance \"" + *tolerance + "\" is not a number >= 0");
        return std::nullopt;
      }
      c.tolerance = *t;
    } else if (*kind == "rank") {
      c.kind = K::kRank;
      auto ranks = f.ints(r, "allowed_ranks", loc);
      if (!ranks) return std::nullopt;
      if (ranks->empty()) cx_.error(loc, "Rank needs at least one rank: Rank<\"x\", [3]>");
      c.ints = *ranks;
    } else if (*kind == "elem_type") {
      c.kind = K::kElemType;
      auto types = f.strings(r, "allowed_types", loc);
      if (!types) return std::nullopt;
      if (types->empty())
        cx_.error(loc, "ElemType needs at least one type: ElemType<\"x\", [\"float\"]>");
      c.strings = *types;
    } else if (*kind == "shape") {
      c.kind = K::kShape;
      auto dims = f.strings(r, "shape_dims", loc);
      if (!dims) return std::nullopt;
      for (const std::string& dim : *dims)
        if (dim.empty()) cx_.error(loc, "a Shape dim is \"7\", \"H\" or \"_\", not \"\"");
      c.dims = *dims;
    } else if (*kind == "consumers") {
      c.kind = K::kConsumers;
      auto lo = f.integer(r, "min_consumers", loc);
      auto hi = f.integer(r, "max_consumers", loc);
      if (!lo || !hi) return std::nullopt;
      if (*lo < 0 || *hi < *lo) cx_.error(loc, "Consumers needs 0 <= min <= max");
      c.has_min = c.has_max = true;
      c.min = static_cast<double>(*lo);
      c.max = static_cast<double>(*hi);
    } else if (*kind == "native") {
      c.kind = K::kNative;
      auto native = f.str(r, "native", loc);
      auto args = f.strings(r, "native_args", loc);
      if (!native || !args) return std::nullopt;
      c.native = *native;
      c.args = *args;
      if (c.subject.empty() && c.args.empty()) {
        cx_.error(loc,
                  "Native names nothing: pass it the matched values it checks, as in "
                  "Native<\"" +
                      c.native + "\", [\"x\"]>");
        return std::nullopt;
      }
      if (c.subject.empty()) c.subject = c.args.front();  // checked with the arguments
      if (c.native.empty()) cx_.error(loc, "Native needs the predicate's name");
      for (const std::string& arg : c.args)
        if (rests.count(arg))
          cx_.error(loc, "Native argument '" + arg + "' is a list of inputs, bound by (Rest $" +
                             arg + "), not a value");
        else if (!names.count(arg))
          cx_.error(loc, "Native argument '" + arg + "' is not a name the match binds");
    } else if (*kind == "equivalent") {
      c.kind = K::kEquivalent;
      auto other = f.str(r, "other_name", loc);
      if (!other) return std::nullopt;
      if (other->empty()) {
        cx_.error(loc, "Equivalent needs the name of the other value: Equivalent<\"" + c.subject +
                           "\", \"other\">");
        return std::nullopt;
      }
      if (rests.count(*other))
        cx_.error(loc, "Equivalent compares with '" + *other +
                           "', a list of inputs bound by (Rest $" + *other + "), not a value");
      else if (!names.empty() && !names.count(*other))
        cx_.error(loc, "Equivalent compares with '" + *other + "', which the match does not bind");
      c.args = {*other};
    } else {
      cx_.error(loc, "unknown constraint kind \"" + *kind + "\" of " + what);
      return std::nullopt;
    }
    if (c.subject.empty()) {
      cx_.error(loc, what + " names nothing: its first argument is the name of a matched value");
      return std::nullopt;
    }
    bool checked = c.kind == K::kNative && !c.args.empty() && c.subject == c.args.front();
    if (!checked && rests.count(c.subject)) {
      cx_.error(loc, what + " constrains '" + c.subject + "', a list of inputs bound by (Rest $" +
                         c.subject + "); constraints name single values");
      return std::nullopt;
    }
    if (!checked && !names.empty() && !names.count(c.subject)) {
      cx_.error(loc, what + " constrains '" + c.subject + "', which the match does not bind");
      return std::nullopt;
    }
    return c;
  }

  /// A Scalar bound: "" (none) or a number.
  bool bound(const llvm::Record& r, llvm::StringRef field, const ir::SourceLoc& loc, bool& has,
             double& value) {
    auto text = cx_.fields.str(r, field, loc);
    if (!text) return false;
    if (trim(*text).empty()) return true;
    auto v = parseNumber(*text);
    if (!v) {
      cx_.error(loc, "Scalar bound \"" + *text + "\" is not a number");
      return false;
    }
    has = true;
    value = *v;
    return true;
  }

  /// True if the record sets `rewrite` or `variants` to a non-empty list.
  bool hasRewrite() {
    for (const char* field : {"rewrite", "variants"}) {
      auto* list = dyn_cast_or_null<llvm::ListInit>(cx_.locator.field(record_, field).init);
      if (list && list->size() > 0) return true;
    }
    return false;
  }

  /// The located dags of the first target (`rewrite`, or the first Variant's), if written.
  std::optional<Located> firstTargetDags() {
    Located rewrite = cx_.locator.field(record_, "rewrite");
    auto* list = dyn_cast_or_null<llvm::ListInit>(rewrite.init);
    if (list && list->size() > 0) return rewrite;
    Located variants = cx_.locator.field(record_, "variants");
    auto* variant_list = dyn_cast_or_null<llvm::ListInit>(variants.init);
    if (!variant_list || variant_list->size() == 0) return std::nullopt;
    auto* def = dyn_cast<llvm::DefInit>(variant_list->getElement(0));
    if (!def) return std::nullopt;
    const llvm::RecordVal* dags = def->getDef()->getValue("rewrite");
    if (!dags || !isa<llvm::ListInit>(dags->getValue())) return std::nullopt;
    return cx_.locator.templateArg(cx_.locator.element(variants, 0), 1, dags->getValue());
  }

  /// `let rewrite = [...]` or `let variants = [Variant<When<...>, [...]>, ...]`, after a
  /// rule's `let lets = [...]` and `let keep = [...]` (fields fragments do not have).
  /// `names`: the values a dag replaces (the match's, or a fragment's results); `what`
  /// names the record in messages ("rule 'r'").
  void targets(std::vector<ir::Target>& out, const std::set<std::string>& names,
               const std::set<std::string>& rests, const FragmentScope* scope,
               const std::string& what) {
    Located rewrite = cx_.locator.field(record_, "rewrite");
    Located variants = cx_.locator.field(record_, "variants");
    auto* rewrite_list = dyn_cast_or_null<llvm::ListInit>(rewrite.init);
    auto* variant_list = dyn_cast_or_null<llvm::ListInit>(variants.init);
    bool has_rewrite = rewrite_list && rewrite_list->size() > 0;
    bool has_variants = variant_list && variant_list->size() > 0;
    if (has_rewrite && has_variants) {
      cx_.error(variants.loc, "a " + what.substr(0, what.find(' ')) +
                                  " has either `rewrite` or `variants`, not both");
      return;
    }
    if (!has_rewrite && !has_variants) {
      cx_.error(cx_.locator.ofRecord(record_), what +
                                                   " has no rewrite: set `let rewrite = [...]` or "
                                                   "`let variants = [...]`");
      return;
    }
    // Every target: its dags, `when` and location.
    std::vector<std::pair<Located, ir::Target>> todo;
    if (has_rewrite) {
      ir::Target target;
      target.loc = rewrite.loc;
      todo.emplace_back(rewrite, std::move(target));
    } else {
      auto defs = cx_.fields.defs(record_, "variants", variants.loc);
      if (!defs) return;
      for (size_t i = 0; i < defs->size(); ++i) {
        const llvm::Record& v = *(*defs)[i];
        Located element = cx_.locator.element(variants, i);
        ir::Target target;
        target.loc = element.loc;
        auto condition = cx_.fields.def(v, "when", element.loc);
        if (!condition) continue;
        const llvm::Record& w = **condition;
        auto always = cx_.fields.bit(w, "always", element.loc);
        if (always && !*always) {
          ir::Target::When when;
          when.domain = cx_.fields.str(w, "domain", element.loc).value_or("");
          when.min_opset = cx_.fields.integer(w, "min_opset", element.loc).value_or(-1);
          when.max_opset = cx_.fields.integer(w, "max_opset", element.loc).value_or(-1);
          when.tags =
              cx_.fields.strings(w, "tags", element.loc).value_or(std::vector<std::string>{});
          target.when = std::move(when);
        }
        const llvm::RecordVal* dags = v.getValue("rewrite");
        if (!dags || !isa<llvm::ListInit>(dags->getValue())) {
          cx_.error(element.loc, "a Variant's second argument is its list of rewrite dags");
          continue;
        }
        if (i + 1 < defs->size() && !target.when)
          cx_.warning(element.loc,
                      "an unconditional variant before the last hides the ones "
                      "after it");
        // Variant<When, dags>: the dags are written as the second template argument.
        todo.emplace_back(cx_.locator.templateArg(element, 1, dags->getValue()), std::move(target));
      }
    }

    // The lets and keeps, built once: each target starts from a copy.
    TargetBuilder start(cx_, names, rests, scope);
    Located lets = cx_.locator.field(record_, "lets");
    auto* let_list = dyn_cast_or_null<llvm::ListInit>(lets.init);
    if (let_list && let_list->size() > 0) {
      std::set<std::string> later;
      for (const auto& [dags, target] : todo) {
        std::set<std::string> locals = start.localsOf(dags);
        later.insert(locals.begin(), locals.end());
      }
      start.build(lets, later);
    }
    if (lets.init && !let_list) cx_.error(lets.loc, "`lets` must be a list of rewrite dags");
    if (record_.getValue("keep")) {
      Located keep = cx_.locator.field(record_, "keep");
      if (auto kept = cx_.fields.strings(record_, "keep", keep.loc))
        for (size_t i = 0; i < kept->size(); ++i)
          start.keep((*kept)[i], cx_.locator.element(keep, i).loc);
    }
    for (auto& [dags, target] : todo) {
      TargetBuilder builder = start;
      builder.build(dags);
      ir::Target built = builder.take();
      built.when = std::move(target.when);
      built.loc = target.loc;
      out.push_back(std::move(built));
    }
  }

  Context& cx_;
  const llvm::Record& record_;
};

/// Converts one Rule record.
class RuleConverter : BodyReader {
 public:
  RuleConverter(Context& cx, const llvm::Record& record) : BodyReader(cx, record) {}

  /// The rule, or nullopt if it had errors (all reported).
  std::optional<ir::Rule> convert() {
    unsigned errors = cx_.diag.errorCount();
    ir::Rule rule;
    rule.loc = cx_.locator.ofRecord(record_);
    Fields& f = cx_.fields;
    rule.name = f.str(record_, "rule_name", rule.loc).value_or("");
    if (auto priority = f.integer(record_, "priority", rule.loc)) {
      if (*priority < INT_MIN || *priority > INT_MAX)
        cx_.error(cx_.locator.field(record_, "priority").loc, "priority is out of range");
      rule.priority = static_cast<int>(*priority);
    }
    rule.tags = f.strings(record_, "tags", rule.loc).value_or(std::vector<std::string>{});
    rule.doc = f.str(record_, "doc", rule.loc).value_or("");
    applicability(rule);

    std::set<std::string> names;
    std::set<std::string> rests;
    if (!Fields::isSet(record_, "match")) {
      cx_.error(rule.loc, "rule '" + rule.name + "' has no match: set `let match = [...]`");
    } else {
      Located match = cx_.locator.field(record_, "match");
      auto* list = dyn_cast_or_null<llvm::ListInit>(match.init);
      if (!list) {
        cx_.error(match.loc, "`match` must be a list of dags");
      } else if (list->size() == 0) {
        cx_.error(match.loc, "`match` is empty: it needs at least the root dag");
      } else {
        PatternBuilder builder(cx_, rule.pattern);
        builder.build(match);
        names = builder.names();
        rests = builder.rests();
      }
    }
    constraints(rule.pattern.constraints, names, rests);
    targets(rule.targets, names, rests, nullptr, "rule '" + rule.name + "'");
    if (cx_.diag.errorCount() != errors) return std::nullopt;
    return rule;
  }

 private:
  /// `let requires = [Opset<"", 17>, ...]`.
  void applicability(ir::Rule& rule) {
    Located list = cx_.locator.field(record_, "requires");
    auto defs = cx_.fields.defs(record_, "requires", list.loc);
    if (!defs) return;
    for (size_t i = 0; i < defs->size(); ++i) {
      const llvm::Record& r = *(*defs)[i];
      Located element = cx_.locator.element(list, i);
      ir::Applicability a;
      a.loc = element.loc;
      a.domain = cx_.fields.str(r, "domain", a.loc).value_or("");
      a.min_opset = cx_.fields.integer(r, "min_opset", a.loc).value_or(-1);
      a.max_opset = cx_.fields.integer(r, "max_opset", a.loc).value_or(-1);
      rule.requires.push_back(std::move(a));
    }
  }
};

/// Converts one Fragment record: `def name : Fragment<["t"], [AttrParam<"axis", "-1">]>`
/// with a `match` (and `where`) or a `rewrite` / `variants`.
class FragmentConverter : BodyReader {
 public:
  FragmentConverter(Context& cx, const llvm::Record& record) : BodyReader(cx, record) {}

  /// The fragment, or nullopt if it had errors (all reported).
  std::optional<ir::Fragment> convert() {
    unsigned errors = cx_.diag.errorCount();
    ir::Fragment f;
    f.loc = cx_.locator.ofRecord(record_);
    if (record_.isAnonymous()) {
      cx_.error(f.loc, "a fragment is used by its record's name: def head_split : Fragment<...>");
      return std::nullopt;
    }
    f.name = record_.getName().str();
    if (!isSnakeCase(f.name)) {
      cx_.error(f.loc, "fragment name '" + f.name +
                           "' is not snake_case (lowercase letters, digits and '_'), so it could "
                           "be taken for an op");
      return std::nullopt;
    }
    f.doc = cx_.fields.str(record_, "doc", f.loc).value_or("");
    if (!params(f)) return std::nullopt;
    Located results = cx_.locator.field(record_, "results");
    f.results =
        cx_.fields.strings(record_, "results", results.loc).value_or(std::vector<std::string>{});
    for (size_t i = 0; i < f.results.size(); ++i)
      if (f.results[i].empty() || f.results[i] == "_" ||
          std::count(f.results.begin(), f.results.begin() + static_cast<std::ptrdiff_t>(i),
                     f.results[i]))
        cx_.error(cx_.locator.element(results, i).loc,
                  f.results[i].empty() || f.results[i] == "_"
                      ? "a result is a name the body binds"
                      : "result '" + f.results[i] + "' is listed twice");

    Located match = cx_.locator.field(record_, "match");
    auto* match_list = dyn_cast_or_null<llvm::ListInit>(match.init);
    const bool has_match = match_list && match_list->size() > 0;
    const bool has_rewrite = hasRewrite();
    if (has_match && has_rewrite) {
      Located rewrite = cx_.locator.field(record_, "rewrite");
      if (!dyn_cast_or_null<llvm::ListInit>(rewrite.init) ||
          cast<llvm::ListInit>(rewrite.init)->size() == 0)
        rewrite = cx_.locator.field(record_, "variants");
      cx_.error(rewrite.loc, "a fragment is a piece of a match or of a rewrite, not both");
      return std::nullopt;
    }
    if (!has_match && !has_rewrite) {
      cx_.error(f.loc, "fragment '" + f.name +
                           "' needs `let match = [...]`, or `let rewrite = [...]` or "
                           "`let variants = [...]`");
      return std::nullopt;
    }
    f.is_match = has_match;
    if (has_match)
      matchBody(f, match);
    else
      rewriteBody(f);
    if (cx_.diag.errorCount() != errors) return std::nullopt;
    return f;
  }

 private:
  /// `Fragment<values, [AttrParam<name, default>, ...]>`: value parameters, then attribute
  /// parameters. False if one is malformed.
  bool params(ir::Fragment& f) {
    const unsigned errors = cx_.diag.errorCount();
    Located parent = cx_.locator.parent(record_, "Fragment");
    const llvm::RecordVal* values_field = record_.getValue("value_params");
    const llvm::RecordVal* attrs_field = record_.getValue("attr_params");
    Located values =
        cx_.locator.templateArg(parent, 0, values_field ? values_field->getValue() : nullptr);
    Located attrs =
        cx_.locator.templateArg(parent, 1, attrs_field ? attrs_field->getValue() : nullptr);
    auto add = [&](const std::string& name, const ir::SourceLoc& loc) -> ir::Fragment::Param* {
      if (name.empty() || name == "_" ||
          !std::all_of(
              name.begin(), name.end(),
              [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) ||
          std::isdigit(static_cast<unsigned char>(name[0]))) {
        cx_.error(loc, "a parameter's name is a name, as in \"t\" (not \"" + name + "\")");
        return nullptr;
      }
      for (const ir::Fragment::Param& q : f.params)
        if (q.name == name) {
          cx_.error(loc, "parameter '" + name + "' is listed twice");
          return nullptr;
        }
      ir::Fragment::Param p;
      p.name = name;
      p.loc = loc;
      f.params.push_back(std::move(p));
      return &f.params.back();
    };
    if (auto names = cx_.fields.strings(record_, "value_params", values.loc))
      for (size_t i = 0; i < names->size(); ++i)
        add((*names)[i], cx_.locator.element(values, i).loc);
    if (auto defs = cx_.fields.defs(record_, "attr_params", attrs.loc)) {
      for (size_t i = 0; i < defs->size(); ++i) {
        const llvm::Record& a = *(*defs)[i];
        // AttrParam<name, default>, located at each argument when written out.
        const Located element = cx_.locator.element(attrs, i);
        const ir::SourceLoc loc = element.loc;
        auto name = cx_.fields.str(a, "param_name", loc);
        auto text = cx_.fields.str(a, "param_default", loc);
        if (!name || !text) continue;
        ir::Fragment::Param* p = add(*name, cx_.locator.templateArg(element, 0, nullptr).loc);
        if (!p) continue;
        p->attribute = true;
        if (text->empty()) continue;
        p->default_value = defaultLiteral(*text);
        if (!p->default_value)
          cx_.error(cx_.locator.templateArg(element, 1, nullptr).loc,
                    "default \"" + *text + "\" of attribute parameter '" + *name +
                        "' is not a literal: write it as \"-1\", \"1e-5\", \"[0, 1]\" or "
                        "\"'text'\" (\"\" for none)");
      }
    }
    for (const ir::Fragment::Param& p : f.params)
      (p.attribute ? scope_.attrs : scope_.values).push_back(p.name);
    scope_.name = f.name;
    return cx_.diag.errorCount() == errors;
  }

  /// An attribute parameter's default, written as text: a number, a quoted string, or a
  /// list of either (the literals a YAML signature `f(x, attr=default)` takes).
  static std::optional<ir::Literal> defaultLiteral(const std::string& text) {
    std::string s = trim(text);
    auto quoted = [](const std::string& t) {
      return t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front();
    };
    if (quoted(s)) return literalFromText(s, "string");
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
      std::vector<std::string> items = splitList(s.substr(1, s.size() - 2));
      if (!items.empty() && std::all_of(items.begin(), items.end(), quoted))
        return literalFromText(s, "strings");
    }
    return literalFromText(s, "");
  }

  /// The name the last dag of `dags` binds (its value's), or "".
  static std::string lastName(const Located& dags) {
    auto* list = dyn_cast_or_null<llvm::ListInit>(dags.init);
    if (!list || list->size() == 0) return "";
    Located last;
    last.init = list->getElement(list->size() - 1);
    std::string kind = markerOf(operatorOf(last.init));
    std::string name;
    if (kind == "results" || kind == "replace") {
      if (numArgs(last) > 1 && isa<llvm::UnsetInit>(cast<llvm::DagInit>(last.init)->getArg(0)))
        name = argName(last, 0);
    } else {
      name = dagName(last);
    }
    return name == "_" ? "" : name;
  }

  /// The results when `let results` is not set: what the last dag binds.
  bool defaultResults(ir::Fragment& f, const std::optional<Located>& dags) {
    if (!f.results.empty()) return true;
    std::string name = dags ? lastName(*dags) : "";
    if (name.empty()) {
      Located last = dags ? cx_.locator.element(*dags, cast<llvm::ListInit>(dags->init)->size() - 1)
                          : Located{};
      cx_.error(dags ? last.loc : f.loc,
                "a fragment's last dag names its result, as in (Op:$name ...); or list its "
                "results in `let results = [...]`");
      return false;
    }
    f.results.push_back(name);
    return true;
  }

  void matchBody(ir::Fragment& f, const Located& match) {
    if (!defaultResults(f, match)) return;
    PatternBuilder builder(cx_, f.match, &scope_);
    builder.build(match, f.results);
    const std::set<std::string>& names = builder.names();
    constraints(f.match.constraints, names, builder.rests());
    if (f.match.root == ir::kNoExpr) return;
    Located results = cx_.locator.field(record_, "results");
    for (size_t i = 0; i < f.results.size(); ++i) {
      const ir::ExprId id = builder.boundExpr(f.results[i]);
      if (id == ir::kNoExpr) {
        ir::SourceLoc loc = f.loc;
        if (auto* list = dyn_cast_or_null<llvm::ListInit>(results.init); list && list->size() > 0)
          loc = cx_.locator.element(results, i).loc;
        cx_.error(loc, "fragment '" + f.name + "' returns '" + f.results[i] +
                           "', which no dag of its match binds: bind it with (Op:$" + f.results[i] +
                           " ...)");
        continue;
      }
      f.result_exprs.push_back(id);
    }
  }

  void rewriteBody(ir::Fragment& f) {
    Located where = cx_.locator.field(record_, "where");
    if (auto* list = dyn_cast_or_null<llvm::ListInit>(where.init); list && list->size() > 0)
      cx_.error(where.loc, "`where` constrains a match; a rewrite fragment has none");
    if (!defaultResults(f, firstTargetDags())) return;
    const std::set<std::string> results(f.results.begin(), f.results.end());
    const std::set<std::string> no_rests;
    targets(f.rewrite, results, no_rests, &scope_, "fragment '" + f.name + "'");
  }

  FragmentScope scope_;
};

/// Converts one OpDecl record.
class OpDeclConverter {
 public:
  OpDeclConverter(Context& cx, const llvm::Record& record) : cx_(cx), record_(record) {}

  std::optional<ir::OpDecl> convert() {
    unsigned errors = cx_.diag.errorCount();
    Fields& f = cx_.fields;
    ir::OpDecl op;
    op.loc = cx_.locator.ofRecord(record_);
    op.domain = f.str(record_, "op_domain", op.loc).value_or("");
    op.op = f.str(record_, "op_name", op.loc).value_or("");
    op.since_version = f.integer(record_, "since_version", op.loc).value_or(1);
    op.inputs = params(f.strings(record_, "input_params", op.loc));
    op.outputs = params(f.strings(record_, "output_params", op.loc));
    op.commutative = f.bit(record_, "commutative", op.loc).value_or(false);
    op.doc = f.str(record_, "doc", op.loc).value_or("");
    if (op.op.empty()) cx_.error(op.loc, "OpDecl needs the op's name");
    if (auto attrs = f.defs(record_, "attr_decls", op.loc))
      for (const llvm::Record* a : *attrs) attr(*a, op);
    if (cx_.diag.errorCount() != errors) return std::nullopt;
    return op;
  }

 private:
  /// "beta?" is optional, "inputs..." variadic.
  std::vector<ir::OpDecl::Param> params(const std::optional<std::vector<std::string>>& names) {
    std::vector<ir::OpDecl::Param> out;
    if (!names) return out;
    for (std::string name : *names) {
      ir::OpDecl::Param p;
      auto strip = [&name](const std::string& suffix) {
        if (name.size() < suffix.size() ||
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
          return false;
        name.resize(name.size() - suffix.size());
        return true;
      };
      p.variadic = strip("...");
      p.optional = strip("?");
      p.name = name;
      if (p.name.empty()) cx_.error(cx_.locator.ofRecord(record_), "an op parameter needs a name");
      out.push_back(std::move(p));
    }
    return out;
  }

  void attr(const llvm::Record& a, ir::OpDecl& op) {
    static const std::set<std::string> kTypes = {"int",  "float",  "string",
                                                 "ints", "floats", "strings"};
    Fields& f = cx_.fields;
    ir::OpDecl::Attr out;
    out.name = f.str(a, "attr_name", op.loc).value_or("");
    out.type = f.str(a, "attr_type", op.loc).value_or("");
    out.required = f.bit(a, "attr_required", op.loc).value_or(false);
    if (!kTypes.count(out.type)) {
      cx_.error(op.loc, "attribute '" + out.name + "' has type \"" + out.type +
                            "\"; the types are int, float, string, ints, floats, strings");
      return;
    }
    auto text = f.str(a, "attr_default", op.loc);
    if (!text) return;
    if (!text->empty()) {
      out.default_value = literalFromText(*text, out.type);
      if (!out.default_value) {
        cx_.error(op.loc, "default \"" + *text + "\" of attribute '" + out.name + "' is not " +
                              (out.type == "int" ? "an " : "a ") + out.type);
        return;
      }
    }
    op.attrs.push_back(std::move(out));
  }

  Context& cx_;
  const llvm::Record& record_;
};

/// Records deriving from `cls`, in the order they were defined.
std::vector<llvm::Record*> definitions(const llvm::RecordKeeper& records, const char* cls) {
  if (!records.getClass(cls)) return {};
  std::vector<llvm::Record*> defs = records.getAllDerivedDefinitions(cls);
  std::stable_sort(defs.begin(), defs.end(), [](const llvm::Record* a, const llvm::Record* b) {
    return a->getID() < b->getID();
  });
  return defs;
}

}  // namespace

void convertRecords(const llvm::RecordKeeper& records, const llvm::SourceMgr& sources,
                    const std::string& path, ir::RuleFile& out, DiagnosticEngine& diag) {
  Locator locator(sources, path);
  Fields fields(diag);
  Context cx{diag, locator, fields};
  if (!records.getClass("Rule") || !records.getClass("OpDecl")) {
    diag.error(ir::SourceLoc{path, 0, 0},
               "no class Rule: a rule file starts with include \"onnx_rewrite/Rule.td\"");
    return;
  }
  for (const llvm::Record* r : definitions(records, "OpDecl"))
    if (auto op = OpDeclConverter(cx, *r).convert()) out.ops.push_back(std::move(*op));
  for (const llvm::Record* r : definitions(records, "FragmentName")) {
    if (r->isSubClassOf("Fragment")) {
      if (auto f = FragmentConverter(cx, *r).convert()) out.fragments.push_back(std::move(*f));
    } else if (r->isAnonymous() || !isSnakeCase(r->getName().str())) {
      // A fragment defined in another file: its uses name it, as a snake_case op name.
      diag.error(locator.ofRecord(*r),
                 r->isAnonymous()
                     ? "a FragmentName names a fragment: def head_split : FragmentName;"
                     : "fragment name '" + r->getName().str() +
                           "' is not snake_case (lowercase letters, digits and '_'), so it "
                           "could be taken for an op");
    }
  }
  for (const llvm::Record* r : definitions(records, "Rule"))
    if (auto rule = RuleConverter(cx, *r).convert()) out.rules.push_back(std::move(*rule));
}

}  // namespace onnx_rewrite::tablegen
