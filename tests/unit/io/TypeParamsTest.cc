//===- TypeParamsTest.cc - the build-time type-parameter table --------------===//
#include "runtime/io/TypeParams.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <string>

namespace onnx_rewrite {
namespace {

TEST(TypeParams, NamesTheTypeParameterOfEachFormalInput) {
  EXPECT_EQ(onnxTypeParams("Add", 14), "T T");
  EXPECT_EQ(onnxTypeParams("Reshape", 14), "T .");
  EXPECT_EQ(onnxTypeParams("Where", 16), "B T T");
  EXPECT_EQ(onnxTypeParams("Gather", 13), "T Tind");
}

TEST(TypeParams, MarksTheVariadicLastInput) {
  EXPECT_EQ(onnxTypeParams("Concat", 13), "T*");
  EXPECT_EQ(onnxTypeParams("Loop", 16), "I B V?");
}

TEST(TypeParams, AnswersWithTheNewestVersionAtOrBelowTheOpset) {
  // Reshape's shape became an input at opset 5.
  EXPECT_EQ(onnxTypeParams("Reshape", 4), "T");
  EXPECT_EQ(onnxTypeParams("Reshape", 5), "T .");
  EXPECT_EQ(onnxTypeParams("Reshape", 17), "T .");
}

TEST(TypeParams, IsEmptyForAnOpWithoutASchemaAtThatOpset) {
  EXPECT_EQ(onnxTypeParams("LayerNormalization", 16), "");  // since opset 17
  EXPECT_EQ(onnxTypeParams("NoSuchOp", 17), "");
  EXPECT_EQ(onnxTypeParams("Add", 0), "");
}

TEST(TypeParams, ReadsTheSignatureAsFormalInputs) {
  const std::vector<FormalInput> reshape = onnxFormalInputs("Reshape", 14);
  ASSERT_EQ(reshape.size(), 2u);
  EXPECT_EQ(reshape[0].param, "T");
  EXPECT_EQ(reshape[1].param, ".");
  EXPECT_EQ(reshape[1].variadic, 0);
  const std::vector<FormalInput> loop = onnxFormalInputs("Loop", 16);
  ASSERT_EQ(loop.size(), 3u);
  EXPECT_EQ(loop[2].param, "V");
  EXPECT_EQ(loop[2].variadic, '?');
  EXPECT_EQ(onnxFormalInputs("Concat", 13)[0].variadic, '*');
  EXPECT_TRUE(onnxFormalInputs("NoSuchOp", 17).empty());
}

// The table is ONNX's registry: for every ai.onnx op and opset the registry answers for,
// the same schema version is found, with one word per formal input.
TEST(TypeParams, AgreesWithTheSchemaRegistryForEveryOpAndOpset) {
  const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  size_t checked = 0;
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty()) continue;
    for (int opset = 1; opset <= newest; ++opset) {
      const onnx::OpSchema* expected = onnx::OpSchemaRegistry::Schema(schema.Name(), opset, "");
      const std::string sig(onnxTypeParams(schema.Name(), opset));
      if (!expected || expected->inputs().empty()) {
        EXPECT_EQ(sig, "") << schema.Name() << " at opset " << opset;
        continue;
      }
      std::string words;
      for (size_t i = 0; i < expected->inputs().size(); ++i) {
        const auto& formal = expected->inputs()[i];
        bool is_param = false;
        for (const auto& p : expected->typeConstraintParams())
          is_param |= p.type_param_str == formal.GetTypeStr();
        words += (i ? " " : "") + (is_param ? formal.GetTypeStr() : std::string("."));
        if (formal.GetOption() == onnx::OpSchema::Variadic)
          words += formal.GetIsHomogeneous() ? "*" : "?";
      }
      EXPECT_EQ(sig, words) << schema.Name() << " at opset " << opset;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

}  // namespace
}  // namespace onnx_rewrite
