//===- OpsetFormOfNode.cc - a new node's moved parameters in the model's form ===//
#include "runtime/driver/OpsetFormOfNode.h"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/driver/Rewriter.h"
#include "runtime/match/OpsetForms.h"
#include "runtime/match/Params.h"

namespace onnx_rewrite {

void toOpsetForm(Model& model, Graph& graph, Rewriter& rw, NodeSpec& spec) {
  const std::string_view domain = spec.op.domain();
  const std::string_view op = spec.op.opType();
  const int64_t opset = graph.opsetVersion(domain);
  if (opset < 0) return;

  // Attributes the model takes as inputs.
  for (size_t i = 0; i < spec.attributes.size();) {
    const onnx::AttributeProto& a = spec.attributes[i];
    const OpsetForm* form = findOpsetForm(domain, op, a.name());
    if (!form || opset < form->since_version) {
      ++i;
      continue;
    }
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    if (a.type() == onnx::AttributeProto::INT) {
      t.add_dims(1);
      t.add_int64_data(a.i());
    } else {
      t.add_dims(a.ints_size());
      for (int64_t v : a.ints()) t.add_int64_data(v);
    }
    const ValueId v = rw.addInitializer(std::move(t), std::string(form->attr));
    if (spec.inputs.size() <= form->input_index) spec.inputs.resize(form->input_index + 1, kNoId);
    spec.inputs[form->input_index] = v;
    spec.attributes.erase(spec.attributes.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Inputs the model takes as attributes.
  size_t keep = spec.inputs.size();
  std::vector<int64_t> values;
  for (uint32_t index = 1; index < spec.inputs.size(); ++index) {
    const OpsetForm* form = findOpsetFormAtInput(domain, op, index);
    if (!form || opset >= form->since_version) continue;
    keep = std::min<size_t>(keep, index);
    const ValueId v = spec.inputs[index];
    if (v == kNoId) continue;
    if (!readConstantInts(model, graph, v, values, 1 << 16)) return;  // left as written
    // Slice had no `steps` before it took inputs: unit steps are what it does anyway.
    if (form->attr == "steps" &&
        std::all_of(values.begin(), values.end(), [](int64_t s) { return s == 1; }))
      continue;
    onnx::AttributeProto& a = spec.attributes.emplace_back();
    a.set_name(std::string(form->attr));
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : values) a.add_ints(x);
  }
  spec.inputs.resize(keep);
}

}  // namespace onnx_rewrite
