//===- OpCatalog.h - ops by domain, opset and name ------------------------===//
//
// The checks ask one question many times: at opset N of domain D, does op X
// exist, and what are its inputs, outputs and attributes? The catalog answers
// from three sources:
//
//  - ONNX's schema registry (ONNX 1.12, opsets up to 17) for the ONNX domain
//    (and ai.onnx.ml);
//  - a hand-written table of the ONNX changes after opset 17 that rules care
//    about (ReduceX `axes` becoming input 1 at 18, Gelu at 20, RMSNormalization,
//    RotaryEmbedding and Attention at 23, ...), applied on top of the newest
//    schema the registry knows, up to kNewestOnnxOpset;
//  - op declarations (ir::OpDecl) for every other domain, such as the ONNX
//    Runtime contrib ops in com.microsoft. A declaration in the ONNX domain ""
//    adds an op the registry lacks there (ONNX Runtime registers
//    SimplifiedLayerNormalization, and LayerNormalization below opset 17, in the
//    ONNX domain); the registry wins at every opset where it defines the op.
//
// Lookups are cached; a catalog is cheap to query but not thread-safe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "compiler/ir/RuleIR.h"

namespace onnx_rewrite {

/// `max_inputs`/`max_outputs` of an op whose last parameter is variadic.
inline constexpr int kUnboundedArity = INT_MAX;

/// One formal input or output of an op.
struct OpParam {
  std::string name;
  bool optional = false;
  bool variadic = false;
};

/// One attribute an op accepts.
struct OpAttr {
  std::string name;
  /// "int", "float", "string", "ints", "floats", "strings", "tensor", "graph", ...
  std::string type;
  bool required = false;
  /// The value an absent attribute has, when the schema gives one.
  std::optional<ir::Literal> default_value;
};

/// An op's signature at one opset.
struct OpSignature {
  enum class Source {
    kOnnxRegistry,  ///< ONNX's schema registry as installed
    kOnnxLater,     ///< the registry's newest schema plus the table of later changes
    kDeclared,      ///< an ir::OpDecl
  };
  std::string domain;  ///< "" for ONNX (never "ai.onnx")
  std::string op;
  int64_t since_version = 1;  ///< the opset at which this form of the op appeared
  std::vector<OpParam> inputs;
  std::vector<OpParam> outputs;
  int min_inputs = 0, max_inputs = 0;    ///< kUnboundedArity when variadic
  int min_outputs = 0, max_outputs = 0;  ///< kUnboundedArity when variadic
  std::vector<OpAttr> attrs;             ///< sorted by name
  bool commutative = false;
  Source source = Source::kOnnxRegistry;

  /// The attribute called `name`, or null.
  const OpAttr* findAttr(std::string_view name) const;
  /// The formal input at position `index` (the variadic last one for any later index), or
  /// null past the end.
  const OpParam* inputAt(size_t index) const;
};

/// Ops by domain, opset and name; see the file comment for the sources.
class OpCatalog {
 public:
  /// The newest ONNX opset the catalog describes (the registry's 17 plus the later table).
  static constexpr int64_t kNewestOnnxOpset = 24;

  /// A catalog of ONNX plus the ops `decls` declare.
  explicit OpCatalog(std::vector<ir::OpDecl> decls = {});
  ~OpCatalog();
  OpCatalog(const OpCatalog&) = delete;
  OpCatalog& operator=(const OpCatalog&) = delete;

  /// True for "" and "ai.onnx".
  static bool isOnnxDomain(std::string_view domain);
  /// "" for both ONNX spellings, `domain` otherwise.
  static std::string normalizeDomain(std::string_view domain);
  /// How messages name an op: "Add", "com.microsoft.Gelu".
  static std::string displayName(std::string_view domain, std::string_view op);

  /// True if the domain is ONNX's, one of ONNX's other registry domains (ai.onnx.ml), or
  /// declared by some op declaration.
  bool knowsDomain(std::string_view domain) const;
  /// True if the op exists in `domain` at some opset.
  bool knowsOp(std::string_view domain, std::string_view op) const;
  /// The op's signature at `version` of its domain, or null if it does not exist there
  /// (not yet, deprecated, or unknown). Versions past newestOpset() use the newest.
  const OpSignature* find(std::string_view domain, std::string_view op, int64_t version) const;
  /// The first and last opset (both inclusive) at which the op exists, or nullopt if it
  /// exists nowhere. Ops never come back once removed, so this is one range.
  std::optional<std::pair<int64_t, int64_t>> availability(std::string_view domain,
                                                          std::string_view op) const;
  /// The newest opset of `domain` the catalog describes: kNewestOnnxOpset for ONNX, the
  /// registry's for its other domains, the highest `since` of a declared domain's ops;
  /// -1 for an unknown domain.
  int64_t newestOpset(std::string_view domain) const;
  /// True for the ONNX ops whose two operands commute (Add, Mul, Max, Min, Sum, And, Or,
  /// Xor, Equal, BitwiseAnd/Or/Xor) and declared ops marked commutative. Variadic ops
  /// (Sum, Max, Min) commute as binary nodes only; callers check the operand count.
  bool isCommutative(std::string_view domain, std::string_view op) const;
  /// The known op nearest to `op` by edit distance, as a display name, or "" if none is
  /// close: ops of the same domain first, then of every domain.
  std::string suggestOp(std::string_view domain, std::string_view op) const;
  /// Every op name of `domain`, sorted.
  std::vector<std::string> opNames(std::string_view domain) const;
  /// The declarations the catalog was built from.
  const std::vector<ir::OpDecl>& decls() const { return decls_; }

 private:
  std::unique_ptr<OpSignature> build(const std::string& domain, const std::string& op,
                                     int64_t version) const;
  const ir::OpDecl* findDecl(const std::string& domain, const std::string& op,
                             int64_t version) const;

  std::vector<ir::OpDecl> decls_;
  mutable std::map<std::tuple<std::string, std::string, int64_t>, std::unique_ptr<OpSignature>>
      cache_;
  mutable std::map<std::string, std::vector<std::string>> names_;  // domain -> sorted ops
};

/// Edit distance (optimal string alignment: insertions, deletions, substitutions and
/// swaps of neighbours each cost 1) between `a` and `b`.
size_t editDistance(std::string_view a, std::string_view b);

/// The candidate nearest to `word`, or "" if none is within a distance that makes it a
/// plausible typo (at most a third of the word's length, and at most 2; a case-only
/// difference always counts). Ties go to the alphabetically first. Failing that, the
/// shortest candidate that `word` (4 characters or more) is the beginning of, so a
/// truncated name finds the full one.
std::string closestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace onnx_rewrite
