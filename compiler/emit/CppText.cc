//===- CppText.cc - C++ text pieces and layout for the C++ emitter --------===//
#include "compiler/emit/CppText.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace onnx_rewrite::cpp {

const char* const kRuleLine =
    "//===----------------------------------------------------------------------===//\n";

std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string num(double v) {
  // A range bound may be infinite (`scalar: [-inf, -1e4]`); C++ has no literal for it.
  if (std::isinf(v)) return v < 0 ? "-gen::kInfinity" : "gen::kInfinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Prefer the shortest form that reads back exactly (1e-05, not 1.0000000000000001e-05).
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string joinStrings(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string banner(const std::string& text) {
  std::string line = "//===- " + text + " ";
  while (line.size() < 74) line += '-';
  return line + "===//\n";
}

namespace {

std::string bracketed(size_t indent, const std::string& head, const std::vector<std::string>& args,
                      const std::string& tail, const char* open, const char* close) {
  const std::string flat = head + open + joinStrings(args) + close + tail;
  if (indent + flat.size() <= kColumns || args.empty()) return flat;
  const std::string pad(indent + 4, ' ');
  std::string out = head + open + "\n";
  for (size_t i = 0; i < args.size(); ++i)
    out += pad + args[i] + (i + 1 < args.size() ? ",\n" : close + tail);
  return out;
}

}  // namespace

std::string call(size_t indent, const std::string& head, const std::vector<std::string>& args,
                 const std::string& tail) {
  return bracketed(indent, head, args, tail, "(", ")");
}

std::string braced(size_t indent, const std::string& head, const std::vector<std::string>& args,
                   const std::string& tail) {
  return bracketed(indent, head, args, tail, "{", "}");
}

Init Init::atom(std::string text) {
  Init i;
  i.text = std::move(text);
  return i;
}

Init Init::list(std::vector<Init> items) {
  Init i;
  i.is_list = true;
  i.items = std::move(items);
  return i;
}

Init& Init::note(std::string text) {
  before = std::move(text);
  return *this;
}

Init& Init::trailing(std::string text) {
  after = std::move(text);
  return *this;
}

namespace {

/// The one-line form, or "" when a comment forbids it.
std::string flat(const Init& init) {
  if (!init.is_list) return init.text;
  std::string out = "{";
  for (size_t i = 0; i < init.items.size(); ++i) {
    const Init& item = init.items[i];
    if (!item.before.empty() || !item.after.empty()) return "";
    const std::string text = flat(item);
    if (text.empty()) return "";
    out += (i ? ", " : "") + text;
  }
  return out + "}";
}

/// The column after the last line of `text`, which starts at column `start`.
size_t endColumn(const std::string& text, size_t start) {
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? start + text.size() : text.size() - nl - 1;
}

/// A list without comments, as clang-format bin-packs braced lists: elements fill lines
/// aligned one column right of the `{` at `column`; an element that does not fit on a line
/// of its own is itself packed, and the next element starts a new line.
std::string packed(const Init& init, size_t column, size_t reserve) {
  const size_t first = column + 1;
  const std::string pad(first, ' ');
  std::string out = "{";
  size_t at = first;
  bool fresh = true;  // nothing on the current line yet
  for (size_t i = 0; i < init.items.size(); ++i) {
    const Init& item = init.items[i];
    const bool last = i + 1 == init.items.size();
    const std::string suffix = last ? "}" : ",";
    const size_t keep = suffix.size() + (last ? reserve : 0);
    const std::string text = flat(item);
    const size_t space = fresh ? 0 : 1;
    if (!text.empty() && at + space + text.size() + keep <= kColumns) {
      out += (fresh ? "" : " ") + text + suffix;
      at += space + text.size() + suffix.size();
      fresh = false;
      continue;
    }
    if (!fresh) {
      out += "\n" + pad;
      at = first;
    }
    const std::string part = !text.empty() && at + text.size() + keep <= kColumns
                                 ? text
                                 : (item.is_list ? packed(item, at, keep) : item.text);
    out += part + suffix;
    at = endColumn(part, at) + suffix.size();
    fresh = false;
    if (part.find('\n') != std::string::npos && !last) {
      out += "\n" + pad;
      at = first;
      fresh = true;
    }
  }
  return init.items.empty() ? "{}" : out;
}

}  // namespace

std::string layout(const Init& init, size_t indent, size_t reserve) {
  const std::string one_line = flat(init);
  if (!one_line.empty() && (indent + one_line.size() + reserve <= kColumns || !init.is_list))
    return one_line;
  if (!one_line.empty()) return packed(init, indent, reserve);
  // Comments: one element per line, each after its note.
  const std::string pad(indent + 2, ' ');
  std::string out = "{\n";
  for (const Init& item : init.items) {
    if (!item.before.empty()) out += pad + "// " + item.before + "\n";
    out += pad + layout(item, indent + 2, 1) + ",";
    if (!item.after.empty()) out += "  // " + item.after;
    out += "\n";
  }
  return out + std::string(indent, ' ') + "}";
}

}  // namespace onnx_rewrite::cpp
