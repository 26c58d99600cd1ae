//===- NativeHelpers.h - named C++ functions rules may call ---------------===//
//
// Some conditions and some target values are easier in C++ than in the rule
// language: "these axes name the last axis of x", "num_heads is dim 2 of this
// Reshape's shape". Rules refer to such functions by name (`native: last_axis(a, x)`,
// `helper(num_heads_from_shape, shape)`); this registry maps the names to C++.
// Three kinds share one shape, a plain function over the bound values:
//
//   predicate         bool(const MatchContext&, ValueArgs)            where: native
//   attribute helper  optional<AttributeProto>(const MatchContext&, ValueArgs)
//   tensor helper     optional<TensorProto>(const MatchContext&, ValueArgs)
//
// Registration is static and by name, from any translation unit:
//
//   static const bool kRegistered = registerNativePredicate(
//       {"my_check", 2, &myCheck, "what it checks, in one line"});
//
// (In a static library, a unit nothing else references is dropped by the linker;
// put registrations next to code the program uses, or link it whole.) The
// built-in functions below are registered on first use of the registry, so they
// are always available. Lookups happen when a rule is loaded, not per match.
//
// A native function must not throw and must not modify the graph; it says "no"
// (false / nullopt) for anything it cannot handle, including kNoId arguments.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

/// What a native function may look at: the model (to read constants) and the graph the
/// match is in.
struct MatchContext {
  Model& model;
  const Graph& graph;
};

/// The bound values passed to a native function, in the order the rule lists them. A view
/// over the caller's storage, valid for the duration of the call.
class ValueArgs {
 public:
  ValueArgs() = default;
  ValueArgs(const ValueId* data, size_t size) : data_(data), size_(size) {}
  ValueArgs(const std::vector<ValueId>& values) : data_(values.data()), size_(values.size()) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ValueId operator[](size_t i) const { return data_[i]; }
  const ValueId* begin() const { return data_; }
  const ValueId* end() const { return data_ + size_; }

 private:
  const ValueId* data_ = nullptr;
  size_t size_ = 0;
};

using NativePredicateFn = bool (*)(const MatchContext&, ValueArgs);
/// Computes an attribute's value; the caller sets the attribute's name.
using AttributeHelperFn = std::optional<onnx::AttributeProto> (*)(const MatchContext&, ValueArgs);
/// Computes a constant tensor; the caller names it.
using TensorHelperFn = std::optional<onnx::TensorProto> (*)(const MatchContext&, ValueArgs);

/// `arity` of a function taking any number of arguments.
inline constexpr int kVariadic = -1;

/// A registry entry.
template <typename Fn>
struct NativeFunction {
  std::string name;
  int arity = kVariadic;  ///< number of arguments, or kVariadic
  Fn fn = nullptr;
  std::string doc;  ///< one line: what it computes or checks
  /// True when `n` arguments fit `arity`.
  bool accepts(size_t n) const { return arity == kVariadic || static_cast<size_t>(arity) == n; }
};

using NativePredicate = NativeFunction<NativePredicateFn>;
using AttributeHelper = NativeFunction<AttributeHelperFn>;
using TensorHelper = NativeFunction<TensorHelperFn>;

/// Registers a function under its name. Returns false, keeping the earlier entry, if the
/// name is already registered for that kind, or if the name is empty or `fn` null.
/// Thread-safe.
bool registerNativePredicate(NativePredicate predicate);
bool registerAttributeHelper(AttributeHelper helper);
bool registerTensorHelper(TensorHelper helper);

/// The entry named `name`, or null. Entries live as long as the program.
const NativePredicate* findNativePredicate(std::string_view name);
const AttributeHelper* findAttributeHelper(std::string_view name);
const TensorHelper* findTensorHelper(std::string_view name);

/// Registered names of each kind, sorted (for listings and "did you mean").
std::vector<std::string> nativePredicateNames();
std::vector<std::string> attributeHelperNames();
std::vector<std::string> tensorHelperNames();

// ---- Built-ins ---------------------------------------------------------------------------
//
// predicate last_axis(a, x)
//     `a` names exactly the last axis of `x`: `a` is a constant integer tensor of axes, or
//     the output of a node whose `axes` (attribute or moved input) or `axis` attribute
//     holds them; negative axes count from the end; the rank of `x` must be known.
// predicate last_dim_of(v, x)
//     `v` is 1-D and its dim is `x`'s last dim: the same static size or the same dim_param
//     (a LayerNorm scale, a bias added along the last axis).
// predicate static_last_dim(x)
//     `x`'s last dim is a static, positive size.
// predicate reduces_trailing_axes(r, x)
//     `r` is the output of a Reduce* node over `x` (or a value of x's rank, such as x^2)
//     whose axes are exactly x's last axes
//     k..rank-1, for some k: absent axes (every axis, unless noop_with_empty_axes) or a
//     constant list, negative axes counted from the end; x's rank must be known.
// predicate fits_normalized_shape(w, r, x)
//     `w`'s rank is at most the number of trailing axes `r` reduces `x` over (see
//     reduces_trailing_axes): a norm scale over those axes.
// attribute helper first_reduced_axis(r, x)
//     INT: that k (the `axis` of a norm over those axes).
// attribute helper elem_type_of(x)
//     INT: x's element type, if known (Cast(v, to=elem_type_of(x)) is CastLike(v, x) at
//     any opset).
// attribute helper num_heads_from_shape(shape)
//     INT: element 2 of a constant 4-element shape [batch, seq, heads, head_size] (the
//     Reshape that splits heads in attention), if positive.
// tensor helper static_shape(x)
//     INT64 1-D tensor holding x's dims, if all are static.
// tensor helper ones_of_last_dim(x)
//     1-D tensor of ones as long as x's static last dim, of x's element type (float,
//     double, float16 or bfloat16): the scale of a LayerNorm that had none.

}  // namespace onnx_rewrite
