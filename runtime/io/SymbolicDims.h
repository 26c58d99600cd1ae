//===- SymbolicDims.h - dims and small integer values, possibly symbolic -===//
//
// The vocabulary of the symbolic shape pass (SymbolicShapes.h): a dim, or one element
// of a folded shape tensor, is an int, a symbol (a dim_param the model names: the same
// name is the same number wherever it appears), or unknown. Two unknowns are never
// equal; a symbol equals only itself. What a value is known to be is its Facts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::symbolic {

/// Folded integer tensors larger than this are not tracked: shape computations are
/// small, and the pass must stay linear in the graph.
inline constexpr int64_t kMaxFoldedElements = 64;

/// A symbol may carry an int offset (S + 1: a past length plus the new tokens), so that
/// Range(S, S + 1) has a known length; only offset-free symbols are ever written as dims.
struct Sym {
  enum class Kind : uint8_t { kUnknown, kInt, kSymbol };
  Kind kind = Kind::kUnknown;
  int64_t value = 0;  ///< the int, or a symbol's offset
  std::string name;

  static Sym unknown() { return {}; }
  static Sym of(int64_t v) {
    Sym s;
    s.kind = Kind::kInt;
    s.value = v;
    return s;
  }
  static Sym symbol(std::string n, int64_t offset = 0) {
    Sym s;
    s.kind = Kind::kSymbol;
    s.name = std::move(n);
    s.value = offset;
    return s;
  }
  bool known() const { return kind != Kind::kUnknown; }
  bool isInt() const { return kind == Kind::kInt; }
  bool isInt(int64_t v) const { return isInt() && value == v; }
  bool isSymbol() const { return kind == Kind::kSymbol; }
  /// A symbol with no offset: a dim the model names.
  bool isDimSymbol() const { return isSymbol() && value == 0; }
  /// Provably the same number: equal ints, or the same symbol with the same offset.
  bool same(const Sym& o) const {
    if (kind != o.kind || kind == Kind::kUnknown) return false;
    return value == o.value && name == o.name;
  }
};

using Dims = std::vector<Sym>;

/// What the pass knows of one value.
struct Facts {
  int32_t elem = 0;           ///< ONNX element type, 0 unknown
  std::optional<Dims> shape;  ///< nullopt: rank unknown
  std::optional<Dims> value;  ///< elements (row-major) of a small integer tensor
};

/// A dim of an ONNX shape: unknown for no value and no name, or a name ONNX made up (unk__).
Sym symOfDim(const onnx::TensorShapeProto::Dimension& dim);
/// What a TypeProto says (element type and dims); nothing for non-tensors.
Facts factsOfType(const onnx::TypeProto& type);
/// The element count of `dims` when every dim is an int, at most `limit`; else nullopt.
std::optional<int64_t> staticCount(const Dims& dims, int64_t limit = kMaxFoldedElements);
/// Numpy broadcasting of two shapes; nullopt when two ints other than 1 differ.
std::optional<Dims> broadcastShapes(const Dims& a, const Dims& b);
/// `axis` (negative from the end) as an index into `rank` dims, or nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// True for int32 and int64, the element types of shape tensors.
bool isShapeElem(int32_t elem);
/// The elements of an int32/int64 tensor of at most kMaxFoldedElements stored in the model
/// (never external data); nullopt for others and for payloads that do not match the header.
std::optional<Dims> smallIntTensor(const onnx::TensorProto& t);

}  // namespace onnx_rewrite::symbolic
