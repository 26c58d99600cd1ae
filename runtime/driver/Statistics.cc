//===- Statistics.cc - what the driver did, per rule ---------------------===//
#include "runtime/driver/Statistics.h"

#include <cstdio>

namespace onnx_rewrite {

std::string jsonQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

std::string DriverStats::toJson() const {
  std::string out = "{\n";
  out += "  \"converged\": " + std::string(converged ? "true" : "false") + ",\n";
  out += "  \"iterations\": " + std::to_string(iterations) + ",\n";
  out += "  \"rewrites\": " + std::to_string(rewrites) + ",\n";
  out += "  \"cap_hit\": " + jsonQuote(cap_hit) + ",\n";
  out += "  \"nodes_before\": " + std::to_string(nodes_before) + ",\n";
  out += "  \"nodes_after\": " + std::to_string(nodes_after) + ",\n";
  out += "  \"seconds\": " + number(seconds) + ",\n";
  out += "  \"rules\": [";
  for (size_t i = 0; i < rules.size(); ++i) {
    const RuleStats& r = rules[i];
    out += i ? ",\n    " : "\n    ";
    out +=
        "{\"name\": " + jsonQuote(r.name) + ", \"priority\": " + std::to_string(r.priority) +
        ", \"tried\": " + std::to_string(r.tried) + ", \"matched\": " + std::to_string(r.matched) +
        ", \"applied\": " + std::to_string(r.applied) +
        ", \"unsound\": " + std::to_string(r.unsound) + ", \"seconds\": " + number(r.seconds) + "}";
  }
  out += rules.empty() ? "]\n}" : "\n  ]\n}";
  return out;
}

}  // namespace onnx_rewrite
