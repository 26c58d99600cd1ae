//===- SymbolicTensorOps.cc - shapes through a model's tensor ops ---------===//
//
// Once a computed shape is known (SymbolicValueOps.cc), the values after it need their
// shapes too: ONNX's inference gave up on them because an input had none. These are the
// ops between a transformer's embeddings and its attention; each gives only the dims it
// can prove from its inputs'.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>

#include "runtime/io/SymbolicOps.h"

namespace onnx_rewrite::symbolic {
namespace {

using onnx::TensorProto;

/// Output `o` has input 0's type and shape.
void likeInput0(const NodeView& n, Facts& out) {
  out.elem = n.elem(0);
  if (n.shape(0)) out.shape = *n.shape(0);
}

void unaryRule(const NodeView& n, std::vector<Facts>& out) { likeInput0(n, out[0]); }

/// LayerNormalization and friends: output 0 is like input 0; the statistics outputs are
/// left alone.
void normRule(const NodeView& n, std::vector<Facts>& out) {
  likeInput0(n, out[0]);
  // ONNX Runtime's LayerNormalization below opset 17, its SimplifiedLayerNormalization and
  // ONNX's RMSNormalization type Y as the scale (a float x with fp16 weights gives fp16).
  const bool one_type = n.node.op_type() == "LayerNormalization" && n.opset >= 17;
  if (!one_type && n.elem(1) != 0) out[0].elem = n.elem(1);
}

/// com.microsoft.Skip(Simplified)LayerNormalization: output 0 and the residual sum (3).
void skipNormRule(const NodeView& n, std::vector<Facts>& out) {
  likeInput0(n, out[0]);
  if (out.size() > 3) likeInput0(n, out[3]);
}

/// com.microsoft.EmbedLayerNormalization: output 0 (and the sum, output 2) [B, S, H] of the
/// ids [B, S] and the word table [V, H], of the table's element type; mask_index (output 1)
/// int32 [B].
void embedLayerNormRule(const NodeView& n, std::vector<Facts>& out) {
  const Dims* ids = n.shape(0);
  const Dims* word = n.shape(2);
  const bool sized = ids && ids->size() == 2 && word && word->size() == 2;
  for (size_t o : {size_t{0}, size_t{2}}) {
    if (o >= out.size()) continue;
    out[o].elem = n.elem(2);
    if (sized) out[o].shape = Dims{(*ids)[0], (*ids)[1], (*word)[1]};
  }
  if (out.size() > 1) {
    out[1].elem = TensorProto::INT32;
    if (ids && ids->size() == 2) out[1].shape = Dims{(*ids)[0]};
  }
}

/// Dropout: the output, and the mask of the same shape (bool from opset 10, T before).
void dropoutRule(const NodeView& n, std::vector<Facts>& out) {
  likeInput0(n, out[0]);
  if (out.size() > 1) {
    likeInput0(n, out[1]);
    if (n.opset >= 10) out[1].elem = TensorProto::BOOL;
  }
}

void broadcastRule(const NodeView& n, std::vector<Facts>& out, int32_t elem) {
  out[0].elem = elem;
  std::optional<Dims> shape = Dims{};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.shape(i)) return;
    shape = broadcastShapes(*shape, *n.shape(i));
    if (!shape) return;
  }
  if (!n.inputs.empty()) out[0].shape = shape;
}

void elementwiseRule(const NodeView& n, std::vector<Facts>& out) {
  broadcastRule(n, out, n.elem(0));
}

void comparisonRule(const NodeView& n, std::vector<Facts>& out) {
  broadcastRule(n, out, TensorProto::BOOL);
}

/// MatMul's shape over a and b (numpy matmul: 1-D operands are a row and a column).
std::optional<Dims> matmulShape(Dims a, Dims b) {
  if (a.empty() || b.empty()) return std::nullopt;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Sym::of(1));
  if (b_vector) b.push_back(Sym::of(1));
  const Sym& k_a = a[a.size() - 1];
  const Sym& k_b = b[b.size() - 2];
  if (k_a.isInt() && k_b.isInt() && k_a.value != k_b.value) return std::nullopt;
  std::optional<Dims> batch =
      broadcastShapes(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch) return std::nullopt;
  if (!a_vector) batch->push_back(a[a.size() - 2]);
  if (!b_vector) batch->push_back(b[b.size() - 1]);
  return batch;
}

void matmulRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  if (!n.shape(0) || !n.shape(1)) return;
  out[0].shape = matmulShape(*n.shape(0), *n.shape(1));
  if (!out[0].shape) out[0] = Facts{};  // invalid operands: claim nothing, not even a type
}

/// com.microsoft.FusedMatMul: MatMul with the last two axes of A or B swapped.
void fusedMatmulRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  if (!n.shape(0) || !n.shape(1)) return;
  // Batch axes moved: ONNX Runtime has its own rules for those (equal ranks, ...) that the
  // registry's inference applies; claim nothing, not even the type of what it may reject.
  if (n.intAttr("transBatchA").value_or(0) != 0 || n.intAttr("transBatchB").value_or(0) != 0) {
    out[0] = Facts{};
    return;
  }
  Dims a = *n.shape(0), b = *n.shape(1);
  if (a.empty() || b.empty()) {
    out[0] = Facts{};  // ONNX Runtime rejects a scalar operand: claim nothing
    return;
  }
  auto swapLast = [](Dims& d) {
    if (d.size() >= 2) std::swap(d[d.size() - 1], d[d.size() - 2]);
  };
  if (n.intAttr("transA").value_or(0) != 0) swapLast(a);
  if (n.intAttr("transB").value_or(0) != 0) swapLast(b);
  out[0].shape = matmulShape(a, b);
  if (!out[0].shape) out[0] = Facts{};
}

void gemmRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* a = n.shape(0);
  const Dims* b = n.shape(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) return;
  const bool ta = n.intAttr("transA").value_or(0) != 0;
  const bool tb = n.intAttr("transB").value_or(0) != 0;
  const Sym& k_a = (*a)[ta ? 0 : 1];
  const Sym& k_b = (*b)[tb ? 1 : 0];
  if (k_a.isInt() && k_b.isInt() && k_a.value != k_b.value) return;
  out[0].shape = Dims{(*a)[ta ? 1 : 0], (*b)[tb ? 0 : 1]};
}

void transposeRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* in = n.shape(0);
  if (!in) return;
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = n.intsAttr("perm")) {
    perm = *p;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return;
  std::vector<bool> seen(in->size(), false);
  Dims shape;
  for (int64_t p : perm) {
    const std::optional<int64_t> axis = normalizeAxis(p, rank);
    if (!axis || seen[static_cast<size_t>(*axis)]) return;
    seen[static_cast<size_t>(*axis)] = true;
    shape.push_back((*in)[static_cast<size_t>(*axis)]);
  }
  out[0].shape = shape;
}

void splitRule(const NodeView& n, std::vector<Facts>& out) {
  for (Facts& o : out) o.elem = n.elem(0);
  const Dims* in = n.shape(0);
  if (!in) return;
  const std::optional<int64_t> axis =
      normalizeAxis(n.intAttr("axis").value_or(0), static_cast<int64_t>(in->size()));
  if (!axis) return;
  const Sym& dim = (*in)[static_cast<size_t>(*axis)];
  // The split sizes: an attribute before opset 13, input 1 from 13; else equal parts.
  bool present = false;
  std::optional<std::vector<int64_t>> sizes = n.attrOrInput("split", 13, 1, &present);
  if (present && !sizes) {
    // Sizes computed at run time: every output keeps the rank and the other dims.
    for (Facts& o : out) {
      o.shape = *in;
      (*o.shape)[static_cast<size_t>(*axis)] = Sym::unknown();
    }
    return;
  }
  const int64_t parts = static_cast<int64_t>(out.size());
  std::vector<Sym> lengths;
  if (sizes) {
    if (sizes->size() != out.size()) return;
    int64_t total = 0;
    for (int64_t s : *sizes) {
      if (s < 0 || __builtin_add_overflow(total, s, &total)) return;
      lengths.push_back(Sym::of(s));
    }
    if (dim.isInt() && dim.value != total) return;  // invalid: claim nothing
  } else if (n.attr("num_outputs") && parts > 0) {
    // Opset 18: ceil(dim / num_outputs) each, the last one smaller.
    if (!dim.isInt()) return;
    const int64_t each = (dim.value + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      lengths.push_back(Sym::of(std::max<int64_t>(0, std::min(each, dim.value - i * each))));
  } else if (parts > 0) {
    if (dim.isInt() && dim.value % parts != 0) return;
    const Sym each = dim.isInt() ? Sym::of(dim.value / parts) : parts == 1 ? dim : Sym::unknown();
    lengths.assign(static_cast<size_t>(parts), each);
  }
  for (size_t i = 0; i < out.size() && i < lengths.size(); ++i) {
    out[i].shape = *in;
    (*out[i].shape)[static_cast<size_t>(*axis)] = lengths[i];
  }
}

void reduceRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* in = n.shape(0);
  if (!in) return;
  // ReduceSum takes axes as an input from opset 13, the other Reduce* ops from 18.
  const int64_t since = n.node.op_type() == "ReduceSum" ? 13 : 18;
  bool present = false;
  const std::optional<std::vector<int64_t>> axes = n.attrOrInput("axes", since, 1, &present);
  if (present && !axes) return;
  const bool keepdims = n.intAttr("keepdims").value_or(1) != 0;
  const bool noop = n.intAttr("noop_with_empty_axes").value_or(0) != 0;
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<bool> reduced(in->size(), !present || axes->empty());
  if (present && axes->empty() && noop) {
    out[0].shape = *in;
    return;
  }
  if (present)
    for (int64_t a : *axes) {
      const std::optional<int64_t> axis = normalizeAxis(a, rank);
      if (!axis) return;
      reduced[static_cast<size_t>(*axis)] = true;
    }
  Dims shape;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!reduced[i])
      shape.push_back((*in)[i]);
    else if (keepdims)
      shape.push_back(Sym::of(1));
  }
  out[0].shape = shape;
}

/// [input 0's dims but the last, `last`] for a 3-D input 0.
void like3dInput0WithLast(const NodeView& n, Facts& out, Sym last) {
  out.elem = n.elem(0);
  const Dims* q = n.shape(0);
  if (!q || q->size() != 3) return;
  out.shape = Dims{(*q)[0], (*q)[1], std::move(last)};
}

/// `d` divided by `by` when both are known and it divides evenly, else unknown.
Sym exactQuotient(const Sym& d, int64_t by) {
  return d.isInt() && by > 0 && d.value % by == 0 ? Sym::of(d.value / by) : Sym::unknown();
}

/// A present key or value [B, N, P + L, H] of com.microsoft.MultiHeadAttention: `kv` is
/// input 1 or 2 (key or value, [B, L, N * H] or heads [B, N, L, H]), `past` 6 or 7
/// ([B, N, P, H], absent without a cache).
void presentKeyOrValue(const NodeView& n, size_t kv, size_t past, Facts& out) {
  const Dims* k = n.shape(kv);
  if (!k || (k->size() != 3 && k->size() != 4)) return;
  const Sym& length = (*k)[k->size() == 3 ? 1 : 2];
  if (n.in(past)) {
    const Dims* p = n.shape(past);
    if (!p || p->size() != 4) return;
    out.elem = n.elem(past);
    out.shape = Dims{(*p)[0], (*p)[1], addSyms((*p)[2], length, 1), (*p)[3]};
    return;
  }
  out.elem = n.elem(kv);
  if (k->size() == 4) {
    out.shape = *k;
    return;
  }
  const std::optional<int64_t> heads = n.intAttr("num_heads");
  if (!heads || *heads <= 0) return;
  out.shape = Dims{(*k)[0], Sym::of(*heads), length, exactQuotient((*k)[2], *heads)};
}

/// com.microsoft.MultiHeadAttention: [B, S, v hidden] for a 3-D query, the value given as
/// [B, L, Dv] or as heads [B, N, L, H] (then N * H); present_key and present_value
/// (outputs 1, 2) per presentKeyOrValue.
void multiHeadAttentionRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  for (size_t o : {size_t{1}, size_t{2}})
    if (o < out.size() && n.in(o)) presentKeyOrValue(n, o, o + 5, out[o]);
  const Dims* v = n.shape(2);
  if (!v) return;
  if (v->size() == 3) like3dInput0WithLast(n, out[0], (*v)[2]);
  if (v->size() == 4) {
    const Sym &heads = (*v)[1], &size = (*v)[3];
    int64_t product = 0;
    const bool known =
        heads.isInt() && size.isInt() && !__builtin_mul_overflow(heads.value, size.value, &product);
    like3dInput0WithLast(n, out[0], known ? Sym::of(product) : Sym::unknown());
  }
}

/// com.microsoft.Attention: [B, S, v hidden], the last of qkv_hidden_sizes or a third of
/// the packed weights' columns.
void packedAttentionRule(const NodeView& n, std::vector<Facts>& out) {
  out[0].elem = n.elem(0);
  const Dims* w = n.shape(1);
  Sym hidden;
  if (w && w->size() == 2 && (*w)[1].isInt() && (*w)[1].value % 3 == 0)
    hidden = Sym::of((*w)[1].value / 3);
  if (std::optional<std::vector<int64_t>> sizes = n.intsAttr("qkv_hidden_sizes")) {
    hidden = sizes->size() == 3 && (*sizes)[2] >= 0 ? Sym::of((*sizes)[2]) : Sym::unknown();
  }
  if (!w) return;
  like3dInput0WithLast(n, out[0], hidden);
  // present (output 1): [2, B, N, S, H], behind the past [2, B, N, P, H] when one is given.
  const Dims* x = n.shape(0);
  if (out.size() < 2 || !x || x->size() != 3) return;
  if (n.in(4)) {
    const Dims* past = n.shape(4);
    if (!past || past->size() != 5) return;
    out[1].elem = n.elem(4);
    out[1].shape =
        Dims{(*past)[0], (*past)[1], (*past)[2], addSyms((*past)[3], (*x)[1], 1), (*past)[4]};
    return;
  }
  // Without a past, the head size is the value's (K and V alike in every model that has
  // a present).
  const std::optional<int64_t> heads = n.intAttr("num_heads");
  const std::optional<std::vector<int64_t>> sizes = n.intsAttr("qkv_hidden_sizes");
  if (sizes && (sizes->size() != 3 || (*sizes)[1] != (*sizes)[2])) return;
  if (!heads || *heads <= 0 || !hidden.isInt()) return;
  out[1].elem = n.elem(0);
  out[1].shape = Dims{Sym::of(2), (*x)[0], Sym::of(*heads), (*x)[1], exactQuotient(hidden, *heads)};
}

/// com.microsoft.GroupQueryAttention with Q, K and V apart (as rules emit it): output 0 is
/// [B, S, N * H], query's shape. Packed QKV (no key) is left unknown: its query is wider.
/// With past_key/past_value [B, G, P, H] (inputs 3, 4), present_key/present_value (outputs
/// 1, 2) are [B, G, P + S, H]: the cache with the S new positions behind it.
void groupQueryAttentionRule(const NodeView& n, std::vector<Facts>& out) {
  if (n.in(1)) likeInput0(n, out[0]);
  const Dims* q = n.shape(0);
  for (size_t o : {size_t{1}, size_t{2}}) {
    const Dims* p = n.shape(o + 2);
    if (o >= out.size() || !p || p->size() != 4) continue;
    out[o].elem = n.elem(o + 2);
    const Sym total = q && q->size() == 3 ? addSyms((*p)[2], (*q)[1], 1) : Sym::unknown();
    out[o].shape = Dims{(*p)[0], (*p)[1], total, (*p)[3]};
  }
}

}  // namespace

void addTensorOpRules(OpRules& rules) {
  for (const char* op : {"Relu",
                         "Sigmoid",
                         "Tanh",
                         "Erf",
                         "Sqrt",
                         "Exp",
                         "Log",
                         "Neg",
                         "Reciprocal",
                         "Ceil",
                         "Floor",
                         "Round",
                         "Sin",
                         "Cos",
                         "Softplus",
                         "Softsign",
                         "LeakyRelu",
                         "Elu",
                         "Selu",
                         "Celu",
                         "HardSigmoid",
                         "HardSwish",
                         "Sign",
                         "Not",
                         "Clip",
                         "Softmax",
                         "LogSoftmax",
                         "Gelu",
                         "Mish",
                         "com.microsoft:Gelu",
                         "com.microsoft:FastGelu",
                         "com.microsoft:BiasGelu",
                         "com.microsoft:QuickGelu",
                         "com.microsoft:RotaryEmbedding",
                         "RotaryEmbedding"})
    rules[op] = unaryRule;
  for (const char* op : {"IsNaN", "IsInf"})
    rules[op] = [](const NodeView& n, std::vector<Facts>& out) {
      likeInput0(n, out[0]);
      out[0].elem = TensorProto::BOOL;
    };
  for (const char* op : {"LayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization"})
    rules[op] = normRule;
  rules["com.microsoft:SkipLayerNormalization"] = skipNormRule;
  rules["com.microsoft:SkipSimplifiedLayerNormalization"] = skipNormRule;
  rules["com.microsoft:EmbedLayerNormalization"] = embedLayerNormRule;
  rules["Dropout"] = dropoutRule;
  for (const char* op :
       {"Pow", "Max", "Min", "Mod", "Sum", "Mean", "PRelu", "BitShift", "And", "Or", "Xor"})
    rules[op] = elementwiseRule;
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    rules[op] = comparisonRule;
  rules["MatMul"] = matmulRule;
  rules["com.microsoft:FusedMatMul"] = fusedMatmulRule;
  rules["Gemm"] = gemmRule;
  rules["Transpose"] = transposeRule;
  rules["Split"] = splitRule;
  for (const char* op :
       {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    rules[op] = reduceRule;
  rules["com.microsoft:MultiHeadAttention"] = multiHeadAttentionRule;
  rules["com.microsoft:Attention"] = packedAttentionRule;
  rules["com.microsoft:GroupQueryAttention"] = groupQueryAttentionRule;
}

}  // namespace onnx_rewrite::symbolic
