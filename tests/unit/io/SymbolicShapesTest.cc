//===- SymbolicShapesTest.cc - shapes ONNX's inference cannot see through --===//
//
// The symbolic shape pass (runtime/io/SymbolicShapes.h) as InferredShapes runs it, right
// after ONNX's inference: shape computations fold to their elements, the shapes they feed
// are sized, and the values after them get shapes. Each "stays unknown" case is a dim the
// pass must not claim.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/io/ShapeInference.h"
#include "runtime/io/SymbolicDims.h"
#include "runtime/io/SymbolicShapes.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::parseModel;

/// Dims of value `name` (value_info or graph output) after inference: "[B, 4, ?]" ("?"
/// unknown, unk__ names included), "no shape", or "untyped".
std::string shapeIn(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto* list : {&graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto& v : *list) {
      if (v.name() != name) continue;
      if (!v.type().tensor_type().has_shape()) return "no shape";
      std::string out = "[";
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        if (out.size() > 1) out += ", ";
        out += d.has_dim_value() ? std::to_string(d.dim_value())
               : isUnknownDim(d) ? "?"
                                 : d.dim_param();
      }
      return out + "]";
    }
  return "untyped";
}

std::string shapeOf(const onnx::ModelProto& model, const std::string& name) {
  return shapeIn(model.graph(), name);
}

/// The name of dim `axis` of intermediate value `name` (its value_info), "" for a sized dim,
/// "untyped" when it has no value_info.
std::string dimName(const onnx::ModelProto& model, const std::string& name, int axis) {
  for (const onnx::ValueInfoProto& v : model.graph().value_info())
    if (v.name() == name) return v.type().tensor_type().shape().dim(axis).dim_param();
  return "untyped";
}

/// Branch `attr` ("then_branch", "else_branch") of the main graph's last node.
const onnx::GraphProto& branch(const onnx::ModelProto& model, const std::string& attr) {
  const onnx::NodeProto& n = model.graph().node(model.graph().node_size() - 1);
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == attr) return a.g();
  throw std::runtime_error("no " + attr);
}

/// `text` with ONNX's inference and the symbolic pass run on it, as the driver runs them.
onnx::ModelProto inferred(const std::string& text) {
  onnx::ModelProto model = parseModel(text);
  InferredShapes shapes(model);
  EXPECT_TRUE(shapes.ran());
  return model;
}

// ---- folding shape computations ------------------------------------------------------

TEST(SymbolicShapes, SizesTorchPositionIdsAndEverythingAfterThem) {
  // torch 1.x GPT-2: position_ids = arange(0, seq).unsqueeze(0).view(-1, seq).
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (int64[batch, seq] ids) => (float[batch, seq, 4] y)
<int64 zero = {0}, int64 one = {1}, int64[1] minus_one = {-1}, float[20, 4] wte = {0.0},
 float[8, 4] wpe = {0.0}, int64[2] flat = {-1, 0}, float[4] gamma = {1.0, 1.0, 1.0, 1.0},
 float[4] beta = {0.0, 0.0, 0.0, 0.0}> {
  s = Shape(ids)
  n = Gather <axis = 0> (s, one)
  n1 = Unsqueeze <axes = [0]> (n)
  target = Concat <axis = 0> (minus_one, n1)
  r = Range(zero, n, one)
  r1 = Unsqueeze <axes = [0]> (r)
  pos = Reshape(r1, target)
  pe = Gather <axis = 0> (wpe, pos)
  tokens = Reshape(ids, flat)
  te = Gather <axis = 0> (wte, tokens)
  e = Add(te, pe)
  y = LayerNormalization <axis = -1, epsilon = 0.00001> (e, gamma, beta)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[seq]") << "Range(0, n, 1) has n elements";
  EXPECT_EQ(shapeOf(m, "pos"), "[1, seq]") << "-1 solved by the element count";
  EXPECT_EQ(shapeOf(m, "pe"), "[1, seq, 4]");
  EXPECT_EQ(shapeOf(m, "tokens"), "[batch, seq]") << "0 copies, -1 is batch * seq / seq";
  EXPECT_EQ(shapeOf(m, "e"), "[batch, seq, 4]");
  EXPECT_EQ(shapeOf(m, "y"), "[batch, seq, 4]");
}

TEST(SymbolicShapes, SizesHeadsMergedIntoTheBatch) {
  // BART's and CLIP's eager attention: view(B * N, -1, H) of the heads [B, N, S, H]. B * 2
  // is a linear form, and -1 is what it leaves of the element count: S.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, 2, S, 4] h) => (float[B, 2, S, 4] y) <int64 i0 = {0}, int64 two = {2},
 int64[1] minus_one = {-1}, int64[1] four = {4}, int64[1] ax0 = {0}> {
  s = Shape(h)
  b = Gather <axis = 0> (s, i0)
  bn = Mul(b, two)
  nb = Mul(two, b)
  bn1 = Unsqueeze(bn, ax0)
  target = Concat <axis = 0> (bn1, minus_one, four)
  r = Reshape(h, target)
  nb1 = Unsqueeze(nb, ax0)
  z = ConstantOfShape(nb1)
  y = Identity(h)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[?, S, 4]") << "2*B is unsized; -1 is S";
  EXPECT_EQ(shapeOf(m, "z"), "[?]");
  EXPECT_EQ(dimName(m, "r", 0), "unk__(2*B)");
  EXPECT_EQ(dimName(m, "z", 0), "unk__(2*B)") << "B * 2 is 2 * B";
}

TEST(SymbolicShapes, SizesFlattenedRowsOfAStaticSequence) {
  // TensorFlow's BERT: reshape_to_matrix [B, 4, 8] -> [-1, 8] is 4*B rows, a linear form;
  // the head split [-1, 4, 2, 4] of a projection of them has B again, and the context
  // flattened back has the same 4*B rows as the input (the residual Add's operands agree).
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 12]>
g (float[B, 4, 8] x) => (float[B, 4, 8] y) <int64[2] rows = {-1, 8}, int64[4] heads = {-1, 4, 2, 4},
 int64[3] back = {-1, 4, 8}, float[8, 8] w = {0.0}> {
  flat = Reshape(x, rows)
  p = MatMul(flat, w)
  h = Reshape(p, heads)
  t = Transpose <perm = [0, 2, 1, 3]> (h)
  c = Transpose <perm = [0, 2, 1, 3]> (t)
  r = Reshape(c, rows)
  s = Add(r, flat)
  y = Reshape(s, back)
}
)");
  EXPECT_EQ(dimName(m, "flat", 0), "unk__(4*B)");
  EXPECT_EQ(shapeOf(m, "h"), "[B, 4, 2, 4]") << "4*B * 8 / (4 * 2 * 4) is B";
  EXPECT_EQ(dimName(m, "r", 0), "unk__(4*B)") << "the same rows as flat";
  EXPECT_EQ(shapeOf(m, "y"), "[B, 4, 8]");
}

TEST(SymbolicShapes, TakesTheUnkNamesOfGraphInputsAsSymbols) {
  // tf2onnx names every unknown dim of the inputs unk__N: a declared name, one dim wherever
  // it flows. The same name on an intermediate is ONNX's guess and stays unknown.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 12]>
g (float[unk__5, 4, 8] x) => (float[unk__9, 4, 8] y) <int64[2] rows = {-1, 8}> {
  flat = Reshape(x, rows)
  r = Relu(flat)
  y = Relu(x)
}
)");
  EXPECT_EQ(dimName(m, "flat", 0), "unk__(4*unk__5)");
  EXPECT_EQ(dimName(m, "r", 0), "unk__(4*unk__5)");
}

TEST(SymbolicShapes, RanksAnExpandToATargetOfUnknownElements) {
  // The target's length is the rank; a dim above 1 stays, as every target dim must be 1 or it.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[1, 5] x, int64[3] target) => (float[A, B, C] y) {
  z = Expand(x, target)
  y = Relu(z)
}
)");
  EXPECT_EQ(shapeOf(m, "z"), "[?, ?, 5]");
}

TEST(SymbolicShapes, SizesTorchReshapeGemmReshape) {
  // x.view(-1, x.size(-1)) @ W + b, then .view(x.size(0), x.size(1), 12); Split in three.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 4] x) => (float[B, S, 4] q) <int64 i0 = {0}, int64 i1 = {1},
 int64[1] minus_one = {-1}, int64[1] last = {-1}, int64[1] big = {9223372036854775807},
 int64[1] ax0 = {0}, int64[1] twelve = {12}, float[4, 12] w = {0.0}, float[12] b = {0.0}> {
  s1 = Shape(x)
  d1 = Slice(s1, last, big, ax0)
  d = Squeeze <axes = [0]> (d1)
  du = Unsqueeze <axes = [0]> (d)
  flat_shape = Concat <axis = 0> (minus_one, du)
  flat = Reshape(x, flat_shape)
  proj = Gemm(flat, w, b)
  s2 = Shape(x)
  b0 = Gather <axis = 0> (s2, i0)
  s3 = Shape(x)
  b1 = Gather <axis = 0> (s3, i1)
  b0u = Unsqueeze <axes = [0]> (b0)
  b1u = Unsqueeze <axes = [0]> (b1)
  out_shape = Concat <axis = 0> (b0u, b1u, twelve)
  qkv = Reshape(proj, out_shape)
  q, k, v = Split <axis = 2, split = [4, 4, 4]> (qkv)
}
)");
  EXPECT_EQ(shapeOf(m, "flat"), "[?, 4]") << "B * S has no name: unknown, not made up";
  EXPECT_EQ(shapeOf(m, "proj"), "[?, 12]");
  EXPECT_EQ(shapeOf(m, "qkv"), "[B, S, 12]");
  EXPECT_EQ(shapeOf(m, "k"), "[B, S, 4]");
  EXPECT_EQ(shapeOf(m, "v"), "[B, S, 4]");
}

TEST(SymbolicShapes, FoldsOpset13AxesAndSplitsGivenAsInputs) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, S, 4] x) => (float[B, S, 4] v) <int64[1] i0 = {0}, int64[1] i1 = {1},
 int64[1] ax0 = {0}, int64[1] twelve = {12}, int64[3] splits = {4, 4, 4},
 float[4, 12] w = {0.0}> {
  s = Shape(x)
  b0 = Gather <axis = 0> (s, i0)
  b0s = Squeeze(b0, ax0)
  b0u = Unsqueeze(b0s, ax0)
  b1 = Gather <axis = 0> (s, i1)
  out_shape = Concat <axis = 0> (b0u, b1, twelve)
  m1 = MatMul(x, w)
  qkv = Reshape(m1, out_shape)
  qkv2 = Reshape(qkv, out_shape)
  q, k, v = Split <axis = 2> (qkv2, splits)
}
)");
  EXPECT_EQ(shapeOf(m, "qkv2"), "[B, S, 12]");
  EXPECT_EQ(shapeOf(m, "q"), "[B, S, 4]");
}

TEST(SymbolicShapes, SizesShapeWithStartAndEnd) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[B, S, 8] x) => (float[B, S, 2, 4] y) <int64[2] heads = {2, 4}> {
  bs = Shape <start = 0, end = 2> (x)
  target = Concat <axis = 0> (bs, heads)
  r = Reshape(x, target)
  y = Relu(r)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[B, S, 2, 4]");
}

TEST(SymbolicShapes, TypesCastLikeAsItsSecondInput) {
  // torchlib's SDPA scale: CastLike(q.size(-1), q) is q's element type, of the dim's shape.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float16[B, 2, S, 4] q) => (float16[1] y) <int64[1] last = {-1}> {
  qs = Shape(q)
  h = Gather <axis = 0> (qs, last)
  hf = CastLike(h, q)
  y = Sqrt(hf)
}
)");
  EXPECT_EQ(shapeOf(m, "hf"), "[1]");
  const onnx::TypeProto* type = nullptr;
  for (const auto& vi : m.graph().value_info())
    if (vi.name() == "hf") type = &vi.type();
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->tensor_type().elem_type(), onnx::TensorProto::FLOAT16);
}

TEST(SymbolicShapes, SizesExpandToAComputedShapeThroughWhereEqual) {
  // torch's expand(size): Where(Equal(shape, -1), ones, shape) then Expand.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[1, S] x, float[B, S] y) => (float[B, S] e) <int64[1] minus_one = {-1},
 int64[2] ones = {1, 1}> {
  s = Shape(y)
  eq = Equal(s, minus_one)
  target = Where(eq, ones, s)
  e0 = Expand(x, target)
  e = Relu(e0)
}
)");
  EXPECT_EQ(shapeOf(m, "e0"), "[B, S]");
}

TEST(SymbolicShapes, SizesExpandToTorchlibsAbsOfTheSize) {
  // torchlib's aten_expand: cls_token.expand(batch, -1, -1) as Expand(x, Abs(size)), the
  // -1s ("keep") become 1s; then ViT's patches (a Conv flattened by view(batch, h, -1)).
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[B, 3, 8, 8] px) => (float[B, 5, 4] y) <float[1, 1, 4] cls = {0.0, 0.0, 0.0, 0.0},
 float[4, 3, 4, 4] w = {0.0}, int64[2] keep = {-1, -1}, int64[1] h = {4},
 int64[1] rest = {-1}, int64[3] other = {-1, 2, -3}> {
  c = Conv <kernel_shape = [4, 4], strides = [4, 4]> (px, w)
  b = Shape <start = 0, end = 1> (c)
  view = Concat <axis = 0> (b, h, rest)
  flat = Reshape(c, view)
  patches = Transpose <perm = [0, 2, 1]> (flat)
  bp = Shape <start = 0, end = 1> (px)
  size = Concat <axis = 0> (bp, keep)
  a = Abs(size)
  e = Expand(cls, a)
  t = Concat <axis = 1> (e, patches)
  y = Relu(t)
  odd = Abs(other)
}
)");
  EXPECT_EQ(shapeOf(m, "flat"), "[B, 4, 4]");
  EXPECT_EQ(shapeOf(m, "e"), "[B, 1, 4]");
  EXPECT_EQ(shapeOf(m, "t"), "[B, 5, 4]");
  EXPECT_EQ(shapeOf(m, "odd"), "[3]");
}

TEST(SymbolicShapes, SizesConstantOfShapeAndTile) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S] x) => (float[B, S] y) <int64[2] reps = {1, 3}> {
  s = Shape(x)
  z = ConstantOfShape(s)
  a = Add(x, z)
  t = Tile(a, reps)
  y = Relu(a)
}
)");
  EXPECT_EQ(shapeOf(m, "z"), "[B, S]");
  EXPECT_EQ(shapeOf(m, "a"), "[B, S]");
  EXPECT_EQ(shapeOf(m, "t"), "[B, ?]") << "S * 3 has no name";
}

TEST(SymbolicShapes, FoldsArithmeticOnDims) {
  // (S - S) + 4 = 4 and S * 1 = S; integer Range with constant bounds has a length.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S] x) => (float[B, S] y) <int64 i1 = {1}, int64 four = {4}, int64 two = {2},
 int64 eleven = {11}, int64 three = {3}> {
  s = Shape(x)
  n = Gather <axis = 0> (s, i1)
  z = Sub(n, n)
  k = Add(z, four)
  m = Mul(n, i1)
  ku = Unsqueeze <axes = [0]> (k)
  mu = Unsqueeze <axes = [0]> (m)
  target = Concat <axis = 0> (ku, mu)
  z2 = ConstantOfShape(target)
  r = Range(two, eleven, three)
  y = Relu(x)
}
)");
  EXPECT_EQ(shapeOf(m, "z2"), "[4, S]");
  EXPECT_EQ(shapeOf(m, "r"), "[3]");
}

TEST(SymbolicShapes, SizesRangeOverTheNewTokensAfterAPast) {
  // position_ids = arange(P, P + S).unsqueeze(0).view(-1, S): (P + S) - P is S.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (int64[B, S] ids, float[B, 2, P, 4] past_k, float[B, 2, S, 4] new_k) => (float[B, 2, S, 4] y)
<int64 i1 = {1}, int64 i2 = {2}, int64[1] minus_one = {-1}> {
  s = Shape(ids)
  n = Gather <axis = 0> (s, i1)
  ps = Shape(past_k)
  p = Gather <axis = 0> (ps, i2)
  l = Add(n, p)
  r = Range(p, l, i1)
  r1 = Unsqueeze <axes = [0]> (r)
  nu = Unsqueeze <axes = [0]> (n)
  pos_shape = Concat <axis = 0> (minus_one, nu)
  pos = Reshape(r1, pos_shape)
  k = Concat <axis = 2> (past_k, new_k)
  ks = Shape(k)
  t = Gather <axis = 0> (ks, i2)
  d = Sub(t, n)
  du = Unsqueeze <axes = [0]> (d)
  past_again = ConstantOfShape(du)
  p1 = Add(p, i1)
  one_len = Sub(p1, p)
  one_u = Unsqueeze <axes = [0]> (one_len)
  one = ConstantOfShape(one_u)
  y = Identity(new_k)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[S]");
  EXPECT_EQ(shapeOf(m, "pos"), "[1, S]");
  EXPECT_EQ(shapeOf(m, "k"), "[B, 2, ?, 4]") << "P + S has no name";
  EXPECT_EQ(shapeOf(m, "past_again"), "[P]") << "(P + S) - S";
  EXPECT_EQ(shapeOf(m, "one"), "[1]") << "(P + 1) - P, a single new token";
}

TEST(SymbolicShapes, NamesOneSumOfSymbolsAlikeWhereverItIsTheLength) {
  // The key and value caches grown by the new tokens are both P + S long: rules must see
  // one dim (a MultiHeadAttention's L), while P + S stays unsized to every check.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, 2, P, 4] past_k, float[B, 2, S, 4] new_k, float[B, 2, P, 4] past_v,
   float[B, 2, S, 4] new_v) => (float[B, 2, S, 4] y) {
  k = Concat <axis = 2> (past_k, new_k)
  v = Concat <axis = 2> (new_v, past_v)
  kk = Concat <axis = 2> (k, new_k)
  y = Identity(new_k)
}
)");
  auto dim2 = [&](const std::string& name) {
    for (const onnx::ValueInfoProto& v : m.graph().value_info())
      if (v.name() == name) return v.type().tensor_type().shape().dim(2);
    ADD_FAILURE() << name << " untyped";
    return onnx::TensorShapeProto::Dimension();
  };
  EXPECT_EQ(dim2("k").dim_param(), dim2("v").dim_param()) << "S + P is P + S";
  EXPECT_EQ(dim2("k").dim_param(), "unk__(P + S)");
  EXPECT_EQ(dim2("kk").dim_param(), "unk__(P + 2*S)");
  EXPECT_TRUE(isUnknownDim(dim2("k")));
  EXPECT_EQ(shapeOf(m, "k"), "[B, 2, ?, 4]");
}

/// A decoder step cuts its causal mask from a [16, 16] buffer by the past length P and the
/// new tokens: rows [P, P + n), columns [0, P + n), bounds computed at run time. `gather`
/// is how the position ids reach the embedding (or nothing), `n` the new tokens' count.
std::string causalCutModel(const std::string& gather, const std::string& n) {
  std::string wpe, tril;
  for (int i = 0; i < 16 * 4; ++i) wpe += std::string(i ? ", " : "") + "0.5";
  for (int i = 0; i < 16 * 16; ++i) tril += std::string(i ? ", " : "") + "1.0";
  return R"(
<ir_version: 7, opset_import: ["" : 11]>
g (int64[B, S] ids, float[B, 2, P, 4] past_k) => (float[?, ?] cut)
<int64 one = {1}, int64 i1 = {1}, int64 i2 = {2}, int64[1] ax0 = {0}, int64[1] ax1 = {1},
 int64[1] zero = {0}, float[16, 4] wpe = {)" +
         wpe + "}, float[16, 16] tril = {" + tril + R"(}> {
  ps = Shape(past_k)
  p = Gather <axis = 0> (ps, i2)
  s = Shape(ids)
  n = Gather <axis = 0> (s, i1)
  l = Add(p, )" +
         n + R"()
)" + gather +
         R"(
  pu = Unsqueeze <axes = [0]> (p)
  lu = Unsqueeze <axes = [0]> (l)
  rows = Slice(tril, pu, lu, ax0)
  cut = Slice(rows, zero, lu, ax1)
}
)";
}

TEST(SymbolicShapes, SizesACausalCutOnceThePositionEmbeddingBoundsIt) {
  // Gather(wpe [16, 4], Range(P, P + 1)) fails unless P + 1 <= 16: in every run that gets
  // past it, the cut [P, P + 1) x [0, P + 1) is not clamped. torch writes the position
  // ids' Range between Casts, and unsqueezes them.
  const onnx::ModelProto m = inferred(causalCutModel(
      "  pc = Cast <to = 7> (p)\n  lc = Cast <to = 7> (l)\n  r = Range(pc, lc, one)\n"
      "  r1 = Unsqueeze <axes = [0]> (r)\n  pos = Gather(wpe, r1)\n",
      "one"));
  EXPECT_EQ(shapeOf(m, "rows"), "[1, 16]");
  EXPECT_EQ(shapeOf(m, "cut"), "[1, ?]") << "P + 1 has no name, but is known in the pass";
}

TEST(SymbolicShapes, ClaimsNoCutTheModelDoesNotBound) {
  // Without the embedding, P may exceed 15 and the slice be clamped (or empty).
  const onnx::ModelProto none = inferred(causalCutModel("", "one"));
  EXPECT_EQ(shapeOf(none, "rows"), "[?, 16]");
  // Range(P, P + S) may hold no position (S = 0), and then the Gather proves nothing.
  const onnx::ModelProto maybe_empty =
      inferred(causalCutModel("  r = Range(p, l, one)\n  pos = Gather(wpe, r)\n", "n"));
  EXPECT_EQ(shapeOf(maybe_empty, "rows"), "[?, 16]");
  // Nor does a Range cast to int32 (a narrowing Cast may wrap), nor one taken from the end
  // of the embedding by a possibly negative start.
  const onnx::ModelProto narrowed = inferred(causalCutModel(
      "  r = Range(p, l, one)\n  r32 = Cast <to = 6> (r)\n  pos = Gather(wpe, r32)\n", "one"));
  EXPECT_EQ(shapeOf(narrowed, "rows"), "[?, 16]");
  const onnx::ModelProto negative = inferred(
      causalCutModel("  m = Sub(p, i2)\n  r = Range(m, l, one)\n  pos = Gather(wpe, r)\n", "one"));
  EXPECT_EQ(shapeOf(negative, "rows"), "[?, 16]");
}

TEST(SymbolicShapes, ReadsInt32ShapeTensorsAndIndices) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int32[1] i1 = {1}, int64[2] tail = {2, 4}> {
  s = Shape(x)
  s32 = Cast <to = 6> (s)
  n32 = Gather <axis = 0> (s32, i1)
  n = Cast <to = 7> (n32)
  s0 = Gather <axis = 0> (s, i1)
  target = Concat <axis = 0> (s0, s0, tail)
  c = ConstantOfShape(target)
  y = Relu(x)
}
)");
  EXPECT_EQ(shapeOf(m, "n32"), "[1]");
  EXPECT_EQ(shapeOf(m, "c"), "[S, S, 2, 4]") << "int32 indices pick like int64 ones";
}

TEST(SymbolicShapes, SizesFlattenAndFoldsSize) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, S, 8] x, float[2, 3] z) => (float[B, S, 8] y) <int64[1] ax0 = {0}> {
  s = Shape(x)
  r = Reshape(x, s)
  f1 = Flatten <axis = 1> (r)
  f2 = Flatten <axis = 2> (r)
  f0 = Flatten <axis = 0> (r)
  zs = Shape(z)
  zr = Reshape(z, zs)
  n = Size(zr)
  nu = Unsqueeze(n, ax0)
  c = ConstantOfShape(nu)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "f1"), "[B, ?]") << "S * 8 has no name";
  EXPECT_EQ(shapeOf(m, "f2"), "[?, 8]");
  EXPECT_EQ(shapeOf(m, "f0"), "[1, ?]");
  EXPECT_EQ(shapeOf(m, "c"), "[6]") << "Size folds to 2 * 3";
}

// ---- propagation past a computed shape ------------------------------------------------

TEST(SymbolicShapes, PropagatesThroughAttentionOps) {
  // Everything after a computed Reshape: Transpose, MatMul, Softmax, Where, ReduceMean.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[B, S, 8] x, bool[1, 1, S, S] causal) => (float[B, S, 8] y)
<int64[2] heads = {2, 4}, float fill = {-10000.0}, int64[1] last = {-1}, int64[3] merged = {0, 0, 8}> {
  s = Shape(x)
  s2 = Shape <start = 0, end = 2> (x)
  target = Concat <axis = 0> (s2, heads)
  h = Reshape(x, target)
  qh = Transpose <perm = [0, 2, 1, 3]> (h)
  kt = Transpose <perm = [0, 2, 3, 1]> (h)
  scores = MatMul(qh, kt)
  masked = Where(causal, scores, fill)
  p = Softmax <axis = -1> (masked)
  o = MatMul(p, qh)
  mean = ReduceMean <axes = [-1], keepdims = 0> (o)
  sum = ReduceSum(o, last)
  e = Erf(o)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "qh"), "[B, 2, S, 4]");
  EXPECT_EQ(shapeOf(m, "scores"), "[B, 2, S, S]");
  EXPECT_EQ(shapeOf(m, "masked"), "[B, 2, S, S]");
  EXPECT_EQ(shapeOf(m, "p"), "[B, 2, S, S]");
  EXPECT_EQ(shapeOf(m, "o"), "[B, 2, S, 4]");
  EXPECT_EQ(shapeOf(m, "mean"), "[B, 2, S]");
  EXPECT_EQ(shapeOf(m, "sum"), "[B, 2, S, 1]") << "from opset 13 ReduceSum reads axes from input 1";
  EXPECT_EQ(shapeOf(m, "e"), "[B, 2, S, 4]");
}

TEST(SymbolicShapes, PropagatesThroughComMicrosoftOps) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
g (float[B, S, 8] x, float[8] gamma, float[8] beta) => (float[B, S, 8] y) <int64[1] eight = {8}> {
  s = Shape <start = 0, end = 2> (x)
  target = Concat <axis = 0> (s, eight)
  r = Reshape(x, target)
  n, u1, u2, sum = com.microsoft.SkipLayerNormalization(r, x, gamma, beta)
  g1 = com.microsoft.FastGelu(n)
  a = com.microsoft.MultiHeadAttention <num_heads = 2> (g1, g1, g1)
  packed = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 1> (g1)
  y = Identity(a)
}
)");
  EXPECT_EQ(shapeOf(m, "n"), "[B, S, 8]");
  EXPECT_EQ(shapeOf(m, "sum"), "[B, S, 8]");
  EXPECT_EQ(shapeOf(m, "g1"), "[B, S, 8]");
  EXPECT_EQ(shapeOf(m, "a"), "[B, S, 8]");
  EXPECT_NE(shapeOf(m, "packed"), "[B, S, 8]") << "packed QKV: the query is wider than the output";
}

// The caches a fused attention returns: the past with the new positions behind it, or the
// new positions alone. Typed here, the rewrite's soundness check never needs ONNX's
// inference functions (nor its schema registry) for them.
TEST(SymbolicShapes, SizesThePresentOfFusedAttention) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
g (float[B, S, 8] x, float[B, 2, P, 4] past_k, float[B, 2, P, 4] past_v, float[8, 24] w,
   float[2, B, 2, P, 4] past) => (float[B, S, 8] y) {
  a, pk, pv = com.microsoft.MultiHeadAttention <num_heads = 2> (x, x, x, , , , past_k, past_v)
  b, nk, nv = com.microsoft.MultiHeadAttention <num_heads = 2> (x, x, x)
  c, present = com.microsoft.Attention <num_heads = 2> (x, w, , , past)
  d, fresh = com.microsoft.Attention <num_heads = 2> (x, w)
  y = Identity(a)
}
)");
  EXPECT_EQ(shapeOf(m, "pk"), "[B, 2, ?, 4]");
  EXPECT_EQ(shapeOf(m, "pv"), "[B, 2, ?, 4]");
  EXPECT_EQ(shapeOf(m, "nk"), "[B, 2, S, 4]");
  EXPECT_EQ(shapeOf(m, "nv"), "[B, 2, S, 4]");
  EXPECT_EQ(shapeOf(m, "present"), "[2, B, 2, ?, 4]");
  EXPECT_EQ(shapeOf(m, "fresh"), "[2, B, 2, S, 4]");
  // P + S, one name for the key and the value cache alike.
  EXPECT_EQ(dimName(m, "pk", 2), "unk__(P + S)");
  EXPECT_EQ(dimName(m, "pv", 2), "unk__(P + S)");
  EXPECT_EQ(dimName(m, "present", 3), "unk__(P + S)");
}

TEST(SymbolicShapes, SizesEmbedLayerNormalization) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
g (int32[B, S] ids, float[30, 8] word, float[16, 8] pos, float[8] gamma, float[8] beta,
   int32[B, S] mask) => (float[B, S, 8] y) {
  y, mask_index, sum = com.microsoft.EmbedLayerNormalization (ids, , word, pos, , gamma, beta, mask)
}
)");
  EXPECT_EQ(shapeOf(m, "y"), "[B, S, 8]");
  EXPECT_EQ(shapeOf(m, "sum"), "[B, S, 8]");
  EXPECT_EQ(shapeOf(m, "mask_index"), "[B]");
}

TEST(SymbolicShapes, IgnoresShapeStartAndEndBeforeOpset15) {
  // Shape-13 has no start/end: an invalid node (ONNX Runtime refuses it). The pass types
  // its output int64 and claims no length, so nothing after it is sized either.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64[2] heads = {2, 4}> {
  s = Shape <start = 0, end = 2> (x)
  target = Concat <axis = 0> (s, heads)
  r = Reshape(x, target)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "s"), "no shape");
  EXPECT_EQ(shapeOf(m, "r"), "no shape");
}

TEST(SymbolicShapes, SlicesDataOfAComputedShapeByConstantBounds) {
  // Steps forward and backward, clamped ends, and the whole of a symbolic dim.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 13]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64[1] zero = {0}, int64[1] two = {2},
 int64[1] big = {9223372036854775807}, int64[1] minus_one = {-1}, int64[1] ax1 = {1},
 int64[1] ax2 = {2}, int64[1] back = {-2}, int64[1] before_start = {-100}> {
  s = Shape(x)
  r = Reshape(x, s)
  a = Slice(r, zero, two, ax2)
  b = Slice(r, minus_one, before_start, ax2, back)
  c = Slice(r, zero, big, ax1)
  d = Slice(r, two, big, ax1)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "a"), "[B, S, 2]");
  EXPECT_EQ(shapeOf(m, "b"), "[B, S, 4]") << "7, 5, 3, 1";
  EXPECT_EQ(shapeOf(m, "c"), "[B, S, 8]") << "all of S";
  EXPECT_EQ(shapeOf(m, "d"), "[B, ?, 8]") << "S - 2, or 0 when S < 2";
}

TEST(SymbolicShapes, ReadsOpset18AxesAndNumOutputs) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64[1] last = {-1}> {
  s = Shape(x)
  r = Reshape(x, s)
  mean = ReduceMean <keepdims = 1> (r, last)
  p1, p2, p3 = Split <axis = 2, num_outputs = 3> (r)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "mean"), "[B, S, 1]");
  EXPECT_EQ(shapeOf(m, "p1"), "[B, S, 3]");
  EXPECT_EQ(shapeOf(m, "p3"), "[B, S, 2]") << "ceil(8 / 3) each, the last one smaller";
}

// ---- what must stay unknown ----------------------------------------------------------

TEST(SymbolicShapes, BroadcastOfTwoDifferentSymbolsIsUnknown) {
  using symbolic::broadcastShapes;
  using symbolic::Sym;
  const auto dims = [](const std::optional<symbolic::Dims>& d) {
    std::string out;
    for (const Sym& s : *d)
      out += (s.isInt() ? std::to_string(s.value) : s.isDimSymbol() ? s.name() : "?") + " ";
    return out;
  };
  EXPECT_EQ(dims(broadcastShapes({Sym::symbol("S")}, {Sym::symbol("T")})), "? ");
  EXPECT_EQ(dims(broadcastShapes({Sym::symbol("S")}, {Sym::of(1)})), "S ");
  EXPECT_EQ(dims(broadcastShapes({Sym::symbol("S")}, {Sym::symbol("S")})), "S ");
  EXPECT_EQ(dims(broadcastShapes({Sym::symbol("S")}, {Sym::unknown()})), "? ")
      << "the unknown may be 1";
  EXPECT_EQ(dims(broadcastShapes({Sym::unknown()}, {Sym::of(4)})), "4 ")
      << "4 against anything a valid model allows (1 or 4) is 4";
  EXPECT_EQ(dims(broadcastShapes({Sym::of(2), Sym::of(3)}, {Sym::of(3)})), "2 3 ");
  EXPECT_FALSE(broadcastShapes({Sym::of(3)}, {Sym::of(4)})) << "incompatible: claim nothing";

  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S] x, float[B, T] z) => (float[B, S] y) <int64[2] flat = {0, -1}> {
  a = Reshape(x, flat)
  c = Reshape(z, flat)
  sum = Add(a, c)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "a"), "[B, S]");
  EXPECT_EQ(shapeOf(m, "sum"), "[B, ?]");
}

TEST(SymbolicShapes, MinusOneWithAnUnknownRestStaysUnknown) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, ?, 8] x, int64[1] n) => (float[B, S] y) <int64[1] minus_one = {-1}, int64[1] eight = {8}> {
  t1 = Concat <axis = 0> (minus_one, eight)
  r1 = Reshape(x, t1)
  t2 = Concat <axis = 0> (minus_one, n)
  r2 = Reshape(r1, t2)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "r1"), "[?, 8]") << "B * ? * 8 / 8 is unknown";
  EXPECT_EQ(shapeOf(m, "r2"), "[?, ?]") << "a shape element given at run time";
}

TEST(SymbolicShapes, NonConstantIndicesStayUnknown) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 8] x, int64 i) => (float[B, S, 8] y) <int64[2] tail = {2, 4}> {
  s = Shape(x)
  n = Gather <axis = 0> (s, i)
  nu = Unsqueeze <axes = [0]> (n)
  target = Concat <axis = 0> (nu, nu, tail)
  r = Reshape(x, target)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[?, ?, 2, 4]");
}

TEST(SymbolicShapes, DoesNotFoldTensorsOverTheCap) {
  // An int64[70] shape table is not folded: the slice of it has a length, no elements.
  std::string table = "{";
  for (int i = 0; i < 70; ++i) table += std::string(i ? ", " : "") + (i < 2 ? "0" : "4");
  table += "}";
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 16] x) => (float[B, S, 16] y) <int64[70] table = )" +
                                      table + R"(,
 int64[1] zero = {0}, int64[1] three = {3}> {
  target = Slice(table, zero, three, zero)
  r = Reshape(x, target)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "target"), "[3]");
  EXPECT_EQ(shapeOf(m, "r"), "[?, ?, ?]");
}

TEST(SymbolicShapes, SqueezeWithoutAxesOfSymbolicDimsHasNoKnownRank) {
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64[1] minus_one = {-1}> {
  s = Shape(x)
  r = Reshape(x, s)
  q = Squeeze(r)
  y = Identity(x)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[B, S, 8]");
  EXPECT_TRUE(shapeOf(m, "q") == "untyped" || shapeOf(m, "q") == "no shape")
      << "B or S may be 1: " << shapeOf(m, "q");
}

TEST(SymbolicShapes, NeverChangesADimTheModelGives) {
  // The model says r is [B, Q, 12] (Q for what the pass would call S): Q stays.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 12] x) => (float[B, S, 12] y)
<int64[1] twelve = {12}, int64[1] zero = {0}, int64[1] two = {2}, float[B, Q, 12] r> {
  s = Shape(x)
  bs = Slice(s, zero, two)
  target = Concat <axis = 0> (bs, twelve)
  r = Reshape(x, target)
  y = Identity(r)
}
)");
  EXPECT_EQ(shapeOf(m, "r"), "[B, Q, 12]");
}

TEST(SymbolicShapes, IsUndoneWithOnnxsInference) {
  onnx::ModelProto model = parseModel(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (int64[batch, seq] ids) => (int64[batch, seq] y) <int64 zero = {0}, int64 one = {1},
 int64[1] minus_one = {-1}> {
  s = Shape(ids)
  n = Gather <axis = 0> (s, one)
  n1 = Unsqueeze <axes = [0]> (n)
  target = Concat <axis = 0> (minus_one, n1)
  r = Range(zero, n, one)
  r1 = Unsqueeze <axes = [0]> (r)
  pos = Reshape(r1, target)
  y = Add(ids, pos)
}
)");
  const std::string before = testing::serialize(model);
  InferredShapes shapes(model);
  EXPECT_EQ(shapeOf(model, "pos"), "[1, seq]");
  shapes.undo();
  EXPECT_EQ(testing::serialize(model), before) << "the saved model carries only its own types";
}

// ---- bodies ----------------------------------------------------------------------------

// A merged decoder's branches are typed by nothing but inference: ONNX's sees no constant
// of the enclosing graph in a body and leaves each Reshape to a computed shape unsized. The
// pass sizes it from what it knows of the main graph's values: its inputs' dims, its
// initializers' elements and what it folded there.
const char* kHeadsInABranch = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool use_cache, float[batch, seq, 8] x) => (float[batch, 2, seq, 4] y)
<int64[1] heads = {2}, int64 zero = {0}, int64[1] axes = {0}> {
  s = Shape(x)
  b = Gather <axis = 0> (s, zero)
  b1 = Unsqueeze(b, axes)
  y = If(use_cache) <
    then_branch = with_past () => (float[batch, 2, seq, 4] a)
                  <int64 one = {1}, int64[1] dim = {4}> {
      n = Gather <axis = 0> (s, one)
      n1 = Unsqueeze(n, axes)
      shape = Concat <axis = 0> (b1, n1, heads, dim)
      r = Reshape(x, shape)
      t = Transpose <perm = [0, 2, 1, 3]> (r)
      a = Neg(t)
    },
    else_branch = no_past () => (float[batch, 2, seq, 4] c) <int64[2] dims = {-1, 4}> {
      shape2 = Concat <axis = 0> (b1, heads, dims)
      q = Reshape(x, shape2)
      c = Neg(q)
    }>
}
)";

TEST(SymbolicShapes, SizesReshapesInBranchesFromTheEnclosingGraphsValues) {
  const onnx::ModelProto m = inferred(kHeadsInABranch);
  const onnx::GraphProto& then_g = branch(m, "then_branch");
  EXPECT_EQ(shapeIn(then_g, "n1"), "[1]") << "axes is the main graph's initializer";
  EXPECT_EQ(shapeIn(then_g, "r"), "[batch, seq, 2, 4]") << "b1 folded in the main graph";
  EXPECT_EQ(shapeIn(then_g, "t"), "[batch, 2, seq, 4]");
  EXPECT_EQ(shapeIn(branch(m, "else_branch"), "q"), "[batch, 2, seq, 4]")
      << "-1 solved from x's element count";
}

TEST(SymbolicShapes, IsUndoneInBodiesToo) {
  onnx::ModelProto model = parseModel(kHeadsInABranch);
  const std::string before = testing::serialize(model);
  InferredShapes shapes(model);
  EXPECT_EQ(shapeIn(branch(model, "then_branch"), "t"), "[batch, 2, seq, 4]");
  shapes.undo();
  EXPECT_EQ(testing::serialize(model), before) << "the saved model carries only its own types";
}

TEST(SymbolicShapes, GivesUpOnInvalidInputsWithoutThrowing) {
  // Out-of-range indices, a Reshape with two -1, a split that does not add up, a squeeze of
  // a dim that is not 1: nothing is claimed, nothing throws.
  const onnx::ModelProto m = inferred(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[B, S, 8] x) => (float[B, S, 8] y) <int64 nine = {9}, int64[2] two_minus = {-1, -1}> {
  s = Shape(x)
  bad = Gather <axis = 0> (s, nine)
  r = Reshape(x, two_minus)
  a, b = Split <axis = 2, split = [3, 3]> (x)
  q = Squeeze <axes = [2]> (x)
  y = Identity(x)
}
)");
  const std::string r = shapeOf(m, "r");
  EXPECT_TRUE(r == "untyped" || r == "no shape" || r == "[?, ?]") << r;
  EXPECT_NE(shapeOf(m, "a"), "[B, S, 3]");
  EXPECT_NE(shapeOf(m, "q"), "[B, S]");
  EXPECT_EQ(shapeOf(m, "bad"), "[]") << "a scalar, whatever its element";
}

}  // namespace
}  // namespace onnx_rewrite
