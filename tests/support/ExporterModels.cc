//===- ExporterModels.cc - whole transformer models as exporters emit them -===//
#include "tests/support/ExporterModels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <onnx/shape_inference/implementation.h>

#include "runtime/io/NewerOpsetSchemas.h"

namespace onnx_rewrite::testing {

namespace {

using Ints = std::vector<int64_t>;
using Names = std::vector<std::string>;

constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();   // torch's "to the end"
constexpr float kFloatMin = std::numeric_limits<float>::lowest();  // torch.finfo.min

onnx::AttributeProto attrInt(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto attrFloat(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto attrInts(const std::string& name, const Ints& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

/// A one-element float tensor attribute (ConstantOfShape's value).
onnx::AttributeProto attrFloatTensor(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a.mutable_t()->add_dims(1);
  a.mutable_t()->add_float_data(v);
  return a;
}

/// splitmix64: the same weights on every platform for a seed (std distributions are not).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(lo + (hi - lo) * unit);
  }

 private:
  uint64_t state_;
};

template <typename T>
void setRaw(onnx::TensorProto& t, const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  t.set_raw_data(std::move(bytes));  // little-endian hosts only, as ONNX's raw_data
}

/// `v` named `name`, a tensor of `type` and `dims` (a number is a static size, else a name).
void setTensorType(onnx::ValueInfoProto& v, const std::string& name, int type, const Names& dims) {
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  for (const std::string& d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (!d.empty() && d[0] >= '0' && d[0] <= '9')
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

/// Appends nodes and initializers to a graph with the naming and constant conventions of
/// one exporter: TorchScript names nodes by module scope ("/layers.0/attn/MatMul") and
/// makes literals Constant nodes; dynamo names values val_N and keeps literals as
/// initializers (onnxscript's optimizer folds Constant nodes into them). Without that
/// optimizer (`unoptimized`), dynamo's literals stay Constant nodes and the Identity nodes
/// of inlined functions stay: one per parameter read and per returned value.
class GraphBuilder {
 public:
  GraphBuilder(Exporter exporter, bool unoptimized, uint64_t seed, onnx::GraphProto& graph)
      : torchscript_(exporter == Exporter::kTorchScript),
        unoptimized_(unoptimized && !torchscript_),
        random_(seed),
        graph_(graph) {}

  /// Module path of the nodes and parameters that follow, e.g. "layers.0.attn".
  void setScope(const std::string& scope) { scope_ = scope; }

  Names nodeN(const std::string& op, const Names& inputs, int outputs,
              const std::vector<onnx::AttributeProto>& attrs = {}) {
    onnx::NodeProto* n = graph_.add_node();
    n->set_op_type(op);
    const int id = counter_++;
    std::string base;
    if (torchscript_) {
      std::string path = scope_;
      for (char& c : path)
        if (c == '.' && !isLayerIndexDot(path, &c)) c = '/';
      base = "/" + path + (path.empty() ? "" : "/") + op + "_" + std::to_string(id);
      n->set_name(base);
    } else {
      n->set_name("node_" + op + "_" + std::to_string(id));
    }
    for (const std::string& in : inputs) n->add_input(in);
    Names out;
    for (int i = 0; i < outputs; ++i) {
      out.push_back(torchscript_
                        ? base + "_output_" + std::to_string(i)
                        : "val_" + std::to_string(id) + (i ? "_" + std::to_string(i) : ""));
      n->add_output(out.back());
    }
    for (const auto& a : attrs) *n->add_attribute() = a;
    return out;
  }

  std::string node(const std::string& op, const Names& inputs,
                   const std::vector<onnx::AttributeProto>& attrs = {}) {
    return nodeN(op, inputs, 1, attrs)[0];
  }

  /// A float parameter named after the scope, uniform in [-bound, bound) around `center`.
  std::string param(const std::string& name, const Ints& dims, float bound, float center = 0) {
    std::vector<float> v;
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    v.reserve(n);
    for (int64_t i = 0; i < n; ++i) v.push_back(center + random_.uniform(-bound, bound));
    return returned(floatTensor(scope_ + (scope_.empty() ? "" : ".") + name, dims, v));
  }

  /// What a module or torchlib function returns to its caller: the value itself, or in an
  /// unoptimized dynamo export the Identity that renames the inlined function's output.
  std::string returned(const std::string& x) { return unoptimized_ ? node("Identity", {x}) : x; }

  /// The first input of the node that made `v` (the Reshape under a head split's Transpose).
  std::string producerInput(const std::string& v) const {
    for (const onnx::NodeProto& n : graph_.node())
      for (const std::string& out : n.output())
        if (out == v) return n.input(0);
    throw std::logic_error("no node makes " + v);
  }

  /// Declares float value `v`'s shape, as the exporters' own shape propagation knows it
  /// where ONNX's inference (run on the whole model at the end) cannot follow the shape
  /// arithmetic.
  void declare(const std::string& v, const Names& dims, int type = onnx::TensorProto::FLOAT) {
    setTensorType(*graph_.add_value_info(), v, type, dims);
  }

  /// True for an unoptimized dynamo export: torchlib's functions as written, nothing folded.
  bool unoptimized() const { return unoptimized_; }

  std::string intTensor(const std::string& name, const Ints& dims, const Ints& values) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    setRaw(*t, values);
    return name;
  }

  std::string floatTensor(const std::string& name, const Ints& dims,
                          const std::vector<float>& values) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    setRaw(*t, values);
    return name;
  }

  std::string boolTensor(const std::string& name, const Ints& dims,
                         const std::vector<uint8_t>& values) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::BOOL);
    for (int64_t d : dims) t->add_dims(d);
    setRaw(*t, values);
    return name;
  }

  /// A literal: a 1-D int64 tensor (or a scalar with `scalar`).
  std::string ints(const Ints& values, bool scalar = false) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    setRaw(t, values);
    return literal(std::move(t));
  }

  /// An int32 scalar literal (a Python int added to an int32 tensor).
  std::string int32Scalar(int32_t value) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT32);
    setRaw(t, std::vector<int32_t>{value});
    return literal(std::move(t));
  }

  /// A float scalar literal.
  std::string scalar(float value) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    setRaw(t, std::vector<float>{value});
    return literal(std::move(t));
  }

  /// torch.ones(1) as a literal (TorchScript's numerator of rsqrt).
  std::string floatOne() {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(1);
    setRaw(t, std::vector<float>{1.0f});
    return literal(std::move(t));
  }

 private:
  // "layers.0" keeps its dot in TorchScript's node names ("/layers.0/attn/..."): a dot
  // followed by a digit is part of a ModuleList index.
  static bool isLayerIndexDot(const std::string& path, const char* c) {
    const size_t i = static_cast<size_t>(c - path.data());
    return i + 1 < path.size() && path[i + 1] >= '0' && path[i + 1] <= '9';
  }

  std::string literal(onnx::TensorProto t) {
    if (torchscript_ || unoptimized_) {
      onnx::AttributeProto a;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = std::move(t);
      return node("Constant", {}, {a});
    }
    t.set_name("val_" + std::to_string(counter_++));
    *graph_.add_initializer() = std::move(t);
    return graph_.initializer(graph_.initializer_size() - 1).name();
  }

  bool torchscript_;
  bool unoptimized_;
  Random random_;
  onnx::GraphProto& graph_;
  std::string scope_;
  int counter_ = 0;
};

/// Builds one model family layer by layer; each method emits one PyTorch/HF construct in
/// the form the chosen exporter gives it.
class ModelWriter {
 public:
  explicit ModelWriter(const ExporterModelSpec& spec, onnx::GraphProto& graph)
      : s_(spec),
        b_(spec.exporter, spec.unoptimized, spec.seed, graph),
        ts_(spec.exporter == Exporter::kTorchScript) {}

  /// With past, after build(): each cache Concat's value and its present output's name.
  const std::vector<std::pair<std::string, std::string>>& presents() const { return presents_; }

  /// Emits the whole graph body from hidden_states to the returned output value.
  std::string build() {
    switch (s_.family) {
      case ModelFamily::kBert:
        return s_.exporter == Exporter::kTf2onnx ? bertTf() : bert();
      case ModelFamily::kGpt2:
        return gpt2();
      case ModelFamily::kLlama:
        return llama();
      case ModelFamily::kPhi:
        return phi();
      case ModelFamily::kHeads:
        return heads();
      case ModelFamily::kT5:
        return t5();
      case ModelFamily::kVit:
        return vit();
    }
    throw std::invalid_argument("unknown model family");
  }

 private:
  // ---- building blocks -------------------------------------------------------------------

  std::vector<onnx::AttributeProto> axesAttr(const Ints& axes) { return {attrInts("axes", axes)}; }

  std::string unsqueeze(const std::string& x, const Ints& axes) {
    if (s_.opset < 13) return b_.node("Unsqueeze", {x}, axesAttr(axes));
    return b_.node("Unsqueeze", {x, b_.ints(axes)});  // axes an input since opset 13
  }

  std::string reduceMean(const std::string& x) {
    if (s_.opset >= 18) return b_.node("ReduceMean", {x, b_.ints({-1})}, {attrInt("keepdims", 1)});
    return b_.node("ReduceMean", {x}, {attrInts("axes", {-1}), attrInt("keepdims", 1)});
  }

  std::string transpose(const std::string& x, const Ints& perm) {
    return b_.node("Transpose", {x}, {attrInts("perm", perm)});
  }

  /// x[..., lo:hi] on the last axis of a rank-4 value (TorchScript's Slice).
  std::string sliceLast(const std::string& x, int64_t lo, int64_t hi) {
    return b_.node("Slice", {x, b_.ints({lo}), b_.ints({hi}), b_.ints({3}), b_.ints({1})});
  }

  /// Dim i of x as a 1-D int64 tensor: TorchScript Shape -> Gather -> Unsqueeze, dynamo
  /// Shape(start=i, end=i+1).
  std::string dim(const std::string& x, int64_t i) {
    if (ts_) return unsqueeze(b_.node("Gather", {b_.node("Shape", {x}), b_.ints({i}, true)}), {0});
    return b_.node("Shape", {x}, {attrInt("start", i), attrInt("end", i + 1)});
  }

  std::string concat(const Names& parts, int64_t axis = 0) {
    return b_.node("Concat", parts, {attrInt("axis", axis)});
  }

  /// The size of an n-dim `x.expand(...)` with its -1s ("keep this dim") made 1s, which
  /// Expand broadcasts the same: TorchScript's Where(Equal(size, -1), 1, size) (its
  /// ones_like folded), torchlib's aten_expand Abs(size).
  std::string expandSize(const std::string& size, size_t n) {
    if (!ts_) return b_.node("Abs", {size});
    return b_.node("Where",
                   {b_.node("Equal", {size, b_.ints(Ints(n, -1))}), b_.ints(Ints(n, 1)), size});
  }

  /// nn.Linear on a 3-D input with a pre-transposed weight [in, out] (the exporters fold
  /// the Transpose): TorchScript Add(bias, MatMul), dynamo Add(MatMul, bias).
  std::string linear(const std::string& x, int in, int out, bool bias, const std::string& name) {
    b_.setScope(child(name));
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    std::string w = b_.param("weight", {in, out}, bound);
    std::string y = b_.node("MatMul", {x, w});
    if (bias) {
      std::string bv = b_.param("bias", {out}, bound);
      y = ts_ ? b_.node("Add", {bv, y}) : b_.node("Add", {y, bv});
    }
    b_.setScope(scope_);
    return b_.returned(y);
  }

  /// GPT-2's Conv1D: x.view(-1, in), addmm(bias, x, weight) (Gemm), view(*lead, out).
  std::string conv1d(const std::string& x, int in, int out, const std::string& name) {
    b_.setScope(child(name));
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    std::string w = b_.param("weight", {in, out}, bound);
    std::string bias = b_.param("bias", {out}, bound);
    std::string lead =
        ts_ ? b_.node("Slice", {b_.node("Shape", {x}), b_.ints({0}), b_.ints({-1}), b_.ints({0})})
            : concat({dim(x, 0), dim(x, 1)});
    std::string flat = b_.node("Reshape", {x, b_.ints({-1, in})});
    std::string mm =
        b_.node("Gemm", {flat, w, bias}, {attrFloat("alpha", 1.0f), attrFloat("beta", 1.0f)});
    std::string y = b_.node("Reshape", {mm, concat({lead, b_.ints({out})})});
    b_.setScope(scope_);
    return y;
  }

  /// view(batch, seq, heads, head_dim), the RMSNorm `norm` of each head with `qk_norm`
  /// (Qwen3's q_norm / k_norm), then permute; Gemma3 (qk_norm_after_transpose) permutes,
  /// then normalizes.
  std::string splitHeads(const std::string& x, int heads, const Ints& perm,
                         const std::string& norm = "") {
    std::string shape = concat({dim(x, 0), dim(x, 1), b_.ints({heads}), b_.ints({s_.head_dim})});
    std::string r = b_.node("Reshape", {x, shape});
    if (!s_.qk_norm || norm.empty()) return transpose(r, perm);
    if (s_.qk_norm_after_transpose) return rmsNorm(transpose(r, perm), norm, false, s_.head_dim);
    return transpose(rmsNorm(r, norm, false, s_.head_dim), perm);
  }

  /// transpose(1, 2) then reshape(batch, seq, heads * head_dim).
  std::string mergeHeads(const std::string& ctx, const std::string& like) {
    // .contiguous() after the transpose: torchlib's aten_contiguous is an Identity.
    std::string t = b_.returned(transpose(ctx, {0, 2, 1, 3}));
    std::string shape = concat({dim(like, 0), dim(like, 1), b_.ints({s_.heads * s_.head_dim})});
    return b_.node("Reshape", {t, shape});
  }

  /// nn.LayerNorm: LayerNormalization from opset 17 (both exporters), decomposed before.
  std::string layerNorm(const std::string& x, float eps, const std::string& name) {
    b_.setScope(child(name));
    std::string gamma = b_.param("weight", {s_.hidden}, 0.2f, 1.0f);
    std::string beta = b_.param("bias", {s_.hidden}, 0.2f);
    std::string y;
    if (s_.opset >= 17) {
      y = b_.node("LayerNormalization", {x, gamma, beta},
                  {attrInt("axis", -1), attrFloat("epsilon", eps)});
    } else {
      std::string mean = reduceMean(x);
      std::string d = b_.node("Sub", {x, mean});
      std::string var = reduceMean(b_.node("Pow", {d, b_.scalar(2.0f)}));
      std::string sd = b_.node("Sqrt", {b_.node("Add", {var, b_.scalar(eps)})});
      y = b_.node("Add", {b_.node("Mul", {b_.node("Div", {d, sd}), gamma}), beta});
    }
    b_.setScope(scope_);
    return b_.returned(y);
  }

  /// LlamaRMSNorm: weight * (x.float() * rsqrt(mean(x^2) + eps)).to(dtype), over the last
  /// dim, of `size` (0: hidden; Qwen3's q_norm and k_norm: head_dim). TorchScript
  /// keeps both Casts and writes rsqrt as Div(1, Sqrt); dynamo drops the no-op casts and
  /// writes rsqrt as Reciprocal(Sqrt) (torchlib's aten_rsqrt, whose result an unoptimized
  /// export reads through an Identity). T5LayerNorm (`t5`) casts only the input of the
  /// variance, x.to(float32).pow(2).mean(-1, keepdim=True), and multiplies x itself:
  /// weight * (x * rsqrt(variance + eps)), no cast back for float32 weights.
  std::string rmsNorm(const std::string& x, const std::string& name, bool t5 = false,
                      int size = 0) {
    b_.setScope(child(name));
    std::string w = b_.param("weight", {size ? size : s_.hidden}, 0.2f, 1.0f);
    std::string xf = ts_ ? b_.node("Cast", {x}, {attrInt("to", 1)}) : x;
    std::string var = reduceMean(b_.node("Pow", {xf, b_.scalar(2.0f)}));
    std::string sd = b_.node("Sqrt", {b_.node("Add", {var, b_.scalar(1e-6f)})});
    std::string inv =
        ts_ ? b_.node("Div", {b_.floatOne(), sd}) : b_.returned(b_.node("Reciprocal", {sd}));
    std::string h = b_.node("Mul", {t5 ? x : xf, inv});
    if (ts_ && !t5) h = b_.node("Cast", {h}, {attrInt("to", 1)});
    std::string y = b_.node("Mul", {w, h});
    b_.setScope(scope_);
    return b_.returned(y);
  }

  /// nn.functional.gelu (erf). TorchScript: Div(x, sqrt 2), Erf, Add 1, Mul x, Mul 0.5;
  /// torchlib: Div, Erf, Add 1, Mul 0.5, Mul x; opset 20+: the Gelu op.
  std::string geluErf(const std::string& x) {
    if (s_.opset >= 20 && !ts_) return b_.node("Gelu", {x});
    std::string e = b_.node("Erf", {b_.node("Div", {x, b_.scalar(1.41421356f)})});
    std::string p = b_.node("Add", {e, b_.scalar(1.0f)});
    if (ts_) return b_.node("Mul", {b_.node("Mul", {x, p}), b_.scalar(0.5f)});
    return b_.node("Mul", {x, b_.node("Mul", {b_.scalar(0.5f), p})});
  }

  /// NewGELUActivation (gelu_new), Python arithmetic in both exporters:
  /// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))).
  std::string geluNew(const std::string& x) {
    std::string half = b_.node("Mul", {x, b_.scalar(0.5f)});
    std::string cube = b_.node("Pow", {x, b_.scalar(3.0f)});
    std::string inner = b_.node("Add", {x, b_.node("Mul", {cube, b_.scalar(0.044715f)})});
    std::string t = b_.node("Tanh", {b_.node("Mul", {inner, b_.scalar(0.7978845608f)})});
    return b_.node("Mul", {half, b_.node("Add", {t, b_.scalar(1.0f)})});
  }

  /// q @ k^T as torch's TorchScript SDPA symbolic writes it with scale=None: the scale
  /// computed at run time from the query's head size, Cast(Div(1, Sqrt(Cast(Shape(q)[-1:])))),
  /// and Q and K^T (`kt`) each multiplied by its own Sqrt of it.
  std::string torchScriptSdpaScores(const std::string& q, const std::string& kt) {
    std::string last = b_.node("Slice", {b_.node("Shape", {q}), b_.ints({-1}), b_.ints({kIntMax})});
    std::string size = b_.node("Cast", {last}, {attrInt("to", 1)});
    std::string scale = b_.node("Cast", {b_.node("Div", {b_.floatOne(), b_.node("Sqrt", {size})})},
                                {attrInt("to", 1)});
    return b_.node("MatMul", {b_.node("Mul", {q, b_.node("Sqrt", {scale})}),
                              b_.node("Mul", {kt, b_.node("Sqrt", {scale})})});
  }

  /// True when the model calls scaled_dot_product_attention: bert's and vit's
  /// attn_implementation, the decoders' SDPA forms (is_causal, or the to_4d mask read by
  /// SDPA).
  bool sdpaAttention() const {
    if (s_.attention) return *s_.attention == AttentionImpl::kSdpa;
    return *s_.causal_mask == CausalMask::kSdpa || *s_.causal_mask == CausalMask::kTo4d;
  }

  /// Scores -> probabilities -> context. Eager attention (TorchScript): MatMul(q, k^T),
  /// Div by sqrt(head_dim), mask; `kt` is k already transposed. SDPA (dynamo, torchlib):
  /// Mul(q, sqrt(scale)), Mul(Transpose(k), sqrt(scale)), MatMul, Add(mask). SDPA in
  /// TorchScript (sdpaAttention): torch's SDPA symbolic (torchScriptSdpaScores). SDPA's is_causal
  /// mask reads K's length from `k_heads` when given (the heads whose transpose TorchScript merged
  /// into the `k_transposed` k), else k.
  std::string attend(const std::string& q, const std::string& k, const std::string& v,
                     const std::string& mask, bool k_transposed, bool sdpa_causal = false,
                     const std::string& k_heads = "") {
    std::string scores;
    if (ts_ && sdpaAttention()) {
      scores = torchScriptSdpaScores(q, k_transposed ? k : transpose(k, {0, 1, 3, 2}));
    } else if (ts_) {
      std::string kt = k_transposed ? k : transpose(k, {0, 1, 3, 2});
      scores = b_.node("Div", {b_.node("MatMul", {q, kt}),
                               b_.scalar(std::sqrt(static_cast<float>(s_.head_dim)))});
    } else if (b_.unoptimized()) {
      // torchlib's _attention_scale, unfolded: 1 / sqrt(q.size(-1)) read at run time, and
      // its square root taken once for Q and once for K^T.
      std::string head =
          b_.node("Gather", {b_.node("Shape", {q}), b_.ints({-1})}, {attrInt("axis", 0)});
      std::string scale = b_.node("Div", {b_.node("CastLike", {b_.scalar(1.0f), q}),
                                          b_.node("Sqrt", {b_.node("CastLike", {head, q})})});
      std::string qs = b_.node("Mul", {q, b_.node("Sqrt", {scale})});
      std::string ks = b_.node("Mul", {transpose(k, {0, 1, 3, 2}), b_.node("Sqrt", {scale})});
      scores = b_.node("MatMul", {qs, ks});
    } else {
      const float root_scale = 1.0f / std::sqrt(std::sqrt(static_cast<float>(s_.head_dim)));
      std::string qs = b_.node("Mul", {q, b_.scalar(root_scale)});
      std::string ks = b_.node("Mul", {transpose(k, {0, 1, 3, 2}), b_.scalar(root_scale)});
      scores = b_.node("MatMul", {qs, ks});
    }
    // torchlib's boolean-mask SDPA: the mask as 0 / -inf, and NaN weights (a row masked
    // whole) made 0.
    const bool bool_mask = s_.causal_mask == CausalMask::kBool && !mask.empty();
    const std::string zero = bool_mask ? b_.scalar(0.0f) : std::string();
    if (bool_mask) {
      const std::string minus_inf = b_.scalar(-std::numeric_limits<float>::infinity());
      scores = b_.node("Add", {scores, b_.node("Where", {mask, zero, minus_inf})});
    } else if (!mask.empty()) {
      scores = b_.node("Add", {scores, mask});
    }
    if (sdpa_causal)
      scores = b_.node("Add", {scores, sdpaCausalMask(q, k_heads.empty() ? k : k_heads)});
    std::string probs = b_.node("Softmax", {scores}, {attrInt("axis", -1)});
    if (bool_mask) probs = b_.node("Where", {b_.node("IsNaN", {probs}), zero, probs});
    return b_.node("MatMul", {probs, v});
  }

  /// SDPA's is_causal mask, [L, S] from the lengths of q and k: ones, Trilu(upper=0),
  /// Where(Equal(., 0), -inf, 0). TorchScript reads a length as Slice(Shape(x), [-2], [-1]),
  /// dynamo (after its optimizer) as Shape(x, start=-2, end=-1).
  std::string sdpaCausalMask(const std::string& q, const std::string& k) {
    auto length = [&](const std::string& x) {
      if (ts_) return b_.node("Slice", {b_.node("Shape", {x}), b_.ints({-2}), b_.ints({-1})});
      return b_.node("Shape", {x}, {attrInt("start", -2), attrInt("end", -1)});
    };
    std::string ones = b_.node("Expand", {b_.scalar(1.0f), concat({length(q), length(k)})});
    std::string tril = b_.node("Trilu", {ones}, {attrInt("upper", 0)});
    std::string zero = b_.scalar(0.0f);
    return b_.node("Where", {b_.node("Equal", {tril, zero}),
                             b_.scalar(-std::numeric_limits<float>::infinity()), zero});
  }

  /// (1.0 - mask[:, None, None, :].float()) * finfo.min, computed once for all layers. bert
  /// and t5 without padding_mask: the model called without attention_mask makes its own of
  /// ones, torch.ones(batch, seq): ConstantOfShape of 1.0 (TorchScript) or torchlib's
  /// Expand(1.0, shape) (dynamo).
  std::string paddingMask() {
    std::string m = unsqueeze(unsqueeze(maskInput(), {1}), {2});
    std::string mf = b_.node("Cast", {m}, {attrInt("to", 1)});
    return b_.node("Mul", {b_.node("Sub", {b_.scalar(1.0f), mf}), b_.scalar(kFloatMin)});
  }

  /// The [batch, seq] mask an encoder reads: attention_mask, or without it the model's own
  /// ones (see paddingMask).
  std::string maskInput() {
    if (s_.padding_mask) return "attention_mask";
    const std::string from = s_.embeddings ? "input_ids" : "hidden_states";
    std::string shape = concat({dim(from, 0), dim(from, 1)});
    return ts_ ? b_.node("ConstantOfShape", {shape}, {attrFloatTensor("value", 1.0f)})
               : b_.node("Expand", {b_.scalar(1.0f), shape});
  }

  /// bert's SDPA mask, _prepare_4d_attention_mask_for_sdpa(mask, float, tgt_len=seq) as
  /// traced (its all-ones shortcut is not taken under tracing), i.e. _expand_mask:
  /// inv = 1.0 - mask[:, None, None, :].expand(bsz, 1, seq, src_len).to(float), then
  /// inv.masked_fill(inv.to(bool), finfo.min) (expand's size by expandSize).
  std::string expandedMask() {
    std::string am = maskInput();
    std::string m = unsqueeze(unsqueeze(am, {1}), {2});
    const std::string from = s_.embeddings ? "input_ids" : "hidden_states";
    std::string size = concat({dim(am, 0), b_.ints({1}), dim(from, 1), dim(am, 1)});
    std::string e =
        b_.node("Cast", {b_.node("Expand", {m, expandSize(size, 4)})}, {attrInt("to", 1)});
    b_.declare(e, {"batch", "1", "seq", s_.past ? "total" : "seq"});  // torch's inference follows
    std::string inv = b_.node("Sub", {b_.scalar(1.0f), e});
    std::string set = b_.node("Cast", {inv}, {attrInt("to", onnx::TensorProto::BOOL)});
    return b_.node("Where", {set, b_.scalar(kFloatMin), inv});
  }

  /// AttentionMaskConverter(is_causal=True).to_4d(attention_mask, S, float) as traced (see
  /// CausalMask::kTo4d): full((S, S), min) -> ConstantOfShape; arange(mask.size(-1)) -> Range;
  /// (arange + 1).view(S, 1) -> Reshape; masked_fill_ -> Where; [None, None] -> Unsqueezes;
  /// .expand(b, 1, S, S + past_key_values_length) with the 0 added; and
  /// causal.masked_fill(expandedMask().bool(), min).
  std::string to4dMask() {
    std::string s = dim("hidden_states", 1);
    std::string full =
        b_.node("ConstantOfShape", {concat({s, s})}, {attrFloatTensor("value", kFloatMin)});
    std::string size = b_.node("Gather", {b_.node("Shape", {full}), b_.ints({-1}, true)});
    std::string cond = b_.node("Range", {b_.ints({0}, true), size, b_.ints({1}, true)});
    std::string rows = b_.node("Reshape", {b_.node("Add", {cond, b_.ints({1}, true)}),
                                           concat({unsqueeze(size, {0}), b_.ints({1})})});
    std::string causal = b_.node("Where", {b_.node("Less", {cond, rows}), b_.scalar(0.0f), full});
    std::string seq = b_.node("Gather", {b_.node("Shape", {"hidden_states"}), b_.ints({1}, true)});
    std::string total;
    if (s_.past) {
      // key_value_length = seq + past_key_values[0][0].size(-2); _make_causal_mask's
      // past_key_values_length = key_value_length - seq, zeros(seq, past) in front.
      std::string kv = b_.node(
          "Add", {seq, b_.node("Gather", {b_.node("Shape", {"past_key_0"}), b_.ints({2}, true)})});
      std::string past = b_.node("Sub", {kv, seq});
      std::string zeros = b_.node("ConstantOfShape", {concat({s, unsqueeze(past, {0})})},
                                  {attrFloatTensor("value", 0.0f)});
      causal = concat({zeros, causal}, -1);
      total = unsqueeze(b_.node("Add", {seq, past}), {0});
    } else {
      total = unsqueeze(b_.node("Add", {seq, b_.ints({0}, true)}), {0});
    }
    std::string shape = expandSize(concat({dim("hidden_states", 0), b_.ints({1}), s, total}), 4);
    std::string causal4d = b_.node("Expand", {unsqueeze(unsqueeze(causal, {0}), {1}), shape});
    // torch's inference follows the size.
    b_.declare(causal4d, {"batch", "1", "seq", s_.past ? "total" : "seq"});
    std::string padded =
        b_.node("Cast", {expandedMask()}, {attrInt("to", onnx::TensorProto::BOOL)});
    return b_.node("Where", {padded, b_.scalar(kFloatMin), causal4d});
  }

  std::string trilBuffer() {
    const int p = s_.max_positions;
    std::vector<uint8_t> tril(static_cast<size_t>(p) * p);
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) tril[static_cast<size_t>(i) * p + j] = j <= i;
    return b_.boolTensor(scope_ + ".bias", {1, 1, p, p}, tril);
  }

  /// self.bias[:, :, key_len - query_len : key_len, :key_len] (two Slices).
  std::string causalSlice(const std::string& tril, const std::string& q, const std::string& v) {
    std::string klen = dim(v, 2);
    std::string start = b_.node("Sub", {klen, dim(q, 2)});
    std::string rows = b_.node("Slice", {tril, start, klen, b_.ints({2}), b_.ints({1})});
    return b_.node("Slice", {rows, b_.ints({0}), klen, b_.ints({3}), b_.ints({1})});
  }

  /// self.bias[:, :, key_length - query_length : key_length, :key_length] with query_length,
  /// key_length = query.size(-2), key.size(-2) of the Q heads and the concatenated K heads,
  /// as TorchScript traces transformers 4.x's GPT2Attention with past: each size a Gather
  /// of the heads' Shape (their rank is known, so -2 is index 2), the Python int arithmetic
  /// a Sub of scalars, and each use as a slice bound its own Unsqueeze.
  std::string causalSliceByHeads(const std::string& tril, const std::string& qh,
                                 const std::string& kh) {
    std::string klen = b_.node("Gather", {b_.node("Shape", {kh}), b_.ints({2}, true)});
    std::string qlen = b_.node("Gather", {b_.node("Shape", {qh}), b_.ints({2}, true)});
    std::string start = unsqueeze(b_.node("Sub", {klen, qlen}), {0});
    std::string rows =
        b_.node("Slice", {tril, start, unsqueeze(klen, {0}), b_.ints({2}), b_.ints({1})});
    return b_.node("Slice", {rows, b_.ints({0}), unsqueeze(klen, {0}), b_.ints({3}), b_.ints({1})});
  }

  /// DynamicCache.update / torch.cat((past, new), dim=-2) of layer i's cached heads
  /// (`which`: "key" or "value"); the result is also the graph output present_<which>_i.
  /// The first step (`presents`, no past) returns the new heads themselves.
  std::string withPast(const std::string& which, const std::string& heads) {
    const std::string i = std::to_string(layer_);
    std::string c = s_.past ? concat({"past_" + which + "_" + i, heads}, 2) : heads;
    presents_.emplace_back(c, "present_" + which + "_" + i);
    return c;
  }

  /// The stacked cache of ONNX Runtime's GPT-2 export: K and V heads concatenated behind
  /// past_i[0] and past_i[1] on axis 2; present_i = stack(K, V), a graph output.
  std::pair<std::string, std::string> withStackedPast(const std::string& k, const std::string& v) {
    const std::string i = std::to_string(layer_);
    auto half = [&](int64_t which) {
      return b_.node("Gather", {"past_" + i, b_.ints({which}, true)}, {attrInt("axis", 0)});
    };
    std::string kc = concat({half(0), k}, 2);
    std::string vc = concat({half(1), v}, 2);
    presents_.emplace_back(concat({unsqueeze(kc, {0}), unsqueeze(vc, {0})}, 0), "present_" + i);
    return {kc, vc};
  }

  /// HF >= 4.38's _update_causal_mask with a cache, once for all layers: key j is visible
  /// to query i when j <= past + i (cache_position) and attention_mask[b, j] is 1;
  /// Where(visible, 0, finfo.min) as [batch, 1, seq, total]. The first step (`presents`)
  /// traced past_seen_tokens = 0 as a literal.
  std::string pastAttentionMask() {
    auto size = [&](const std::string& x, int64_t i) {
      return b_.node("Gather", {b_.node("Shape", {x}), b_.ints({i}, true)});
    };
    std::string p = s_.past ? size("past_key_0", 2) : b_.ints({0}, true);
    std::string t = b_.node("Add", {p, size("hidden_states", 1)});
    std::string one = b_.ints({1}, true);
    std::string cache_position = b_.node("Range", {p, t, one});
    std::string keys = b_.node("Range", {b_.ints({0}, true), t, one});
    std::string causal =
        b_.node("LessOrEqual", {unsqueeze(keys, {0}), unsqueeze(cache_position, {1})});
    std::string pad = b_.node("Cast", {unsqueeze(unsqueeze("attention_mask", {1}), {2})},
                              {attrInt("to", onnx::TensorProto::BOOL)});
    return b_.node("Where", {b_.node("And", {causal, pad}), b_.scalar(0.0f), b_.scalar(kFloatMin)});
  }

  /// rotate_half(x) = cat(-x2, x1): halves by Slice (TorchScript) or Split (dynamo).
  std::string rotateHalf(const std::string& x, int d) {
    std::string x1, x2;
    if (ts_) {
      x1 = sliceLast(x, 0, d / 2);
      x2 = sliceLast(x, d / 2, kIntMax);
    } else {
      Names halves = b_.nodeN("Split", {x, b_.ints({d / 2, d / 2})}, 2, {attrInt("axis", -1)});
      x1 = halves[0];
      x2 = halves[1];
    }
    return concat({b_.node("Neg", {x2}), x1}, -1);
  }

  /// q * cos + rotate_half(q) * sin on the first `rot` dims of the last axis (all of them
  /// when rot == head_dim); the rest is concatenated back unchanged (Phi).
  std::string applyRope(const std::string& x, const std::string& cos, const std::string& sin) {
    const int rot = s_.rotary_dim;
    std::string xr = x, pass;
    if (rot < s_.head_dim) {
      if (ts_) {
        xr = sliceLast(x, 0, rot);
        pass = sliceLast(x, rot, kIntMax);
      } else {
        Names parts =
            b_.nodeN("Split", {x, b_.ints({rot, s_.head_dim - rot})}, 2, {attrInt("axis", -1)});
        xr = parts[0];
        pass = parts[1];
      }
    }
    std::string y =
        b_.node("Add", {b_.node("Mul", {xr, cos}), b_.node("Mul", {rotateHalf(xr, rot), sin})});
    return pass.empty() ? y : concat({y, pass}, -1);
  }

  /// Without a position_ids input: cache_position = arange(0, seq) (seq read from
  /// hidden_states), position_ids = cache_position.unsqueeze(0), [1, seq].
  std::string arangePositions() {
    std::string seq =
        ts_ ? b_.node("Gather", {b_.node("Shape", {"hidden_states"}), b_.ints({1}, true)})
            : b_.node("Squeeze", {dim("hidden_states", 1), b_.ints({0})});
    return unsqueeze(b_.node("Range", {b_.ints({0}, true), seq, b_.ints({1}, true)}), {0});
  }

  /// cos and sin of position_ids as [batch, seq, rot] (before the per-layer Unsqueeze).
  std::pair<std::string, std::string> ropeTables() {
    const int rot = s_.rotary_dim;
    std::vector<float> inv_freq;
    for (int i = 0; i < rot / 2; ++i)
      inv_freq.push_back(
          std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(rot)));
    if (*s_.rope_cache == RopeCache::kGather) {
      std::vector<float> cos, sin;
      for (int p = 0; p < s_.max_positions; ++p)
        for (int i = 0; i < rot; ++i) {
          const float angle = static_cast<float>(p) * inv_freq[i % (rot / 2)];
          cos.push_back(std::cos(angle));
          sin.push_back(std::sin(angle));
        }
      std::string cc =
          b_.floatTensor(scope_ + ".rotary_emb.cos_cached", {s_.max_positions, rot}, cos);
      std::string sc =
          b_.floatTensor(scope_ + ".rotary_emb.sin_cached", {s_.max_positions, rot}, sin);
      return {b_.node("Gather", {cc, positions_}), b_.node("Gather", {sc, positions_})};
    }
    // inv_freq[None, :, None].expand(batch, -1, 1) @ position_ids[:, None, :].float()
    std::string inv = b_.floatTensor(scope_ + ".rotary_emb.inv_freq", {1, rot / 2, 1}, inv_freq);
    std::string inv_b =
        b_.node("Expand", {inv, concat({dim(positions_, 0), b_.ints({1}), b_.ints({1})})});
    std::string pos = b_.node("Cast", {unsqueeze(positions_, {1})}, {attrInt("to", 1)});
    std::string freqs = transpose(b_.node("MatMul", {inv_b, pos}), {0, 2, 1});
    std::string emb = concat({freqs, freqs}, -1);
    std::string cos = b_.node("Cos", {emb}), sin = b_.node("Sin", {emb});
    if (s_.rope_scaling != 0.0f) {
      cos = b_.node("Mul", {cos, b_.scalar(s_.rope_scaling)});
      sin = b_.node("Mul", {sin, b_.scalar(s_.rope_scaling)});
    }
    return {cos, sin};
  }

  /// repeat_kv: x[:, :, None].expand(b, kv, rep, s, d).reshape(b, kv * rep, s, d).
  std::string repeatKv(const std::string& x) {
    const int rep = s_.heads / s_.kv_heads;
    if (rep == 1) return x;
    std::string b = dim(x, 0), s = dim(x, 2);
    std::string e = b_.node(
        "Expand", {unsqueeze(x, {2}),
                   concat({b, b_.ints({s_.kv_heads}), b_.ints({rep}), s, b_.ints({s_.head_dim})})});
    return b_.node("Reshape", {e, concat({b, b_.ints({s_.heads}), s, b_.ints({s_.head_dim})})});
  }

  /// torchlib's repeat of the K/V heads x for SDPA's enable_gqa (its
  /// _attention_repeat_kv_for_group_query; dynamo only, so dim() reads each size with
  /// Shape(t, start, end)): every size read from q or x at run time, the repeat count
  /// Div(q's heads, x's heads), the Unsqueeze axis a scalar constant.
  std::string torchlibRepeatKv(const std::string& q, const std::string& x) {
    const std::string b = dim(q, 0), n = dim(q, 1), g = dim(x, 1), l = dim(x, 2), h = dim(x, 3);
    const std::string e = b_.node("Expand", {b_.node("Unsqueeze", {x, b_.ints({2}, true)}),
                                             concat({b, g, b_.node("Div", {n, g}), l, h})});
    return b_.node("Reshape", {e, concat({b, n, l, h})});
  }

  /// Literals of a gpt.py Head's scores and mask, as dynamo's optimizer leaves them: deduped,
  /// one set serves every head of a layer.
  struct HeadLiterals {
    std::string zero, one, scale, fzero, fill;
  };

  /// k.shape[-1]**-0.5: Python float arithmetic (double), then a float32 tensor.
  float headScale() const {
    return static_cast<float>(std::pow(static_cast<double>(s_.head_dim), -0.5));
  }

  HeadLiterals headLiterals() {
    return {b_.ints({0}), b_.ints({1}), b_.scalar(headScale()), b_.scalar(0.0f),
            b_.scalar(-std::numeric_limits<float>::infinity())};
  }

  /// gpt.py's Head on its input x: K/Q/V Linears without bias, q @ k^T * head_size**-0.5,
  /// masked_fill(tril[:T, :T] == 0, -inf) with the head's own tril buffer, softmax, @ v.
  /// `t` (T as a 1-D int64 tensor) and `shared` are dynamo's, made once per layer; without
  /// them, TorchScript's per-head Shape/Gather/Unsqueeze and a Constant node per literal.
  std::string head(const std::string& x, std::string t, const HeadLiterals* shared) {
    const int p = s_.max_positions, hs = s_.head_dim;
    auto zero = [&] { return shared ? shared->zero : b_.ints({0}); };
    auto one = [&] { return shared ? shared->one : b_.ints({1}); };
    if (t.empty()) t = dim(x, 1);  // B, T, C = x.shape comes first in forward
    std::string k = linear(x, s_.hidden, hs, false, "key");
    std::string q = linear(x, s_.hidden, hs, false, "query");
    std::string scores = b_.node("MatMul", {q, transpose(k, {0, 2, 1})});
    scores = b_.node("Mul", {scores, shared ? shared->scale : b_.scalar(headScale())});
    std::vector<float> tril(static_cast<size_t>(p) * p);
    for (int i = 0; i < p; ++i)
      for (int j = 0; j <= i; ++j) tril[static_cast<size_t>(i) * p + j] = 1.0f;
    std::string buf = b_.floatTensor(child("tril"), {p, p}, tril);
    std::string rows = b_.node("Slice", {buf, zero(), t, zero(), one()});
    std::string sq = b_.node("Slice", {rows, zero(), t, one(), one()});
    std::string masked = b_.node("Equal", {sq, shared ? shared->fzero : b_.scalar(0.0f)});
    const float inf = std::numeric_limits<float>::infinity();
    scores = b_.node("Where", {masked, shared ? shared->fill : b_.scalar(-inf), scores});
    std::string probs = b_.node("Softmax", {scores}, {attrInt("axis", -1)});
    std::string v = linear(x, s_.hidden, hs, false, "value");
    return b_.node("MatMul", {probs, v});
  }

  /// The self-attention of a LLaMA or Phi layer on its normed input n, up to the merge of
  /// the heads: Q/K/V projections (with biases: Phi), RoPE of Q and K by the cos/sin
  /// `tables` ([batch, seq, rot]; the layer's own, made here, when `per_layer`), repeat_kv
  /// of K and V (nothing without grouped heads), and the core with HF's prepared
  /// attention_mask or SDPA's is_causal mask.
  std::string ropeSelfAttention(const std::string& n, bool bias, bool per_layer,
                                std::pair<std::string, std::string>& tables) {
    const int h = s_.hidden, qd = s_.heads * s_.head_dim, kvd = s_.kv_heads * s_.head_dim;
    std::string q = splitHeads(linear(n, h, qd, bias, "q_proj"), s_.heads, {0, 2, 1, 3}, "q_norm");
    std::string k =
        splitHeads(linear(n, h, kvd, bias, "k_proj"), s_.kv_heads, {0, 2, 1, 3}, "k_norm");
    std::string v = splitHeads(linear(n, h, kvd, bias, "v_proj"), s_.kv_heads, {0, 2, 1, 3});
    if (per_layer) tables = ropeTables();
    std::string cos = unsqueeze(tables.first, {1}), sin = unsqueeze(tables.second, {1});
    q = applyRope(q, cos, sin);
    k = applyRope(k, cos, sin);
    if (s_.past || s_.presents) k = withPast("key", k), v = withPast("value", v);
    const bool sdpa = *s_.causal_mask == CausalMask::kSdpa;
    // V's repeat first, as GCC evaluated the arguments when they were written inline.
    const std::string vr = s_.sdpa_gqa ? torchlibRepeatKv(q, v) : repeatKv(v);
    const std::string kr = s_.sdpa_gqa ? torchlibRepeatKv(q, k) : repeatKv(k);
    std::string mask = sdpa ? "" : mask_;
    if (s_.mask_sliced_by_keys)  // never with sdpa (resolved())
      mask = b_.node("Slice", {mask, b_.ints({0}), dim(kr, 2), b_.ints({3}), b_.ints({1})});
    return mergeHeads(attend(q, kr, vr, mask, false, sdpa), n);
  }

  /// The scope of a submodule; gpt.py's ln_f sits at the top, where the scope is empty.
  std::string child(const std::string& name) const {
    return scope_.empty() ? name : scope_ + "." + name;
  }

  void enterLayer(int i, const std::string& name) {
    layer_ = i;
    scope_ = name + "." + std::to_string(i);
    b_.setScope(scope_);
  }

  void enterScope(const std::string& suffix) {
    scope_ += suffix;
    b_.setScope(scope_);
  }

  void enterModel(const std::string& name) {
    scope_ = name;
    b_.setScope(scope_);
  }

  // ---- families --------------------------------------------------------------------------

  /// An nn.Embedding's table [rows, hidden] under the current scope.
  std::string embeddingTable(const std::string& name, int rows) {
    b_.setScope(child(name));
    std::string w = b_.param("weight", {rows, s_.hidden}, 1.0f);
    b_.setScope(scope_);
    return w;
  }

  /// BertEmbeddings: inputs_embeds + token_type_embeddings, then += position_embeddings of
  /// position_ids sliced from the registered arange buffer [1, max_positions] by the length
  /// read from input_ids, then LayerNorm (dropout is gone in eval). transformers >= 4.2
  /// slices [:, past : seq_length + past] with past = 0, which TorchScript traces as
  /// Slice(buffer, 0, Unsqueeze(Add(Gather(Shape(ids), 1), 0)), 1, 1) (the optional Add of
  /// ONNX Runtime's fusion_embedlayer.py); the opset 11 exports of older transformers slice
  /// [:, :seq_length], without the Add. Dynamo's symbolic sizes fold the + 0: its end is
  /// Shape(ids, start=1, end=2).
  /// RobertaEmbeddings (transformers 4.x) without token_type_ids: see ExporterModelSpec.
  std::string robertaEmbeddings() {
    const int64_t pad = 1;
    const int p = s_.max_positions + 2;
    // create_position_ids_from_input_ids: mask = ids.ne(pad).int(); (cumsum(mask, 1)
    // .type_as(mask) + past_key_values_length) * mask, .long() + pad. Dynamo's trace folds the
    // + 0 and the cast to the type the cumsum already has.
    std::string pad_id = b_.ints({pad}, true);
    std::string mask = b_.node("Cast", {b_.node("Not", {b_.node("Equal", {"input_ids", pad_id})})},
                               {attrInt("to", onnx::TensorProto::INT32)});
    std::string sum = b_.node("CumSum", {mask, b_.ints({1}, true)});
    if (ts_) {
      sum = b_.node("Cast", {sum}, {attrInt("to", onnx::TensorProto::INT32)});
      sum = b_.node("Add", {sum, b_.int32Scalar(0)});
    }
    std::string counted = b_.node("Mul", {sum, mask});
    std::string pos = b_.node(
        "Add", {b_.node("Cast", {counted}, {attrInt("to", onnx::TensorProto::INT64)}), pad_id});
    // self.token_type_ids[:, :seq_length].expand(batch, seq_length), a buffer of zeros.
    const Ints zeros(static_cast<size_t>(p), 0);
    std::string buffer = b_.intTensor(child("token_type_ids"), {1, p}, zeros);
    std::string types =
        b_.node("Slice", {buffer, b_.ints({0}), dim("input_ids", 1), b_.ints({1}), b_.ints({1})});
    types = b_.node("Expand",
                    {types, expandSize(concat({dim("input_ids", 0), dim("input_ids", 1)}), 2)});
    // Dynamo's symbolic shapes know the expand's [batch, seq]; ONNX's inference, standing
    // in for TorchScript's, does not see through the slice clamped to the buffer.
    if (!ts_) b_.declare(types, {"batch", "seq"}, onnx::TensorProto::INT64);
    std::string words =
        b_.node("Gather", {embeddingTable("word_embeddings", s_.vocab), "input_ids"});
    std::string e = b_.node(
        "Add", {words, b_.node("Gather", {embeddingTable("token_type_embeddings", 1), types})});
    e = b_.node("Add", {e, b_.node("Gather", {embeddingTable("position_embeddings", p), pos})});
    return layerNorm(e, 1e-5f, "LayerNorm");
  }

  std::string bertEmbeddings() {
    if (s_.roberta) return robertaEmbeddings();
    const int p = s_.max_positions;
    Ints arange(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) arange[static_cast<size_t>(i)] = i;
    std::string buffer = b_.intTensor(child("position_ids"), {1, p}, arange);
    std::string end;
    if (ts_ && s_.opset >= 13) {
      std::string seq = b_.node("Gather", {b_.node("Shape", {"input_ids"}), b_.ints({1}, true)});
      end = unsqueeze(b_.node("Add", {seq, b_.ints({0}, true)}), {0});
    } else {
      end = dim("input_ids", 1);
    }
    std::string pos = b_.node("Slice", {buffer, b_.ints({0}), end, b_.ints({1}), b_.ints({1})});
    std::string words =
        b_.node("Gather", {embeddingTable("word_embeddings", s_.vocab), "input_ids"});
    std::string types =
        b_.node("Gather", {embeddingTable("token_type_embeddings", 2), "token_type_ids"});
    std::string e = b_.node("Add", {words, types});
    e = b_.node("Add", {e, b_.node("Gather", {embeddingTable("position_embeddings", p), pos})});
    return layerNorm(e, 1e-12f, "LayerNorm");
  }

  std::string bert() {
    const int h = s_.hidden;
    enterModel("embeddings");
    std::string x =
        s_.embeddings ? bertEmbeddings() : layerNorm("hidden_states", 1e-12f, "LayerNorm");
    std::string mask = sdpaAttention() ? expandedMask() : paddingMask();
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "encoder.layer");
      std::string q =
          splitHeads(linear(x, h, h, true, "attention.self.query"), s_.heads, {0, 2, 1, 3});
      // transpose_for_scores then key.transpose(-1, -2): TorchScript merges the two.
      std::string k = splitHeads(linear(x, h, h, true, "attention.self.key"), s_.heads,
                                 ts_ ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
      std::string v =
          splitHeads(linear(x, h, h, true, "attention.self.value"), s_.heads, {0, 2, 1, 3});
      // SDPA's transpose of K is merged into transpose_for_scores' as well.
      std::string ctx = mergeHeads(attend(q, k, v, mask, true), x);
      std::string a = linear(ctx, h, h, true, "attention.output.dense");
      x = layerNorm(b_.node("Add", {a, x}), 1e-12f, "attention.output.LayerNorm");
      std::string inter = geluErf(linear(x, h, s_.ffn, true, "intermediate.dense"));
      std::string o = linear(inter, s_.ffn, h, true, "output.dense");
      x = b_.returned(layerNorm(b_.node("Add", {o, x}), 1e-12f, "output.LayerNorm"));
    }
    return x;
  }

  // ---- TensorFlow's BERT through tf2onnx -------------------------------------------------

  /// A 2-D dense layer on flattened rows: MatMul and bias Add (tf.layers.dense).
  std::string tfDense(const std::string& x, int in, int out, const std::string& name) {
    b_.setScope(child(name));
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    std::string w = b_.param("kernel", {in, out}, bound);
    std::string y = b_.node("Add", {b_.node("MatMul", {x, w}), b_.param("bias", {out}, bound)});
    b_.setScope(scope_);
    return y;
  }

  /// tf.contrib.layers.layer_norm: tf.nn.moments (the squared difference a Sub and a Mul)
  /// and tf.nn.batch_normalization, x * m + (beta - mean * m), m = rsqrt(var + eps) * gamma,
  /// rsqrt as Sqrt then Reciprocal.
  std::string tfLayerNorm(const std::string& x, const std::string& name) {
    b_.setScope(child(name));
    std::string gamma = b_.param("gamma", {s_.hidden}, 0.2f, 1.0f);
    std::string beta = b_.param("beta", {s_.hidden}, 0.2f);
    std::string mean = reduceMean(x);
    std::string d = b_.node("Sub", {x, mean});
    std::string var = reduceMean(b_.node("Mul", {d, d}));
    std::string inv =
        b_.node("Reciprocal", {b_.node("Sqrt", {b_.node("Add", {var, b_.scalar(1e-12f)})})});
    std::string m = b_.node("Mul", {inv, gamma});
    std::string shift = b_.node("Sub", {beta, b_.node("Mul", {mean, m})});
    b_.setScope(scope_);
    return b_.node("Add", {b_.node("Mul", {x, m}), shift});
  }

  /// modeling.py's gelu: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
  std::string tfGelu(const std::string& x) {
    std::string cube = b_.node("Pow", {x, b_.scalar(3.0f)});
    std::string inner = b_.node("Add", {x, b_.node("Mul", {cube, b_.scalar(0.044715f)})});
    std::string t = b_.node("Tanh", {b_.node("Mul", {inner, b_.scalar(0.7978845608f)})});
    std::string cdf = b_.node("Mul", {b_.node("Add", {t, b_.scalar(1.0f)}), b_.scalar(0.5f)});
    return b_.node("Mul", {x, cdf});
  }

  /// transformer_model on rows: reshape_to_matrix once ([-1, hidden]), per layer the Q/K/V
  /// dense layers split into heads [batch, seq, N, H] (K's two transposes merged by
  /// tf2onnx's optimizer), scores times 1/sqrt(H) plus (1 - expand_dims(mask, 1)) * -10000,
  /// the context back to rows [batch * seq, N*H], residual Adds and LayerNorms on rows, and
  /// reshape_from_matrix ([-1, seq, hidden]) at the end. The mask is
  /// create_attention_mask_from_input_mask's [batch, seq, seq]: ones [batch, seq, 1] times the
  /// float input_mask viewed [batch, 1, seq].
  std::string bertTf() {
    const int h = s_.hidden;
    const int64_t seq = kTfSequence;
    enterModel("bert");
    std::string to_mask =
        b_.node("Cast", {b_.node("Reshape", {"attention_mask", b_.ints({-1, 1, seq})})},
                {attrInt("to", 1)});
    std::string batch = b_.node(
        "Slice", {b_.node("Shape", {"attention_mask"}), b_.ints({0}), b_.ints({1}), b_.ints({0})});
    std::string ones = b_.node("ConstantOfShape", {concat({batch, b_.ints({seq, 1})})},
                               {attrFloatTensor("value", 1.0f)});
    std::string mask = b_.node("Mul", {ones, to_mask});
    std::string x = b_.node(
        "Reshape", {tfLayerNorm("hidden_states", "embeddings.LayerNorm"), b_.ints({-1, h})});
    // get_shape_list's batch_size, with the batch unknown, is tf.shape(x)[0] (Shape, then
    // StridedSlice as Slice and Squeeze); tf.reshape's shape lists are tf.stack'ed around it
    // (Unsqueeze, Concat), their static sizes folded into constants.
    std::string first = b_.node(
        "Slice", {b_.node("Shape", {"hidden_states"}), b_.ints({0}), b_.ints({1}), b_.ints({0})});
    std::string b = s_.opset >= 13 ? b_.node("Squeeze", {first, b_.ints({0})})
                                   : b_.node("Squeeze", {first}, axesAttr({0}));
    const std::string heads = concat({unsqueeze(b, {0}), b_.ints({seq, s_.heads, s_.head_dim})});
    const std::string rows =
        concat({unsqueeze(b_.node("Mul", {b, b_.ints({seq}, true)}), {0}), b_.ints({h})});
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "encoder.layer");
      std::string q = b_.node("Reshape", {tfDense(x, h, h, "attention.self.query"), heads});
      std::string k = b_.node("Reshape", {tfDense(x, h, h, "attention.self.key"), heads});
      std::string v = b_.node("Reshape", {tfDense(x, h, h, "attention.self.value"), heads});
      std::string scores = b_.node(
          "Mul", {b_.node("MatMul", {transpose(q, {0, 2, 1, 3}), transpose(k, {0, 2, 3, 1})}),
                  b_.scalar(1.0f / std::sqrt(static_cast<float>(s_.head_dim)))});
      std::string adder = b_.node(
          "Mul", {b_.node("Sub", {b_.scalar(1.0f), unsqueeze(mask, {1})}), b_.scalar(-10000.0f)});
      std::string p = b_.node("Softmax", {b_.node("Add", {scores, adder})}, {attrInt("axis", 3)});
      std::string ctx = transpose(b_.node("MatMul", {p, transpose(v, {0, 2, 1, 3})}), {0, 2, 1, 3});
      std::string a = tfDense(b_.node("Reshape", {ctx, rows}), h, h, "attention.output.dense");
      x = tfLayerNorm(b_.node("Add", {a, x}), "attention.output.LayerNorm");
      std::string inter = tfGelu(tfDense(x, h, s_.ffn, "intermediate.dense"));
      std::string o = tfDense(inter, s_.ffn, h, "output.dense");
      x = tfLayerNorm(b_.node("Add", {o, x}), "output.LayerNorm");
    }
    return b_.node("Reshape", {x, b_.ints({-1, seq, h})});
  }

  std::string gpt2() {
    const int h = s_.hidden;
    const bool where = *s_.causal_mask == CausalMask::kWhere;
    enterModel("transformer");
    const bool to4d = *s_.causal_mask == CausalMask::kTo4d;
    const bool sdpa = *s_.causal_mask == CausalMask::kSdpa;  // is_causal, no attention_mask
    std::string mask = to4d ? to4dMask() : s_.padding_mask ? paddingMask() : "";
    std::string tril;
    if (where || to4d || sdpa) {
      // Every GPT2Attention has its own tril buffer "bias"; the layers below make theirs.
    } else {
      // _prepare_4d_causal_attention_mask: causal and padding in one additive mask.
      tril = trilBuffer();
      std::string seq = dim("hidden_states", 1);
      std::string rows = b_.node("Slice", {tril, b_.ints({0}), seq, b_.ints({2}), b_.ints({1})});
      std::string causal = b_.node("Slice", {rows, b_.ints({0}), seq, b_.ints({3}), b_.ints({1})});
      mask = b_.node("Where", {causal, mask, b_.scalar(kFloatMin)});
    }
    std::string x = "hidden_states";
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "transformer.h");
      std::string ln1 = layerNorm(x, 1e-5f, "ln_1");
      enterScope(".attn");
      Names qkv = b_.nodeN("Split", {conv1d(ln1, h, 3 * h, "c_attn"), b_.ints({h, h, h})}, 3,
                           {attrInt("axis", 2)});
      std::string q = splitHeads(qkv[0], s_.heads, {0, 2, 1, 3});
      // With a cache, K is kept (concatenated) as heads, its present, and transposed after:
      // nothing to merge.
      const bool cache = s_.past || s_.presents;
      std::string k =
          splitHeads(qkv[1], s_.heads, ts_ && !cache ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
      // SDPA's is_causal mask reads the length of the K heads, which TorchScript keeps
      // beside the Transpose it merged into K's.
      std::string k_heads;
      if (sdpa && ts_) k_heads = transpose(b_.producerInput(k), {0, 2, 1, 3});
      std::string v = splitHeads(qkv[2], s_.heads, {0, 2, 1, 3});
      std::string kc;
      if (s_.past && s_.stacked_past) {
        std::tie(kc, v) = withStackedPast(k, v);
        k = transpose(kc, {0, 1, 3, 2});
      } else if (cache) {
        kc = withPast("key", k);
        v = withPast("value", v);
        k = to4d ? kc : transpose(kc, {0, 1, 3, 2});  // SDPA transposes the keys itself
      }
      std::string ctx;
      if (where) {
        std::string scores =
            b_.node("Div", {b_.node("MatMul", {q, k}), b_.scalar(std::sqrt(float(s_.head_dim)))});
        std::string causal =
            cache ? causalSliceByHeads(trilBuffer(), q, kc) : causalSlice(trilBuffer(), q, v);
        scores = b_.node("Where", {causal, scores, b_.scalar(kFloatMin)});
        if (!mask.empty()) scores = b_.node("Add", {scores, mask});
        ctx = b_.node("MatMul", {b_.node("Softmax", {scores}, {attrInt("axis", -1)}), v});
      } else {
        ctx = attend(q, k, v, mask, ts_ && !(to4d && cache), sdpa, k_heads);
      }
      std::string a = conv1d(mergeHeads(ctx, ln1), h, h, "c_proj");
      enterLayer(i, "transformer.h");
      std::string r = b_.node("Add", {a, x});
      std::string ln2 = layerNorm(r, 1e-5f, "ln_2");
      enterScope(".mlp");
      std::string m = conv1d(geluNew(conv1d(ln2, h, s_.ffn, "c_fc")), s_.ffn, h, "c_proj");
      enterLayer(i, "transformer.h");
      x = b_.node("Add", {r, m});
    }
    enterModel("transformer");
    return layerNorm(x, 1e-5f, "ln_f");
  }

  std::string llama() {
    const int h = s_.hidden, qd = s_.heads * s_.head_dim;
    enterModel("model");
    // HF >= 4.38 computes cos/sin once in LlamaModel; older layers each Gather their own.
    const bool per_layer = *s_.rope_cache == RopeCache::kGather;
    if (!s_.position_ids_input) positions_ = arangePositions();
    auto tables = per_layer ? std::pair<std::string, std::string>{} : ropeTables();
    mask_ = *s_.causal_mask == CausalMask::kTo4d ? to4dMask()
            : s_.past || s_.presents             ? pastAttentionMask()
                                                 : "attention_mask";
    std::string x = "hidden_states";
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "model.layers");
      std::string n = rmsNorm(x, "input_layernorm");
      enterScope(".self_attn");
      std::string o =
          linear(ropeSelfAttention(n, false, per_layer, tables), qd, h, false, "o_proj");
      enterLayer(i, "model.layers");
      std::string r = b_.node("Add", {x, o});
      std::string n2 = rmsNorm(r, "post_attention_layernorm");
      enterScope(".mlp");
      std::string gate = linear(n2, h, s_.ffn, false, "gate_proj");
      std::string up = linear(n2, h, s_.ffn, false, "up_proj");
      std::string act = b_.node("Mul", {gate, b_.node("Sigmoid", {gate})});  // SiLU
      std::string down = linear(b_.node("Mul", {act, up}), s_.ffn, h, false, "down_proj");
      enterLayer(i, "model.layers");
      x = b_.returned(b_.node("Add", {r, down}));
    }
    enterModel("model");
    return rmsNorm(x, "norm");
  }

  std::string phi() {
    const int h = s_.hidden;
    enterModel("model");
    const bool per_layer = *s_.rope_cache == RopeCache::kGather;
    if (!s_.position_ids_input) positions_ = arangePositions();
    auto tables = per_layer ? std::pair<std::string, std::string>{} : ropeTables();
    mask_ = *s_.causal_mask == CausalMask::kTo4d ? to4dMask()
            : s_.past || s_.presents             ? pastAttentionMask()
                                                 : "attention_mask";
    std::string x = "hidden_states";
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "model.layers");
      std::string n = layerNorm(x, 1e-5f, "input_layernorm");
      enterScope(".self_attn");
      std::string a = linear(ropeSelfAttention(n, true, per_layer, tables), h, h, true, "dense");
      enterLayer(i, "model.layers");
      enterScope(".mlp");
      std::string ff = linear(geluNew(linear(n, h, s_.ffn, true, "fc1")), s_.ffn, h, true, "fc2");
      enterLayer(i, "model.layers");
      // PhiDecoderLayer: attn_outputs + feed_forward_hidden_states + residual.
      x = b_.node("Add", {b_.node("Add", {a, ff}), x});
    }
    enterModel("model");
    return layerNorm(x, 1e-5f, "final_layernorm");
  }

  /// gpt.py: blocks of x + sa(ln1(x)), x + ffwd(ln2(x)), then ln_f. MultiHeadAttention is
  /// cat([h(x) for h in heads], -1) then proj; FeedForward is net = Linear, ReLU, Linear.
  std::string heads() {
    const int h = s_.hidden;
    std::string x = "hidden_states";
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "blocks");
      std::string n = layerNorm(x, 1e-5f, "ln1");
      enterScope(".sa");
      const std::string sa = scope_;
      // dynamo reads T once (one sym_size) and shares it and the literals across heads.
      std::string t;
      HeadLiterals shared;
      if (!ts_) {
        t = dim(n, 1);
        shared = headLiterals();
      }
      Names outs;
      for (int j = 0; j < s_.heads; ++j) {
        enterScope(".heads." + std::to_string(j));
        outs.push_back(head(n, t, ts_ ? nullptr : &shared));
        scope_ = sa;
        b_.setScope(scope_);
      }
      std::string a = linear(concat(outs, -1), s_.heads * s_.head_dim, h, true, "proj");
      enterLayer(i, "blocks");
      std::string r = b_.node("Add", {x, a});
      std::string n2 = layerNorm(r, 1e-5f, "ln2");
      enterScope(".ffwd.net");
      std::string f = linear(n2, h, s_.ffn, true, "0");
      f = linear(b_.node("Relu", {f}), s_.ffn, h, true, "2");
      enterLayer(i, "blocks");
      x = b_.node("Add", {r, f});
    }
    enterModel("");
    return layerNorm(x, 1e-5f, "ln_f");
  }

  /// T5Attention._relative_position_bucket of key j - query i (bidirectional, 32 buckets,
  /// max_distance 128), in torch's float32 arithmetic.
  static int64_t t5Bucket(int64_t rel) {
    const int64_t half = 16, max_exact = 8;
    int64_t bucket = rel > 0 ? half : 0;
    const int64_t a = rel < 0 ? -rel : rel;
    if (a < max_exact) return bucket + a;
    const float scaled = std::log(static_cast<float>(a) / static_cast<float>(max_exact)) /
                         static_cast<float>(std::log(128.0 / 8.0)) *
                         static_cast<float>(half - max_exact);
    return bucket + std::min<int64_t>(max_exact + static_cast<int64_t>(scaled), half - 1);
  }

  /// compute_bias(S, S) of layer 0: relative_attention_bias(buckets).permute([2, 0, 1])
  /// .unsqueeze(0), [1, N, S, S]. The exporters compute the buckets from two aranges of S
  /// with Range/Sub/Abs/Log/Where; the buckets of S are the top-left [S, S] of those of
  /// max_positions, so here they are a constant table sliced by S read from x.
  std::string t5PositionBias(const std::string& x) {
    const int p = s_.max_positions;
    Ints buckets;
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) buckets.push_back(t5Bucket(j - i));
    std::string table = b_.intTensor(child("relative_position_bucket"), {p, p}, buckets);
    std::string seq = dim(x, 1);
    std::string rows = b_.node("Slice", {table, b_.ints({0}), seq, b_.ints({0}), b_.ints({1})});
    std::string cell = b_.node("Slice", {rows, b_.ints({0}), seq, b_.ints({1}), b_.ints({1})});
    b_.setScope(child("relative_attention_bias"));
    std::string w = b_.param("weight", {32, s_.heads}, 1.0f);
    b_.setScope(scope_);
    return unsqueeze(transpose(b_.node("Gather", {w, cell}), {2, 0, 1}), {0});
  }

  /// T5Attention of the encoder on its normed input n: q, k, v, o Linears without bias,
  /// shape() = view(batch, -1, heads, d_kv).transpose(1, 2), scores = q @ k.transpose(3, 2)
  /// unscaled, += position_bias, softmax(scores.float()) (TorchScript keeps that no-op
  /// Cast), @ v, unshape() = transpose(1, 2).contiguous().view(batch, -1, inner).
  std::string t5Attention(const std::string& n, const std::string& position_bias) {
    const int h = s_.hidden, inner = s_.heads * s_.head_dim;
    auto heads = [&](const std::string& t, const Ints& perm) {
      std::string shape =
          concat({dim(n, 0), b_.ints({-1}), b_.ints({s_.heads}), b_.ints({s_.head_dim})});
      return transpose(b_.node("Reshape", {t, shape}), perm);
    };
    std::string q = heads(linear(n, h, inner, false, "q"), {0, 2, 1, 3});
    // TorchScript merges shape()'s transpose(1, 2) and transpose(3, 2) of K.
    std::string k =
        heads(linear(n, h, inner, false, "k"), ts_ ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
    std::string v = heads(linear(n, h, inner, false, "v"), {0, 2, 1, 3});
    std::string scores = b_.node("MatMul", {q, ts_ ? k : transpose(k, {0, 1, 3, 2})});
    scores = b_.node("Add", {scores, position_bias});
    if (ts_) scores = b_.node("Cast", {scores}, {attrInt("to", 1)});
    std::string ctx = b_.node("MatMul", {b_.node("Softmax", {scores}, {attrInt("axis", -1)}), v});
    std::string merged = b_.node("Reshape", {b_.returned(transpose(ctx, {0, 2, 1, 3})),
                                             concat({dim(n, 0), b_.ints({-1}), b_.ints({inner})})});
    return linear(merged, inner, h, false, "o");
  }

  /// T5Stack as the encoder: per block, x + SelfAttention(layer_norm(x)) and
  /// x + DenseReluDense(layer_norm(x)) (wi, ReLU, wo; no biases), then final_layer_norm.
  /// The extended padding mask is added to layer 0's position bias once; every layer adds
  /// that sum to its scores.
  std::string t5() {
    const int h = s_.hidden;
    enterModel("encoder");
    std::string x = "hidden_states";
    if (s_.embeddings)
      x = b_.node("Gather", {embeddingTable("embed_tokens", s_.vocab), "input_ids"});
    std::string mask = paddingMask();
    std::string position_bias;
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "encoder.block");
      enterScope(".layer.0");
      std::string n = rmsNorm(x, "layer_norm", true);
      enterScope(".SelfAttention");
      if (i == 0) position_bias = b_.node("Add", {t5PositionBias(n), mask});
      std::string a = b_.returned(t5Attention(n, position_bias));
      enterLayer(i, "encoder.block");
      x = b_.node("Add", {x, a});
      enterScope(".layer.1");
      std::string n2 = rmsNorm(x, "layer_norm", true);
      enterScope(".DenseReluDense");
      std::string f =
          linear(b_.node("Relu", {linear(n2, h, s_.ffn, false, "wi")}), s_.ffn, h, false, "wo");
      enterLayer(i, "encoder.block");
      x = b_.returned(b_.node("Add", {x, f}));
    }
    enterModel("encoder");
    return rmsNorm(x, "final_layer_norm", true);
  }

  /// ViTEmbeddings on pixel_values: the patch projection Conv (kernel = stride = patch),
  /// flatten(2) (TorchScript's _flatten_helper: Reshape to Shape[:2] + [-1]; dynamo:
  /// view(batch, hidden, -1)), transpose(1, 2), cls_token.expand(batch_size, -1, -1)
  /// concatenated in front (expandSize), + position_embeddings.
  std::string vitEmbeddings() {
    const int h = s_.hidden, p = kVitPatch;
    b_.setScope(child("patch_embeddings.projection"));
    const float bound = 1.0f / std::sqrt(3.0f * p * p);
    std::string w = b_.param("weight", {h, 3, p, p}, bound);
    std::string bias = b_.param("bias", {h}, bound);
    b_.setScope(scope_);
    std::string conv = b_.node(
        "Conv", {"pixel_values", w, bias},
        {attrInts("dilations", {1, 1}), attrInt("group", 1), attrInts("kernel_shape", {p, p}),
         attrInts("pads", {0, 0, 0, 0}), attrInts("strides", {p, p})});
    std::string lead =
        ts_ ? b_.node("Slice", {b_.node("Shape", {conv}), b_.ints({0}), b_.ints({2}), b_.ints({0})})
            : concat({dim(conv, 0), b_.ints({h})});
    std::string flat = b_.node("Reshape", {conv, concat({lead, b_.ints({-1})})});
    std::string patches = transpose(flat, {0, 2, 1});
    std::string cls = b_.param("cls_token", {1, 1, h}, 0.02f);
    // TorchScript stacks the sizes (Reshape to [-1]); torchlib gets them as one list.
    std::string size =
        ts_ ? b_.node("Reshape", {concat({dim("pixel_values", 0), b_.ints({-1}), b_.ints({-1})}),
                                  b_.ints({-1})})
            : concat({dim("pixel_values", 0), b_.ints({-1, -1})});
    std::string expanded = b_.node("Expand", {cls, expandSize(size, 3)});
    std::string tokens = concat({expanded, patches}, 1);
    // torch knows the batch through flatten's and expand's shape arithmetic; ONNX's
    // inference does not.
    const std::string hs = std::to_string(h), n = std::to_string(kVitPatches);
    b_.declare(flat, {"batch", hs, n});
    b_.declare(patches, {"batch", n, hs});
    b_.declare(expanded, {"batch", "1", hs});
    b_.declare(tokens, {"batch", std::to_string(kVitPatches + 1), hs});
    std::string pos = b_.param("position_embeddings", {1, kVitPatches + 1, h}, 0.02f);
    return b_.node("Add", {tokens, pos});
  }

  /// ViTSelfAttention on the normed input n, up to the merge of the heads; no mask: attend(),
  /// but for eager attention in a dynamo export, MatMul(q, Transpose(k)) / sqrt(head_dim)
  /// (attend()'s dynamo form is SDPA's). TorchScript merges transpose_for_scores' permute
  /// of K with the key transpose of either (eager's key.transpose(-1, -2), SDPA's swap of
  /// the last axes).
  std::string vitSelfAttention(const std::string& n) {
    const int h = s_.hidden;
    std::string q = splitHeads(linear(n, h, h, true, "query"), s_.heads, {0, 2, 1, 3});
    std::string k = splitHeads(linear(n, h, h, true, "key"), s_.heads,
                               ts_ ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
    std::string v = splitHeads(linear(n, h, h, true, "value"), s_.heads, {0, 2, 1, 3});
    if (ts_ || sdpaAttention()) return mergeHeads(attend(q, k, v, "", true), n);
    std::string scores = b_.node("Div", {b_.node("MatMul", {q, transpose(k, {0, 1, 3, 2})}),
                                         b_.scalar(std::sqrt(static_cast<float>(s_.head_dim)))});
    std::string probs = b_.node("Softmax", {scores}, {attrInt("axis", -1)});
    return mergeHeads(b_.node("MatMul", {probs, v}), n);
  }

  /// ViTModel: per ViTLayer x + attention(layernorm_before(x)), then + output(intermediate(
  /// layernorm_after(.))) (ViTOutput adds its input_tensor last), then layernorm.
  std::string vit() {
    const int h = s_.hidden;
    enterModel("embeddings");
    std::string x = s_.embeddings ? vitEmbeddings() : "hidden_states";
    for (int i = 0; i < s_.layers; ++i) {
      enterLayer(i, "encoder.layer");
      std::string n = layerNorm(x, 1e-12f, "layernorm_before");
      enterScope(".attention.attention");
      std::string ctx = vitSelfAttention(n);
      enterLayer(i, "encoder.layer");
      std::string a = linear(ctx, h, h, true, "attention.output.dense");
      std::string r = b_.node("Add", {a, x});
      std::string n2 = layerNorm(r, 1e-12f, "layernorm_after");
      std::string inter = geluErf(linear(n2, h, s_.ffn, true, "intermediate.dense"));
      std::string o = linear(inter, s_.ffn, h, true, "output.dense");
      x = b_.returned(b_.node("Add", {o, r}));
    }
    enterModel("");
    return layerNorm(x, 1e-12f, "layernorm");
  }

  const ExporterModelSpec& s_;
  GraphBuilder b_;
  bool ts_;
  std::string scope_;
  int layer_ = 0;
  std::string mask_;  ///< llama and phi: the additive mask every layer adds
  /// llama and phi: the position ids RoPE reads, the input or arangePositions()'s.
  std::string positions_ = "position_ids";
  /// With past: each Concat's value and the present output it is returned as.
  std::vector<std::pair<std::string, std::string>> presents_;
};

void addInput(onnx::GraphProto& g, const std::string& name, int type, const Names& dims) {
  setTensorType(*g.add_input(), name, type, dims);
}

/// optimum's merge_decoders (optimum/onnx/graph_transformations.py), as it writes
/// decoder_model_merged.onnx from decoder_model.onnx (`first`, no past) and
/// decoder_with_past_model.onnx (`step`); see ExporterModelSpec::merged.
onnx::ModelProto mergeDecoders(onnx::ModelProto first, onnx::ModelProto step) {
  onnx::ModelProto merged;
  merged.set_ir_version(first.ir_version());
  merged.set_producer_name("optimum-onnx");
  *merged.mutable_opset_import() = first.opset_import();
  onnx::GraphProto& g = *merged.mutable_graph();
  g.set_name("merged");
  // The inputs of the first step, then those only the step with past has. attention_mask
  // may be longer than the new tokens (past + seq): its second dim gets a name of its own.
  std::set<std::string> seen;
  for (const onnx::ModelProto* m : {&first, &step})
    for (const onnx::ValueInfoProto& in : m->graph().input())
      if (seen.insert(in.name()).second) *g.add_input() = in;
  for (onnx::ValueInfoProto& in : *g.mutable_input())
    if (in.name() == "attention_mask")
      in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param(
          "total");
  addInput(g, "use_cache_branch", onnx::TensorProto::BOOL, {"1"});

  // Weights (every tensor of rank 2 or more, and rank-1 ones but integer ones) move to the
  // main graph, once per content; scalars and 1-D integer tensors stay in their branch.
  std::map<std::tuple<int32_t, Ints, std::string>, std::string> main_name;  // content -> name
  std::map<std::string, int> name_uses;
  auto branch = [&](onnx::ModelProto& m, const std::string& name) {
    onnx::GraphProto b;
    b.set_name(name);
    std::map<std::string, std::string> renamed;
    for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer()) {
      const bool integer =
          t.data_type() == onnx::TensorProto::INT32 || t.data_type() == onnx::TensorProto::INT64;
      if (t.dims_size() == 0 || (t.dims_size() == 1 && integer)) {
        *b.add_initializer() = t;
        continue;
      }
      const std::string original = t.name();
      auto [it, fresh] = main_name.emplace(
          std::make_tuple(t.data_type(), Ints(t.dims().begin(), t.dims().end()), t.raw_data()), "");
      if (fresh) {
        it->second = original + "_merged_" + std::to_string(++name_uses[original]);
        onnx::TensorProto* moved = g.add_initializer();
        *moved = std::move(t);
        moved->set_name(it->second);
      }
      renamed[original] = it->second;
    }
    for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
      for (std::string& in : *n.mutable_input())
        if (auto r = renamed.find(in); r != renamed.end()) in = r->second;
      *b.add_node() = std::move(n);
    }
    // The outputs as declared (both steps declare the same); no value_info, no inputs.
    *b.mutable_output() = m.graph().output();
    return b;
  };
  onnx::GraphProto no_past = branch(first, "no_past");
  onnx::GraphProto with_past = branch(step, "with_past");

  onnx::NodeProto* node = g.add_node();
  node->set_op_type("If");
  node->set_name("optimum::if");
  node->add_input("use_cache_branch");
  for (const onnx::ValueInfoProto& out : no_past.output()) {
    node->add_output(out.name());
    *g.add_output() = out;
  }
  for (auto [attr, body] : {std::pair<const char*, onnx::GraphProto*>{"then_branch", &with_past},
                            {"else_branch", &no_past}}) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = std::move(*body);
  }
  return merged;
}

}  // namespace

ExporterModelSpec resolved(const ExporterModelSpec& spec) {
  ExporterModelSpec s = spec;
  const bool ts = s.exporter == Exporter::kTorchScript;
  const bool tf = s.exporter == Exporter::kTf2onnx;
  if (s.opset == 0) s.opset = ts ? 17 : tf ? 13 : 18;
  if (tf && (s.family != ModelFamily::kBert || s.embeddings || !s.padding_mask ||
             (s.attention && *s.attention != AttentionImpl::kEager) || s.causal_mask))
    throw std::invalid_argument(
        "tf2onnx builds bert's encoder from hidden_states with its input_mask (eager attention)");
  if (tf && (s.opset < 10 || s.opset > 15))
    throw std::invalid_argument("the tf2onnx exports are built at opsets 10-15");
  if (s.kv_heads == 0) s.kv_heads = s.family == ModelFamily::kLlama ? s.heads / 2 : s.heads;
  if (s.kv_heads == 0) s.kv_heads = 1;
  if (s.heads <= 0 || s.hidden <= 0 || s.layers <= 0)
    throw std::invalid_argument("layers, hidden and heads must be positive");
  if (s.head_dim == 0) s.head_dim = s.hidden / s.heads;
  if (s.rotary_dim == 0) s.rotary_dim = s.family == ModelFamily::kPhi ? s.head_dim / 2 : s.head_dim;
  if (s.ffn == 0) s.ffn = (s.family == ModelFamily::kLlama ? 2 : 4) * s.hidden;
  // gpt.py masks per head with its tril buffer in both exporters' forms; other masks would
  // be another model, so a set one is rejected (as kSdpa is for bert and gpt2).
  if (s.family == ModelFamily::kHeads && s.causal_mask && *s.causal_mask != CausalMask::kWhere)
    throw std::invalid_argument("heads masks with its per-head tril buffer (where) only");
  if ((s.family == ModelFamily::kT5 || s.family == ModelFamily::kVit) && s.causal_mask)
    throw std::invalid_argument("t5's and vit's encoders have no causal mask");
  if (s.embeddings && s.family != ModelFamily::kBert && s.family != ModelFamily::kT5 &&
      s.family != ModelFamily::kVit)
    throw std::invalid_argument("embeddings are built for bert, t5 and vit");
  if (s.roberta && (s.family != ModelFamily::kBert || !s.embeddings))
    throw std::invalid_argument("roberta is bert's embedding layer: bert with embeddings");
  if (s.attention && s.family != ModelFamily::kVit && s.family != ModelFamily::kBert)
    throw std::invalid_argument("attention is bert's and vit's choice (the others fix theirs)");
  if (!s.attention && (s.family == ModelFamily::kBert || s.family == ModelFamily::kVit))
    s.attention = s.family == ModelFamily::kVit && !(ts && s.opset < 14) ? AttentionImpl::kSdpa
                                                                         : AttentionImpl::kEager;
  if (s.attention == AttentionImpl::kSdpa && ts && s.opset < 14)
    throw std::invalid_argument("torch's SDPA symbolic starts at opset 14");
  if (s.unoptimized && ts)
    throw std::invalid_argument("unoptimized is a dynamo export without its optimizer");
  if (s.vocab == 0) s.vocab = 100;
  if (s.vocab <= 0) throw std::invalid_argument("vocab must be positive");
  if (!s.causal_mask)
    s.causal_mask = ts || s.family == ModelFamily::kHeads ? CausalMask::kWhere : CausalMask::kAdd;
  if (!s.rope_cache) s.rope_cache = ts ? RopeCache::kGather : RopeCache::kComputed;
  if (s.head_dim <= 0 || s.head_dim % 2 != 0)
    throw std::invalid_argument("head_dim must be positive and even");
  if (s.rotary_dim <= 0 || s.rotary_dim % 2 != 0 || s.rotary_dim > s.head_dim)
    throw std::invalid_argument("rotary_dim must be even and at most head_dim");
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0)
    throw std::invalid_argument("heads must be a multiple of kv_heads");
  if (s.family != ModelFamily::kLlama && s.kv_heads != s.heads)
    throw std::invalid_argument("only llama has grouped KV heads");
  // T5's inner dim heads * d_kv may differ from d_model (its o projection maps it back).
  if (s.family != ModelFamily::kLlama && s.family != ModelFamily::kT5 &&
      s.heads * s.head_dim != s.hidden)
    throw std::invalid_argument("heads * head_dim must equal hidden");
  // Opsets 10-13 (axes as attributes) are built for the encoders only; the decoders' Split
  // and Trilu forms are opset 13's and 14's. Opset 10 (ONNX model zoo's BERT-SQuAD era)
  // has every op the encoders use; torch's Slice takes its bounds as inputs from 10.
  const bool encoder = s.family == ModelFamily::kBert || s.family == ModelFamily::kT5 ||
                       s.family == ModelFamily::kVit;
  if (ts && (s.opset < (encoder ? 10 : 14) || s.opset > 17))
    throw std::invalid_argument(encoder ? "the TorchScript exporter emits opsets 10-17"
                                        : "below opset 14 only bert, t5 and vit are built; the "
                                          "TorchScript exporter emits opsets up to 17");
  if (!ts && !tf && (s.opset < 18 || s.opset > 24))
    throw std::invalid_argument("the dynamo exporter emits opsets 18-24");
  const bool decoder_with_rope = s.family == ModelFamily::kLlama || s.family == ModelFamily::kPhi;
  if (*s.causal_mask == CausalMask::kSdpa && !decoder_with_rope &&
      (s.family != ModelFamily::kGpt2 || s.padding_mask))
    throw std::invalid_argument(
        "the SDPA is_causal form is built for llama, phi and gpt2 without a padding mask");
  if (*s.causal_mask == CausalMask::kBool && (!decoder_with_rope || ts))
    throw std::invalid_argument("the boolean mask is built for llama and phi, dynamo");
  if (!ts && *s.causal_mask == CausalMask::kWhere && !decoder_with_rope &&
      s.family != ModelFamily::kHeads)
    throw std::invalid_argument("the per-layer Where mask is TorchScript's (eager attention)");
  // The step with past, the first step returning presents, and the two merged: one cache.
  const bool cache = s.past || s.presents || s.merged;
  if (cache && !decoder_with_rope && s.family != ModelFamily::kGpt2)
    throw std::invalid_argument("past is built for the decoders gpt2, llama and phi");
  // GPT-2 with past as TorchScript exports GPT2Attention (eager); SDPA's is_causal aligns
  // its triangle top-left, which is wrong with a cache (HF passes an explicit mask then).
  if (cache && s.family == ModelFamily::kGpt2 && *s.causal_mask != CausalMask::kTo4d &&
      (!ts || *s.causal_mask != CausalMask::kWhere))
    throw std::invalid_argument(
        "gpt2 with past is built as TorchScript's eager attention or with the to_4d mask");
  if (s.mask_sliced_by_keys && (!decoder_with_rope || *s.causal_mask == CausalMask::kSdpa))
    throw std::invalid_argument("mask_sliced_by_keys slices llama's and phi's attention_mask");
  if (s.one_token && (!s.past || s.merged))
    throw std::invalid_argument("one_token is a decoding step with past, not merged");
  if (!s.padding_mask &&
      (s.family == ModelFamily::kGpt2
           ? *s.causal_mask != CausalMask::kWhere && *s.causal_mask != CausalMask::kSdpa
           : s.family != ModelFamily::kBert && s.family != ModelFamily::kT5))
    throw std::invalid_argument(
        "only gpt2's per-layer causal Where, bert and t5 go without a padding mask (vit has "
        "none)");
  if (s.stacked_past && (!s.past || s.merged || s.family != ModelFamily::kGpt2))
    throw std::invalid_argument("stacked_past is GPT-2's cache with past (optimum merges HF's)");
  if (cache && *s.causal_mask == CausalMask::kSdpa)
    throw std::invalid_argument("is_causal does not mask a decoding step with past");
  if (cache && *s.causal_mask == CausalMask::kBool)
    throw std::invalid_argument("the boolean mask is built without a cache");
  if (*s.causal_mask == CausalMask::kTo4d &&
      (s.presents || s.merged || s.stacked_past ||
       (!decoder_with_rope && s.family != ModelFamily::kGpt2)))
    throw std::invalid_argument(
        "the to_4d mask is built for gpt2, llama and phi, without a cache or with past");
  if (s.presents && s.past) throw std::invalid_argument("presents is the first step, without past");
  if (s.rope_scaling != 0.0f && (!decoder_with_rope || *s.rope_cache != RopeCache::kComputed))
    throw std::invalid_argument("rope_scaling scales llama's and phi's computed cos/sin");
  if (!s.position_ids_input &&
      (!decoder_with_rope || *s.rope_cache != RopeCache::kComputed || cache))
    throw std::invalid_argument(
        "without position_ids input: llama's and phi's computed RoPE, without a cache");
  if (s.qk_norm && s.family != ModelFamily::kLlama)
    throw std::invalid_argument("qk_norm is Qwen3's, built on llama");
  if (s.qk_norm_after_transpose && !s.qk_norm)
    throw std::invalid_argument("qk_norm_after_transpose places qk_norm");
  if (s.sdpa_gqa && (s.family != ModelFamily::kLlama || ts || *s.causal_mask != CausalMask::kSdpa ||
                     s.kv_heads >= s.heads))
    throw std::invalid_argument(
        "sdpa_gqa is torchlib's enable_gqa: llama, dynamo, SDPA's is_causal, kv_heads < heads");
  return s;
}

onnx::ModelProto makeExporterModel(const ExporterModelSpec& spec) {
  const ExporterModelSpec s = resolved(spec);
  if (s.merged) {
    ExporterModelSpec first = s, step = s;
    first.merged = step.merged = false;
    first.presents = true, first.past = false;
    step.past = true, step.presents = false;
    return mergeDecoders(makeExporterModel(first), makeExporterModel(step));
  }
  onnx::ModelProto model;
  const bool tf = s.exporter == Exporter::kTf2onnx;
  model.set_ir_version(s.exporter == Exporter::kTorchScript ? 8 : tf ? 7 : 9);
  model.set_producer_name(tf ? "tf2onnx" : "pytorch");
  model.set_producer_version(tf                                     ? "1.16.1"
                             : s.exporter == Exporter::kTorchScript ? "2.1.0"
                             : s.unoptimized                        ? "2.4.0"
                                                                    : "2.6.0");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(s.opset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(std::string(familyName(s.family)) + "_" + exporterName(s.exporter));

  // A decoding step exported for one new token has a static sequence length.
  const std::string seq = s.one_token ? "1"
                          : tf        ? std::to_string(kTfSequence)
                          : s.family == ModelFamily::kVit && s.embeddings
                              ? std::to_string(kVitPatches + 1)
                              : "seq";
  if (s.embeddings && s.family == ModelFamily::kVit) {
    const std::string side = std::to_string(kVitImage);
    addInput(g, "pixel_values", onnx::TensorProto::FLOAT, {"batch", "3", side, side});
  } else if (s.embeddings) {
    addInput(g, "input_ids", onnx::TensorProto::INT64, {"batch", "seq"});
    if (s.family == ModelFamily::kBert && !s.roberta)
      addInput(g, "token_type_ids", onnx::TensorProto::INT64, {"batch", "seq"});
  } else {
    // tf2onnx names each unknown dim of the inputs and outputs unk__N, one name per dim.
    addInput(g, "hidden_states", onnx::TensorProto::FLOAT,
             {tf ? "unk__0" : "batch", seq, std::to_string(s.hidden)});
  }
  if (s.past || s.presents) {
    if (s.padding_mask)
      addInput(g, "attention_mask", onnx::TensorProto::INT64, {"batch", s.past ? "total" : "seq"});
    if (s.family != ModelFamily::kGpt2)
      addInput(g, "position_ids", onnx::TensorProto::INT64, {"batch", seq});
    for (int i = 0; i < s.layers && s.past; ++i) {
      if (s.stacked_past) {
        addInput(g, "past_" + std::to_string(i), onnx::TensorProto::FLOAT,
                 {"2", "batch", std::to_string(s.kv_heads), "past", std::to_string(s.head_dim)});
        continue;
      }
      for (const char* which : {"key", "value"})
        addInput(g, std::string("past_") + which + "_" + std::to_string(i),
                 onnx::TensorProto::FLOAT,
                 {"batch", std::to_string(s.kv_heads), "past", std::to_string(s.head_dim)});
    }
  } else if (tf) {
    addInput(g, "attention_mask", onnx::TensorProto::INT32, {"unk__1", seq});
  } else if (s.family == ModelFamily::kBert || s.family == ModelFamily::kGpt2 ||
             s.family == ModelFamily::kT5) {
    if (s.padding_mask) addInput(g, "attention_mask", onnx::TensorProto::INT64, {"batch", "seq"});
  } else if (s.family != ModelFamily::kHeads && s.family != ModelFamily::kVit) {
    // heads: the tril buffers mask, no positions; vit: no mask, positions in the model
    if (*s.causal_mask == CausalMask::kTo4d)
      addInput(g, "attention_mask", onnx::TensorProto::INT64, {"batch", "seq"});
    else if (*s.causal_mask != CausalMask::kSdpa)
      addInput(
          g, "attention_mask",
          *s.causal_mask == CausalMask::kBool ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT,
          {"batch", "1", "seq", "seq"});
    if (s.position_ids_input)
      addInput(g, "position_ids", onnx::TensorProto::INT64, {"batch", "seq"});
  }
  ModelWriter writer(s, g);
  const std::string last = writer.build();
  // The last node writes the graph output directly, as exporters name it.
  for (int i = g.node_size() - 1; i >= 0; --i) {
    auto* outs = g.mutable_node(i)->mutable_output();
    if (!outs->empty() && outs->Get(0) == last) {
      *outs->Mutable(0) = "last_hidden_state";
      break;
    }
  }
  onnx::ValueInfoProto* out = g.add_output();
  out->set_name("last_hidden_state");
  auto* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param(tf ? "unk__2" : "batch");
  if (seq != "seq")
    t->mutable_shape()->add_dim()->set_dim_value(std::stoi(seq));
  else
    t->mutable_shape()->add_dim()->set_dim_param("seq");
  t->mutable_shape()->add_dim()->set_dim_value(s.hidden);
  // The exporters name the Concats' outputs after the present outputs they are.
  std::map<std::string, std::string> renamed(writer.presents().begin(), writer.presents().end());
  for (onnx::NodeProto& n : *g.mutable_node()) {
    for (std::string& in : *n.mutable_input())
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    for (std::string& o : *n.mutable_output())
      if (auto it = renamed.find(o); it != renamed.end()) o = it->second;
  }
  for (const auto& [value, name] : writer.presents()) {
    onnx::ValueInfoProto* p = g.add_output();
    p->set_name(name);
    auto* pt = p->mutable_type()->mutable_tensor_type();
    pt->set_elem_type(onnx::TensorProto::FLOAT);
    if (s.stacked_past) pt->mutable_shape()->add_dim()->set_dim_value(2);
    pt->mutable_shape()->add_dim()->set_dim_param("batch");
    pt->mutable_shape()->add_dim()->set_dim_value(s.kv_heads);
    pt->mutable_shape()->add_dim()->set_dim_param("total");
    pt->mutable_shape()->add_dim()->set_dim_value(s.head_dim);
  }

  // Both exporters leave every intermediate typed; data propagation through the shape
  // arithmetic keeps batch and seq symbolic where a Reshape reads a computed shape.
  static const NewerOpsetSchemas registry;
  onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1,
                                      /*enable_data_propagation=*/true);
  onnx::shape_inference::InferShapes(model, &registry, options);
  return model;
}

MergedBranches mergedBranches(const onnx::ModelProto& model) {
  MergedBranches m;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "If") continue;
    m.if_node = &n;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "then_branch") m.with_past = &a.g();
      if (a.name() == "else_branch") m.no_past = &a.g();
    }
    break;
  }
  return m;
}

ExpectedFusions expectedFusions(const ExporterModelSpec& spec) {
  const ExporterModelSpec s = resolved(spec);
  ExpectedFusions e;
  const int l = s.layers;
  e.attention = l;
  switch (s.family) {
    case ModelFamily::kBert:  // embeddings LN (or all the embeddings), then Add + LN twice per
                              // layer
      (s.embeddings ? e.embed_layer_norm : e.layer_norm) = 1;
      e.skip_layer_norm = 2 * l, e.gelu = l;
      break;
    case ModelFamily::kGpt2:  // ln_1 of layer 0; ln_2, later ln_1 and ln_f after an Add
      e.layer_norm = 1, e.skip_layer_norm = 2 * l, e.gelu = l;
      break;
    case ModelFamily::kLlama:
      // gelu: SwiGLU's SiLU, as QuickGelu(alpha 1).
      e.simplified_norm = 1, e.skip_simplified = 2 * l, e.rotary = 2 * l, e.gelu = l;
      if (s.qk_norm) e.simplified_norm += 2 * l;  // every layer's q_norm and k_norm
      break;
    case ModelFamily::kPhi:  // one LN per layer (shared by attention and MLP) + final
      e.layer_norm = 1, e.skip_layer_norm = l, e.rotary = 2 * l, e.gelu = l;
      break;
    case ModelFamily::kHeads:  // as gpt2, ReLU MLP; the heads merge into one attention
      e.layer_norm = 1, e.skip_layer_norm = 2 * l;
      break;
    case ModelFamily::kT5:
      // Layer 0's first norm reads the embeddings; every other norm follows a residual Add.
      // Attention: MultiHeadAttention with scale 1 and the position bias plus padding mask
      // as attention_bias. ReLU: nothing to fuse.
      e.simplified_norm = 1, e.skip_simplified = 2 * l;
      break;
    case ModelFamily::kVit:  // as gpt2: layernorm_before of layer 0, then after an Add
      e.layer_norm = 1, e.skip_layer_norm = 2 * l, e.gelu = l;
      break;
  }
  return e;
}

const char* familyName(ModelFamily family) {
  switch (family) {
    case ModelFamily::kBert:
      return "bert";
    case ModelFamily::kGpt2:
      return "gpt2";
    case ModelFamily::kLlama:
      return "llama";
    case ModelFamily::kPhi:
      return "phi";
    case ModelFamily::kHeads:
      return "heads";
    case ModelFamily::kT5:
      return "t5";
    case ModelFamily::kVit:
      return "vit";
  }
  return "?";
}

const char* exporterName(Exporter exporter) {
  switch (exporter) {
    case Exporter::kTorchScript:
      return "torchscript";
    case Exporter::kDynamo:
      return "dynamo";
    case Exporter::kTf2onnx:
      return "tf2onnx";
  }
  return "?";
}

bool parseFamily(const std::string& name, ModelFamily* family) {
  for (ModelFamily f :
       {ModelFamily::kBert, ModelFamily::kGpt2, ModelFamily::kLlama, ModelFamily::kPhi,
        ModelFamily::kHeads, ModelFamily::kT5, ModelFamily::kVit})
    if (name == familyName(f)) {
      *family = f;
      return true;
    }
  return false;
}

bool parseExporter(const std::string& name, Exporter* exporter) {
  for (Exporter e : {Exporter::kTorchScript, Exporter::kDynamo, Exporter::kTf2onnx})
    if (name == exporterName(e)) {
      *exporter = e;
      return true;
    }
  return false;
}

std::string oracleIntRanges(const ExporterModelSpec& spec, std::optional<bool> use_cache) {
  const ExporterModelSpec s = resolved(spec);
  if (s.merged) {
    ExporterModelSpec step = s;
    step.merged = step.presents = false, step.past = true;
    return oracleIntRanges(step) +
           (use_cache ? std::string(" --int-range use_cache_branch=") + (*use_cache ? "1:2" : "0:1")
                      : "");
  }
  if (s.family == ModelFamily::kBert || s.family == ModelFamily::kGpt2 ||
      s.family == ModelFamily::kT5) {
    std::string ranges = s.padding_mask ? "--int-range attention_mask=0:2" : "";
    if (s.embeddings) ranges += " --int-range input_ids=0:" + std::to_string(s.vocab);
    if (s.embeddings && s.family == ModelFamily::kBert && !s.roberta)
      ranges += " --int-range token_type_ids=0:2";
    return ranges;
  }
  // heads: hidden_states is its only input; vit: that or pixel_values.
  if (s.family == ModelFamily::kHeads || s.family == ModelFamily::kVit) return "";
  const bool int_mask = s.past || s.presents || *s.causal_mask == CausalMask::kTo4d;
  std::string ranges = int_mask ? "--int-range attention_mask=0:2" : "";
  if (s.position_ids_input)
    ranges += (ranges.empty() ? "" : " ") + std::string("--int-range position_ids=0:") +
              std::to_string(s.max_positions);
  return ranges;
}

}  // namespace onnx_rewrite::testing
