//===- NewerOpsetSchemas.h - shape inference for opsets ONNX 1.12 lacks ---===//
//
// ONNX 1.12 knows schemas up to opset 17, but exporters (torch.onnx's dynamo path)
// emit opset 18 and later. For shape inference, most ops did not change after 17 in
// any way that affects shapes (new versions only widened type lists), so their
// opset-17 schema infers correctly. The few that did change are handled here:
// Reduce* read axes from input 1 from opset 18 (inferred here from a constant
// axes input); ops whose output shape semantics changed (Pad, Resize, AveragePool,
// GroupNormalization, ...) get no schema, so their outputs stay untyped rather than
// wrong; and the ops new after 17 that rules meet (Gelu, RMSNormalization,
// RotaryEmbedding, Mish) get their shape-preserving inference. ONNX Runtime's ops that
// rules emit (com.microsoft) get inference too, so shapes reach past a fused op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include <onnx/defs/schema.h>

#include "runtime/graph/Opsets.h"

namespace onnx_rewrite {

/// The newest ai.onnx opset ONNX 1.12's own schema registry knows; newer ones are this
/// registry's additions.
inline constexpr int kOnnxRegistryOpset = 17;

/// The newest ai.onnx opset this registry answers for (newer models skip inference).
inline constexpr int kNewestInferredOpset = static_cast<int>(kNewestOnnxOpset);

/// True when ai.onnx opset `version` is one this registry answers for (1 to
/// kNewestInferredOpset); ops of a model of another opset are not inferred.
inline bool inferredOpset(int64_t version) {
  return version >= 1 && version <= kNewestInferredOpset;
}

/// A schema registry for shape inference of opset 18..kNewestInferredOpset models; for
/// older opsets and other domains it answers exactly like ONNX's own registry.
class NewerOpsetSchemas : public onnx::ISchemaRegistry {
 public:
  NewerOpsetSchemas();
  const onnx::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
                                  const std::string& domain) const override;
};

/// The one registry shape inference uses: for the ops the symbolic pass has no rule for,
/// and for the nodes a rewrite creates (the driver's soundness check).
const NewerOpsetSchemas& inferenceSchemas();

}  // namespace onnx_rewrite
