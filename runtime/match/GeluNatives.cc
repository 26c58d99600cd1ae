//===- GeluNatives.cc - native functions of the gelu rules ----------------===//
//
// rules/gelu.yaml folds a product or division of a MatMul by a scalar constant c into
// FusedMatMul's alpha (c, or 1 / c), and a further scale into an alpha already set: the
// rule language has no arithmetic on matched values, so these helpers compute it.
// fused_matmul folds Transposes of either kind FusedMatMul can undo (its last two axes
// swapped, its first axis moved behind the batch axes, or both): the natives below tell
// which perm is which, and give the transX / transBatchX flags it becomes; for a Transpose
// read by a FusedMatMul side that has flags already, the flags of the two composed.
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

/// The perm of t = Transpose(x, perm), ranks 2 to 5. No perm reverses the axes (tf2onnx and
/// hand-built graphs write a 2-D transpose so), when x's rank is known.
std::optional<std::vector<int64_t>> transposePerm(const Graph& g, ValueId t) {
  const Node* n = producerOp(g, t, "Transpose");
  if (!n) return std::nullopt;
  std::vector<int64_t> p;
  if (const onnx::AttributeProto* perm = n->attribute("perm")) {
    p.assign(perm->ints().begin(), perm->ints().end());
  } else {
    const std::optional<std::vector<int64_t>> dims = staticShape(g, n->input(0));
    if (!dims) return std::nullopt;
    for (int64_t i = static_cast<int64_t>(dims->size()) - 1; i >= 0; --i) p.push_back(i);
  }
  if (p.size() < 2 || p.size() > 5) return std::nullopt;
  return p;
}

/// The perm through which FusedMatMul reads an input of rank r with flags f: [.., r-1,
/// r-2] swaps the last two axes; [1, .., r-2, 0, r-1] (rank >= 3) is ONNX Runtime's
/// transBatch, axis 0 read as the last batch axis; [1, .., r-2, r-1, 0] is both.
std::vector<int64_t> flagsPerm(int rank, MatMulTranspose f) {
  std::vector<int64_t> p(rank);
  for (int i = 0; i < rank; ++i) p[i] = i;
  if (f.batch) {
    for (int i = 0; i + 2 < rank; ++i) p[i] = i + 1;
    p[rank - 2] = 0;
  }
  if (f.trans) std::swap(p[rank - 2], p[rank - 1]);
  return p;
}

/// The flags whose perm is p, if any (identity: none).
std::optional<MatMulTranspose> flagsOfPerm(const std::vector<int64_t>& p) {
  const int rank = static_cast<int>(p.size());
  for (bool batch : {false, true}) {
    if (batch && rank < 3) continue;
    for (bool trans : {false, true})
      if (p == flagsPerm(rank, MatMulTranspose{trans, batch})) return MatMulTranspose{trans, batch};
  }
  return std::nullopt;
}

/// The flags FusedMatMul needs to read Transpose(x)'s input x as Transpose(x) (none for an
/// identity perm).
std::optional<MatMulTranspose> matMulTranspose(const Graph& g, ValueId t) {
  const auto p = transposePerm(g, t);
  if (!p) return std::nullopt;
  const auto f = flagsOfPerm(*p);
  if (!f || (!f->trans && !f->batch)) return std::nullopt;
  return f;
}

/// For t = Transpose(x) read by y = com.microsoft.FusedMatMul on one side with that side's
/// flags: the flags that read x as that side reads t (the Transpose composed with the flags),
/// if FusedMatMul has them.
std::optional<MatMulTranspose> composedFlags(const MatchContext& ctx, ValueArgs args) {
  if (args[0] == kNoId || args[1] == kNoId) return std::nullopt;
  const Node* m = ctx.graph.producerOf(args[1]);
  if (!m || !m->live() || m->opType() != "FusedMatMul" || m->domain() != "com.microsoft")
    return std::nullopt;
  const bool a = m->input(0) == args[0];
  const bool b = m->input(1) == args[0];
  if (a == b) return std::nullopt;  // on neither side, or on both
  auto flagOf = [&](const char* name) {
    const onnx::AttributeProto* attr = m->attribute(name);
    return attr && attr->i() != 0;
  };
  const MatMulTranspose side = a ? MatMulTranspose{flagOf("transA"), flagOf("transBatchA")}
                                 : MatMulTranspose{flagOf("transB"), flagOf("transBatchB")};
  const auto p = transposePerm(ctx.graph, args[0]);
  if (!p) return std::nullopt;
  const std::vector<int64_t> e = flagsPerm(static_cast<int>(p->size()), side);
  std::vector<int64_t> q(p->size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = (*p)[static_cast<size_t>(e[i])];
  return flagsOfPerm(q);
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

bool composesWithFusedSide(const MatchContext& ctx, ValueArgs args) {
  return composedFlags(ctx, args).has_value();
}

std::optional<onnx::AttributeProto> composedTrans(const MatchContext& ctx, ValueArgs args) {
  const auto f = composedFlags(ctx, args);
  return f ? flag(f->trans) : std::nullopt;
}

std::optional<onnx::AttributeProto> composedTransBatch(const MatchContext& ctx, ValueArgs args) {
  const auto f = composedFlags(ctx, args);
  return f ? flag(f->batch) : std::nullopt;
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
  family.predicates.push_back(NativePredicate{
      "composes_with_fused_side", 2, &composesWithFusedSide,
      "t = Transpose(x) is read on one side of y = com.microsoft.FusedMatMul, and that side's "
      "flags after t's perm are flags FusedMatMul has (reading x directly)"});
  family.attribute_helpers.push_back(AttributeHelper{
      "composed_trans", 2, &composedTrans,
      "INT: transA/transB of y's side that reads t = Transpose(x), to read x instead"});
  family.attribute_helpers.push_back(AttributeHelper{
      "composed_trans_batch", 2, &composedTransBatch,
      "INT: transBatchA/B of y's side that reads t = Transpose(x), to read x instead"});
  return family;
}

}  // namespace onnx_rewrite
