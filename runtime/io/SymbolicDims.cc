//===- SymbolicDims.cc - dims and small integer values, possibly symbolic -===//
#include "runtime/io/SymbolicDims.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "runtime/graph/TensorData.h"
#include "runtime/io/ShapeInference.h"

namespace onnx_rewrite::symbolic {

bool Sym::isNonNegative() const {
  if (isInt()) return value >= 0;
  if (!isSymbol() || value < 0) return false;
  for (const auto& t : terms)
    if (t.second <= 0) return false;
  return true;
}

bool provablyAtMost(const Sym& v, int64_t max, const UpperBounds& bounds) {
  if (v.isInt()) return v.value <= max;
  for (const UpperBound& b : bounds) {
    const Sym offset = addSyms(v, b.value, -1);
    int64_t most = 0;
    if (offset.isInt() && !__builtin_add_overflow(b.max, offset.value, &most) && most <= max)
      return true;
  }
  return false;
}

Sym addSyms(const Sym& a, const Sym& b, int64_t sign) {
  if (!a.known() || !b.known() || (sign != 1 && sign != -1)) return Sym::unknown();
  Sym r;
  int64_t scaled = 0;
  if (__builtin_mul_overflow(b.value, sign, &scaled) ||
      __builtin_add_overflow(a.value, scaled, &r.value))
    return Sym::unknown();
  // Merge the sorted terms.
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    const bool take_a =
        j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first);
    const bool take_b =
        i == a.terms.size() || (j < b.terms.size() && b.terms[j].first < a.terms[i].first);
    if (take_a) {
      r.terms.push_back(a.terms[i++]);
    } else if (take_b) {
      r.terms.emplace_back(b.terms[j].first, b.terms[j].second * sign);
      ++j;
    } else {
      int64_t c = 0;
      if (__builtin_mul_overflow(b.terms[j].second, sign, &c) ||
          __builtin_add_overflow(a.terms[i].second, c, &c))
        return Sym::unknown();
      if (c != 0) r.terms.emplace_back(a.terms[i].first, c);
      ++i;
      ++j;
    }
  }
  r.kind = r.terms.empty() ? Sym::Kind::kInt : Sym::Kind::kSymbol;
  return r;
}

Sym symOfDim(const onnx::TensorShapeProto::Dimension& dim, bool declared) {
  if (dim.has_dim_value()) return dim.dim_value() >= 0 ? Sym::of(dim.dim_value()) : Sym::unknown();
  if (declared ? dim.dim_param().empty() : isUnknownDim(dim)) return Sym::unknown();
  return Sym::symbol(dim.dim_param());
}

Facts factsOfType(const onnx::TypeProto& type, bool declared) {
  Facts f;
  if (!type.has_tensor_type()) return f;
  f.elem = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return f;
  Dims dims;
  for (const auto& d : type.tensor_type().shape().dim()) dims.push_back(symOfDim(d, declared));
  f.shape = std::move(dims);
  return f;
}

std::optional<int64_t> staticCount(const Dims& dims, int64_t limit) {
  int64_t count = 1;
  for (const Sym& d : dims) {
    if (!d.isInt() || d.value < 0) return std::nullopt;
    if (d.value == 0) return 0;
  }
  for (const Sym& d : dims) {
    if (count > limit / d.value) return std::nullopt;
    count *= d.value;
  }
  return count <= limit ? std::optional<int64_t>(count) : std::nullopt;
}

std::optional<Dims> broadcastShapes(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Missing leading dims broadcast like 1.
    const Sym x = i + a.size() >= rank ? a[i + a.size() - rank] : Sym::of(1);
    const Sym y = i + b.size() >= rank ? b[i + b.size() - rank] : Sym::of(1);
    Sym& o = out[i];
    if (x.isInt(1)) {
      o = y;
    } else if (y.isInt(1)) {
      o = x;
    } else if (x.same(y)) {
      o = x;
    } else if (x.isInt() && y.isInt()) {
      return std::nullopt;  // 3 against 4: the model cannot run, claim nothing
    } else if (x.isInt() && x.value > 1) {
      o = x;  // the other side is 1 or x in any run of a valid model
    } else if (y.isInt() && y.value > 1) {
      o = y;
    } else {
      o = Sym::unknown();  // two symbols, or a symbol and an unknown: either may be 1
    }
  }
  return out;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool isShapeElem(int32_t elem) {
  return elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32;
}

std::optional<Dims> smallIntTensor(const onnx::TensorProto& t) {
  if (!isShapeElem(t.data_type()) || isExternal(t)) return std::nullopt;
  Dims dims;
  for (int64_t d : t.dims()) dims.push_back(Sym::of(d));
  const std::optional<int64_t> count = staticCount(dims);
  if (!count) return std::nullopt;
  const size_t size = t.data_type() == onnx::TensorProto::INT64 ? 8 : 4;
  try {
    // readTensor validates the payload's size against the header.
    const TensorBytes bytes = readTensor(t, "", static_cast<uint64_t>(*count) * size);
    Dims values;
    for (int64_t i = 0; i < *count; ++i) {
      const char* p = bytes.bytes.data() + i * static_cast<int64_t>(size);
      int64_t v = 0;
      if (size == 8) {
        std::memcpy(&v, p, 8);
      } else {
        int32_t v32 = 0;
        std::memcpy(&v32, p, 4);
        v = v32;
      }
      values.push_back(Sym::of(v));
    }
    return values;
  } catch (const std::exception&) {
    return std::nullopt;  // malformed: give up on this value
  }
}

}  // namespace onnx_rewrite::symbolic
