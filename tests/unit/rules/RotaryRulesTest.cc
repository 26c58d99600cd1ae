//===- RotaryRulesTest.cc - RotaryEmbedding rules ------------------------===//
//
// The shipped rotary rules (rules/rotary.yaml) on models shaped like Hugging Face
// LLaMA exports from torch.onnx TorchScript and dynamo (tests/support/RotaryModels.h).
// Each variant has a positive test asserting the exact op list and an ONNX Runtime
// check of equal outputs; each negative breaks one condition and must come out
// unchanged.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tests/support/RotaryModels.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using testing::rotaryModel;
using testing::RotarySpec;
using Ops = std::vector<std::string>;
using Halves = RotarySpec::Halves;

const Ops kRotary = {"com.microsoft::RotaryEmbedding"};
const char* kRotaryRules = "^rotary";

RotarySpec rope(void (*edit)(RotarySpec&) = nullptr) {
  RotarySpec s;
  if (edit) edit(s);
  return s;
}

using testing::attribute;

/// The initializer `name` of `model`, or null.
const onnx::TensorProto* initializer(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& t : model.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// ---- Rotate-half with Slice ------------------------------------------------------------

TEST(RotaryEmbeddingRule, FusesConstantSliceHalves) {
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(rope()), &model), kRotary);
  const onnx::NodeProto& node = model.graph().node(0);
  ASSERT_EQ(node.input_size(), 4);
  EXPECT_EQ(node.input(0), "q");
  EXPECT_EQ(node.input(1), "pos");
  const onnx::TensorProto* cos = initializer(model, node.input(2));
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->dims_size(), 2);
  EXPECT_EQ(cos->dims(0), 16);
  EXPECT_EQ(cos->dims(1), 4) << "ORT wants [max_pos, head_size / 2]";
  ASSERT_NE(attribute(node, "num_heads"), nullptr);
  EXPECT_EQ(attribute(node, "num_heads")->i(), 2);
  ASSERT_NE(attribute(node, "interleaved"), nullptr);
  EXPECT_EQ(attribute(node, "interleaved")->i(), 0);
  expectSameInOrt(rotaryModel(rope()));
}

TEST(RotaryEmbeddingRule, FusesTorchScriptBoundsFromShape) {
  auto s = rope([](RotarySpec& s) { s.halves = Halves::kSliceShape; });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingRule, FusesShapeIndexCountedFromTheFront) {
  auto s = rope([](RotarySpec& s) {
    s.halves = Halves::kSliceShape;
    s.shape_index = "3";
  });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
}

TEST(RotaryEmbeddingRule, FusesTransformers43CacheSlicedToTheSequence) {
  // Gathering rows of cos_cached[:seq_len] is gathering them from the whole cache. The
  // sequence length computed for the Slice is left behind, unused (no rule erases nodes
  // outside its match).
  auto s = rope([](RotarySpec& s) { s.cache_slice = true; });
  EXPECT_EQ(fuse(rotaryModel(s)), (Ops{"Shape", "Gather", "Unsqueeze", kRotary[0]}));
  // Positions below the sequence length (5), as the model requires.
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbeddingRule, FusesQAndKSharingCosAndSin) {
  auto s = rope([](RotarySpec& s) { s.with_k = true; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), (Ops{kRotary[0], kRotary[0]}));
  // Both read one pair of half caches (the Rewriter shares equal initializers).
  int caches = 0;
  for (const auto& t : model.graph().initializer()) caches += t.dims_size() == 2;
  EXPECT_EQ(caches, 2);
  EXPECT_EQ(model.graph().node(0).input(2), model.graph().node(1).input(2));
  EXPECT_EQ(model.graph().node(0).input(3), model.graph().node(1).input(3));
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingRule, FusesOpset18) {
  auto s = rope([](RotarySpec& s) { s.opset = 18; });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = rope([](RotarySpec& s) { s.opset = 23; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), Ops{"RotaryEmbedding"});
  const onnx::NodeProto& node = model.graph().node(0);
  ASSERT_EQ(node.input_size(), 4);
  EXPECT_EQ(node.input(0), "q");
  EXPECT_EQ(node.input(3), "pos") << "ONNX orders X, cos_cache, sin_cache, position_ids";
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingRule, SwappedCosAndSinFuseWithTheCachesExchanged) {
  // x * sin + rotate_half(x) * cos is a rotary whose "cos" table is sin_cache: fusing it
  // with the caches exchanged computes exactly what the model did.
  auto s = rope([](RotarySpec& s) { s.swap_cos_sin = true; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), kRotary);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingRule, DoesNotFuseCachesThatAreGraphInputs) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.cache_input = true; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseCachesWhoseHalvesDiffer) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.halves_differ = true; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseTheWrongHalfNegated) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.neg_first_half = true; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseCosAndSinAtDifferentPositions) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.sin_other_pos = true; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseHalvesWithAStep) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.slice_step = "2"; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseUnequalHalves) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.half = "3"; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseASecondHalfStoppingShort) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.end = "6"; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseShapeBoundsOfAnotherAxis) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) {
                    s.halves = Halves::kSliceShape;
                    s.shape_index = "2";
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseInt32PositionIds) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.pos_type = "int32"; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFusePositionIdsBroadcastOverTheBatch) {
  // ORT's kernel wants position_ids of [batch, sequence]; [1, S] would fail at run time.
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.pos_dims = "1, S"; })), kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseWithoutAStaticHeadCount) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) { s.heads = "N"; })), kRotaryRules);
}

// ---- Rotate-half with Split ------------------------------------------------------------

TEST(RotaryEmbeddingSplitRule, FusesSplitHalves) {
  auto s = rope([](RotarySpec& s) { s.halves = Halves::kSplit; });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingSplitRule, FusesSplitNumOutputsOpset18) {
  auto s = rope([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 18;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingSplitRule, FusesQAndKSharingCosAndSin) {
  auto s = rope([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.with_k = true;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingSplitRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = rope([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 23;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), Ops{"RotaryEmbedding"});
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingSplitRule, DoesNotFuseUnequalParts) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) {
                    s.halves = Halves::kSplit;
                    s.split = "3, 5";
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingSplitRule, DoesNotFuseTheWrongHalfNegated) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) {
                    s.halves = Halves::kSplit;
                    s.neg_first_half = true;
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingSplitRule, DoesNotFuseCachesWhoseHalvesDiffer) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) {
                    s.halves = Halves::kSplit;
                    s.halves_differ = true;
                  })),
                  kRotaryRules);
}

// ---- Partial rotary (Phi) --------------------------------------------------------------

TEST(RotaryEmbeddingPartialRule, FoldsThePassThroughIntoRotaryEmbeddingDim) {
  auto s = rope([](RotarySpec& s) { s.rotary_dim = 4; });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), kRotary);
  const onnx::NodeProto& node = model.graph().node(0);
  EXPECT_EQ(node.input(0), "q");
  ASSERT_NE(attribute(node, "rotary_embedding_dim"), nullptr);
  EXPECT_EQ(attribute(node, "rotary_embedding_dim")->i(), 4);
  ASSERT_NE(attribute(node, "num_heads"), nullptr);
  EXPECT_EQ(attribute(node, "num_heads")->i(), 2);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FusesQAndKOfAPhiLayer) {
  auto s = rope([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.with_k = true;
    s.halves = Halves::kSliceShape;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = rope([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.opset = 23;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), Ops{"RotaryEmbedding"});
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FoldsASplitIntoRotatedPartAndRest) {
  // dynamo: x.split([d, H - d], -1) and halves by Split too.
  auto s = rope([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.halves = Halves::kSplit;
    s.with_k = true;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), (Ops{kRotary[0], kRotary[0]}));
  ASSERT_NE(attribute(model.graph().node(0), "rotary_embedding_dim"), nullptr);
  EXPECT_EQ(attribute(model.graph().node(0), "rotary_embedding_dim")->i(), 4);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FoldsASplitFromOpset23) {
  auto s = rope([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.halves = Halves::kSplit;
    s.opset = 23;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), Ops{"RotaryEmbedding"});
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, LeavesThePassThroughConcatenatedFirst) {
  // Concat(x[..., 4:], rotary(x[..., :4])) moves the dims: only the inner rotary fuses.
  std::string text = rotaryModel(rope([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.halves = Halves::kSplit;
  }));
  const std::string from = "yq = Concat <axis = -1> (yqr, qp)";
  text.replace(text.find(from), from.size(), "yq = Concat <axis = -1> (qp, yqr)");
  EXPECT_EQ(fuse(text), (Ops{"Split", kRotary[0], "Concat"}));
  expectSameInOrt(text);
}

TEST(RotaryEmbeddingPartialRule, LeavesAPassThroughOfAnotherTensor) {
  // Concat(rotary(q[..., :4]), q[..., :4]): the second part is not the rest of q, so only
  // the inner rotary fuses.
  std::string text = rotaryModel(rope([](RotarySpec& s) { s.rotary_dim = 4; }));
  const std::string from = "qp = Slice(q, rotary_end, end,";
  text.replace(text.find(from), from.size(), "qp = Slice(qr, zero, end,");
  EXPECT_EQ(fuse(text), (Ops{"Slice", "Slice", kRotary[0], "Concat"}));
  expectSameInOrt(text);
}

TEST(RotaryEmbeddingPartialRule, DoesNotFoldARotaryOfAnotherWidth) {
  // The pass-through starts at 5, not where the rotated part (4 dims) ends.
  std::string text = rotaryModel(rope([](RotarySpec& s) { s.rotary_dim = 4; }));
  const std::string from = "qp = Slice(q, rotary_end, end,";
  text.replace(text.find(from), from.size(), "qp = Slice(q, five, end,");
  text.replace(text.find("int64[1] rotary_end"), 0, "int64[1] five = {5}, ");
  text.replace(text.find("=> (float[B, 2, S, 8] yq)"), 25, "=> (float[B, 2, S, 7] yq)");
  EXPECT_EQ(fuse(text), (Ops{"Slice", "Slice", kRotary[0], "Concat"}));
}

}  // namespace
}  // namespace onnx_rewrite
