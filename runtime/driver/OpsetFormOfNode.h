//===- OpsetFormOfNode.h - a new node's moved parameters in the model's form -===//
//
// Rules write a parameter that later opsets turned into an input once, either way:
// `Unsqueeze(x, axes=[0])` or `Unsqueeze(x, tensor(int64, [0]))`. Matching already
// reads both forms; this is the same for building. Before a new node is added, each
// such parameter is put in the form the model's opset of the op's domain takes: an
// attribute becomes a constant input, or a constant input becomes an attribute.
// The checks guarantee that an input turned back into an attribute is a constant
// (a tensor literal of the rewrite), so the conversion cannot fail for a checked rule.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"

namespace onnx_rewrite {

class Rewriter;

/// Puts the moved parameters (runtime/match/OpsetForms.h) of `spec` in the form `graph`'s
/// opset takes; new constant inputs are added through `rw`. A parameter input that is not
/// a readable integer constant stays an input (the checks keep rules from writing one).
void toOpsetForm(Model& model, Graph& graph, Rewriter& rw, NodeSpec& spec);

}  // namespace onnx_rewrite
