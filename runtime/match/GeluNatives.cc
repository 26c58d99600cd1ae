//===- GeluNatives.cc - native functions of the gelu rules ----------------===//
//
// rules/gelu.yaml folds a product or division of a MatMul by a scalar constant c into
// FusedMatMul's alpha (c, or 1 / c), and a further scale into an alpha already set: the
// rule language has no arithmetic on matched values, so these helpers compute it.
// fused_matmul folds Transposes of either kind FusedMatMul can undo (its last two axes
// swapped, its first axis moved behind the batch axes, or both): the natives below tell
// which perm is which, and give the transX / transBatchX flags it becomes.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <utility>
#include <vector>

#include "runtime/match/MatchSupport.h"
#include "runtime/match/NativeFamilies.h"

namespace onnx_rewrite {
namespace {

/// FLOAT alpha * c (or alpha / c) for m = MatMul(...) (alpha 1) or com.microsoft.FusedMatMul
/// (its alpha) and a one-element constant c: a scale folded into the alpha, and a second one
/// into the alpha the first set.
std::optional<onnx::AttributeProto> scaledAlpha(const MatchContext& ctx, ValueArgs args,
                                                bool divide) {
  if (args[0] == kNoId || args[1] == kNoId) return std::nullopt;
  const Node* m = ctx.graph.producerOf(args[0]);
  const std::optional<double> alpha = m && m->live() ? matMulAlpha(*m) : std::nullopt;
  if (!alpha) return std::nullopt;
  const double a = *alpha;
  const auto values = constantValues(ctx.model, ctx.graph, args[1], 1);
  if (!values || values->size() != 1) return std::nullopt;
  const double c = (*values)[0];
  if (!std::isfinite(c) || (divide && c == 0.0)) return std::nullopt;
  const float r = static_cast<float>(divide ? a / c : a * c);
  if (!std::isfinite(r)) return std::nullopt;
  onnx::AttributeProto out;
  out.set_type(onnx::AttributeProto::FLOAT);
  out.set_f(r);
  return out;
}

std::optional<onnx::AttributeProto> alphaTimes(const MatchContext& ctx, ValueArgs args) {
  return scaledAlpha(ctx, args, /*divide=*/false);
}

std::optional<onnx::AttributeProto> alphaOver(const MatchContext& ctx, ValueArgs args) {
  return scaledAlpha(ctx, args, /*divide=*/true);
}

/// What FusedMatMul must do to an input stored as Transpose(t)'s input to read it as t.
struct MatMulTranspose {
  bool trans = false;  ///< the last two axes swapped (transA / transB)
  bool batch = false;  ///< axis 0 moved behind the batch axes (transBatchA / transBatchB)
};

/// The perm of t = Transpose(x, perm) as FusedMatMul flags, for ranks 2 to 5: [.., r-1,
/// r-2] swaps the last two axes; [1, .., r-2, 0, r-1] (rank >= 3) is ONNX Runtime's
/// transBatch, axis 0 read as the last batch axis; [1, .., r-2, r-1, 0] is both.
std::optional<MatMulTranspose> matMulTranspose(const Graph& g, ValueId t) {
  const Node* n = producerOp(g, t, "Transpose");
  if (!n) return std::nullopt;
  std::vector<int64_t> p;
  if (const onnx::AttributeProto* perm = n->attribute("perm")) {
    p.assign(perm->ints().begin(), perm->ints().end());
  } else {
    // No perm: the axes reversed (tf2onnx and hand-built graphs write a 2-D transpose so).
    const std::optional<std::vector<int64_t>> dims = staticShape(g, n->input(0));
    if (!dims) return std::nullopt;
    for (int64_t i = static_cast<int64_t>(dims->size()) - 1; i >= 0; --i) p.push_back(i);
  }
  const int rank = static_cast<int>(p.size());
  if (rank < 2 || rank > 5) return std::nullopt;
  auto is = [&](std::vector<int64_t> expected) { return p == expected; };
  std::vector<int64_t> swap(rank), batch(rank), both(rank);
  for (int i = 0; i < rank; ++i) swap[i] = i;
  std::swap(swap[rank - 2], swap[rank - 1]);
  for (int i = 0; i + 2 < rank; ++i) batch[i] = both[i] = i + 1;
  batch[rank - 2] = 0;
  batch[rank - 1] = rank - 1;
  both[rank - 2] = rank - 1;
  both[rank - 1] = 0;
  if (is(swap)) return MatMulTranspose{true, false};
  if (rank >= 3 && is(batch)) return MatMulTranspose{false, true};
  if (rank >= 3 && is(both)) return MatMulTranspose{true, true};
  return std::nullopt;
}

bool foldsIntoFusedMatMul(const MatchContext& ctx, ValueArgs args) {
  return matMulTranspose(ctx.graph, args[0]).has_value();
}

std::optional<onnx::AttributeProto> flag(bool value) {
  onnx::AttributeProto a;
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value ? 1 : 0);
  return a;
}

std::optional<onnx::AttributeProto> fusedTrans(const MatchContext& ctx, ValueArgs args) {
  const auto t = matMulTranspose(ctx.graph, args[0]);
  return t ? flag(t->trans) : std::nullopt;
}

std::optional<onnx::AttributeProto> fusedTransBatch(const MatchContext& ctx, ValueArgs args) {
  const auto t = matMulTranspose(ctx.graph, args[0]);
  return t ? flag(t->batch) : std::nullopt;
}

}  // namespace

NativeFamily geluNatives() {
  NativeFamily family;
  family.attribute_helpers.push_back(
      AttributeHelper{"alpha_times", 2, &alphaTimes,
                      "FLOAT: the alpha of m = MatMul(...) (1) or FusedMatMul(...) times the "
                      "one-element constant c"});
  family.attribute_helpers.push_back(
      AttributeHelper{"alpha_over", 2, &alphaOver,
                      "FLOAT: the alpha of m = MatMul(...) (1) or FusedMatMul(...) over the "
                      "one-element, nonzero constant c"});
  family.predicates.push_back(NativePredicate{
      "folds_into_fused_matmul", 1, &foldsIntoFusedMatMul,
      "t = Transpose(x) of rank 2-5 swapping the last two axes, moving axis 0 behind the "
      "batch axes ([1, .., r-2, 0, r-1]), or both ([1, .., r-1, 0]); no perm reverses x's "
      "known rank"});
  family.attribute_helpers.push_back(
      AttributeHelper{"fused_trans", 1, &fusedTrans,
                      "INT: 1 if the Transpose t swaps its last two axes (transA/transB)"});
  family.attribute_helpers.push_back(AttributeHelper{
      "fused_trans_batch", 1, &fusedTransBatch,
      "INT: 1 if the Transpose t moves axis 0 behind the batch axes (transBatchA/B)"});
  return family;
}

}  // namespace onnx_rewrite
