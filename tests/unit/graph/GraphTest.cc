//===- GraphTest.cc - the graph IR: indexing, use lists, mutation ---------===//
//
// Specifies what the Graph IR promises the driver and the rules: values know
// their producer and uses, ops are indexed, captured outer values count as uses,
// and the mutators keep all of that consistent (and names unique and stable).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "runtime/graph/Graph.h"
#include "runtime/graph/Model.h"
#include "runtime/graph/ModelError.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::opTypes;
using testing::parseModel;
using testing::serialize;

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
chain (float[N, 4] x) => (float[N, 4] y) <float[1] half = {0.5}, float[N, 4] t> {
  t = Relu(x)
  u = Mul(t, half)
  y = Add(u, t)
}
)";

TEST(Graph, IndexesProducersUsesAndOps) {
  onnx::ModelProto proto = parseModel(kChain);
  Model model(proto);
  Graph& g = model.mainGraph();
  ASSERT_EQ(g.liveNodeCount(), 3u);
  const ValueId t = g.findValue("t");
  ASSERT_NE(t, kNoId);
  EXPECT_EQ(g.node(g.value(t).producer()).opType(), "Relu");
  ASSERT_EQ(g.value(t).uses().size(), 2u);
  EXPECT_EQ(g.node(g.value(t).uses()[0].node).opType(), "Mul");
  EXPECT_EQ(g.value(t).uses()[1].input, 1u);  // Add(u, t): t is input 1
  EXPECT_EQ(g.nodesOf(OpId::get("", "Mul")).size(), 1u);
  EXPECT_EQ(g.nodesOf(OpId::get("ai.onnx", "Relu")).size(), 1u) << "ai.onnx is the default domain";
  EXPECT_TRUE(g.value(g.findValue("x")).isGraphInput());
  EXPECT_TRUE(g.value(g.findValue("y")).isGraphOutput());
  EXPECT_NE(g.value(g.findValue("half")).initializer(), nullptr);
  EXPECT_EQ(g.opsetVersion(""), 17);
  EXPECT_EQ(g.opsetVersion("com.microsoft"), -1);
}

TEST(Graph, KnowsTypesFromInputsOutputsAndValueInfo) {
  onnx::ModelProto proto = parseModel(kChain);
  Model model(proto);
  Graph& g = model.mainGraph();
  for (const char* name : {"x", "t", "y"}) {
    const onnx::TypeProto* type = g.value(g.findValue(name)).type();
    ASSERT_NE(type, nullptr) << name;
    EXPECT_EQ(type->tensor_type().shape().dim(0).dim_param(), "N") << name;
  }
  EXPECT_EQ(g.value(g.findValue("u")).type(), nullptr) << "u has no value_info";
}

TEST(Graph, UnmodifiedModelIsRestoredByteForByte) {
  onnx::ModelProto proto = parseModel(kChain);
  const std::string before = serialize(proto);
  {
    Model model(proto);
    EXPECT_EQ(proto.graph().node_size(), 0) << "nodes live in the IR while it is open";
  }
  EXPECT_EQ(serialize(proto), before);
}

TEST(Graph, ReplacingAGraphOutputKeepsItsName) {
  onnx::ModelProto proto = parseModel(kChain);
  {
    Model model(proto);
    Graph& g = model.mainGraph();
    const ValueId y = g.findValue("y");
    NodeSpec spec;
    spec.op = OpId::get("", "Sigmoid");
    spec.inputs = {g.findValue("x")};
    spec.created_by = "test_rule";
    NodeId n = g.addNode(std::move(spec));
    const ValueId fresh = g.node(n).output(0);
    ASSERT_TRUE(g.replaceAllUsesWith(y, fresh));
    EXPECT_EQ(g.value(fresh).name(), "y") << "the replacement takes the output's name";
    EXPECT_TRUE(g.value(fresh).isGraphOutput());
    EXPECT_FALSE(g.value(y).isGraphOutput());
    // Now Add, Mul and Relu are dead: erase consumers first.
    for (const char* op : {"Add", "Mul", "Relu"}) {
      NodeId id = g.nodesOf(OpId::get("", op)).at(0);
      ASSERT_TRUE(g.isDead(id)) << op;
      g.eraseNode(id);
    }
  }
  EXPECT_EQ(opTypes(proto), std::vector<std::string>{"Sigmoid"});
  EXPECT_EQ(proto.graph().node(0).output(0), "y");
  EXPECT_EQ(proto.graph().initializer_size(), 0) << "an initializer that lost its last use goes";
  EXPECT_EQ(proto.graph().value_info_size(), 0) << "value_info of removed values goes";
}

TEST(Graph, RefusesToMergeTwoNamesThatMustBothSurvive) {
  onnx::ModelProto proto = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Identity(x)
}
)");
  Model model(proto);
  Graph& g = model.mainGraph();
  EXPECT_FALSE(g.replaceAllUsesWith(g.findValue("y"), g.findValue("x")))
      << "y is a graph output and x a graph input: neither name can change";
  EXPECT_FALSE(g.modified());
}

TEST(Graph, FreshNamesAreUniqueAndDeterministic) {
  onnx::ModelProto proto = parseModel(kChain);
  Model model(proto);
  Graph& g = model.mainGraph();
  NodeSpec a, b;
  a.op = b.op = OpId::get("", "Relu");
  a.inputs = b.inputs = {g.findValue("x")};
  a.name_hint = b.name_hint = "t";  // "t" is taken by a value
  NodeId na = g.addNode(std::move(a));
  NodeId nb = g.addNode(std::move(b));
  EXPECT_EQ(g.node(na).name(), "t_1");
  EXPECT_EQ(g.node(nb).name(), "t_2");
  EXPECT_EQ(g.value(g.node(na).output(0)).name(), "t_1_out");
}

TEST(Graph, NewNodesRecordTheirRule) {
  onnx::ModelProto proto = parseModel(kChain);
  {
    Model model(proto);
    Graph& g = model.mainGraph();
    NodeSpec spec;
    spec.op = OpId::get("com.microsoft", "Gelu");
    spec.inputs = {g.findValue("x")};
    spec.created_by = "gelu_rule";
    NodeId n = g.addNode(std::move(spec));
    EXPECT_EQ(g.node(n).createdBy(), "gelu_rule");
    EXPECT_EQ(g.node(n).domain(), "com.microsoft");
  }
  ASSERT_EQ(proto.graph().node(1).op_type(), "Gelu") << "order 0 ties with Relu; ids break ties";
  const onnx::NodeProto& added = proto.graph().node(1);
  // metadata_props (field 9, ONNX >= 1.16) is an unknown field for ONNX 1.12's classes.
  const auto& unknown = added.GetReflection()->GetUnknownFields(added);
  ASSERT_EQ(unknown.field_count(), 1);
  EXPECT_EQ(unknown.field(0).number(), 9);
  onnx::StringStringEntryProto entry;
  ASSERT_TRUE(entry.ParseFromString(unknown.field(0).length_delimited()));
  EXPECT_EQ(entry.key(), "onnx_rewrite.rule");
  EXPECT_EQ(entry.value(), "gelu_rule");
}

const char* kIfModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool cond, float[2] x) => (float[2] y) {
  t = Relu(x)
  y = If(cond) <then_branch = then_g () => (float[2] a) { a = Neg(t) },
                else_branch = else_g () => (float[2] b) { b = Abs(x) }>
}
)";

TEST(Graph, OuterValuesReadBySubgraphsAreUsesOfTheOwningNode) {
  onnx::ModelProto proto = parseModel(kIfModel);
  Model model(proto);
  Graph& g = model.mainGraph();
  const ValueId t = g.findValue("t");
  const NodeId if_node = g.nodesOf(OpId::get("", "If")).at(0);
  ASSERT_EQ(g.value(t).uses().size(), 1u);
  EXPECT_EQ(g.value(t).uses()[0].node, if_node);
  EXPECT_EQ(g.value(t).uses()[0].input, kSubgraphUse);
  EXPECT_TRUE(g.value(t).isNamePinned());
  EXPECT_FALSE(g.isDead(g.value(t).producer())) << "Relu feeds the then-branch";
  ASSERT_EQ(g.node(if_node).subgraphs().size(), 2u);
  const Graph& then_g = *g.node(if_node).subgraphs()[0];
  EXPECT_TRUE(then_g.value(then_g.findValue("t")).isOuter());
  EXPECT_EQ(then_g.label(), "main/.then_branch");
  EXPECT_EQ(model.allGraphs().size(), 3u);
}

TEST(Graph, LoadedUnsortedNodesAreSavedSortedAfterARewrite) {
  onnx::ModelProto proto = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Neg(t)
  t = Relu(x)
}
)");
  {
    Model model(proto);
    Graph& g = model.mainGraph();
    EXPECT_EQ(g.topologicalOrder(), (std::vector<NodeId>{1, 0}));
  }
  EXPECT_EQ(opTypes(proto), (std::vector<std::string>{"Relu", "Neg"}));
}

TEST(Graph, RejectsACycleAndLeavesTheProtoAsItWas) {
  onnx::ModelProto proto = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Add(x, b)
  b = Relu(a)
  y = Neg(b)
}
)");
  const std::string before = serialize(proto);
  EXPECT_THROW({ Model model(proto); }, ModelError);
  EXPECT_EQ(serialize(proto), before);
}

TEST(Graph, RejectsAnUndefinedInputAndLeavesTheProtoAsItWas) {
  onnx::ModelProto proto = parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  t = Relu(x)
  y = Add(t, nowhere)
}
)");
  const std::string before = serialize(proto);
  try {
    Model model(proto);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_EQ(std::string(e.what()), "main: node '' (Add) reads 'nowhere', which nothing defines");
  }
  EXPECT_EQ(serialize(proto), before);
}

TEST(Graph, ANodeOfDomainAiOnnxIsInTheOnnxDomainAndKeepsItsSpelling) {
  onnx::ModelProto proto = parseModel(kChain);
  proto.mutable_opset_import(0)->set_domain("ai.onnx");
  proto.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  const std::string before = serialize(proto);
  {
    Model model(proto);
    Graph& g = model.mainGraph();
    const Node& relu = g.node(g.value(g.findValue("t")).producer());
    EXPECT_EQ(relu.domain(), "") << "rules and natives compare domains with \"\"";
    EXPECT_EQ(relu.op(), OpId::get("", "Relu"));
    EXPECT_EQ(g.opsetVersion(""), 17);
    EXPECT_TRUE(model.importNotes().empty());
    model.finish();
  }
  EXPECT_EQ(serialize(proto), before) << "saved as spelled";
}

TEST(Graph, AModelWithoutAnOnnxImportIsReadAtTheNewestOpsetWithANote) {
  // ONNX Runtime imports its newest ai.onnx opset for such a model.
  onnx::ModelProto proto = parseModel(kChain);
  proto.mutable_opset_import(0)->set_domain("com.microsoft");
  proto.mutable_opset_import(0)->set_version(1);
  const std::string before = serialize(proto);
  {
    Model model(proto);
    EXPECT_EQ(model.mainGraph().opsetVersion("ai.onnx"), 24);
    EXPECT_EQ(model.importNotes(),
              std::vector<std::string>{"the model imports no ai.onnx opset; read at opset 24, the "
                                       "newest onnx-rewrite knows, as ONNX Runtime reads it at "
                                       "its newest"});
    model.finish();
  }
  EXPECT_EQ(serialize(proto), before) << "no import is added: ONNX Runtime keeps choosing";
}

TEST(Graph, FindsEveryValueOfALargeGraphAndOfItsGrowth) {
  // Enough names to make the name index grow past what import reserved.
  onnx::ModelProto proto = parseModel(kChain);
  onnx::GraphProto& graph = *proto.mutable_graph();
  std::string last = "y";
  for (int i = 0; i < 3000; ++i) {
    onnx::NodeProto& n = *graph.add_node();
    n.set_op_type("Relu");
    n.add_input(last);
    last = "chain_" + std::to_string(i);
    n.add_output(last);
  }
  Model model(proto);
  Graph& g = model.mainGraph();
  for (int i = 0; i < 3000; ++i) {
    const ValueId v = g.findValue("chain_" + std::to_string(i));
    ASSERT_NE(v, kNoId) << i;
    EXPECT_EQ(g.value(v).name(), "chain_" + std::to_string(i));
    EXPECT_EQ(g.value(v).producer(), static_cast<NodeId>(3 + i));
  }
  EXPECT_EQ(g.findValue("chain_3000"), kNoId);
  EXPECT_EQ(g.findValue(""), kNoId);
  std::vector<ValueId> added;
  for (int i = 0; i < 5000; ++i) {
    NodeSpec spec;
    spec.op = OpId::get("", "Neg");
    spec.inputs = {g.findValue("x")};
    spec.name_hint = "chain_" + std::to_string(i);  // taken: fresh names get suffixes
    added.push_back(g.node(g.addNode(std::move(spec))).output(0));
  }
  for (ValueId v : added) EXPECT_EQ(g.findValue(g.value(v).name()), v);
  EXPECT_EQ(g.value(added[0]).name(), "chain_0_1_out");
}

TEST(Graph, ValuesThatTradeNamesAreFoundUnderTheirNewNames) {
  onnx::ModelProto proto = parseModel(kChain);
  Model model(proto);
  Graph& g = model.mainGraph();
  const ValueId y = g.findValue("y");
  NodeSpec spec;
  spec.op = OpId::get("", "Sigmoid");
  spec.inputs = {g.findValue("x")};
  const ValueId fresh = g.node(g.addNode(std::move(spec))).output(0);
  const std::string fresh_name = g.value(fresh).name();
  ASSERT_TRUE(g.replaceAllUsesWith(y, fresh));
  EXPECT_EQ(g.findValue("y"), fresh);
  EXPECT_EQ(g.findValue(fresh_name), y);
}

TEST(Graph, NewNodeSortedBeforeItsProducerIsSavedAfterIt) {
  // Order keys put the new Neg (order 0) before Mul, which computes its input: saving
  // must fall back from the key order to a topological one (Kahn's, keys breaking ties).
  onnx::ModelProto proto = parseModel(kChain);
  {
    Model model(proto);
    Graph& g = model.mainGraph();
    NodeSpec spec;
    spec.op = OpId::get("", "Neg");
    spec.inputs = {g.findValue("u")};
    spec.order = 0;
    g.addNode(std::move(spec));
    EXPECT_EQ(g.topologicalOrder(), (std::vector<NodeId>{0, 1, 3, 2}));
  }
  EXPECT_EQ(opTypes(proto), (std::vector<std::string>{"Relu", "Mul", "Neg", "Add"}));
}

TEST(NameTable, FreshNamesSkipEveryRecordedName) {
  NameTable names;
  EXPECT_TRUE(names.insert("a"));
  EXPECT_FALSE(names.insert("a"));
  EXPECT_TRUE(names.insert("a_1"));
  EXPECT_EQ(names.fresh("a"), "a_2");
  EXPECT_EQ(names.fresh("a"), "a_3");
  EXPECT_EQ(names.fresh("b"), "b");
  EXPECT_EQ(names.fresh(""), "v");
  EXPECT_TRUE(names.contains("a_3"));
  EXPECT_FALSE(names.contains("a_4"));
  for (int i = 0; i < 10000; ++i) names.insert("n" + std::to_string(i));
  EXPECT_EQ(names.fresh("n9999"), "n9999_1");
  EXPECT_EQ(names.size(), 10007u);
}

}  // namespace
}  // namespace onnx_rewrite
