//===- CppText.h - C++ text pieces and layout for the C++ emitter ---------===//
//
// rulec lays out the code it generates itself, deterministically, instead of
// passing it through clang-format: the committed generated/ must not depend on
// which clang-format version a machine has. These helpers write literals that
// read back exactly, and break calls and brace lists that do not fit in
// kColumns the way the hand-written code is formatted (one argument or element
// per line, indented two more than the line that opens them).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx_rewrite::cpp {

/// Lines longer than this are broken where the layout can break them.
inline constexpr size_t kColumns = 100;

/// A C++ string literal.
std::string str(const std::string& s);
/// A C++ double literal that reads back exactly (shortest such form).
std::string num(double v);
std::string joinStrings(const std::vector<std::string>& items, const char* separator = ", ");
/// The TableGen-style banner line: `//===- text ---...---===//`, 80 columns.
std::string banner(const std::string& text);
/// The rule line between sections.
extern const char* const kRuleLine;

/// `head(args...)` + `tail` at indent `indent` (the first line's indent is the caller's):
/// on one line when it fits, else one argument per line.
std::string call(size_t indent, const std::string& head, const std::vector<std::string>& args,
                 const std::string& tail = "");
/// The same with braces: `head{args...}` + `tail`.
std::string braced(size_t indent, const std::string& head, const std::vector<std::string>& args,
                   const std::string& tail = "");

/// A brace-initializer tree, printed flat when it fits and one element per line otherwise.
struct Init {
  /// An atom: the text itself.
  static Init atom(std::string text);
  /// A braced list `{a, b}`; an empty one prints `{}`.
  static Init list(std::vector<Init> items);

  /// A comment line before this element, when its list is printed one per line (which a
  /// comment forces).
  Init& note(std::string text);
  /// A comment after this element's comma, likewise.
  Init& trailing(std::string text);

  std::string text;
  bool is_list = false;
  std::vector<Init> items;
  std::string before;
  std::string after;
};

/// `init` laid out with its first line starting at column `indent` (continuation lines
/// indented from `indent`) and `reserve` columns kept free after it (say, for ";").
std::string layout(const Init& init, size_t indent, size_t reserve = 0);

}  // namespace onnx_rewrite::cpp
