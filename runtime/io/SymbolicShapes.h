//===- SymbolicShapes.h - shapes ONNX's inference cannot see through -----===//
//
// ONNX 1.12's inference gives up at a Reshape (or Expand, ConstantOfShape) whose shape is
// computed at run time from Shape, Gather, Concat, ... as exporters write it, and every
// value after it stays unsized: torch 1.x GPT-2's position ids, the Reshape-Gemm-Reshape
// of each projection. This pass, which is all the shape inference onnx-rewrite runs, walks
// the main graph in topological order, folds small integer shape computations to their
// elements (ints or the model's symbolic dims), and types every value it can prove; then
// over each If/Loop/Scan body the same way, the body reading what is known of the values of
// its enclosing graphs (a merged decoder's branches, whose weights and inputs are the main
// graph's and whose intermediates no exporter typed).
//
// It only ever adds what it proves: a dim it cannot prove stays unknown (no value and no
// name), and a dim the model or ONNX already gave is never changed. Where what it derives
// disagrees with what is there (which a valid model never shows), it keeps what is there.
// Its results live in the graph's value_info like ONNX's, so InferredShapes::undo takes
// them out again: the saved model carries only the type information it came with.
// The cost is linear in the nodes; folded tensors are capped at kMaxFoldedElements elements.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite {

/// Refines the types of the intermediate values and outputs of the main graph and of every
/// body in place (graph inputs and initializers are left alone); returns how many values it
/// refined. Never throws on a malformed model: what it cannot read it leaves unknown.
/// The ops it has no rule for (or whose rule proved nothing) go through their ONNX
/// inference function, one node at a time.
int refineSymbolicShapes(onnx::ModelProto& model);

/// The output types of `node` by the pass's own rule for its op (the model's ai.onnx opset
/// `opset`), over its input types `inputs` (null: absent; a TypeProto of no type: unknown)
/// and the elements of
/// its small integer constant inputs `ints` (by input; nullopt: not one), for its
/// `output_count` outputs (a node a rewrite made has no names in `node` yet). False, with
/// `outputs` empty, when the pass has no rule for the op or the rule proved nothing (no
/// output's element type): the driver's soundness check then asks the op's ONNX function.
bool inferNodeTypes(const onnx::NodeProto& node, int64_t opset,
                    const std::vector<const onnx::TypeProto*>& inputs,
                    const std::vector<std::optional<std::vector<int64_t>>>& ints,
                    size_t output_count, std::vector<onnx::TypeProto>& outputs);

}  // namespace onnx_rewrite
