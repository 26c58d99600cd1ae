//===- SourceText.h - where each part of a TableGen value was written -----===//
//
// LLVM 14 records where a record and each of its `let`s are written, but a
// DagInit or ListInit keeps no locations. This reads the text of a field's
// value again (a small parser of TableGen's value syntax, not its semantics)
// and keeps where every dag operator, dag argument, list element and class
// template argument starts. The converter walks this tree beside the Init
// tree; where both have the same shape (the value is written literally) each
// part gets its exact line and column, elsewhere (a defvar, a template
// argument, a bang operator) the nearest enclosing part's.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

namespace onnx_rewrite::tablegen {

/// A TableGen value as written.
struct TextNode {
  enum class Kind {
    kDag,       ///< `(op:$name arg, ...)`; items are the arguments
    kList,      ///< `[a, b]`; items are the elements
    kClassRef,  ///< `Class<a, b>`; items are the template arguments
    kVariable,  ///< `$name`, a dag argument with no value
    kOther,     ///< anything else: a number, a string, a name, a bang operator...
  };
  Kind kind = Kind::kOther;
  const char* begin = nullptr;  ///< the value's first character
  const char* head = nullptr;   ///< kDag: the operator; kClassRef: the class name; else begin
  std::vector<TextNode> items;
};

/// Parses `name = value` at `text` (where RecordVal::getLoc() points for a `let` or a field
/// declaration) into `out`. `end` bounds the buffer. False if the text has another form.
bool parseFieldValue(const char* text, const char* end, TextNode& out);

/// Parses one value at `text`. False if it is not a value this parser knows.
bool parseValue(const char* text, const char* end, TextNode& out);

/// Parses the first parent class of `def name : Class<a, b> ...` at `text` (where
/// Record::getLoc() points) into `out`, a kClassRef whose items are the template arguments.
/// False if the def is anonymous or has another form.
bool parseDefParent(const char* text, const char* end, TextNode& out);

/// Where a def's name starts, given where its `def` keyword is (Record::getLoc()); `text`
/// itself for an anonymous def or any other text.
const char* defNameStart(const char* text, const char* end);

}  // namespace onnx_rewrite::tablegen
