//===- RuleFileWire.cc - Rule IR and diagnostics as bytes -----------------===//
//
// One `io(stream, value)` overload per IR type serves both directions: the
// Writer appends each scalar in native byte order, the Reader takes it back
// and fails (without reading past the end) on a truncated buffer. Adding a
// field to the IR means adding it to the one overload that carries its struct.
//
//===----------------------------------------------------------------------===//
#include "dsl/tablegen/RuleFileWire.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace onnx_rewrite::tablegen {
namespace {

/// Appends values to a byte string.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  static constexpr bool kReading = false;

  template <typename T>
  std::enable_if_t<std::is_arithmetic_v<T>> scalar(T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void bytes(std::string& s) {
    uint64_t size = s.size();
    scalar(size);
    out_ += s;
  }
  /// Announces a container's size; returns it.
  uint64_t size(uint64_t n) {
    scalar(n);
    return n;
  }
  bool ok() const { return true; }

 private:
  std::string& out_;
};

/// Takes values from the front of a byte string.
class Reader {
 public:
  explicit Reader(std::string_view& in) : in_(in) {}
  static constexpr bool kReading = true;

  template <typename T>
  std::enable_if_t<std::is_arithmetic_v<T>> scalar(T& v) {
    if (!ok_ || in_.size() < sizeof v) {
      ok_ = false;
      v = T{};
      return;
    }
    std::memcpy(&v, in_.data(), sizeof v);
    in_.remove_prefix(sizeof v);
  }
  void bytes(std::string& s) {
    uint64_t size = 0;
    scalar(size);
    if (!ok_ || in_.size() < size) {
      ok_ = false;
      return;
    }
    s.assign(in_.data(), size);
    in_.remove_prefix(size);
  }
  uint64_t size(uint64_t) {
    uint64_t n = 0;
    scalar(n);
    // Every element takes at least one byte: a larger count is a corrupt stream.
    if (n > in_.size()) ok_ = false;
    return ok_ ? n : 0;
  }
  bool ok() const { return ok_; }

 private:
  std::string_view& in_;
  bool ok_ = true;
};

template <typename S, typename T>
std::enable_if_t<std::is_arithmetic_v<T>> io(S& s, T& v) {
  s.scalar(v);
}

template <typename S, typename E>
std::enable_if_t<std::is_enum_v<E>> io(S& s, E& e) {
  int32_t v = static_cast<int32_t>(e);
  s.scalar(v);
  e = static_cast<E>(v);
}

template <typename S>
void io(S& s, std::string& v) {
  s.bytes(v);
}

template <typename S, typename T>
void io(S& s, std::vector<T>& v) {
  uint64_t n = s.size(v.size());
  if constexpr (S::kReading) v.assign(n, T{});
  for (T& item : v) {
    if (!s.ok()) return;
    io(s, item);
  }
}

template <typename S, typename A, typename B>
void io(S& s, std::pair<A, B>& v) {
  io(s, v.first);
  io(s, v.second);
}

template <typename S, typename T>
void io(S& s, std::optional<T>& v) {
  bool present = v.has_value();
  io(s, present);
  if (present && S::kReading) v.emplace();
  if (!present && S::kReading) v.reset();
  if (present && s.ok()) io(s, *v);
}

/// file:line:col without `via`.
template <typename S>
void ioPlace(S& s, ir::SourceLoc& v) {
  io(s, v.file);
  io(s, v.line);
  io(s, v.col);
}

/// A location and the chain of fragment uses it was expanded through (SourceLoc::via),
/// innermost first, as a list: a loop, so a corrupt stream cannot recurse deeply.
template <typename S>
void io(S& s, ir::SourceLoc& v) {
  ioPlace(s, v);
  std::vector<std::pair<std::string, ir::SourceLoc>> uses;
  if constexpr (!S::kReading)
    for (const ir::FragmentUse* u = v.via.get(); u; u = u->at.via.get())
      uses.emplace_back(u->fragment, ir::SourceLoc(u->at.file, u->at.line, u->at.col));
  uint64_t n = s.size(uses.size());
  if constexpr (S::kReading) uses.resize(n);
  for (auto& [fragment, at] : uses) {
    if (!s.ok()) return;
    io(s, fragment);
    ioPlace(s, at);
  }
  if constexpr (S::kReading) {
    if (!s.ok()) return;
    std::shared_ptr<const ir::FragmentUse> outer;
    for (auto u = uses.rbegin(); u != uses.rend(); ++u) {
      ir::FragmentUse use{u->first, u->second};
      use.at.via = outer;
      outer = std::make_shared<const ir::FragmentUse>(std::move(use));
    }
    v.via = outer;
  }
}

template <typename S>
void io(S& s, ir::Literal& v) {
  io(s, v.kind);
  io(s, v.ints);
  io(s, v.floats);
  io(s, v.strings);
}

template <typename S>
void io(S& s, ir::AttrMatch& v) {
  io(s, v.name);
  io(s, v.kind);
  io(s, v.values);
  io(s, v.min);
  io(s, v.max);
  io(s, v.capture);
  io(s, v.default_value);
  io(s, v.older_defaults);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Expr& v) {
  io(s, v.kind);
  io(s, v.name);
  io(s, v.domain);
  io(s, v.op);
  io(s, v.inputs);
  io(s, v.attrs);
  io(s, v.output);
  io(s, v.optional);
  io(s, v.commutative);
  io(s, v.other_outputs);
  io(s, v.rest);
  io(s, v.rest_loc);
  io(s, v.literal);
  io(s, v.tolerance);
  io(s, v.tags);
  io(s, v.group);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Constraint& v) {
  io(s, v.kind);
  io(s, v.subject);
  io(s, v.min);
  io(s, v.max);
  io(s, v.has_min);
  io(s, v.has_max);
  io(s, v.literal);
  io(s, v.tolerance);
  io(s, v.ints);
  io(s, v.strings);
  io(s, v.dims);
  io(s, v.native);
  io(s, v.args);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Pattern& v) {
  io(s, v.exprs);
  io(s, v.root);
  io(s, v.constraints);
}

template <typename S>
void io(S& s, ir::TargetAttr& v) {
  io(s, v.name);
  io(s, v.kind);
  io(s, v.literal);
  io(s, v.ref);
  io(s, v.args);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::TargetExpr& v) {
  io(s, v.kind);
  io(s, v.name);
  io(s, v.domain);
  io(s, v.op);
  io(s, v.inputs);
  io(s, v.attrs);
  io(s, v.num_outputs);
  io(s, v.output);
  io(s, v.literal);
  io(s, v.dims);
  io(s, v.elem_type);
  io(s, v.like);
  io(s, v.helper);
  io(s, v.args);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Target::When& v) {
  io(s, v.domain);
  io(s, v.min_opset);
  io(s, v.max_opset);
  io(s, v.tags);
}

template <typename S>
void io(S& s, ir::Target& v) {
  io(s, v.exprs);
  io(s, v.replacements);
  io(s, v.when);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Applicability& v) {
  io(s, v.domain);
  io(s, v.min_opset);
  io(s, v.max_opset);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Rule& v) {
  io(s, v.name);
  io(s, v.priority);
  io(s, v.tags);
  io(s, v.doc);
  io(s, v.requires);
  io(s, v.pattern);
  io(s, v.targets);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::OpDecl::Param& v) {
  io(s, v.name);
  io(s, v.optional);
  io(s, v.variadic);
}

template <typename S>
void io(S& s, ir::OpDecl::Attr& v) {
  io(s, v.name);
  io(s, v.type);
  io(s, v.required);
  io(s, v.default_value);
}

template <typename S>
void io(S& s, ir::OpDecl& v) {
  io(s, v.domain);
  io(s, v.op);
  io(s, v.since_version);
  io(s, v.inputs);
  io(s, v.outputs);
  io(s, v.attrs);
  io(s, v.commutative);
  io(s, v.doc);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Fragment::Param& v) {
  io(s, v.name);
  io(s, v.attribute);
  io(s, v.default_value);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::Fragment& v) {
  io(s, v.name);
  io(s, v.params);
  io(s, v.results);
  io(s, v.doc);
  io(s, v.is_match);
  io(s, v.match);
  io(s, v.result_exprs);
  io(s, v.rewrite);
  io(s, v.loc);
}

template <typename S>
void io(S& s, ir::RuleFile& v) {
  io(s, v.rules);
  io(s, v.ops);
  io(s, v.fragments);
}

template <typename S>
void io(S& s, Diagnostic& v) {
  io(s, v.severity);
  io(s, v.loc);
  io(s, v.message);
}

}  // namespace

void encodeRuleFile(const ir::RuleFile& file, std::string& out) {
  Writer w(out);
  io(w, const_cast<ir::RuleFile&>(file));  // the Writer only reads
}

bool decodeRuleFile(std::string_view& in, ir::RuleFile& file) {
  Reader r(in);
  io(r, file);
  return r.ok();
}

void encodeDiagnostic(const Diagnostic& d, std::string& out) {
  Writer w(out);
  io(w, const_cast<Diagnostic&>(d));  // the Writer only reads
}

bool decodeDiagnostic(std::string_view& in, Diagnostic& d) {
  Reader r(in);
  io(r, d);
  return r.ok();
}

}  // namespace onnx_rewrite::tablegen
