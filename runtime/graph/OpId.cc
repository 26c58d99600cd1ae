//===- OpId.cc - interned (domain, op_type) keys -------------------------===//
#include "runtime/graph/OpId.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace onnx_rewrite {
namespace {

struct Entry {
  std::string domain;
  std::string op_type;
};

/// The table grows only; entries live in a deque so references stay valid while
/// other threads intern new pairs.
struct Table {
  std::mutex mutex;
  std::deque<Entry> entries;
  std::unordered_map<std::string, uint32_t> index;  // key: domain + '\0' + op_type
};

Table& table() {
  static Table instance;
  return instance;
}

}  // namespace

std::string_view canonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

OpId OpId::get(std::string_view domain, std::string_view op_type) {
  domain = canonicalDomain(domain);
  std::string key;
  key.reserve(domain.size() + 1 + op_type.size());
  key.append(domain).push_back('\0');
  key.append(op_type);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto [it, inserted] = t.index.emplace(std::move(key), static_cast<uint32_t>(t.entries.size()));
  if (inserted) t.entries.push_back(Entry{std::string(domain), std::string(op_type)});
  return OpId(it->second);
}

const std::string& OpId::domain() const {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.entries.at(index_).domain;
}

const std::string& OpId::opType() const {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.entries.at(index_).op_type;
}

std::string OpId::str() const {
  if (!valid()) return "<invalid op>";
  const std::string& d = domain();
  return d.empty() ? opType() : d + "::" + opType();
}

uint32_t OpId::count() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return static_cast<uint32_t>(t.entries.size());
}

}  // namespace onnx_rewrite
