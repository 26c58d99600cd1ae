//===- ShapeInference.cc - ONNX shape inference that never aborts --------===//
#include "runtime/io/ShapeInference.h"

#include "runtime/graph/Opsets.h"
#include "runtime/io/NewerOpsetSchemas.h"
#include "runtime/io/SymbolicShapes.h"

#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/defs/schema.h>

namespace onnx_rewrite {
namespace {

using TypeSnapshot = std::vector<std::pair<onnx::ValueInfoProto*, std::optional<onnx::TypeProto>>>;

void remember(onnx::ValueInfoProto& info, TypeSnapshot& types) {
  types.emplace_back(&info,
                     info.has_type() ? std::optional<onnx::TypeProto>(info.type()) : std::nullopt);
}

/// Calls fn on every body of g's nodes (If branches, Loop and Scan bodies), outermost first.
template <typename Fn>
void forEachBody(onnx::GraphProto& g, const Fn& fn) {
  for (onnx::NodeProto& n : *g.mutable_node())
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) fn(*a.mutable_g());
      for (onnx::GraphProto& body : *a.mutable_graphs()) fn(body);
    }
}

void snapshot(onnx::GraphProto& g, std::vector<std::pair<onnx::GraphProto*, int>>& sizes,
              TypeSnapshot& types, bool body = false) {
  sizes.emplace_back(&g, g.value_info_size());
  // ONNX's inference merges what the node gives a body (Loop's, Scan's) into its inputs.
  if (body)
    for (onnx::ValueInfoProto& in : *g.mutable_input()) remember(in, types);
  for (onnx::ValueInfoProto& out : *g.mutable_output()) remember(out, types);
  for (onnx::ValueInfoProto& info : *g.mutable_value_info()) remember(info, types);
  forEachBody(g, [&](onnx::GraphProto& b) { snapshot(b, sizes, types, /*body=*/true); });
}

/// Clears the dims an earlier inference could only name (unk__N) from the value_info of `g`
/// and of its bodies: intermediates only, graph outputs keep what the model says of them.
void forgetUnknownDims(onnx::GraphProto& g) {
  for (onnx::ValueInfoProto& info : *g.mutable_value_info()) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) continue;
    for (auto& d : *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && isUnknownDim(d)) d.clear_dim_param();
  }
  forEachBody(g, forgetUnknownDims);
}

}  // namespace

bool isUnknownDim(const onnx::TensorShapeProto::Dimension& dim) {
  return !dim.has_dim_value() && (!dim.has_dim_param() || dim.dim_param().empty() ||
                                  dim.dim_param().compare(0, 5, "unk__") == 0);
}

std::string unsupportedOpsetReason(const onnx::ModelProto& model) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    auto it = known.find(domain);
    if (it == known.end()) continue;  // a custom domain: its nodes are simply not inferred
    // ai.onnx 18 and later go through NewerOpsetSchemas, up to the opset it knows.
    const int newest = domain.empty() ? kNewestInferredOpset : it->second.second;
    if (o.version() > newest)
      return (domain.empty() ? std::string("ai.onnx") : domain) + " opset " +
             std::to_string(o.version()) + " is newer than " + std::to_string(newest) +
             ", the newest whose shapes onnx-rewrite can infer";
  }
  return {};
}

namespace {

/// The most dims a shape tensor (the input ConstantOfShape, Expand and Reshape read as a
/// shape) may declare before inference is skipped: ONNX's inference makes its output of that
/// rank, so a declared [2^62] shape input would allocate dims until memory runs out (a
/// 292-byte model found by fuzz_model). Real ranks are a handful.
constexpr int64_t kMaxShapeTensorLength = 4096;

/// The length each value of `g` is declared with, for the values declared as 1-D tensors of
/// a static length (inputs, then value_info, then outputs: the first such declaration).
using DeclaredLengths = std::unordered_map<std::string, int64_t>;
DeclaredLengths declaredLengths(const onnx::GraphProto& g) {
  DeclaredLengths lengths;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const onnx::ValueInfoProto& v : *list) {
      if (!v.type().has_tensor_type()) continue;
      const auto& shape = v.type().tensor_type().shape();
      if (shape.dim_size() == 1 && shape.dim(0).has_dim_value())
        lengths.emplace(v.name(), shape.dim(0).dim_value());
    }
  return lengths;
}

/// Why ONNX's inference must not run on the declared shapes of `g` (a body when `outer` is
/// not empty: it also reads the declarations of the graphs around it, innermost last), or
/// "".
std::string oversizedShapeInputReason(const onnx::GraphProto& g,
                                      std::vector<const DeclaredLengths*>& outer) {
  const DeclaredLengths own = declaredLengths(g);
  outer.push_back(&own);
  auto declaredLength = [&](const std::string& name) -> int64_t {
    for (auto it = outer.rbegin(); it != outer.rend(); ++it)
      if (auto found = (*it)->find(name); found != (*it)->end()) return found->second;
    return -1;
  };
  std::string reason;
  for (const onnx::NodeProto& n : g.node()) {
    // The bodies first: ONNX's inference reaches them through their node.
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (reason.empty() && a.has_g()) reason = oversizedShapeInputReason(a.g(), outer);
      for (const onnx::GraphProto& body : a.graphs())
        if (reason.empty()) reason = oversizedShapeInputReason(body, outer);
    }
    if (!reason.empty()) break;
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const int index = n.op_type() == "ConstantOfShape"                      ? 0
                      : n.op_type() == "Expand" || n.op_type() == "Reshape" ? 1
                                                                            : -1;
    if (index < 0 || n.input_size() <= index) continue;
    const int64_t length = declaredLength(n.input(index));
    if (length > kMaxShapeTensorLength) {
      reason = "'" + n.input(index) + "', the shape " + n.op_type() + " reads, declares " +
               std::to_string(length) + " elements (a rank no tensor has)";
      break;
    }
  }
  outer.pop_back();
  return reason;
}

}  // namespace

InferredShapes::InferredShapes(onnx::ModelProto& model, bool forget_unknown_dims) {
  note_ = unsupportedOpsetReason(model);
  if (note_.empty()) {
    std::vector<const DeclaredLengths*> outer;
    note_ = oversizedShapeInputReason(model.graph(), outer);
  }
  if (!note_.empty()) {
    note_ = "shape inference skipped: " + note_;
    return;
  }
  snapshot(*model.mutable_graph(), value_info_sizes_, types_);
  ran_ = true;
  if (forget_unknown_dims) forgetUnknownDims(*model.mutable_graph());
  // Our symbolic pass types the whole model, If branches and loop bodies included; the ops
  // it has no rule for go through their ONNX function one node at a time. ONNX's
  // whole-model pass no longer runs: its functions trust the node around them (a Split
  // with no outputs divided by zero, a Scan without a body or an If with an empty branch
  // read a null graph: all found by fuzz_model). It writes into value_info as ONNX does, so
  // undo() takes its results out again.
  try {
    refineSymbolicShapes(model);
  } catch (const std::exception& e) {
    note_ += std::string(note_.empty() ? "" : "; ") + "symbolic shapes stopped early: " + e.what();
  }
}

void InferredShapes::undo() {
  if (undone_) return;
  undone_ = true;
  for (auto& [graph, size] : value_info_sizes_) {
    auto* infos = graph->mutable_value_info();
    if (infos->size() > size) infos->DeleteSubrange(size, infos->size() - size);
  }
  for (auto& [info, type] : types_) {
    if (type)
      *info->mutable_type() = std::move(*type);
    else
      info->clear_type();
  }
}

}  // namespace onnx_rewrite
