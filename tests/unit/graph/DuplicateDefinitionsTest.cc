//===- DuplicateDefinitionsTest.cc - values a model defines twice ---------===//
//
// ONNX wants every name defined once; real models are not always so. Import reads
// them as ONNX Runtime 1.30 does where it loads them, repairs what reads the same
// whichever way one looks at it, and refuses the rest with one line, leaving the
// caller's model as it was:
//
// - main graph, Constant nodes and initializers only: the last definition (dense
//   initializers, then Constants, then sparse initializers) is what every reader
//   reads, even readers before it (ORT: "the model will use the latest encountered
//   initializer"); the others are dropped. With a graph input of that name, ORT makes
//   the last one the input's default: everything is kept as loaded.
// - nodes ORT refuses to load ("Duplicate definition of name"): identical nodes are
//   merged; if every reader comes after the last definition the earlier ones are
//   dropped; a reader before the last one is ambiguous, an error. So is a node
//   redefining an input or initializer, and any such duplicate in a branch.
//
// Every repair is one note naming the value; the saved model is valid ONNX.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <onnx/checker.h>

#include "runtime/api/Rewrite.h"
#include "runtime/driver/Rewriter.h"
#include "runtime/graph/Model.h"
#include "runtime/graph/ModelError.h"
#include "runtime/match/Params.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::opTypes;
using testing::parseModel;
using testing::serialize;

/// Imports and saves `model` (no rules); returns the import notes.
std::vector<std::string> load(onnx::ModelProto& model) {
  Model ir(model);
  std::vector<std::string> notes = ir.importNotes();
  ir.finish();
  return notes;
}

/// The ModelError message of importing `model`, which must be left as it was.
std::string loadError(onnx::ModelProto& model) {
  const std::string before = serialize(model);
  std::string message = "(no error)";
  try {
    Model ir(model);
  } catch (const ModelError& e) {
    message = e.what();
  }
  EXPECT_EQ(serialize(model), before) << "a refused model is left as it was";
  return message;
}

/// The float values of the Constant node or initializer named `name` in the main graph.
std::vector<float> constantValues(const onnx::ModelProto& model, const std::string& name) {
  auto floats = [](const onnx::TensorProto& t) {
    return std::vector<float>(t.float_data().begin(), t.float_data().end());
  };
  for (const onnx::NodeProto& n : model.graph().node())
    if (n.op_type() == "Constant" && n.output(0) == name) return floats(n.attribute(0).t());
  for (const onnx::TensorProto& t : model.graph().initializer())
    if (t.name() == name) return floats(t);
  return {};
}

int definitionsOf(const onnx::GraphProto& g, const std::string& name) {
  int count = 0;
  for (const onnx::NodeProto& n : g.node())
    for (const std::string& out : n.output()) count += out == name;
  for (const onnx::TensorProto& t : g.initializer()) count += t.name() == name;
  return count;
}

// ---- What ONNX Runtime loads: Constants and initializers of the main graph -----------

// gpt2_past.onnx's shape: a script appended Constants that redefine num_heads; ORT runs
// the model with the appended values, read by Divs placed before them.
const char* kConstantRedefinedAtTheEnd = R"(
  <ir_version: 6, opset_import: ["" : 11]>
  patched (float[2] x) => (float[2] y) {
    heads = Constant <value = float[1] {12.0}> ()
    y = Div (x, heads)
    heads = Constant <value = float[1] {2.0}> ()
  }
)";

TEST(DuplicateDefinitions, EveryReaderReadsTheLastConstantOfANameAsOnnxRuntimeDoes) {
  onnx::ModelProto model = parseModel(kConstantRedefinedAtTheEnd);
  const std::vector<std::string> notes = load(model);
  EXPECT_EQ(notes, std::vector<std::string>{
                       "main: value 'heads' is defined 2 times (node #1 (Constant), node #3 "
                       "(Constant)) with different values, of which ONNX Runtime reads the last "
                       "everywhere: kept the last, dropped the others"});
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Constant", "Div"}))
      << "the kept Constant moves before its reader";
  EXPECT_EQ(constantValues(model, "heads"), std::vector<float>{2.0f});
  EXPECT_NO_THROW(onnx::checker::check_model(model)) << "the saved model is valid ONNX";
}

TEST(DuplicateDefinitions, IdenticalConstantsAreMergedIntoOne) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    twice (float[2] x) => (float[2] y) {
      c = Constant <value = float[1] {3.0}> ()
      t = Mul (x, c)
      c = Constant <value = float[1] {3.0}> ()
      y = Add (t, c)
    }
  )");
  EXPECT_EQ(load(model),
            std::vector<std::string>{
                "main: value 'c' is defined 2 times (node #1 (Constant), node #3 "
                "(Constant)) with identical values: kept the last, dropped the others"});
  EXPECT_EQ(definitionsOf(model.graph(), "c"), 1);
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(DuplicateDefinitions, AConstantAfterAnInitializerOfItsNameWins) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    init_then_constant (float[2] x) => (float[2] y) <float[1] c = {10.0}> {
      y = Add (x, c)
      c = Constant <value = float[1] {20.0}> ()
    }
  )");
  EXPECT_EQ(load(model), std::vector<std::string>{
                             "main: value 'c' is defined 2 times (an initializer, node #2 "
                             "(Constant)) with different values, of which ONNX Runtime reads the "
                             "last everywhere: kept the last, dropped the others"});
  EXPECT_EQ(model.graph().initializer_size(), 0) << "the initializer lost to the Constant";
  EXPECT_EQ(constantValues(model, "c"), std::vector<float>{20.0f});
}

TEST(DuplicateDefinitions, OfTwoInitializersOfANameTheLastWins) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    two_inits (float[2] x) => (float[2] y) <float[1] c = {10.0}, float[1] c = {20.0}> {
      y = Add (x, c)
    }
  )");
  EXPECT_EQ(load(model).size(), 1u);
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(constantValues(model, "c"), std::vector<float>{20.0f});
}

/// `model` with a sparse initializer named `name` holding 20 at index 1 of a float[2].
void addSparseInitializer(onnx::ModelProto& model, const std::string& name) {
  onnx::SparseTensorProto& s = *model.mutable_graph()->add_sparse_initializer();
  s.add_dims(2);
  s.mutable_values()->set_name(name);
  s.mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  s.mutable_values()->add_dims(1);
  s.mutable_values()->add_float_data(20.0f);
  s.mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  s.mutable_indices()->add_dims(1);
  s.mutable_indices()->add_int64_data(1);
}

TEST(DuplicateDefinitions, ASparseInitializerWinsOverInitializersAndConstantsOfItsName) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    sparse_last (float[2] x) => (float[2] y) <float[2] c = {10.0, 10.0}> {
      y = Add (x, c)
      c = Constant <value = float[2] {30.0, 30.0}> ()
    }
  )");
  addSparseInitializer(model, "c");
  EXPECT_EQ(load(model).size(), 1u);
  EXPECT_EQ(opTypes(model), std::vector<std::string>{"Add"});
  EXPECT_EQ(model.graph().initializer_size(), 0);
  EXPECT_EQ(model.graph().sparse_initializer_size(), 1);
}

TEST(DuplicateDefinitions, TwoSparseInitializersOfANameAreRefused) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    two_sparse (float[2] x) => (float[2] y) {
      y = Add (x, c)
    }
  )");
  addSparseInitializer(model, "c");
  addSparseInitializer(model, "c");
  EXPECT_EQ(loadError(model),
            "main: value 'c' is defined 2 times (a sparse initializer, a sparse initializer): two "
            "of them are sparse initializers (ONNX Runtime refuses such a model too)");
}

TEST(DuplicateDefinitions, AGraphOutputDefinedByTwoConstantsIsTheLast) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    output_twice (float[2] x) => (float[2] y) {
      y = Constant <value = float[2] {10.0, 10.0}> ()
      y = Constant <value = float[2] {20.0, 20.0}> ()
    }
  )");
  EXPECT_EQ(load(model).size(), 1u);
  EXPECT_EQ(constantValues(model, "y"), (std::vector<float>{20.0f, 20.0f}));
  EXPECT_EQ(definitionsOf(model.graph(), "y"), 1);
}

TEST(DuplicateDefinitions, AGraphInputWithAConstantOfItsNameIsKeptAsLoaded) {
  // ORT makes the Constant the input's default value, which a feed overrides.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    input_default (float[2] x, float[2] c) => (float[2] y) {
      y = Add (x, c)
      c = Constant <value = float[2] {20.0, 20.0}> ()
    }
  )");
  const std::string before = serialize(model);
  {
    Model ir(model);
    EXPECT_EQ(ir.importNotes(),
              std::vector<std::string>{
                  "main: value 'c' is defined 2 times (a graph input, node #2 (Constant)): kept as "
                  "loaded; ONNX Runtime makes the last one the input's default value, and rules "
                  "treat 'c' as an input"});
    EXPECT_FALSE(ir.repaired());
    const Graph& g = ir.mainGraph();
    const Value& c = g.value(g.findValue("c"));
    EXPECT_TRUE(c.isGraphInput());
    EXPECT_EQ(c.producer(), kNoId) << "rules see the input, not the Constant";
    ir.finish();
  }
  EXPECT_EQ(serialize(model), before);
}

// ---- What ONNX Runtime refuses, repaired where every reading agrees ------------------

TEST(DuplicateDefinitions, IdenticalNodesAreMergedIntoTheFirst) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    same (float[2] x) => (float[2] y) {
      n = Neg (x)
      y = Add (x, n)
      n = Neg (x)
    }
  )");
  EXPECT_EQ(load(model), std::vector<std::string>{
                             "main: value 'n' is defined 2 times (node #1 (Neg), node #3 (Neg)) by "
                             "identical nodes: kept the first, dropped the others (ONNX Runtime "
                             "refuses the model as it was)"});
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Neg", "Add"}));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(DuplicateDefinitions, ADefinitionNoReaderSeesIsDropped) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    dead (float[2] x) => (float[2] y) {
      n = Neg (x)
      n = Abs (x)
      y = Add (x, n)
    }
  )");
  EXPECT_EQ(load(model),
            std::vector<std::string>{
                "main: value 'n' is defined 2 times (node #1 (Neg), node #2 (Abs)) and "
                "read only after the last: kept the last, dropped the others (ONNX "
                "Runtime refuses the model as it was)"});
  EXPECT_EQ(opTypes(model), (std::vector<std::string>{"Abs", "Add"}));
}

TEST(DuplicateDefinitions, ALosingNodeThatComputesMoreKeepsItsOtherOutputsAndRenamesTheLoser) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    split (float[4] x) => (float[2] y) {
      a, b = Split <axis = 0> (x)
      a = Neg (b)
      y = Add (a, b)
    }
  )");
  EXPECT_EQ(load(model),
            std::vector<std::string>{
                "main: value 'a' is defined 2 times (node #1 (Split), node #2 (Neg)) and read "
                "only after the last: kept the last, renamed the output of node #1 (Split), "
                "which computes other values too, to 'a_1' (ONNX Runtime refuses the model as "
                "it was)"});
  EXPECT_EQ(model.graph().node(0).output(0), "a_1");
  EXPECT_EQ(model.graph().node(1).output(0), "a");
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

// The rotary_mha hf_70b test model of ONNX Runtime's Python tests has both of these.
TEST(DuplicateDefinitions, AReaderBetweenTwoDefinitionsIsAmbiguous) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    between (float[2] x) => (float[2] y) {
      s = Neg (x)
      y = Add (x, s)
      s = Abs (x)
    }
  )");
  EXPECT_EQ(loadError(model),
            "main: value 's' is defined 2 times (node #1 (Neg), node #3 (Abs)) and node #2 (Add) "
            "reads it before the last definition, so which one it reads is ambiguous (ONNX "
            "Runtime refuses such a model too)");
}

TEST(DuplicateDefinitions, AReaderBeforeEveryDefinitionIsAmbiguous) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    before (float[2] x) => (float[2] y) {
      y = Mul (x, one)
      one = Neg (x)
      one = Abs (x)
    }
  )");
  EXPECT_NE(loadError(model).find("node #1 (Mul) reads it before the last definition"),
            std::string::npos);
}

TEST(DuplicateDefinitions, ADuplicateAfterAReaderIsAmbiguousEvenBetweenConstantAndNode) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    mixed (float[2] x) => (float[2] y) {
      c = Constant <value = float[2] {1.0, 1.0}> ()
      y = Add (x, c)
      c = Neg (x)
    }
  )");
  EXPECT_NE(loadError(model).find("is ambiguous"), std::string::npos);
}

TEST(DuplicateDefinitions, RandomNodesAreNeverIdentical) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    random (float[2] x) => (float[2] y) {
      r = RandomUniformLike (x)
      y = Add (x, r)
      r = RandomUniformLike (x)
    }
  )");
  EXPECT_NE(loadError(model).find("is ambiguous"), std::string::npos);
}

TEST(DuplicateDefinitions, ANodeCannotRedefineAnInitializerOrAnInput) {
  onnx::ModelProto initializer = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    over_init (float[2] x) => (float[2] y) <float[2] c = {1.0, 1.0}> {
      c = Neg (x)
      y = Add (x, c)
    }
  )");
  EXPECT_EQ(loadError(initializer),
            "main: value 'c' is defined 2 times (an initializer, node #1 (Neg)): a node cannot "
            "redefine a graph input or initializer (ONNX Runtime refuses such a model too)");
  onnx::ModelProto input = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    over_input (float[2] x, float[2] c) => (float[2] y) {
      c = Neg (x)
      y = Add (x, c)
    }
  )");
  EXPECT_EQ(loadError(input),
            "main: value 'c' is defined 2 times (a graph input, node #1 (Neg)): a node cannot "
            "redefine a graph input or initializer (ONNX Runtime refuses such a model too)");
}

TEST(DuplicateDefinitions, ANodeWritingOneNameTwiceIsRefused) {
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    split_twice (float[4] x) => (float[2] y) {
      a, a = Split <axis = 0> (x)
      y = Neg (a)
    }
  )");
  EXPECT_EQ(loadError(model),
            "main: value 'a' is defined more than once (node #1 (Split) writes it twice)");
}

TEST(DuplicateDefinitions, InABranchConstantsAreNodesLikeAnyOther) {
  // ONNX's SSA check runs on If bodies in ORT: no Constant there is "latest wins".
  onnx::ModelProto ambiguous = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    branch (float[2] x, bool cond) => (float[2] y) {
      y = If (cond) <
        then_branch = then_g () => (float[2] t) {
          k = Constant <value = float[2] {1.0, 1.0}> ()
          t = Add (x, k)
          k = Constant <value = float[2] {2.0, 2.0}> ()
        },
        else_branch = else_g () => (float[2] e) { e = Neg (x) }
      >
    }
  )");
  EXPECT_EQ(loadError(ambiguous),
            "main/.then_branch: value 'k' is defined 2 times (node #1 (Constant), node #3 "
            "(Constant)) and node #2 (Add) reads it before the last definition, so which one it "
            "reads is ambiguous (ONNX Runtime refuses such a model too)");
  onnx::ModelProto identical = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    branch (float[2] x, bool cond) => (float[2] y) {
      y = If (cond) <
        then_branch = then_g () => (float[2] t) {
          k = Constant <value = float[2] {1.0, 1.0}> ()
          t = Add (x, k)
          k = Constant <value = float[2] {1.0, 1.0}> ()
        },
        else_branch = else_g () => (float[2] e) { e = Neg (x) }
      >
    }
  )");
  EXPECT_EQ(load(identical).size(), 1u);
  EXPECT_EQ(opTypes(identical.graph().node(0).attribute(0).g()),
            (std::vector<std::string>{"Constant", "Add"}));
}

TEST(DuplicateDefinitions, AnErrorAfterARepairLeavesTheModelAsItWas) {
  // 'c' alone would be repaired (its earlier Constant dropped); 's' is ambiguous.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    both (float[2] x) => (float[2] y) {
      c = Constant <value = float[2] {1.0, 1.0}> ()
      t = Add (x, c)
      c = Constant <value = float[2] {2.0, 2.0}> ()
      s = Neg (t)
      y = Add (x, s)
      s = Abs (t)
    }
  )");
  EXPECT_NE(loadError(model).find("value 's'"), std::string::npos);
}

// ---- Through rewrite() ---------------------------------------------------------------

/// Records the rank shape inference gave the output of each Relu, and rewrites nothing.
class ReluRankProbe : public RewritePattern {
 public:
  explicit ReluRankProbe(std::vector<int>& ranks)
      : RewritePattern(RuleInfo{"relu_rank_probe", OpId::get("", "Relu"), 0, {"test"}, "", {}}),
        ranks_(ranks) {}
  bool matchAndRewrite(NodeId root, Rewriter& rw) const override {
    const onnx::TensorShapeProto* shape = valueShape(rw.graph(), rw.graph().node(root).output(0));
    ranks_.push_back(shape ? shape->dim_size() : -1);
    return false;
  }

 private:
  std::vector<int>& ranks_;
};

TEST(DuplicateDefinitions, RewriteReportsRepairsAsNotesAndInfersShapesOfTheRepairedGraph) {
  // Read first to last, inference would reshape by the first Constant (rank 2); every
  // reader reads the last (rank 3), and so do the rules.
  onnx::ModelProto model = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    reshaped (float[6] x) => (float[6] y) {
      shape = Constant <value = int64[2] {1, 6}> ()
      r = Reshape (x, shape)
      t = Relu (r)
      y = Reshape (t, flat)
      shape = Constant <value = int64[3] {2, 3, 1}> ()
      flat = Constant <value = int64[1] {6}> ()
    }
  )");
  std::vector<int> ranks;
  RuleSet rules;
  rules.add(std::make_unique<ReluRankProbe>(ranks));
  const Result result = rewrite(model, rules);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0].rfind("main: value 'shape' is defined 2 times", 0), 0u)
      << result.notes[0];
  EXPECT_EQ(ranks, std::vector<int>{3});
  EXPECT_EQ(definitionsOf(model.graph(), "shape"), 1);
  EXPECT_EQ(model.graph().value_info_size(), 0) << "inferred shapes are not saved";
}

TEST(DuplicateDefinitions, RewriteLeavesARefusedModelAsItWas) {
  for (bool shape_inference : {false, true}) {
    onnx::ModelProto model = parseModel(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      between (float[2] x) => (float[2] y) {
        s = Neg (x)
        y = Add (x, s)
        s = Abs (x)
      }
    )");
    const std::string before = serialize(model);
    Options options;
    options.shape_inference = shape_inference;
    EXPECT_THROW(rewrite(model, RuleSet(), options), ModelError);
    EXPECT_EQ(serialize(model), before);
  }
}

}  // namespace
}  // namespace onnx_rewrite
