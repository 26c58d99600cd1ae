//===- TensorContentTest.cc - constants shared by what they hold ---------===//
//
// Specifies how rewrites tell two constants apart (Rewriter::addInitializer shares
// identical ones): element type, dims and payload bit for bit, the name aside, and
// tensors with anything else (external data) compared whole.
//
//===----------------------------------------------------------------------===//
#include "runtime/graph/TensorContent.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace onnx_rewrite {
namespace {

onnx::TensorProto rawFloats(const std::string& name, const std::vector<float>& values,
                            const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  t.set_raw_data(bytes);
  return t;
}

TEST(TensorContent, IsTheSameForTheSamePayloadUnderAnotherName) {
  const onnx::TensorProto a = rawFloats("a", {1, 2, 3, 4}, {2, 2});
  const onnx::TensorProto b = rawFloats("b", {1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(sameTensorContent(a, b));
  EXPECT_EQ(tensorContentHash(a), tensorContentHash(b));
}

TEST(TensorContent, DiffersInDimsTypeOrOneBit) {
  const onnx::TensorProto a = rawFloats("a", {1, 2, 3, 4}, {2, 2});
  EXPECT_FALSE(sameTensorContent(a, rawFloats("a", {1, 2, 3, 4}, {4})));
  EXPECT_FALSE(sameTensorContent(a, rawFloats("a", {1, 2, 3, 5}, {2, 2})));
  onnx::TensorProto as_int = a;
  as_int.set_data_type(onnx::TensorProto::INT32);
  EXPECT_FALSE(sameTensorContent(a, as_int));
  // -0.0 == 0.0 as floats, but a rule's -0.0 is not its 0.0 (1 / x tells them apart).
  EXPECT_FALSE(sameTensorContent(rawFloats("z", {0.0f}, {}), rawFloats("z", {-0.0f}, {})));
}

TEST(TensorContent, ComparesTypedFieldsBitForBit) {
  onnx::TensorProto a, b;
  for (onnx::TensorProto* t : {&a, &b}) {
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
  }
  a.add_float_data(1.5f);
  a.add_float_data(-0.0f);
  b.add_float_data(1.5f);
  b.add_float_data(0.0f);
  EXPECT_FALSE(sameTensorContent(a, b));
  b.set_float_data(1, -0.0f);
  EXPECT_TRUE(sameTensorContent(a, b));
  EXPECT_EQ(tensorContentHash(a), tensorContentHash(b));
  // The same values in raw_data are another encoding: not shared (nor were they before).
  EXPECT_FALSE(sameTensorContent(a, rawFloats("", {1.5f, -0.0f}, {2})));
}

TEST(TensorContent, ComparesExternalTensorsWhole) {
  onnx::TensorProto a;
  a.set_name("w");
  a.set_data_type(onnx::TensorProto::FLOAT);
  a.add_dims(4);
  a.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = a.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  onnx::TensorProto b = a;
  b.set_name("v");
  EXPECT_TRUE(sameTensorContent(a, b));
  EXPECT_EQ(tensorContentHash(a), tensorContentHash(b));
  b.mutable_external_data(0)->set_value("other.bin");
  EXPECT_FALSE(sameTensorContent(a, b));
}

}  // namespace
}  // namespace onnx_rewrite
