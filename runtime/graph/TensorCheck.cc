//===- TensorCheck.cc - is a TensorProto what it says it is? -------------===//
#include "runtime/graph/TensorCheck.h"

#include <limits>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/graph/TensorData.h"

namespace onnx_rewrite {
namespace {

using onnx::TensorProto;

// Element types newer than ONNX 1.12's enum, by number: a model may use them, and their
// raw sizes are fixed all the same.
constexpr int32_t kFloat8First = 17;  // FLOAT8E4M3FN .. FLOAT8E5M2FNUZ
constexpr int32_t kFloat8Last = 20;
constexpr int32_t kUint4 = 21;
constexpr int32_t kInt4 = 22;

std::string shapeText(const TensorProto& t) {
  std::string s = "[";
  for (int i = 0; i < t.dims_size(); ++i) s += (i ? ", " : "") + std::to_string(t.dims(i));
  return s + "]";
}

/// How many values the typed field that holds `data_type`'s payload has, or nullopt when
/// the type has no typed field this build knows.
std::optional<int64_t> typedValues(const TensorProto& t) {
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      return t.float_data_size();
    case TensorProto::COMPLEX64:
      return t.float_data_size() / 2;
    case TensorProto::DOUBLE:
      return t.double_data_size();
    case TensorProto::COMPLEX128:
      return t.double_data_size() / 2;
    case TensorProto::INT64:
      return t.int64_data_size();
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return t.uint64_data_size();
    case TensorProto::STRING:
      return t.string_data_size();
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return t.int32_data_size();
    default:
      if (t.data_type() >= kFloat8First && t.data_type() <= kFloat8Last) return t.int32_data_size();
      return std::nullopt;
  }
}

/// The typed values a complex tensor holds must pair up.
bool unpairedComplex(const TensorProto& t) {
  return (t.data_type() == TensorProto::COMPLEX64 && t.float_data_size() % 2 != 0) ||
         (t.data_type() == TensorProto::COMPLEX128 && t.double_data_size() % 2 != 0);
}

void checkExternalEntries(const TensorProto& t, const TensorDescription& what,
                          std::optional<int64_t> needed) {
  auto fail = [&](const std::string& problem) { throw ModelError(what() + ": " + problem); };
  if (t.data_type() == TensorProto::STRING)
    fail("a string tensor cannot be stored as external data");
  const ExternalRef ref = externalRef(t);  // throws on malformed numbers, naming the tensor
  if (ref.location.empty()) fail("is marked external but names no location");
  if (!needed) return;
  if (ref.length >= 0 && ref.length != *needed)
    fail("external_data length " + std::to_string(ref.length) + " but its shape " + shapeText(t) +
         " needs " + std::to_string(*needed) + " bytes");
  if (ref.offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() - *needed))
    fail("external_data offset " + std::to_string(ref.offset) + " plus its " +
         std::to_string(*needed) + " bytes is beyond 2^63 - 1");
}

}  // namespace

size_t rawElementBytes(int32_t data_type) {
  if (data_type >= kFloat8First && data_type <= kFloat8Last) return 1;
  return elementSize(data_type);
}

std::optional<int64_t> checkedElementCount(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t count = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    zero = zero || d == 0;
  }
  if (zero) return 0;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(count, d, &count)) return std::nullopt;
  return count;
}

std::optional<int64_t> payloadBytes(int32_t data_type, int64_t count) {
  if (data_type == kUint4 || data_type == kInt4) return count / 2 + count % 2;
  const size_t element = rawElementBytes(data_type);
  if (element == 0) return std::nullopt;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(element), &bytes)) return std::nullopt;
  return bytes;
}

void checkTensor(const TensorProto& t, const TensorDescription& what) {
  auto fail = [&](const std::string& problem) { throw ModelError(what() + ": " + problem); };
  if (!TensorProto::DataType_IsValid(t.data_type()) && t.data_type() > kInt4)
    fail("has an unknown element type " + std::to_string(t.data_type()));
  if (t.data_type() == TensorProto::UNDEFINED) fail("has no element type");
  for (int i = 0; i < t.dims_size(); ++i)
    if (t.dims(i) < 0) fail("has a negative dim " + std::to_string(t.dims(i)) + " in its shape");
  const std::optional<int64_t> count = checkedElementCount(t.dims());
  if (!count) fail("its shape " + shapeText(t) + " has more than 2^63 - 1 elements");
  const bool fixed = t.data_type() != TensorProto::STRING;
  const std::optional<int64_t> needed = payloadBytes(t.data_type(), *count);
  if (fixed && !needed && rawElementBytes(t.data_type()) != 0)
    fail("its shape " + shapeText(t) + " needs more than 2^63 - 1 bytes");
  if (t.data_location() == TensorProto::EXTERNAL) {
    checkExternalEntries(t, what, needed);
    return;
  }
  if (t.has_raw_data()) {
    if (!fixed) fail("a string tensor cannot hold raw_data");
    if (needed && static_cast<int64_t>(t.raw_data().size()) != *needed)
      fail("raw_data holds " + std::to_string(t.raw_data().size()) + " bytes but its shape " +
           shapeText(t) + " needs " + std::to_string(*needed));
    return;
  }
  const std::optional<int64_t> values = typedValues(t);
  if (!values) return;  // a type this build has no typed field for: nothing ONNX reads
  if (unpairedComplex(t)) fail("holds an odd number of values for a complex tensor");
  if (*values != *count)
    fail("holds " + std::to_string(*values) + " values but its shape " + shapeText(t) + " needs " +
         std::to_string(*count));
}

}  // namespace onnx_rewrite
