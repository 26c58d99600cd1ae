//===- Equivalence.cc - two values computed the same way ------------------===//
#include "runtime/match/Equivalence.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/graph/ModelError.h"
#include "runtime/graph/TensorData.h"
#include "runtime/match/MatchSupport.h"

namespace onnx_rewrite {
namespace {

constexpr size_t kMaxPairs = 256;
constexpr uint64_t kMaxConstantBytes = 16u << 20;

bool nondeterministic(std::string_view op) {
  return op == "RandomNormal" || op == "RandomNormalLike" || op == "RandomUniform" ||
         op == "RandomUniformLike" || op == "Multinomial" || op == "Bernoulli" || op == "Dropout";
}

/// Attributes equal as sets (by name), compared by their serialised form.
bool sameAttributes(const onnx::NodeProto& a, const onnx::NodeProto& b) {
  if (a.attribute_size() != b.attribute_size()) return false;
  for (const onnx::AttributeProto& x : a.attribute()) {
    if (x.has_g() || x.graphs_size() > 0) return false;
    auto it = std::find_if(b.attribute().begin(), b.attribute().end(),
                           [&](const onnx::AttributeProto& y) { return y.name() == x.name(); });
    if (it == b.attribute().end() || it->SerializeAsString() != x.SerializeAsString()) return false;
  }
  return true;
}

class Comparison {
 public:
  Comparison(Model& model, const Graph& graph) : model_(model), g_(graph) {}

  bool equivalent(ValueId a, ValueId b) {
    if (a == b) return true;
    if (a == kNoId || b == kNoId) return false;
    if (std::find(proven_.begin(), proven_.end(), std::make_pair(a, b)) != proven_.end())
      return true;
    if (++pairs_ > kMaxPairs) return false;
    const onnx::TensorProto* ta = constantTensor(g_, a);
    const onnx::TensorProto* tb = constantTensor(g_, b);
    if (ta || tb) return ta && tb && equalConstants(*ta, *tb) && prove(a, b);
    const NodeId na = g_.value(a).producer();
    const NodeId nb = g_.value(b).producer();
    if (na == kNoId || nb == kNoId) return false;  // different graph inputs
    const Node& x = g_.node(na);
    const Node& y = g_.node(nb);
    if (!x.live() || !y.live() || x.op() != y.op() || nondeterministic(x.opType()) ||
        g_.value(a).producerOutput() != g_.value(b).producerOutput() ||
        x.inputs().size() != y.inputs().size() || !x.subgraphs().empty() ||
        !y.subgraphs().empty() || !sameAttributes(x.proto(), y.proto()))
      return false;
    for (size_t i = 0; i < x.inputs().size(); ++i)
      if (!equivalent(x.input(i), y.input(i))) return false;
    return prove(a, b);
  }

 private:
  bool prove(ValueId a, ValueId b) {
    proven_.emplace_back(a, b);
    return true;
  }

  bool equalConstants(const onnx::TensorProto& a, const onnx::TensorProto& b) {
    if (a.data_type() != b.data_type() || a.dims_size() != b.dims_size() ||
        !std::equal(a.dims().begin(), a.dims().end(), b.dims().begin()))
      return false;
    try {
      return model_.readTensorData(a, kMaxConstantBytes).bytes ==
             model_.readTensorData(b, kMaxConstantBytes).bytes;
    } catch (const ModelError&) {
      return false;  // unreadable or too large: not known to be equal
    }
  }

  Model& model_;
  const Graph& g_;
  size_t pairs_ = 0;
  std::vector<std::pair<ValueId, ValueId>> proven_;
};

}  // namespace

bool equivalentValues(Model& model, const Graph& graph, ValueId a, ValueId b) {
  return Comparison(model, graph).equivalent(a, b);
}

}  // namespace onnx_rewrite
