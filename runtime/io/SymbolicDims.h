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

/// A symbolic element is a linear form over the model's symbols, c1*S1 + c2*S2 + ... + k
/// (a past length plus the new tokens: P + S), so that Range(P, P + S) has S elements;
/// a lone symbol (1*S + 0) is written as the dim it names, any other form as the unsized
/// name unk__(P + S) (SymbolicShapes).
struct Sym {
  enum class Kind : uint8_t { kUnknown, kInt, kSymbol };
  using Terms = std::vector<std::pair<std::string, int64_t>>;  ///< sorted, coefficients != 0
  Kind kind = Kind::kUnknown;
  int64_t value = 0;  ///< the int, or a linear form's constant term
  Terms terms;        ///< a linear form's symbols and coefficients

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
    s.terms.emplace_back(std::move(n), 1);
    s.value = offset;
    return s;
  }
  bool known() const { return kind != Kind::kUnknown; }
  bool isInt() const { return kind == Kind::kInt; }
  bool isInt(int64_t v) const { return isInt() && value == v; }
  bool isSymbol() const { return kind == Kind::kSymbol; }
  /// A lone symbol: a dim the model names.
  bool isDimSymbol() const {
    return isSymbol() && value == 0 && terms.size() == 1 && terms[0].second == 1;
  }
  /// A sum of symbols with positive coefficients plus a non-negative int: never negative.
  bool isNonNegative() const;
  /// The name of a lone symbol.
  const std::string& name() const { return terms[0].first; }
  /// Provably the same number: equal ints, or the same linear form.
  bool same(const Sym& o) const {
    if (kind != o.kind || kind == Kind::kUnknown) return false;
    return value == o.value && terms == o.terms;
  }
};

/// a + sign * b over ints and linear forms (an int when the symbols cancel); unknown when
/// either is unknown or a coefficient overflows.
Sym addSyms(const Sym& a, const Sym& b, int64_t sign);

using Dims = std::vector<Sym>;

/// What the pass knows of one value.
/// The elements of an integer tensor are exactly the ints start, start + 1, ..., limit - 1,
/// in some order and shape: a Range with step 1, reshaped or cast. Kept however long it is,
/// since what it proves (UpperBound) does not depend on the elements being listed.
struct IntSpan {
  Sym start, limit;
};

/// `value` <= `max` in every run of the model that succeeds. Gather fails on an index out
/// of range, so Gather(data, indices) with data's dim R on its axis and indices a span of
/// non-negative ints [start, limit) that holds at least one int proves limit <= R: a model
/// reading positions Range(P, P + S) from an embedding of R rows has P + S <= R.
struct UpperBound {
  Sym value;
  int64_t max = 0;
};
using UpperBounds = std::vector<UpperBound>;

/// True when `v` <= `max` follows from `v` being an int or from one of `bounds` (v is a
/// bound's value plus an int).
bool provablyAtMost(const Sym& v, int64_t max, const UpperBounds& bounds);

struct Facts {
  int32_t elem = 0;             ///< ONNX element type, 0 unknown
  std::optional<Dims> shape;    ///< nullopt: rank unknown
  std::optional<Dims> value;    ///< elements (row-major) of a small integer tensor
  std::optional<IntSpan> span;  ///< the elements as a span of ints, of any length
};

/// A dim of an ONNX shape: unknown for no value and no name, or a name ONNX made up (unk__)
/// unless `declared` (a graph input's: tf2onnx names its unknown dims unk__N there, and one
/// name is one dim as any other).
Sym symOfDim(const onnx::TensorShapeProto::Dimension& dim, bool declared = false);
/// What a TypeProto says (element type and dims); nothing for non-tensors. `declared`: a
/// graph input's type (symOfDim).
Facts factsOfType(const onnx::TypeProto& type, bool declared = false);
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
