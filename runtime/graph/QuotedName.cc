//===- QuotedName.cc - names from a model, safe to print in one line -----===//
#include "runtime/graph/QuotedName.h"

#include <cstdio>

namespace onnx_rewrite {
namespace {

/// A name longer than this is cut: a message must stay readable.
constexpr size_t kMaxQuotedBytes = 200;

void appendEscaped(std::string& out, char c, bool escape_quote) {
  const auto u = static_cast<unsigned char>(c);
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\\':
      out += escape_quote ? "\\\\" : "\\";
      return;
    case '\'':
      out += escape_quote ? "\\'" : "'";
      return;
    default:
      break;
  }
  if (u < 0x20 || u == 0x7f) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", u);
    out += hex;
    return;
  }
  out += c;
}

}  // namespace

std::string quoted(std::string_view name) {
  std::string out = "'";
  const size_t shown = name.size() > kMaxQuotedBytes ? kMaxQuotedBytes : name.size();
  for (size_t i = 0; i < shown; ++i) appendEscaped(out, name[i], /*escape_quote=*/true);
  if (shown < name.size()) out += "...";
  out += "'";
  return out;
}

std::string oneLine(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) appendEscaped(out, c, /*escape_quote=*/false);
  return out;
}

}  // namespace onnx_rewrite
