//===- Soundness.cc - a rewrite must not change what readers see ---------===//
#include "runtime/driver/Soundness.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/driver/LocalInference.h"
#include "runtime/graph/OpId.h"
#include "runtime/io/NewerOpsetSchemas.h"
#include "runtime/io/ShapeInference.h"
#include "runtime/io/TypeParams.h"

namespace onnx_rewrite {
namespace {

const onnx::TypeProto_Tensor* tensorType(const onnx::TypeProto* type) {
  return type && type->has_tensor_type() ? &type->tensor_type() : nullptr;
}

bool hasRank(const onnx::TypeProto* type) {
  const onnx::TypeProto_Tensor* t = tensorType(type);
  return t && t->has_shape();
}

std::string elemName(int32_t elem) {
  if (elem == 0 || !onnx::TensorProto_DataType_IsValid(elem)) return "?";
  std::string name = onnx::TensorProto_DataType_Name(elem);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

/// "com.microsoft::FusedMatMul 'name'" for messages.
std::string describeNode(const Node& node) { return node.op().str() + " '" + node.name() + "'"; }

/// For a created ONNX-domain node: two inputs its schema binds to one type parameter with
/// different element types (a float constant a rule made meeting fp16 values), which ONNX
/// Runtime refuses to load; the shape inference functions do not check this. Empty when
/// they agree or are unknown. The schema is ONNX 1.12's at the model's opset, or at its
/// newest (kOnnxRegistryOpset) for a newer one: the type parameters of the ops rules emit
/// have not changed since. It is read from the build-time table (TypeParams.h), not from
/// the schema registry, which this check would otherwise start on every run.
std::string mixedTypeParameter(const Graph& graph, const Node& node, LocalInference& types) {
  if (!canonicalDomain(node.domain()).empty()) return {};
  const int64_t opset = graph.opsetVersion("");
  if (opset <= 0) return {};
  const std::vector<FormalInput> formals =
      onnxFormalInputs(node.opType(), std::min<int64_t>(opset, kOnnxRegistryOpset));
  if (formals.empty()) return {};
  std::unordered_map<std::string_view, std::pair<int32_t, size_t>> bound;  // param: elem, input
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    const bool past_end = i >= formals.size();
    const FormalInput& formal = past_end ? formals.back() : formals[i];
    if (past_end && !formal.variadic) break;
    if (formal.variadic == '?') break;
    if (node.input(i) == kNoId || formal.param == ".") continue;
    const onnx::TypeProto_Tensor* t = tensorType(types.typeOf(node.input(i)));
    if (!t || t->elem_type() == 0) continue;
    auto [it, first] = bound.emplace(formal.param, std::make_pair(t->elem_type(), i));
    if (!first && it->second.first != t->elem_type())
      return "the rewrite would create " + describeNode(node) + " whose inputs " +
             std::to_string(it->second.second) + " and " + std::to_string(i) + " are " +
             elemName(it->second.first) + " and " + elemName(t->elem_type()) + ", where its type " +
             std::string(formal.param) + " is one type";
  }
  return {};
}

}  // namespace

std::string describeType(const onnx::TypeProto* type) {
  if (!type || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) return "?";
  const onnx::TypeProto_Tensor* t = tensorType(type);
  if (!t) return "a non-tensor value";
  std::string text = elemName(t->elem_type());
  if (!t->has_shape()) return text;
  text += '[';
  for (int i = 0; i < t->shape().dim_size(); ++i) {
    const auto& d = t->shape().dim(i);
    if (i) text += ',';
    text += d.has_dim_value() ? std::to_string(d.dim_value())
            : isUnknownDim(d) ? "?"
                              : d.dim_param();
  }
  return text + ']';
}

bool typesDiffer(const onnx::TypeProto* before, const onnx::TypeProto* after) {
  const onnx::TypeProto_Tensor* a = tensorType(before);
  const onnx::TypeProto_Tensor* b = tensorType(after);
  if (!a || !b) return false;
  if (a->elem_type() != 0 && b->elem_type() != 0 && a->elem_type() != b->elem_type()) return true;
  if (!a->has_shape() || !b->has_shape()) return false;
  if (a->shape().dim_size() != b->shape().dim_size()) return true;
  for (int i = 0; i < a->shape().dim_size(); ++i) {
    const auto& x = a->shape().dim(i);
    const auto& y = b->shape().dim(i);
    if (x.has_dim_value() && y.has_dim_value() && x.dim_value() != y.dim_value()) return true;
  }
  return false;
}

std::string findTypeChange(Model& model, const Graph& graph, const std::vector<NodeId>& created,
                           const std::vector<TypedReplacement>& replacements, Strictness strictness,
                           std::vector<std::pair<ValueId, onnx::TypeProto>>* inferred) {
  LocalInference types(model, graph);
  // What inference said about each new value, for kVerify's "cannot tell" cases.
  std::unordered_map<ValueId, std::pair<NodeId, NodeInference>> outcome;
  for (NodeId id : created) {
    const Node& node = graph.node(id);
    if (!node.live()) continue;
    NodeInference result = types.infer(id);
    if (std::string mixed = mixedTypeParameter(graph, node, types); !mixed.empty()) return mixed;
    if (result.status == NodeInference::Status::kRejected) {
      std::string inputs;
      for (ValueId in : node.inputs())
        inputs += (inputs.empty() ? "" : ", ") +
                  (in == kNoId ? "(none)" : describeType(types.typeOf(in)));
      return "the rewrite would create " + describeNode(node) + " over (" + inputs +
             "), which its shape inference rejects: " + result.error;
    }
    for (ValueId out : node.outputs()) {
      if (out == kNoId) continue;
      outcome[out] = {id, result};
      const onnx::TypeProto* t = types.typeOf(out);
      if (inferred && t && t->has_tensor_type() && t->tensor_type().elem_type() != 0)
        inferred->emplace_back(out, *t);
    }
  }
  for (const TypedReplacement& r : replacements) {
    const onnx::TypeProto* after = types.typeOf(r.to);
    if (typesDiffer(r.before, after))
      return "the rewrite would change '" + r.name + "' from " + describeType(r.before) + " to " +
             describeType(after);
    if (strictness != Strictness::kVerify || !hasRank(r.before) || hasRank(after)) continue;
    auto it = outcome.find(r.to);
    if (it == outcome.end()) continue;  // an existing value: its type is the graph's to know
    const auto& [id, result] = it->second;
    if (!result.inputs_shaped) continue;  // the unknown comes from upstream, not from here
    const Node& node = graph.node(id);
    // Only the domains the inference registry covers: shipped rules emit nothing else, and
    // an op of a user's own domain cannot be checked.
    const std::string_view domain = canonicalDomain(node.domain());
    if (!domain.empty() && domain != "com.microsoft") continue;
    // A model importing an ai.onnx opset newer than the registry answers for is not
    // inferred at all (LocalInference): the unknown is the model's opset, not the op.
    if (domain.empty() && !inferredOpset(graph.opsetVersion(""))) continue;
    const std::string why = result.status == NodeInference::Status::kNoInference
                                ? "has no shape inference"
                                : "leaves its rank unknown, its inputs' shapes known";
    return "the rewrite would replace '" + r.name + "' (" + describeType(r.before) + ") by " +
           describeType(after) + ": " + describeNode(node) + " " + why;
  }
  return {};
}

}  // namespace onnx_rewrite
