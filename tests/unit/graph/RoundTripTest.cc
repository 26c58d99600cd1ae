//===- RoundTripTest.cc - ModelProto -> IR -> ModelProto is lossless -----===//
//
// The graph IR borrows a ModelProto and gives it back. What no rule touched
// must come back byte for byte: model metadata, opset imports (including opsets
// newer than the ONNX library we link), value_info, doc strings, every attribute
// type, initializers in every encoding, model-local functions, nested If/Loop
// bodies and fields of newer ONNX versions that ONNX 1.12 only knows as unknown
// fields. When a rule rewrites one place, everything else stays as it was, the
// names every graph reads stay defined, new nodes record the rule that made them
// and the output is deterministic. Models the IR cannot represent (cycles,
// undefined values) are rejected with ModelError and left untouched.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>

#include "runtime/api/Rewrite.h"
#include "runtime/graph/Model.h"
#include "runtime/graph/ModelError.h"
#include "tests/support/TestModels.h"
#include "tests/support/TestRules.h"

namespace onnx_rewrite {
namespace {

using testing::makeBypassRule;
using testing::makeRenameRule;
using testing::opTypes;
using testing::parseModel;
using testing::serialize;

// ---- Helpers ------------------------------------------------------------------------

/// Deterministic bytes of any message, for comparing parts of a model.
std::string bytesOf(const google::protobuf::Message& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

/// Imports `model` into the IR and exports it again without running any rule.
void importAndFinish(onnx::ModelProto& model) {
  Model ir(model);
  ir.finish();
}

OpId op(const char* type) { return OpId::get("", type); }

RuleSet reluToSigmoid() {
  RuleSet rules;
  rules.add(makeRenameRule("relu_to_sigmoid", op("Relu"), op("Sigmoid")));
  return rules;
}

RuleSet dropIdentity() {
  RuleSet rules;
  rules.add(makeBypassRule("drop_identity", op("Identity")));
  return rules;
}

Result rewriteWith(onnx::ModelProto& model, const RuleSet& rules, bool shape_inference = false) {
  Options options;
  options.shape_inference = shape_inference;
  return rewrite(model, rules, options);
}

/// The same with local function calls kept as calls (--keep-functions): rules then run
/// inside the function bodies.
Result rewriteKeepingFunctions(onnx::ModelProto& model, const RuleSet& rules) {
  Options options;
  options.shape_inference = false;
  options.inline_functions = false;
  return rewrite(model, rules, options);
}

/// The NodeProto.metadata_props entries (field 9, unknown to ONNX 1.12) of `node`.
std::vector<std::pair<std::string, std::string>> nodeMetadata(const onnx::NodeProto& node) {
  std::vector<std::pair<std::string, std::string>> entries;
  const google::protobuf::UnknownFieldSet& unknown = node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != 9 ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()))
      entries.emplace_back(entry.key(), entry.value());
  }
  return entries;
}

/// The rule recorded on `node` ("onnx_rewrite.rule"), or empty.
std::string createdBy(const onnx::NodeProto& node) {
  for (const auto& [key, value] : nodeMetadata(node))
    if (key == "onnx_rewrite.rule") return value;
  return {};
}

/// Adds a NodeProto.metadata_props entry the way ONNX >= 1.16 writes it.
void addNodeMetadata(onnx::NodeProto& node, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto entry;
  entry.set_key(key);
  entry.set_value(value);
  node.GetReflection()->MutableUnknownFields(&node)->AddLengthDelimited(9,
                                                                        entry.SerializeAsString());
}

void checkGraphScopes(const onnx::GraphProto& graph, std::set<std::string> visible,
                      const std::string& where, std::vector<std::string>& errors);

void checkNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                std::set<std::string>& visible, const std::string& where,
                std::vector<std::string>& errors) {
  for (const onnx::NodeProto& n : nodes) {
    const std::string node = where + ": " + n.op_type() + " '" + n.name() + "'";
    for (const std::string& in : n.input())
      if (!in.empty() && !visible.count(in))
        errors.push_back(node + " reads '" + in +
                         "', not defined before it in any enclosing scope");
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) checkGraphScopes(a.g(), visible, node + "." + a.name(), errors);
      for (const onnx::GraphProto& g : a.graphs())
        checkGraphScopes(g, visible, node + "." + a.name(), errors);
    }
    for (const std::string& out : n.output())
      if (!out.empty() && !visible.insert(out).second)
        errors.push_back(node + " defines '" + out + "', which is already defined");
  }
}

void checkGraphScopes(const onnx::GraphProto& graph, std::set<std::string> visible,
                      const std::string& where, std::vector<std::string>& errors) {
  for (const onnx::ValueInfoProto& in : graph.input()) visible.insert(in.name());
  for (const onnx::TensorProto& t : graph.initializer()) visible.insert(t.name());
  for (const onnx::SparseTensorProto& s : graph.sparse_initializer())
    visible.insert(s.values().name());
  checkNodes(graph.node(), visible, where, errors);
  for (const onnx::ValueInfoProto& out : graph.output())
    if (!visible.count(out.name()))
      errors.push_back(where + ": output '" + out.name() + "' is not defined");
}

/// Every name a node reads (in every graph, body and function) is defined earlier in its
/// graph or in an enclosing scope before the node that owns the body; no name is defined
/// twice in one scope chain. An empty result means the model is well scoped and sorted.
std::vector<std::string> scopeErrors(const onnx::ModelProto& model) {
  std::vector<std::string> errors;
  checkGraphScopes(model.graph(), {}, "main", errors);
  for (const onnx::FunctionProto& f : model.functions()) {
    std::set<std::string> visible(f.input().begin(), f.input().end());
    checkNodes(f.node(), visible, "function " + f.name(), errors);
    for (const std::string& out : f.output())
      if (!visible.count(out)) errors.push_back("function " + f.name() + ": output '" + out + "'");
  }
  return errors;
}

std::vector<std::string> opTypes(const onnx::FunctionProto& f) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : f.node()) ops.push_back(n.op_type());
  return ops;
}

const onnx::GraphProto& attributeGraph(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return a.g();
  ADD_FAILURE() << "node " << node.op_type() << " has no graph attribute " << name;
  return onnx::GraphProto::default_instance();
}

/// A copy of `model` without the main graph's nodes and value_info, for checking that a
/// rewrite changed nothing else.
onnx::ModelProto withoutNodes(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  copy.mutable_graph()->clear_node();
  copy.mutable_graph()->clear_value_info();
  return copy;
}

// ---- Test models -----------------------------------------------------------------------

/// A model of tests/models/roundtrip/.
onnx::ModelProto modelFile(const std::string& name) {
  return parseModel(testing::readFile(testing::sourcePath("tests/models/roundtrip/" + name)));
}

/// Every piece of model metadata the text format can hold; doc strings and names are
/// added in code.
onnx::ModelProto metadataModel() {
  onnx::ModelProto model = parseModel(R"(
    <
      ir_version: 8,
      opset_import: ["" : 16, "ai.onnx.ml" : 3],
      producer_name: "roundtrip-test",
      producer_version: "0.1.2",
      domain: "ai.onnx_rewrite.test",
      model_version: 7,
      doc_string: "A model carrying every piece of metadata.",
      metadata_props: ["author" : "tests", "license" : "MIT"]
    >
    meta (float[N, 4] x) => (float[N, 4] y)
    <float[N, 4] a, float[N, 4] b>
    {
      a = Relu (x)
      b = Identity (a)
      y = Neg (b)
    }
  )");
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_doc_string("The main graph.");
  g.mutable_input(0)->set_doc_string("the input");
  g.mutable_value_info(0)->set_doc_string("after relu");
  const char* names[] = {"relu_0", "identity_0", "neg_0"};
  for (int i = 0; i < g.node_size(); ++i) {
    g.mutable_node(i)->set_name(names[i]);
    g.mutable_node(i)->set_doc_string(std::string("node doc ") + names[i]);
  }
  return model;
}

/// The main graph calls a model-local function twice; the function has its own Relu and
/// Identity, and an attribute parameter referenced by one of its nodes.
onnx::ModelProto functionModel() {
  onnx::ModelProto model = modelFile("functions.onnxtxt");
  onnx::FunctionProto& f = *model.mutable_functions(0);
  f.set_doc_string("a local function");
  f.add_attribute("alpha");
  onnx::AttributeProto& alpha = *f.mutable_node(2)->add_attribute();
  alpha.set_name("alpha");
  alpha.set_ref_attr_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  for (int i = 0; i < f.node_size(); ++i) f.mutable_node(i)->set_name("block_" + std::to_string(i));
  return model;
}

onnx::ModelProto nestedModel() {
  onnx::ModelProto model = modelFile("nested_if_loop.onnxtxt");
  // Node names, so reports and labels have something to show.
  int counter = 0;
  std::function<void(onnx::GraphProto&)> name = [&](onnx::GraphProto& g) {
    for (onnx::NodeProto& n : *g.mutable_node()) {
      n.set_name("n" + std::to_string(counter++));
      for (onnx::AttributeProto& a : *n.mutable_attribute())
        if (a.has_g()) name(*a.mutable_g());
    }
  };
  name(*model.mutable_graph());
  return model;
}

onnx::AttributeProto attribute(const std::string& name, onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  return a;
}

onnx::TensorProto floatTensor(const std::string& name, std::vector<float> values, bool raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(values.size()));
  if (raw)
    t.set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  else
    for (float v : values) t.add_float_data(v);
  return t;
}

onnx::SparseTensorProto sparseTensor(const std::string& name) {
  onnx::SparseTensorProto s;
  *s.mutable_values() = floatTensor(name, {5.0f, 6.0f}, false);
  onnx::TensorProto& indices = *s.mutable_indices();
  indices.set_data_type(onnx::TensorProto::INT64);
  indices.add_dims(2);
  indices.add_int64_data(0);
  indices.add_int64_data(2);
  s.add_dims(3);
  return s;
}

/// A custom-domain node carrying one attribute of every AttributeProto type, next to a
/// Relu whose output its graph attributes capture.
onnx::ModelProto allAttributesModel() {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16, "test.attrs" : 1]>
    attrs (float[2] x) => (float[2] y, float[2] z)
    {
      a = Relu (x)
      y = test.attrs.AllAttrs (a)
      z = Neg (a)
    }
  )");
  onnx::ModelProto bodies = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    bodies (float[2] unused) => (float[2] b1)
    {
      b1 = Relu (a)
    }
  )");
  onnx::GraphProto body = bodies.graph();
  body.clear_input();  // reads `a` from the enclosing graph

  onnx::NodeProto& n = *model.mutable_graph()->mutable_node(1);
  n.set_name("all_attrs");
  auto add = [&](onnx::AttributeProto a) { *n.add_attribute() = std::move(a); };

  auto f = attribute("f", onnx::AttributeProto::FLOAT);
  f.set_f(0.25f);
  f.set_doc_string("a float");
  add(f);
  auto i = attribute("i", onnx::AttributeProto::INT);
  i.set_i(-3);
  add(i);
  auto s = attribute("s", onnx::AttributeProto::STRING);
  s.set_s(std::string("bytes\0with nul", 14));
  add(s);
  auto t = attribute("t", onnx::AttributeProto::TENSOR);
  *t.mutable_t() = floatTensor("t_value", {1.0f, 2.0f}, true);
  add(t);
  auto g = attribute("g", onnx::AttributeProto::GRAPH);
  *g.mutable_g() = body;
  g.mutable_g()->set_name("g_body");
  add(g);
  auto fs = attribute("fs", onnx::AttributeProto::FLOATS);
  fs.add_floats(1.5f);
  fs.add_floats(-0.0f);
  add(fs);
  auto is = attribute("is", onnx::AttributeProto::INTS);
  is.add_ints(1);
  is.add_ints(INT64_MIN);
  add(is);
  auto ss = attribute("ss", onnx::AttributeProto::STRINGS);
  ss.add_strings("one");
  ss.add_strings("");
  add(ss);
  auto ts = attribute("ts", onnx::AttributeProto::TENSORS);
  *ts.add_tensors() = floatTensor("ts_raw", {3.0f}, true);
  *ts.add_tensors() = floatTensor("ts_typed", {4.0f, 5.0f}, false);
  add(ts);
  auto gs = attribute("gs", onnx::AttributeProto::GRAPHS);
  *gs.add_graphs() = body;
  gs.mutable_graphs(0)->set_name("gs_body_0");
  *gs.add_graphs() = body;
  gs.mutable_graphs(1)->set_name("gs_body_1");
  add(gs);
  auto st = attribute("st", onnx::AttributeProto::SPARSE_TENSOR);
  *st.mutable_sparse_tensor() = sparseTensor("st_values");
  add(st);
  auto sts = attribute("sts", onnx::AttributeProto::SPARSE_TENSORS);
  *sts.add_sparse_tensors() = sparseTensor("sts_values");
  add(sts);
  auto tp = attribute("tp", onnx::AttributeProto::TYPE_PROTO);
  tp.mutable_tp()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  add(tp);
  auto tps = attribute("tps", onnx::AttributeProto::TYPE_PROTOS);
  onnx::TypeProto::Map& map = *tps.add_type_protos()->mutable_map_type();
  map.set_key_type(onnx::TensorProto::INT64);
  map.mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  tps.add_type_protos()
      ->mutable_optional_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT16);
  add(tps);
  return model;
}

/// Initializers in every encoding: raw_data, typed fields, strings, float16 in int32_data,
/// a sparse initializer and one nobody reads.
onnx::ModelProto tensorsModel() {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    tensors (float[3] x) => (float[3] y, string[2] names_out)
    {
      a = Add (x, w_raw)
      b = Mul (a, w_typed)
      c = Relu (b)
      y = Add (c, sp)
      names_out = Identity (names)
    }
  )");
  onnx::GraphProto& g = *model.mutable_graph();
  *g.add_initializer() = floatTensor("w_raw", {1.0f, 2.0f, 3.0f}, true);
  *g.add_initializer() = floatTensor("w_typed", {0.5f, 0.25f, 0.125f}, false);
  onnx::TensorProto& names = *g.add_initializer();
  names.set_name("names");
  names.set_data_type(onnx::TensorProto::STRING);
  names.add_dims(2);
  names.add_string_data("alpha");
  names.add_string_data("\xce\xb2 (beta)");
  names.set_doc_string("a string tensor");
  onnx::TensorProto& i64 = *g.add_initializer();
  i64.set_name("unused_i64");
  i64.set_data_type(onnx::TensorProto::INT64);
  i64.add_dims(2);
  i64.add_int64_data(-1);
  i64.add_int64_data(INT64_MAX);
  onnx::TensorProto& half = *g.add_initializer();
  half.set_name("unused_f16");
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_int32_data(0x3c00);
  onnx::TensorProto& dbl = *g.add_initializer();
  dbl.set_name("unused_double");
  dbl.set_data_type(onnx::TensorProto::DOUBLE);
  dbl.add_double_data(3.141592653589793);
  *g.add_sparse_initializer() = sparseTensor("sp");
  return model;
}

// ---- Lossless round trip ---------------------------------------------------------------

TEST(RoundTrip, MetadataAndDocStringsSurviveByteForByte) {
  onnx::ModelProto model = metadataModel();
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, RewriteThatFindsNothingLeavesModelByteIdentical) {
  onnx::ModelProto model = metadataModel();
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
  Result result = rewriteWith(model, rules);
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, ShapeInferenceDoesNotCompleteValueInfoInTheSavedModel) {
  // value_info of `a` has an element type but no shape; inference would fill it in. The
  // saved model must carry only the type information it came with.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    partial (float[N, 4] x) => (float[N, 4] y)
    <float[] a>
    {
      a = Relu (x)
      c = Neg (a)
      y = Identity (c)
    }
  )");
  ASSERT_FALSE(model.graph().value_info(0).type().tensor_type().has_shape());
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
  Result result = rewriteWith(model, rules, /*shape_inference=*/true);
  EXPECT_TRUE(result.notes.empty()) << ::testing::PrintToString(result.notes);
  EXPECT_FALSE(model.graph().value_info(0).type().tensor_type().has_shape());
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, ShapeInferenceDoesNotTypeAnUntypedGraphOutput) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    untyped (float[N, 4] x) => (y)
    {
      a = Relu (x)
      y = Neg (a)
    }
  )");
  ASSERT_FALSE(model.graph().output(0).has_type());
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
  rewriteWith(model, rules, /*shape_inference=*/true);
  EXPECT_FALSE(model.graph().output(0).has_type());
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, ShapeInferenceLeavesNoTraceWhenTypesAreComplete) {
  onnx::ModelProto model = metadataModel();
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
  Result result = rewriteWith(model, rules, /*shape_inference=*/true);
  EXPECT_TRUE(result.notes.empty()) << ::testing::PrintToString(result.notes);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, ShapeInferenceLeavesNoTraceInsideSubgraphs) {
  onnx::ModelProto model = nestedModel();
  // The else-branch output loses its type; the then-branch gets a shapeless value_info.
  onnx::NodeProto& if_node = *model.mutable_graph()->mutable_node(3);
  ASSERT_EQ(if_node.attribute(1).name(), "else_branch");
  if_node.mutable_attribute(1)->mutable_g()->mutable_output(0)->clear_type();
  onnx::ValueInfoProto& t1 = *if_node.mutable_attribute(0)->mutable_g()->add_value_info();
  t1.set_name("t1");
  t1.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const std::string before = serialize(model);
  RuleSet rules;
  rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
  rewriteWith(model, rules, /*shape_inference=*/true);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, RewriteChangesOnlyTheMatchedNode) {
  onnx::ModelProto model = metadataModel();
  const onnx::ModelProto original = model;
  Result result = rewriteWith(model, reluToSigmoid(), /*shape_inference=*/true);
  ASSERT_EQ(result.stats.rewrites, 1u);
  // Everything outside the node list and value_info is untouched.
  EXPECT_EQ(serialize(withoutNodes(model)), serialize(withoutNodes(original)));
  ASSERT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "Identity", "Neg"}));
  const onnx::GraphProto& g = model.graph();
  const std::string& new_value = g.node(0).output(0);
  EXPECT_EQ(g.node(0).input(0), "x");
  // The Identity now reads the new value; nothing else about it changed.
  onnx::NodeProto identity = original.graph().node(1);
  identity.set_input(0, new_value);
  EXPECT_EQ(bytesOf(g.node(1)), bytesOf(identity));
  EXPECT_EQ(bytesOf(g.node(2)), bytesOf(original.graph().node(2)));
  // value_info of untouched values stays; the removed value's entry goes with it.
  ASSERT_EQ(g.value_info_size(), 1);
  EXPECT_EQ(bytesOf(g.value_info(0)), bytesOf(original.graph().value_info(1)));
  EXPECT_TRUE(scopeErrors(model).empty());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

// ---- Opsets newer than ONNX 1.12 knows ------------------------------------------------------

std::vector<onnx::ModelProto> newerOpsetModels() {
  std::vector<onnx::ModelProto> models = {
      modelFile("opset18.onnxtxt"), modelFile("opset21.onnxtxt"), modelFile("opset23.onnxtxt")};
  // An element type of ONNX 1.16 (UINT4 = 21) that ONNX 1.12 has no enum value for.
  onnx::ValueInfoProto& info = *models[1].mutable_graph()->add_value_info();
  info.set_name("unrelated");
  info.mutable_type()->mutable_tensor_type()->set_elem_type(21);
  return models;
}

TEST(RoundTrip, NewerOpsetsRoundTripByteForByte) {
  for (onnx::ModelProto& model : newerOpsetModels()) {
    const std::string before = serialize(model);
    importAndFinish(model);
    EXPECT_EQ(serialize(model), before) << model.graph().name();
  }
}

TEST(RoundTrip, NewerOpsetsAreRewrittenWithShapeInference) {
  // Opsets 18-24 are inferred through NewerOpsetSchemas; nothing inferred is saved.
  for (onnx::ModelProto& model : newerOpsetModels()) {
    const onnx::ModelProto original = model;
    Result result;
    ASSERT_NO_THROW(result = rewriteWith(model, reluToSigmoid(), /*shape_inference=*/true))
        << model.graph().name();
    EXPECT_EQ(result.stats.rewrites, 1u);
    for (const std::string& note : result.notes)
      EXPECT_EQ(note.find("shape inference skipped"), std::string::npos) << note;
    std::vector<std::string> ops = opTypes(original);
    std::replace(ops.begin(), ops.end(), std::string("Relu"), std::string("Sigmoid"));
    EXPECT_EQ(opTypes(model), ops);
    EXPECT_EQ(serialize(withoutNodes(model)), serialize(withoutNodes(original)));
    EXPECT_TRUE(scopeErrors(model).empty());
  }
}

TEST(RoundTrip, OpsetsBeyondWhatCanBeInferredSkipInferenceWithANote) {
  onnx::ModelProto model = modelFile("opset23.onnxtxt");
  model.mutable_opset_import(0)->set_version(30);
  const onnx::ModelProto original = model;
  Result result = rewriteWith(model, reluToSigmoid(), /*shape_inference=*/true);
  EXPECT_EQ(result.stats.rewrites, 1u);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0],
            "shape inference skipped: ai.onnx opset 30 is newer than 24, the newest whose "
            "shapes onnx-rewrite can infer");
  EXPECT_EQ(serialize(withoutNodes(model)), serialize(withoutNodes(original)));
}

TEST(RoundTrip, NewerOpsetsUnchangedWhenNoRuleApplies) {
  for (onnx::ModelProto& model : newerOpsetModels()) {
    const std::string before = serialize(model);
    RuleSet rules;
    rules.add(makeRenameRule("sigmoid_to_relu", op("Sigmoid"), op("Relu")));
    rewriteWith(model, rules, /*shape_inference=*/true);
    EXPECT_EQ(serialize(model), before) << model.graph().name();
  }
}

TEST(RoundTrip, Opset18ModelSavesItsReduceMeanAxesInput) {
  onnx::ModelProto model = modelFile("opset18.onnxtxt");
  rewriteWith(model, reluToSigmoid(), /*shape_inference=*/true);
  const onnx::NodeProto& reduce = model.graph().node(0);
  ASSERT_EQ(reduce.op_type(), "ReduceMean");
  EXPECT_EQ(reduce.input_size(), 2);
  EXPECT_EQ(reduce.attribute_size(), 0);
  ASSERT_EQ(model.graph().initializer_size(), 1);
}

// ---- Model-local functions -----------------------------------------------------------

TEST(RoundTrip, FunctionsRoundTripByteForByte) {
  onnx::ModelProto model = functionModel();
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, RulesRewriteInsideFunctionsKeptAsCalls) {
  onnx::ModelProto model = functionModel();
  const onnx::ModelProto original = model;
  Result result = rewriteKeepingFunctions(model, reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 2u);  // one in the main graph, one in the function
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "local::Block", "local::Block"}));
  ASSERT_EQ(model.functions_size(), 1);
  const onnx::FunctionProto& f = model.functions(0);
  EXPECT_EQ(opTypes(f), (std::vector<std::string>{"Sigmoid", "Identity", "LeakyRelu", "Neg"}));
  EXPECT_EQ(createdBy(f.node(0)), "relu_to_sigmoid");
  // The function's signature, attributes and untouched nodes are as they were.
  const onnx::FunctionProto& g = original.functions(0);
  EXPECT_EQ(std::vector<std::string>(f.input().begin(), f.input().end()),
            std::vector<std::string>(g.input().begin(), g.input().end()));
  EXPECT_EQ(std::vector<std::string>(f.output().begin(), f.output().end()),
            std::vector<std::string>(g.output().begin(), g.output().end()));
  EXPECT_EQ(f.doc_string(), g.doc_string());
  EXPECT_EQ(f.attribute_size(), 1);
  EXPECT_EQ(bytesOf(f.node(2)), bytesOf(g.node(2)));
  EXPECT_EQ(bytesOf(f.node(3)), bytesOf(g.node(3)));
  EXPECT_TRUE(scopeErrors(model).empty());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, BypassInsideFunctionRewiresItsNodes) {
  onnx::ModelProto model = functionModel();
  Result result = rewriteKeepingFunctions(model, dropIdentity());
  EXPECT_EQ(result.stats.rewrites, 1u);
  ASSERT_EQ(model.functions_size(), 1);
  const onnx::FunctionProto& f = model.functions(0);
  EXPECT_EQ(opTypes(f), (std::vector<std::string>{"Relu", "LeakyRelu", "Neg"}));
  EXPECT_EQ(f.node(1).input(0), "r");
  EXPECT_TRUE(scopeErrors(model).empty());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, RewriteOfAFunctionOutputKeepsTheOutputName) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16, "local" : 1]>
    fmain (float[N] x) => (float[N] y)
    {
      y = local.Act (x)
    }
    <domain: "local", opset_import: ["" : 16]>
    Act (p) => (q)
    {
      q = Relu (p)
    }
  )");
  rewriteKeepingFunctions(model, reluToSigmoid());
  ASSERT_EQ(model.functions_size(), 1);
  const onnx::FunctionProto& f = model.functions(0);
  ASSERT_EQ(opTypes(f), std::vector<std::string>{"Sigmoid"});
  EXPECT_EQ(f.node(0).output(0), "q");
  EXPECT_EQ(f.output(0), "q");
  EXPECT_TRUE(scopeErrors(model).empty());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

// ---- Nested subgraphs -----------------------------------------------------------------

TEST(RoundTrip, NestedIfAndLoopRoundTripByteForByte) {
  onnx::ModelProto model = nestedModel();
  ASSERT_TRUE(scopeErrors(model).empty());
  ASSERT_NO_THROW(onnx::checker::check_model(model));
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, RulesRewriteInsideIfBranchesAndNestedLoopBodies) {
  onnx::ModelProto model = nestedModel();
  Result result = rewriteWith(model, reluToSigmoid());
  // main `a`, then-branch `t1`, loop body `w`, else-branch `e_out`.
  EXPECT_EQ(result.stats.rewrites, 4u);
  const onnx::GraphProto& main = model.graph();
  EXPECT_EQ(opTypes(main), (std::vector<std::string>{"Sigmoid", "Identity", "Neg", "If"}));
  const onnx::GraphProto& then_g = attributeGraph(main.node(3), "then_branch");
  EXPECT_EQ(opTypes(then_g), (std::vector<std::string>{"Sigmoid", "Loop"}));
  // `t1` is read by the Loop body, so the new node takes over its name.
  EXPECT_EQ(then_g.node(0).output(0), "t1");
  const onnx::GraphProto& body = attributeGraph(then_g.node(1), "body");
  EXPECT_EQ(opTypes(body), (std::vector<std::string>{"Identity", "Add", "Sigmoid", "Mul"}));
  const onnx::GraphProto& else_g = attributeGraph(main.node(3), "else_branch");
  EXPECT_EQ(opTypes(else_g), (std::vector<std::string>{"Identity", "Sigmoid"}));
  EXPECT_EQ(else_g.node(1).output(0), "e_out");
  EXPECT_EQ(else_g.output(0).name(), "e_out");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, BypassInOneBranchLeavesTheOtherBranchUntouched) {
  onnx::ModelProto model = nestedModel();
  const onnx::ModelProto original = model;
  Result result = rewriteWith(model, dropIdentity());
  // main `k = Identity(a)`: `k` is captured, `a` is not -> applied, Relu's output is named k.
  // loop `cout = Identity(cin)`: graph output from graph input -> refused.
  // else `e1 = Identity(x)`: applied.
  EXPECT_EQ(result.stats.rewrites, 2u);
  const onnx::GraphProto& main = model.graph();
  EXPECT_EQ(opTypes(main), (std::vector<std::string>{"Relu", "Neg", "If"}));
  const onnx::GraphProto& then_g = attributeGraph(main.node(2), "then_branch");
  EXPECT_EQ(bytesOf(then_g), bytesOf(attributeGraph(original.graph().node(3), "then_branch")));
  const onnx::GraphProto& else_g = attributeGraph(main.node(2), "else_branch");
  EXPECT_EQ(opTypes(else_g), std::vector<std::string>{"Relu"});
  EXPECT_EQ(else_g.node(0).input(0), "x");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, BypassKeepsTheNameASubgraphCaptures) {
  onnx::ModelProto model = nestedModel();
  rewriteWith(model, dropIdentity());
  // `k` was Identity(a) and is read by the then-branch: Relu now produces `k` itself.
  const onnx::GraphProto& main = model.graph();
  ASSERT_EQ(main.node(0).op_type(), "Relu");
  EXPECT_EQ(main.node(0).output(0), "k");
  const onnx::GraphProto& then_g = attributeGraph(main.node(2), "then_branch");
  EXPECT_EQ(then_g.node(0).input(0), "k");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
}

TEST(RoundTrip, BypassIsRefusedWhenBothNamesAreCaptured) {
  // Both `a` and `k` are read by subgraphs: neither name can go, so the Identity stays.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    both (float[N] x, bool c) => (float[N] y)
    {
      a = Relu (x)
      k = Identity (a)
      y = If (c) <
        then_branch = then_g () => (float[N] t_out) { t_out = Neg (k) },
        else_branch = else_g () => (float[N] e_out) { e_out = Neg (a) }
      >
    }
  )");
  const std::string before = serialize(model);
  Result result = rewriteWith(model, dropIdentity());
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(serialize(model), before);
  EXPECT_TRUE(scopeErrors(model).empty());
}

TEST(RoundTrip, BypassOfValueCapturedTwoLevelsDownKeepsReferencesValid) {
  // The Loop body inside the If branch reads `k`, defined by an Identity in the main graph.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    deep (float[N] x, bool c, int64 trip, bool cond0) => (float[N] y)
    {
      a = Relu (x)
      k = Identity (a)
      y = If (c) <
        then_branch = then_g () => (float[N] t_out) {
          t_out = Loop (trip, cond0, x) <
            body = loop_body (int64 i, bool cin, float[N] acc) => (bool cout, float[N] acc_out) {
              cout = Identity (cin)
              acc_out = Add (acc, k)
            }
          >
        },
        else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
      >
    }
  )");
  Result result = rewriteWith(model, dropIdentity());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Relu", "If"}));
  EXPECT_EQ(model.graph().node(0).output(0), "k");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, RenameOfValueCapturedBySubgraphKeepsItsName) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    cap (float[N] x, bool c) => (float[N] y)
    {
      a = Relu (x)
      y = If (c) <
        then_branch = then_g () => (float[N] t_out) { t_out = Neg (a) },
        else_branch = else_g () => (float[N] e_out) { e_out = Abs (a) }
      >
    }
  )");
  rewriteWith(model, reluToSigmoid());
  ASSERT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "If"}));
  EXPECT_EQ(model.graph().node(0).output(0), "a");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, BranchOutputNamingAnOuterValueStaysValid) {
  // The then-branch has no nodes: its output is `a` from the main graph.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    passthrough (float[N] x, bool c) => (float[N] y)
    {
      a = Relu (x)
      y = If (c) <
        then_branch = then_g () => (float[N] a) {},
        else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
      >
    }
  )");
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
  Result result = rewriteWith(model, reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(model.graph().node(0).op_type(), "Sigmoid");
  EXPECT_EQ(model.graph().node(0).output(0), "a");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
}

// ---- Attributes, tensors, unknown fields ------------------------------------------------

TEST(RoundTrip, EveryAttributeTypeRoundTripsByteForByte) {
  onnx::ModelProto model = allAttributesModel();
  ASSERT_EQ(model.graph().node(1).attribute_size(), 14);
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, EveryAttributeTypeSurvivesARewriteNextToIt) {
  onnx::ModelProto model = allAttributesModel();
  const onnx::ModelProto original = model;
  Result result = rewriteWith(model, reluToSigmoid());
  // The Relu in the main graph and one in each of the three bodies.
  EXPECT_EQ(result.stats.rewrites, 4u);
  ASSERT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "test.attrs::AllAttrs", "Neg"}));
  // `a` is captured by the bodies, so the Sigmoid is named `a` and readers are unchanged.
  EXPECT_EQ(model.graph().node(0).output(0), "a");
  onnx::NodeProto expected = original.graph().node(1);
  for (onnx::AttributeProto& a : *expected.mutable_attribute()) {
    if (a.has_g()) a.mutable_g()->mutable_node(0)->set_op_type("Sigmoid");
    for (onnx::GraphProto& g : *a.mutable_graphs()) g.mutable_node(0)->set_op_type("Sigmoid");
  }
  onnx::NodeProto actual = model.graph().node(1);
  // The bodies' new nodes carry names and provenance; compare everything else.
  for (onnx::AttributeProto& a : *actual.mutable_attribute()) {
    std::vector<onnx::GraphProto*> bodies;
    if (a.has_g()) bodies.push_back(a.mutable_g());
    for (onnx::GraphProto& g : *a.mutable_graphs()) bodies.push_back(&g);
    for (onnx::GraphProto* g : bodies) {
      onnx::NodeProto& n = *g->mutable_node(0);
      EXPECT_EQ(createdBy(n), "relu_to_sigmoid");
      n.clear_name();
      n.GetReflection()->MutableUnknownFields(&n)->Clear();
      n.set_domain("");  // the parser writes domain: "" explicitly
    }
  }
  EXPECT_EQ(bytesOf(actual), bytesOf(expected));
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
}

TEST(RoundTrip, InitializersInEveryEncodingRoundTripByteForByte) {
  onnx::ModelProto model = tensorsModel();
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, InitializersAreUntouchedByARewrite) {
  onnx::ModelProto model = tensorsModel();
  const onnx::ModelProto original = model;
  RuleSet rules = reluToSigmoid();
  rules.add(makeBypassRule("drop_identity", op("Identity")));
  Result result = rewriteWith(model, rules);
  // Relu -> Sigmoid applies; Identity(names) is a graph output read from an initializer,
  // which the bypass cannot rename.
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Add", "Mul", "Sigmoid", "Add", "Identity"}));
  const onnx::GraphProto& g = model.graph();
  ASSERT_EQ(g.initializer_size(), original.graph().initializer_size());
  for (int i = 0; i < g.initializer_size(); ++i)
    EXPECT_EQ(bytesOf(g.initializer(i)), bytesOf(original.graph().initializer(i)))
        << g.initializer(i).name();
  ASSERT_EQ(g.sparse_initializer_size(), 1);
  EXPECT_EQ(bytesOf(g.sparse_initializer(0)), bytesOf(original.graph().sparse_initializer(0)));
  EXPECT_TRUE(scopeErrors(model).empty());
}

/// Adds fields a newer ONNX defines (and ONNX 1.12 does not) to several messages.
void addUnknownFields(onnx::ModelProto& model) {
  auto unknown = [](google::protobuf::Message& m) {
    return m.GetReflection()->MutableUnknownFields(&m);
  };
  unknown(model)->AddLengthDelimited(26, "model configuration");  // ModelProto.configuration
  unknown(*model.mutable_graph())->AddLengthDelimited(16, "graph metadata");
  unknown(*model.mutable_graph()->mutable_input(0))->AddLengthDelimited(4, "input metadata");
  for (onnx::NodeProto& n : *model.mutable_graph()->mutable_node())
    addNodeMetadata(n, "origin", "exporter " + n.op_type());
  unknown(*model.mutable_graph()->mutable_node(2))->AddVarint(1000, 42);
}

TEST(RoundTrip, TrainingInfoIsKeptAsItWas) {
  onnx::ModelProto model = metadataModel();
  onnx::ModelProto training = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    algorithm (float[N, 4] x) => (float[N, 4] loss)
    {
      r = Relu (x)
      loss = Identity (r)
    }
  )");
  onnx::TrainingInfoProto& info = *model.add_training_info();
  *info.mutable_algorithm() = training.graph();
  onnx::StringStringEntryProto& binding = *info.add_update_binding();
  binding.set_key("w");
  binding.set_value("w_new");
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
  rewriteWith(model, reluToSigmoid());
  ASSERT_EQ(model.training_info_size(), 1);
  EXPECT_EQ(bytesOf(model.training_info(0)), bytesOf(info));
}

TEST(RoundTrip, UnknownFieldsOfNewerOnnxArePreserved) {
  onnx::ModelProto model = metadataModel();
  addUnknownFields(model);
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
  ASSERT_EQ(nodeMetadata(model.graph().node(0)).size(), 1u);
  EXPECT_EQ(nodeMetadata(model.graph().node(0))[0].second, "exporter Relu");
}

TEST(RoundTrip, UnknownFieldsSurviveARewriteAndASaveToBytes) {
  onnx::ModelProto model = metadataModel();
  addUnknownFields(model);
  // Through bytes, as a file written by a newer ONNX would arrive.
  onnx::ModelProto loaded;
  ASSERT_TRUE(loaded.ParseFromString(serialize(model)));
  rewriteWith(loaded, reluToSigmoid());
  onnx::ModelProto reloaded;
  ASSERT_TRUE(reloaded.ParseFromString(serialize(loaded)));
  const onnx::GraphProto& g = reloaded.graph();
  EXPECT_EQ(reloaded.GetReflection()->GetUnknownFields(reloaded).field_count(), 1);
  EXPECT_EQ(g.GetReflection()->GetUnknownFields(g).field_count(), 1);
  EXPECT_EQ(g.input(0).GetReflection()->GetUnknownFields(g.input(0)).field_count(), 1);
  // The rewired Identity keeps its metadata; the Neg keeps both of its unknown fields.
  ASSERT_EQ(g.node(1).op_type(), "Identity");
  EXPECT_EQ(nodeMetadata(g.node(1)),
            (std::vector<std::pair<std::string, std::string>>{{"origin", "exporter Identity"}}));
  EXPECT_EQ(bytesOf(g.node(2)), bytesOf(model.graph().node(2)));
}

// ---- Order, cycles, undefined values --------------------------------------------------

TEST(RoundTrip, UnsortedNodesAreSavedInTopologicalOrderAfterARewrite) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    unsorted (float[N] x) => (float[N] y, float[N] s)
    {
      y = Neg (b)
      b = Identity (a)
      a = Relu (x)
      s = Abs (x)
    }
  )");
  ASSERT_FALSE(scopeErrors(model).empty());
  Result result = rewriteWith(model, reluToSigmoid());
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "Identity", "Neg", "Abs"}));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, UnsortedCaptureIsSavedBeforeTheNodeWhoseBodyReadsIt) {
  // The If reads `k` in its branch, but `k` is defined after the If in the file.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    late (float[N] x, bool c) => (float[N] y)
    {
      y = If (c) <
        then_branch = then_g () => (float[N] t_out) { t_out = Relu (k) },
        else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
      >
      k = Abs (x)
    }
  )");
  rewriteWith(model, reluToSigmoid());
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Abs", "If"}));
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, UnsortedSubgraphIsSavedInTopologicalOrderAfterARewrite) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    late_body (float[N] x, bool c) => (float[N] y)
    {
      y = If (c) <
        then_branch = then_g () => (float[N] t_out) {
          t_out = Neg (t1)
          t1 = Relu (x)
        },
        else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
      >
    }
  )");
  rewriteWith(model, reluToSigmoid());
  const onnx::GraphProto& then_g = attributeGraph(model.graph().node(0), "then_branch");
  EXPECT_EQ(opTypes(then_g), (std::vector<std::string>{"Sigmoid", "Neg"}));
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
}

struct BadModel {
  const char* what;
  const char* text;
  const char* message;  // part of the ModelError
};

const BadModel kBadModels[] = {
    {"cycle", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      cycle (float[N] x) => (float[N] y)
      {
        a = Add (x, b)
        b = Relu (a)
        y = Identity (b)
      }
    )",
     "cycle"},
    {"self loop", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      self_loop (float[N] x) => (float[N] y)
      {
        a = Relu (x)
        b = Max (a, b)
        y = Identity (b)
      }
    )",
     "cycle"},
    {"cycle through a subgraph capture", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      capture_cycle (float[N] x, bool c) => (float[N] y)
      {
        y = If (c) <
          then_branch = then_g () => (float[N] t_out) { t_out = Relu (k) },
          else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
        >
        k = Abs (y)
      }
    )",
     "cycle"},
    {"cycle inside an If branch", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      branch_cycle (float[N] x, bool c) => (float[N] y)
      {
        a = Relu (x)
        y = If (c) <
          then_branch = then_g () => (float[N] t_out) {
            t1 = Add (a, t2)
            t2 = Relu (t1)
            t_out = Identity (t2)
          },
          else_branch = else_g () => (float[N] e_out) { e_out = Neg (x) }
        >
      }
    )",
     "cycle"},
    {"cycle inside a function", R"(
      <ir_version: 8, opset_import: ["" : 16, "local" : 1]>
      fn_cycle (float[N] x) => (float[N] y)
      {
        a = Relu (x)
        y = local.Loopy (a)
      }
      <domain: "local", opset_import: ["" : 16]>
      Loopy (p) => (q)
      {
        r = Add (p, s)
        s = Relu (r)
        q = Identity (s)
      }
    )",
     "cycle"},
    {"undefined input", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      undefined (float[N] x) => (float[N] y)
      {
        a = Relu (x)
        b = Add (a, nowhere)
        y = Identity (b)
      }
    )",
     "nowhere"},
    {"undefined outer value in a branch", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      undefined_outer (float[N] x, bool c) => (float[N] y)
      {
        a = Relu (x)
        y = If (c) <
          then_branch = then_g () => (float[N] t_out) { t_out = Relu (nowhere) },
          else_branch = else_g () => (float[N] e_out) { e_out = Neg (a) }
        >
      }
    )",
     "nowhere"},
    {"undefined value in a function", R"(
      <ir_version: 8, opset_import: ["" : 16, "local" : 1]>
      undefined_fn (float[N] x) => (float[N] y)
      {
        a = Relu (x)
        y = local.Broken (a)
      }
      <domain: "local", opset_import: ["" : 16]>
      Broken (p) => (q)
      {
        r = Relu (p)
        q = Add (r, nowhere)
      }
    )",
     "nowhere"},
    {"undefined graph output", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      undefined_output (float[N] x) => (float[N] y, float[N] nowhere)
      {
        a = Relu (x)
        y = Identity (a)
      }
    )",
     "nowhere"},
    {"value defined twice, read between the definitions", R"(
      <ir_version: 8, opset_import: ["" : 16]>
      twice (float[N] x) => (float[N] y)
      {
        a = Relu (x)
        y = Identity (a)
        a = Neg (x)
      }
    )",
     "ambiguous"},
};

TEST(RoundTrip, UnrepresentableModelsAreRejectedAndLeftUnchanged) {
  for (const BadModel& bad : kBadModels) {
    onnx::ModelProto model = parseModel(bad.text);
    const std::string before = serialize(model);
    try {
      Model ir(model);
      ADD_FAILURE() << bad.what << ": no ModelError";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.message), std::string::npos)
          << bad.what << ": " << e.what();
    }
    EXPECT_EQ(serialize(model), before) << bad.what;
  }
}

TEST(RoundTrip, RewriteRejectsUnrepresentableModelsAndLeavesThemUnchanged) {
  for (const BadModel& bad : kBadModels) {
    for (bool shape_inference : {false, true}) {
      onnx::ModelProto model = parseModel(bad.text);
      const std::string before = serialize(model);
      EXPECT_THROW(rewriteWith(model, reluToSigmoid(), shape_inference), ModelError)
          << bad.what << (shape_inference ? " (with shape inference)" : "");
      EXPECT_EQ(serialize(model), before)
          << bad.what << (shape_inference ? " (with shape inference)" : "");
    }
  }
}

TEST(RoundTrip, ModelWithoutGraphIsRejectedOrLeftAsItWas) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(16);
  const std::string before = serialize(model);
  try {
    importAndFinish(model);
  } catch (const ModelError&) {
  }
  EXPECT_FALSE(model.has_graph());
  EXPECT_EQ(serialize(model), before);
}

TEST(RoundTrip, OmittedOptionalInputsAndOutputsSurviveRewiring) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    optional (float[N] x, float hi) => (float[N] y)
    {
      a = Relu (x)
      c = Clip (a, , hi)
      y, mask = Dropout (c)
    }
  )");
  // Dropout's mask is omitted in the middle of the output list: "y", "", "unused".
  onnx::NodeProto& dropout = *model.mutable_graph()->mutable_node(2);
  dropout.set_output(1, "");
  const onnx::ModelProto original = model;
  rewriteWith(model, reluToSigmoid());
  const onnx::GraphProto& g = model.graph();
  ASSERT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "Clip", "Dropout"}));
  const onnx::NodeProto& clip = g.node(1);
  ASSERT_EQ(clip.input_size(), 3);
  EXPECT_EQ(clip.input(0), g.node(0).output(0));
  EXPECT_EQ(clip.input(1), "");
  EXPECT_EQ(clip.input(2), "hi");
  EXPECT_EQ(bytesOf(g.node(2)), bytesOf(original.graph().node(2)));
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, GraphInputWithDefaultInitializerRoundTrips) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    defaults (float[2] x, float[2] bias = {1.0, 2.0}) => (float[2] y)
    {
      a = Add (x, bias)
      y = Relu (a)
    }
  )");
  const std::string before = serialize(model);
  importAndFinish(model);
  EXPECT_EQ(serialize(model), before);
  rewriteWith(model, reluToSigmoid());
  EXPECT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().input_size(), 2);
  EXPECT_EQ(model.graph().node(1).output(0), "y");
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

// ---- Provenance and determinism -------------------------------------------------------

TEST(RoundTrip, NewNodesRecordTheRuleThatMadeThem) {
  onnx::ModelProto model = metadataModel();
  rewriteWith(model, reluToSigmoid());
  const onnx::NodeProto& sigmoid = model.graph().node(0);
  ASSERT_EQ(sigmoid.op_type(), "Sigmoid");
  EXPECT_EQ(
      nodeMetadata(sigmoid),
      (std::vector<std::pair<std::string, std::string>>{{"onnx_rewrite.rule", "relu_to_sigmoid"}}));
  // Untouched nodes get no provenance.
  EXPECT_EQ(createdBy(model.graph().node(1)), "");
  EXPECT_EQ(createdBy(model.graph().node(2)), "");
}

TEST(RoundTrip, NewNamesAreDeterministicUniqueAndDerivedFromTheRule) {
  // The name the rule would pick first is taken by a value, the second by a node.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    names (float[N] x) => (float[N] y, float[N] relu_to_sigmoid)
    {
      a = Relu (x)
      b = Relu (a)
      y = Relu (b)
      relu_to_sigmoid = Neg (x)
    }
  )");
  model.mutable_graph()->mutable_node(3)->set_name("relu_to_sigmoid_1");
  rewriteWith(model, reluToSigmoid());
  ASSERT_EQ(opTypes(model), (std::vector<std::string>{"Sigmoid", "Sigmoid", "Sigmoid", "Neg"}));
  std::set<std::string> names;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "Sigmoid") continue;
    EXPECT_EQ(n.name().rfind("relu_to_sigmoid", 0), 0u) << n.name();
    EXPECT_NE(n.name(), "relu_to_sigmoid");
    EXPECT_NE(n.name(), "relu_to_sigmoid_1");
    EXPECT_TRUE(names.insert(n.name()).second) << "duplicate node name " << n.name();
  }
  EXPECT_EQ(model.graph().node(2).output(0), "y");
  EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(RoundTrip, SameRewriteOnTwoCopiesGivesIdenticalBytes) {
  const std::vector<onnx::ModelProto> models = {metadataModel(), functionModel(), nestedModel(),
                                                allAttributesModel(), tensorsModel()};
  for (const onnx::ModelProto& original : models) {
    RuleSet rules = reluToSigmoid();
    rules.add(makeBypassRule("drop_identity", op("Identity")));
    onnx::ModelProto first = original;
    onnx::ModelProto second = original;
    rewriteWith(first, rules, /*shape_inference=*/true);
    rewriteWith(second, rules, /*shape_inference=*/true);
    EXPECT_NE(serialize(first), serialize(original)) << original.graph().name();
    EXPECT_EQ(serialize(first), serialize(second)) << original.graph().name();
  }
}

TEST(RoundTrip, RewrittenModelsPassTheOnnxChecker) {
  const std::vector<onnx::ModelProto> models = {metadataModel(), functionModel(), nestedModel()};
  for (const onnx::ModelProto& original : models) {
    ASSERT_NO_THROW(onnx::checker::check_model(original)) << original.graph().name();
    RuleSet rules = reluToSigmoid();
    rules.add(makeBypassRule("drop_identity", op("Identity")));
    onnx::ModelProto model = original;
    rewriteWith(model, rules, /*shape_inference=*/true);
    EXPECT_NO_THROW(onnx::checker::check_model(model)) << original.graph().name();
    EXPECT_TRUE(scopeErrors(model).empty()) << ::testing::PrintToString(scopeErrors(model));
  }
}

}  // namespace
}  // namespace onnx_rewrite
