//===- TensorContent.cc - what a tensor holds, hashed and compared -------===//
#include "runtime/graph/TensorContent.h"

#include <functional>
#include <string_view>
#include <type_traits>

namespace onnx_rewrite {
namespace {

/// A tensor holding only what rules write: element type, dims and a payload in raw_data or
/// one typed field. Anything else (external data, strings, segments) is compared through
/// its serialized form.
bool plainTensor(const onnx::TensorProto& t) {
  return t.external_data_size() == 0 && t.string_data_size() == 0 && !t.has_segment() &&
         t.data_location() == onnx::TensorProto::DEFAULT && t.doc_string().empty() &&
         t.unknown_fields().empty();
}

template <typename Field>
std::string_view bytesOf(const Field& f) {
  using Element = std::remove_cv_t<std::remove_reference_t<decltype(*f.data())>>;
  return {reinterpret_cast<const char*>(f.data()), f.size() * sizeof(Element)};
}

void mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

}  // namespace

size_t tensorContentHash(const onnx::TensorProto& t) {
  // Hashes the payload where it lies: serializing a packed QKV weight (megabytes) to hash
  // it cost more than building it.
  size_t h = std::hash<int>{}(t.data_type());
  for (int64_t d : t.dims()) mix(h, std::hash<int64_t>{}(d));
  const std::hash<std::string_view> bytes;
  mix(h, bytes(t.raw_data()));
  if (t.float_data_size()) mix(h, bytes(bytesOf(t.float_data())));
  if (t.int32_data_size()) mix(h, bytes(bytesOf(t.int32_data())));
  if (t.int64_data_size()) mix(h, bytes(bytesOf(t.int64_data())));
  if (t.double_data_size()) mix(h, bytes(bytesOf(t.double_data())));
  if (t.uint64_data_size()) mix(h, bytes(bytesOf(t.uint64_data())));
  return h;
}

bool sameTensorContent(const onnx::TensorProto& a, const onnx::TensorProto& b) {
  if (!plainTensor(a) || !plainTensor(b)) {
    onnx::TensorProto x = a, y = b;
    x.clear_name();
    y.clear_name();
    return x.SerializeAsString() == y.SerializeAsString();
  }
  // Bitwise, as serialization compared them: -0.0 is not 0.0, a NaN is itself.
  auto same = [](const auto& f, const auto& g) { return bytesOf(f) == bytesOf(g); };
  return a.data_type() == b.data_type() && same(a.dims(), b.dims()) &&
         a.raw_data() == b.raw_data() && same(a.float_data(), b.float_data()) &&
         same(a.int32_data(), b.int32_data()) && same(a.int64_data(), b.int64_data()) &&
         same(a.double_data(), b.double_data()) && same(a.uint64_data(), b.uint64_data());
}

}  // namespace onnx_rewrite
