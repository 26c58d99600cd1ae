//===- ModelValidationTest.cc - every tensor checked before it is read ---===//
//
// validateModel (run by loadModelFile and by rewrite()) is what stands between
// a hostile model and ONNX's own code, which writes past buffers on tensors
// whose payload disagrees with their shape. The spec, one class per test: the
// model is refused with a ModelError naming the tensor or value and the
// problem; a well-formed model of every storage kind passes; rewrite() leaves
// a refused model exactly as it was.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "runtime/api/Rewrite.h"
#include "runtime/graph/ModelError.h"
#include "runtime/io/ModelValidation.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;
using testing::serialize;

onnx::ModelProto model() { return testing::modelWithTensors(); }

onnx::TensorProto& w(onnx::ModelProto& m) { return *m.mutable_graph()->mutable_initializer(0); }
onnx::TensorProto& c(onnx::ModelProto& m) {
  return *m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_t();
}

/// The ModelError validateModel throws for `m` ("" if none).
std::string problem(const onnx::ModelProto& m) {
  try {
    validateModel(m);
  } catch (const ModelError& e) {
    return e.what();
  }
  return {};
}

std::string edited(const std::function<void(onnx::ModelProto&)>& edit) {
  onnx::ModelProto m = model();
  edit(m);
  return problem(m);
}

void external(onnx::TensorProto& t, const std::string& offset, const std::string& length) {
  t.clear_float_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<const char*, std::string>{"location", "w.bin"},
                                   {"offset", offset},
                                   {"length", length}}) {
    if (value.empty()) continue;
    onnx::StringStringEntryProto& e = *t.add_external_data();
    e.set_key(key);
    e.set_value(value);
  }
}

TEST(ModelValidation, AWellFormedModelPasses) { EXPECT_EQ(problem(model()), ""); }

TEST(ModelValidation, EveryStorageOfAWellFormedTensorPasses) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).clear_float_data();
              w(m).set_raw_data(std::string(24, '\0'));
            }),
            "")
      << "raw_data of exactly 6 floats";
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_dims(0, 0);  // [0, 3]: no values at all
              w(m).clear_float_data();
            }),
            "");
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_data_type(onnx::TensorProto::FLOAT16);
              w(m).clear_float_data();
              for (int i = 0; i < 6; ++i) w(m).add_int32_data(0x3c00);
            }),
            "")
      << "float16 in int32_data";
  EXPECT_EQ(edited([](onnx::ModelProto& m) { external(w(m), "0", "24"); }), "")
      << "external, its length what the shape needs";
  EXPECT_EQ(edited([](onnx::ModelProto& m) { external(w(m), "", ""); }), "")
      << "external, no offset or length";
}

TEST(ModelValidation, RawDataOfTheWrongSizeIsRefused) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).clear_float_data();
              w(m).set_raw_data(std::string(10, '\0'));
            }),
            "initializer 'w': raw_data holds 10 bytes but its shape [2, 3] needs 24");
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              c(m).clear_float_data();
              c(m).set_raw_data(std::string(100, '\0'));
            }),
            "attribute 'value' of node '' (Constant): raw_data holds 100 bytes but its shape "
            "[3] needs 12");
}

TEST(ModelValidation, TypedDataOfTheWrongCountIsRefused) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) { w(m).add_float_data(7.0f); }),
            "initializer 'w': holds 7 values but its shape [2, 3] needs 6");
  EXPECT_EQ(edited([](onnx::ModelProto& m) { c(m).clear_float_data(); }),
            "attribute 'value' of node '' (Constant): holds 0 values but its shape [3] needs 3");
  EXPECT_EQ(edited([](onnx::ModelProto& m) { w(m).set_data_type(onnx::TensorProto::INT64); }),
            "initializer 'w': holds 0 values but its shape [2, 3] needs 6")
      << "values in the field of another type are not values";
}

TEST(ModelValidation, NegativeDimsOfATensorAreRefused) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) { w(m).set_dims(0, -2); }),
            "initializer 'w': has a negative dim -2 in its shape");
}

TEST(ModelValidation, ShapesBeyondInt64AreRefusedWithoutOverflow) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_dims(0, int64_t{1} << 62);
              w(m).set_dims(1, 4);
            }),
            "initializer 'w': its shape [4611686018427387904, 4] has more than 2^63 - 1 elements");
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).clear_dims();
              w(m).add_dims(int64_t{1} << 62);  // elements fit; 4 bytes each do not
            }),
            "initializer 'w': its shape [4611686018427387904] needs more than 2^63 - 1 bytes");
}

TEST(ModelValidation, ExternalSizesMustFitInt64AndTheShape) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) { external(w(m), "0", "9999999999999999999"); }),
            "tensor 'w' has an external_data length 9999999999999999999 beyond 2^63 - 1");
  EXPECT_EQ(edited([](onnx::ModelProto& m) { external(w(m), "0", "8"); }),
            "initializer 'w': external_data length 8 but its shape [2, 3] needs 24 bytes");
  EXPECT_EQ(edited([](onnx::ModelProto& m) { external(w(m), "9223372036854775800", "24"); }),
            "initializer 'w': external_data offset 9223372036854775800 plus its 24 bytes is "
            "beyond 2^63 - 1");
}

TEST(ModelValidation, StringTensorsHoldStringsOnly) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_data_type(onnx::TensorProto::STRING);
              w(m).clear_float_data();
              w(m).set_raw_data("abc");
            }),
            "initializer 'w': a string tensor cannot hold raw_data");
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_data_type(onnx::TensorProto::STRING);
              external(w(m), "0", "");
            }),
            "initializer 'w': a string tensor cannot be stored as external data");
}

TEST(ModelValidation, TensorsWithoutAnElementTypeAreRefused) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) { w(m).set_data_type(0); }),
            "initializer 'w': has no element type");
  EXPECT_EQ(edited([](onnx::ModelProto& m) { w(m).set_data_type(99); }),
            "initializer 'w': has an unknown element type 99");
}

TEST(ModelValidation, SparseInitializersAreChecked) {
  auto sparse = [](onnx::ModelProto& m) -> onnx::SparseTensorProto& {
    onnx::SparseTensorProto& s = *m.mutable_graph()->add_sparse_initializer();
    s.add_dims(4);
    onnx::TensorProto& values = *s.mutable_values();
    values.set_name("s");
    values.set_data_type(onnx::TensorProto::FLOAT);
    values.add_dims(2);
    values.add_float_data(1.0f);
    values.add_float_data(2.0f);
    onnx::TensorProto& indices = *s.mutable_indices();
    indices.set_data_type(onnx::TensorProto::INT64);
    indices.add_dims(2);
    indices.add_int64_data(0);
    indices.add_int64_data(3);
    return s;
  };
  EXPECT_EQ(edited([&](onnx::ModelProto& m) { sparse(m); }), "");
  EXPECT_EQ(edited([&](onnx::ModelProto& m) { sparse(m).set_dims(0, -4); }),
            "sparse initializer 's': has a negative dim -4 in its shape");
  EXPECT_EQ(edited([&](onnx::ModelProto& m) {
              sparse(m).mutable_values()->mutable_float_data()->RemoveLast();
            }),
            "sparse initializer 's' (values): holds 1 values but its shape [2] needs 2");
  EXPECT_EQ(edited([&](onnx::ModelProto& m) {
              onnx::TensorProto& indices = *sparse(m).mutable_indices();
              indices.set_dims(0, 1);
              indices.mutable_int64_data()->RemoveLast();
            }),
            "sparse initializer 's': it has 2 values but 1 indices");
}

TEST(ModelValidation, NegativeDimsOfDeclaredTypesGetSymbolsOfTheirOwnInBodiesToo) {
  // ONNX 1.12's shape inference crashed on these (TensorShapeProto_Dimension::MergeImpl);
  // exporters mean "any size" by -1, and ONNX Runtime loads such models.
  onnx::ModelProto m = parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool b, float[3] x) => (float[3] y)
    {
      y = If (b) <
        then_branch = then_body () => (float[3] t) { t = Identity (x) },
        else_branch = else_body () => (float[3] e) { e = Neg (x) }
      >
    }
  )");
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-1);
  onnx::GraphProto& body = *m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  onnx::ValueInfoProto& info = *body.add_value_info();
  info.set_name("inner");
  info.mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(-7);
  EXPECT_EQ(problem(m), "") << "not an error";
  EXPECT_EQ(nameNegativeDims(m), 2);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(0).dim_param(),
            "onnx_rewrite_any_dim_0");
  EXPECT_EQ(info.type().sequence_type().elem_type().tensor_type().shape().dim(0).dim_param(),
            "onnx_rewrite_any_dim_1")
      << "each its own: two -1 dims need not be equal";
  EXPECT_EQ(nameNegativeDims(m), 0) << "idempotent";
}

TEST(ModelValidation, ConstantsInFunctionsAreChecked) {
  onnx::ModelProto m = model();
  onnx::FunctionProto& f = *m.add_functions();
  f.set_name("f");
  f.set_domain("local");
  onnx::NodeProto& n = *f.add_node();
  n.set_op_type("Constant");
  n.set_name("k");
  n.add_output("k");
  onnx::AttributeProto& value = *n.add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value.mutable_t()->add_dims(2);
  value.mutable_t()->set_raw_data(std::string(3, '\0'));
  EXPECT_EQ(problem(m),
            "attribute 'value' of node 'k' (Constant) in function 'f': raw_data holds 3 bytes "
            "but its shape [2] needs 8");
}

TEST(ModelValidation, NamesAreQuotedOnOneLine) {
  EXPECT_EQ(edited([](onnx::ModelProto& m) {
              w(m).set_name("w\nonnx-rewrite: error: forged");
              w(m).set_dims(0, -1);
            }),
            "initializer 'w\\nonnx-rewrite: error: forged': has a negative dim -1 in its shape");
}

TEST(ModelValidation, BodiesNestedBeyondTheLimitAreRefused) {
  // protobuf's parser stops files far earlier; a model built in memory is not parsed.
  onnx::GraphProto body;
  for (int level = 0; level <= kMaxGraphNesting; ++level) {
    onnx::GraphProto outer;
    onnx::AttributeProto& a = *outer.add_node()->add_attribute();
    a.set_name("then_branch");
    *a.mutable_g() = std::move(body);
    body = std::move(outer);
  }
  onnx::ModelProto m = model();
  *m.mutable_graph()->add_node() = body.node(0);
  EXPECT_EQ(problem(m), "graph '': subgraphs are nested deeper than 64 levels");
}

TEST(ModelValidation, RewriteRefusesAMalformedModelAndLeavesItAsItWas) {
  onnx::ModelProto m = model();
  w(m).clear_float_data();
  w(m).set_raw_data(std::string(10, '\0'));
  const std::string before = serialize(m);
  EXPECT_THROW(rewrite(m, Options{}), ModelError);
  EXPECT_EQ(serialize(m), before);
}

}  // namespace
}  // namespace onnx_rewrite
