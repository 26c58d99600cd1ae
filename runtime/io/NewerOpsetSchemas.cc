//===- NewerOpsetSchemas.cc - shape inference for opsets ONNX 1.12 lacks --===//
#include "runtime/io/NewerOpsetSchemas.h"

#include <map>
#include <set>

#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

namespace onnx_rewrite {
namespace {

constexpr int kNewestKnown = 17;  // ONNX 1.12

/// Reduce* from opset 18: axes is the optional input 1, `noop_with_empty_axes` an attribute.
void inferReduceWithAxesInput(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = ctx.getInputType(0)->tensor_type().shape();
  const int64_t rank = in.dim_size();
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  std::set<int64_t> axes;
  if (ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr) {
    const onnx::TensorProto* data = ctx.getInputData(1);
    if (!data) return;  // axes computed at run time: the rank is all we could say
    for (int64_t a : onnx::ParseData<int64_t>(data)) {
      if (a < -rank || a >= rank) return;
      axes.insert(a < 0 ? a + rank : a);
    }
  }
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  if (axes.empty() && noop) {
    *out = in;
    return;
  }
  for (int64_t i = 0; i < rank; ++i) {
    const bool reduced = axes.empty() || axes.count(i) != 0;
    if (!reduced)
      *out->add_dim() = in.dim(static_cast<int>(i));
    else if (keepdims)
      out->add_dim()->set_dim_value(1);
  }
}

/// Output 0 has input 0's type and shape (normalizations, rotary embedding, activations).
void inferLikeInput0(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

/// A copy of an older schema with a new version, optional extra inputs and inference.
onnx::OpSchema derive(const onnx::OpSchema& base, int since, onnx::InferenceFunction fn) {
  onnx::OpSchema s = base;
  s.SinceVersion(since);
  s.TypeAndShapeInferenceFunction(std::move(fn));
  return s;
}

/// A minimal schema for an op ONNX 1.12 does not have: shape inference reads only the
/// inference function and the input/output counts.
onnx::OpSchema fresh(const char* name, int since, int min_inputs, int max_inputs, int outputs,
                     onnx::InferenceFunction fn) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(onnx::ONNX_DOMAIN).SinceVersion(since);
  for (int i = 0; i < max_inputs; ++i)
    s.Input(i, "in" + std::to_string(i), "", "T",
            i < min_inputs ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  for (int i = 0; i < outputs; ++i)
    s.Output(i, "out" + std::to_string(i), "", "T",
             i == 0 ? onnx::OpSchema::Single : onnx::OpSchema::Optional);
  s.TypeConstraint("T", onnx::OpSchema::all_tensor_types(), "any tensor");
  s.TypeAndShapeInferenceFunction(std::move(fn));
  s.Finalize();
  return s;
}

struct Tables {
  std::map<std::string, onnx::OpSchema> changed;  // Reduce* 18 and the new ops
  /// Ops whose output shapes after opset 17 depend on inputs or attributes the opset-17
  /// schema does not know: no schema, so their outputs stay untyped instead of wrong.
  std::set<std::string> unsafe = {
      "Pad",       "Resize",        "AveragePool",  "GroupNormalization",
      "Col2Im",    "CenterCropPad", "DeformConv",   "AffineGrid",
      "Attention", "TensorScatter", "ImageDecoder", "DFT"};
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
      const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema(op, kNewestKnown, "");
      if (!base) continue;
      onnx::OpSchema s = derive(*base, 18, inferReduceWithAxesInput);
      s.Input(1, "axes", "", "tensor(int64)", onnx::OpSchema::Optional);
      s.TypeConstraint("tensor(int64)", {"tensor(int64)"}, "");
      s.Finalize();
      t.changed.emplace(op, std::move(s));
    }
    t.changed.emplace("Gelu", fresh("Gelu", 20, 1, 1, 1, inferLikeInput0));
    t.changed.emplace("Mish", fresh("Mish", 18, 1, 1, 1, inferLikeInput0));
    t.changed.emplace("RMSNormalization", fresh("RMSNormalization", 23, 2, 2, 1, inferLikeInput0));
    t.changed.emplace("RotaryEmbedding", fresh("RotaryEmbedding", 23, 3, 4, 1, inferLikeInput0));
    return t;
  }();
  return t;
}

}  // namespace

NewerOpsetSchemas::NewerOpsetSchemas() { tables(); }

const onnx::OpSchema* NewerOpsetSchemas::GetSchema(const std::string& key,
                                                   const int maxInclusiveVersion,
                                                   const std::string& domain) const {
  const bool onnx_domain = domain.empty() || domain == "ai.onnx";
  if (!onnx_domain || maxInclusiveVersion <= kNewestKnown)
    return onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
  const Tables& t = tables();
  auto changed = t.changed.find(key);
  if (changed != t.changed.end())
    return maxInclusiveVersion >= changed->second.SinceVersion()
               ? &changed->second
               : onnx::OpSchemaRegistry::Schema(key, kNewestKnown, domain);
  if (t.unsafe.count(key)) return nullptr;
  return onnx::OpSchemaRegistry::Schema(key, kNewestKnown, domain);
}

}  // namespace onnx_rewrite
