//===- TensorData.cc - reading one tensor's bytes on demand --------------===//
#include "runtime/graph/TensorData.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/graph/TensorCheck.h"
#include "runtime/io/RegularFile.h"

namespace onnx_rewrite {
namespace {

using onnx::TensorProto;

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T, typename Field>
void appendTyped(std::string& out, const Field& field) {
  out.reserve(field.size() * sizeof(T));
  for (auto v : field) {
    T narrowed = static_cast<T>(v);
    out.append(reinterpret_cast<const char*>(&narrowed), sizeof(T));
  }
}

}  // namespace

int64_t TensorBytes::elementCount() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

size_t elementSize(int32_t data_type) {
  switch (data_type) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return 2;
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return 1;
    default:
      return 0;
  }
}

bool isExternal(const TensorProto& tensor) {
  return tensor.data_location() == TensorProto::EXTERNAL;
}

ExternalRef externalRef(const TensorProto& tensor) {
  ExternalRef ref;
  auto number = [&](const onnx::StringStringEntryProto& e) -> uint64_t {
    // stoull would accept "-16" (as 2^64 - 16) and leading blanks: insist on digits. A
    // value past INT64_MAX would wrap negative where ONNX reads it as int64.
    const std::string& v = e.value();
    bool digits =
        !v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw ModelError("tensor " + quoted(tensor.name()) + " has a malformed external_data " +
                       e.key() + " " + quoted(v));
    const uint64_t n = std::stoull(v);
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw ModelError("tensor " + quoted(tensor.name()) + " has an external_data " + e.key() +
                       " " + v + " beyond 2^63 - 1");
    return n;
  };
  for (const onnx::StringStringEntryProto& e : tensor.external_data()) {
    if (e.key() == "location") ref.location = e.value();
    if (e.key() == "offset") ref.offset = number(e);
    if (e.key() == "length") ref.length = static_cast<int64_t>(number(e));
  }
  return ref;
}

std::string joinPath(const std::string& dir, const std::string& rel) {
  return dir.empty() ? rel : dir + "/" + rel;
}

ExternalFiles::ExternalFiles() = default;
ExternalFiles::~ExternalFiles() = default;

const RegularFile* ExternalFiles::find(const std::string& path) {
  auto it = open_.find(path);
  return it == open_.end() ? nullptr : it->second.get();
}

void ExternalFiles::keep(const std::string& path, std::unique_ptr<RegularFile> file) {
  if (open_.size() < kMaxOpen) open_.emplace(path, std::move(file));
}

TensorBytes readTensor(const TensorProto& tensor, const std::string& base_dir, uint64_t max_bytes,
                       uint64_t* external_bytes_read, ExternalFiles* files) {
  TensorBytes out;
  out.data_type = tensor.data_type();
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  const auto name = [&] { return quoted(tensor.name()); };  // only for an error
  if (elementSize(out.data_type) == 0)
    throw ModelError("tensor " + name() + " has an element type without a fixed size");
  // Import checked every tensor (TensorCheck.h); a rule's own tensors are checked here.
  checkTensor(tensor, [&] { return "tensor " + name(); });
  const uint64_t expected =
      static_cast<uint64_t>(*payloadBytes(out.data_type, *checkedElementCount(tensor.dims())));
  if (expected > max_bytes)
    throw ModelError("tensor " + name() + " has " + std::to_string(expected) +
                     " bytes, more than the " + std::to_string(max_bytes) + " allowed");
  if (isExternal(tensor)) {
    ExternalRef ref = externalRef(tensor);
    const std::string path = joinPath(base_dir, ref.location);
    std::unique_ptr<RegularFile> opened;
    const RegularFile* file = files ? files->find(path) : nullptr;
    if (!file) {
      opened = std::make_unique<RegularFile>(path);
      if (opened->fd() < 0)
        throw ModelError("cannot open external data file " + quoted(path) + ": " + opened->error());
      file = opened.get();
    }
    out.bytes.resize(expected);
    size_t done = 0;
    while (done < expected) {
      const ssize_t n = ::pread(file->fd(), out.bytes.data() + done, expected - done,
                                static_cast<off_t>(ref.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (done != expected)
      throw ModelError("external data file " + quoted(path) + " is too short for tensor " + name());
    if (external_bytes_read) *external_bytes_read += expected;
    if (opened && files) files->keep(path, std::move(opened));
  } else if (tensor.has_raw_data()) {
    out.bytes = tensor.raw_data();
  } else {
    switch (out.data_type) {
      case TensorProto::FLOAT:
        appendTyped<float>(out.bytes, tensor.float_data());
        break;
      case TensorProto::DOUBLE:
        appendTyped<double>(out.bytes, tensor.double_data());
        break;
      case TensorProto::INT64:
        appendTyped<int64_t>(out.bytes, tensor.int64_data());
        break;
      case TensorProto::UINT32:
        appendTyped<uint32_t>(out.bytes, tensor.uint64_data());
        break;
      case TensorProto::UINT64:
        appendTyped<uint64_t>(out.bytes, tensor.uint64_data());
        break;
      case TensorProto::INT32:
        appendTyped<int32_t>(out.bytes, tensor.int32_data());
        break;
      case TensorProto::INT16:
        appendTyped<int16_t>(out.bytes, tensor.int32_data());
        break;
      case TensorProto::UINT16:
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16:
        appendTyped<uint16_t>(out.bytes, tensor.int32_data());
        break;
      case TensorProto::INT8:
        appendTyped<int8_t>(out.bytes, tensor.int32_data());
        break;
      case TensorProto::UINT8:
      case TensorProto::BOOL:
        appendTyped<uint8_t>(out.bytes, tensor.int32_data());
        break;
      default:
        throw ModelError("tensor " + name() + " has an unsupported element type");
    }
  }
  if (out.bytes.size() != expected)
    throw ModelError("tensor " + name() + " holds " + std::to_string(out.bytes.size()) +
                     " bytes but its shape needs " + std::to_string(expected));
  return out;
}

double elementAsDouble(const TensorBytes& t, int64_t i) {
  const char* p = t.bytes.data() + i * static_cast<int64_t>(elementSize(t.data_type));
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.data_type) {
    case TensorProto::FLOAT:
      return load(float{});
    case TensorProto::DOUBLE:
      return load(double{});
    case TensorProto::INT64:
      return static_cast<double>(load(int64_t{}));
    case TensorProto::UINT64:
      return static_cast<double>(load(uint64_t{}));
    case TensorProto::INT32:
      return load(int32_t{});
    case TensorProto::UINT32:
      return load(uint32_t{});
    case TensorProto::INT16:
      return load(int16_t{});
    case TensorProto::UINT16:
      return load(uint16_t{});
    case TensorProto::INT8:
      return load(int8_t{});
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return load(uint8_t{});
    case TensorProto::FLOAT16:
      return halfToFloat(load(uint16_t{}));
    case TensorProto::BFLOAT16: {
      uint32_t bits = static_cast<uint32_t>(load(uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    default:
      throw ModelError("tensor element type " + std::to_string(t.data_type) + " is not numeric");
  }
}

}  // namespace onnx_rewrite
