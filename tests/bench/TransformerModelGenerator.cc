//===- TransformerModelGenerator.cc - synthetic BERT-shaped models --------===//
//
// The graph is appended node by node to the GraphProto with torch-style names
// ("/encoder/layer.3/attention/self/query/MatMul", outputs "<node>_output_0",
// parameters "encoder.layer.3.attention.self.query.weight"). Random weights come
// from splitmix64 in creation order, so a seed gives the same bytes on every
// platform. External weights get consecutive offsets in one file that is only
// ever ftruncate'd: the file is sparse and reads as zeros.
//
//===----------------------------------------------------------------------===//
#include "tests/bench/TransformerModelGenerator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace onnx_rewrite::bench {
namespace {

/// splitmix64: tiny, fast and identical everywhere (std distributions are not).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float symmetric() { return static_cast<float>((next() >> 40) * 0x1.0p-24 * 2.0 - 1.0); }

 private:
  uint64_t state_;
};

void appendFloats(std::string& bytes, const std::vector<float>& values) {
  // ONNX raw_data is little-endian; so is every platform this project builds on.
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

onnx::AttributeProto intsAttribute(const char* name, std::initializer_list<int64_t> values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto intAttribute(const char* name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

void setTensorType(onnx::ValueInfoProto& info, const std::string& name,
                   std::initializer_list<const char*> dims, int64_t last) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const char* d : dims) {
    if (d)
      shape->add_dim()->set_dim_param(d);
    else
      shape->add_dim()->set_dim_value(1);
  }
  if (last > 0) shape->add_dim()->set_dim_value(last);
}

/// Appends nodes and initializers to one graph.
class Builder {
 public:
  Builder(const TransformerOptions& options, onnx::GraphProto& graph)
      : options_(options), graph_(graph), random_(options.seed) {}

  /// Adds node `op` named `name` reading `inputs`; returns its output's name.
  std::string node(const std::string& name, const char* op,
                   std::initializer_list<std::string> inputs,
                   std::initializer_list<onnx::AttributeProto> attributes = {}) {
    onnx::NodeProto* n = graph_.add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (const std::string& in : inputs) n->add_input(in);
    std::string out = name + "_output_0";
    n->add_output(out);
    for (const onnx::AttributeProto& a : attributes) *n->add_attribute() = a;
    return out;
  }

  /// A float scalar constant: one per use (named after `scope`) or one shared by all.
  std::string scalar(const std::string& scope, const char* key, float value) {
    return constant(scope, key, [&](onnx::TensorProto& t) {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.mutable_raw_data()->assign(reinterpret_cast<const char*>(&value), sizeof value);
    });
  }

  /// A 1-D int64 constant (a Reshape target shape).
  std::string shape(const std::string& scope, const char* key, std::vector<int64_t> dims) {
    return constant(scope, key, [&](onnx::TensorProto& t) {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(static_cast<int64_t>(dims.size()));
      t.mutable_raw_data()->assign(reinterpret_cast<const char*>(dims.data()),
                                   dims.size() * sizeof(int64_t));
    });
  }

  /// A float parameter of shape `dims`: random values in [-scale, scale] around `center`,
  /// or an external reference.
  std::string weight(const std::string& name, std::initializer_list<int64_t> dims, float scale,
                     float center = 0.0f) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(float);
    if (options_.inline_weights) {
      std::vector<float> values(static_cast<size_t>(count));
      for (float& v : values) v = center + scale * random_.symmetric();
      appendFloats(*t->mutable_raw_data(), values);
    } else {
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto entry = [&](const char* key, const std::string& value) {
        onnx::StringStringEntryProto* e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
      };
      entry("location", options_.external_location);
      entry("offset", std::to_string(external_bytes_));
      entry("length", std::to_string(bytes));
      external_bytes_ += bytes;
    }
    return name;
  }

  uint64_t externalBytes() const { return external_bytes_; }

 private:
  template <typename Fill>
  std::string constant(const std::string& scope, const char* key, Fill fill) {
    std::string name;
    if (options_.shared_constants) {
      name = std::string("/Constant_") + key;
      for (const onnx::TensorProto& t : shared_)
        if (t.name() == name) return name;
    } else {
      name = scope + "/Constant_" + key + "_output_0";
    }
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    fill(*t);
    if (options_.shared_constants) shared_.push_back(*t);
    return name;
  }

  const TransformerOptions& options_;
  onnx::GraphProto& graph_;
  Random random_;
  uint64_t external_bytes_ = 0;
  std::vector<onnx::TensorProto> shared_;  // few: a linear search is fine
};

/// LayerNorm as torch decomposes it when it cannot emit LayerNormalization.
std::string layerNorm(Builder& b, const std::string& scope, const std::string& param,
                      const std::string& x, int hidden) {
  const std::string mean = b.node(scope + "/ReduceMean", "ReduceMean", {x},
                                  {intsAttribute("axes", {-1}), intAttribute("keepdims", 1)});
  const std::string d = b.node(scope + "/Sub", "Sub", {x, mean});
  const std::string sq = b.node(scope + "/Pow", "Pow", {d, b.scalar(scope, "pow", 2.0f)});
  const std::string var = b.node(scope + "/ReduceMean_1", "ReduceMean", {sq},
                                 {intsAttribute("axes", {-1}), intAttribute("keepdims", 1)});
  const std::string var_eps = b.node(scope + "/Add", "Add", {var, b.scalar(scope, "eps", 1e-12f)});
  const std::string std_dev = b.node(scope + "/Sqrt", "Sqrt", {var_eps});
  const std::string normed = b.node(scope + "/Div", "Div", {d, std_dev});
  const std::string scaled =
      b.node(scope + "/Mul", "Mul", {normed, b.weight(param + ".weight", {hidden}, 0.1f, 1.0f)});
  return b.node(scope + "/Add_1", "Add", {scaled, b.weight(param + ".bias", {hidden}, 0.1f)});
}

/// nn.Linear: MatMul with the transposed weight, then Add(bias, product) as torch orders it.
std::string linear(Builder& b, const std::string& scope, const std::string& param,
                   const std::string& x, int in, int out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(in));
  const std::string product =
      b.node(scope + "/MatMul", "MatMul", {x, b.weight(param + ".weight", {in, out}, scale)});
  return b.node(scope + "/Add", "Add", {b.weight(param + ".bias", {out}, scale), product});
}

std::string transformerLayer(Builder& b, const TransformerOptions& o, int index,
                             const std::string& x, const std::string& mask) {
  const std::string scope = "/encoder/layer." + std::to_string(index);
  const std::string param = "encoder.layer." + std::to_string(index);
  const int h = o.hidden;
  const int head_dim = o.hidden / o.heads;
  const std::string self = scope + "/attention/self";
  const std::string self_param = param + ".attention.self";

  const std::string ln1 = layerNorm(b, scope + "/ln_1", param + ".ln_1", x, h);
  // Heads: [b, s, h] -> [b, s, heads, d] -> [b, heads, s, d] (K: [b, heads, d, s]).
  auto heads = [&](const char* which, std::initializer_list<int64_t> perm) {
    const std::string s = self + "/" + which;
    const std::string proj = linear(b, s, self_param + "." + which, ln1, h, h);
    const std::string split =
        b.node(s + "/Reshape", "Reshape", {proj, b.shape(s, "heads", {0, 0, o.heads, head_dim})});
    return b.node(s + "/Transpose", "Transpose", {split}, {intsAttribute("perm", perm)});
  };
  const std::string q = heads("query", {0, 2, 1, 3});
  const std::string k = heads("key", {0, 2, 3, 1});
  const std::string v = heads("value", {0, 2, 1, 3});
  const std::string scores = b.node(self + "/MatMul", "MatMul", {q, k});
  const std::string scaled =
      b.node(self + "/Div", "Div",
             {scores, b.scalar(self, "sqrt_d", std::sqrt(static_cast<float>(head_dim)))});
  const std::string masked = b.node(self + "/Add", "Add", {scaled, mask});
  const std::string probs =
      b.node(self + "/Softmax", "Softmax", {masked}, {intAttribute("axis", -1)});
  const std::string context = b.node(self + "/MatMul_1", "MatMul", {probs, v});
  const std::string merged_t =
      b.node(self + "/Transpose", "Transpose", {context}, {intsAttribute("perm", {0, 2, 1, 3})});
  const std::string merged =
      b.node(self + "/Reshape", "Reshape", {merged_t, b.shape(self, "merge", {0, 0, h})});
  const std::string attn =
      linear(b, scope + "/attention/output/dense", param + ".attention.output.dense", merged, h, h);
  const std::string residual = b.node(scope + "/Add", "Add", {attn, x});

  const std::string ln2 = layerNorm(b, scope + "/ln_2", param + ".ln_2", residual, h);
  const std::string inner =
      linear(b, scope + "/intermediate/dense", param + ".intermediate.dense", ln2, h, o.ffn);
  // GELU exactly as torch exports erf-GELU.
  const std::string gelu = scope + "/intermediate/intermediate_act_fn";
  const std::string div =
      b.node(gelu + "/Div", "Div", {inner, b.scalar(gelu, "sqrt2", 1.4142135f)});
  const std::string erf = b.node(gelu + "/Erf", "Erf", {div});
  const std::string one = b.node(gelu + "/Add", "Add", {erf, b.scalar(gelu, "one", 1.0f)});
  const std::string times = b.node(gelu + "/Mul", "Mul", {inner, one});
  const std::string act = b.node(gelu + "/Mul_1", "Mul", {times, b.scalar(gelu, "half", 0.5f)});
  const std::string out =
      linear(b, scope + "/output/dense", param + ".output.dense", act, o.ffn, h);
  return b.node(scope + "/Add_1", "Add", {out, residual});
}

TransformerOptions normalized(TransformerOptions o) {
  if (o.ffn == 0) o.ffn = 4 * o.hidden;
  if (o.layers < 0 || o.hidden <= 0 || o.heads <= 0 || o.ffn <= 0 || o.hidden % o.heads != 0)
    throw std::invalid_argument(
        "transformer: layers >= 0, hidden > 0, ffn > 0 and heads dividing hidden required");
  return o;
}

}  // namespace

onnx::ModelProto makeTransformerModel(const TransformerOptions& requested) {
  const TransformerOptions o = normalized(requested);
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("onnx-rewrite gen_transformer");
  model.set_producer_version("0.1.0");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);

  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("transformer_" + std::to_string(o.layers));
  g.mutable_node()->Reserve(static_cast<int>(transformerNodeCount(o.layers)));
  setTensorType(*g.add_input(), "hidden_states", {"batch", "seq"}, o.hidden);
  setTensorType(*g.add_input(), "attention_mask", {"batch", nullptr, nullptr, "seq"}, 0);
  setTensorType(*g.add_output(), "last_hidden_state", {"batch", "seq"}, o.hidden);

  Builder b(o, g);
  std::string x = "hidden_states";
  for (int i = 0; i < o.layers; ++i) x = transformerLayer(b, o, i, x, "attention_mask");
  layerNorm(b, "/ln_f", "ln_f", x, o.hidden);
  // The graph output keeps its declared name: rename the last node's output.
  onnx::NodeProto& last = *g.mutable_node(g.node_size() - 1);
  last.set_output(0, "last_hidden_state");
  return model;
}

uint64_t externalDataSize(const TransformerOptions& requested) {
  const TransformerOptions o = normalized(requested);
  if (o.inline_weights) return 0;
  const uint64_t h = o.hidden, f = o.ffn;
  // Per layer: 2 LayerNorms (2h each), 4 h*h projections with biases, the FFN pair.
  const uint64_t per_layer = 4 * h + 4 * (h * h + h) + (h * f + f) + (f * h + h);
  return (per_layer * o.layers + 2 * h) * sizeof(float);
}

void createSparseFile(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  const bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(path + ": ftruncate: " + std::strerror(err));
}

int64_t writeTransformerModel(const TransformerOptions& options, const std::string& path) {
  onnx::ModelProto model = makeTransformerModel(options);
  if (!options.inline_weights) {
    uint64_t end = 0;
    for (const onnx::TensorProto& t : model.graph().initializer()) {
      uint64_t offset = 0, length = 0;
      for (const onnx::StringStringEntryProto& e : t.external_data()) {
        if (e.key() == "offset") offset = std::stoull(e.value());
        if (e.key() == "length") length = std::stoull(e.value());
      }
      end = std::max(end, offset + length);
    }
    if (end != externalDataSize(options))
      throw std::logic_error("externalDataSize disagrees with the generated model");
    const size_t slash = path.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash);
    createSparseFile(folder + "/" + options.external_location, externalDataSize(options));
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw std::runtime_error(path + ": the model does not serialize (larger than 2 GiB?)");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error(path + ": cannot write");
  return model.graph().node_size();
}

}  // namespace onnx_rewrite::bench
