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

#include <cmath>
#include <stdexcept>

#include "tests/support/RotaryModels.h"
#include "tests/support/TestModels.h"
#include "tests/unit/rules/RuleTestSupport.h"

namespace onnx_rewrite {
namespace {

using testing::expectSameInOrt;
using testing::expectUnchanged;
using testing::fuse;
using testing::interleavedRotaryModel;
using testing::InterleavedRotarySpec;
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

TEST(RotaryEmbeddingRule, FusesTorch1xOpset11) {
  // TorchScript at opset 11: Unsqueeze with an axes attribute, Slice bounds as inputs.
  auto s = rope([](RotarySpec& s) {
    s.opset = 11;
    s.halves = Halves::kSliceShape;
  });
  const std::string text = testing::withAttributeParams(rotaryModel(s));
  EXPECT_EQ(fuse(text), kRotary);
  expectSameInOrt(text);
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
  // sequence length computed for the Slice goes too: the Rewriter erases what only the
  // match read.
  auto s = rope([](RotarySpec& s) { s.cache_slice = true; });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  // Positions below the sequence length (5), as the model requires.
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbeddingRule, FusesCachesSqueezedOnAxisZeroTwice) {
  // cos_cached[:, :, :seq_len].squeeze(0).squeeze(0): the same [seq_len, H] rows.
  auto s = rope([](RotarySpec& s) {
    s.cache_4d = true;
    s.cache_4d_squeeze_0_0 = true;
    s.halves = Halves::kSliceShape;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbeddingRule, FusesTransformers431CachesSqueezedBeforeTheGather) {
  // cos_cached [1, 1, max_pos, H][:, :, :seq_len].squeeze(1).squeeze(0)[position_ids]
  auto s = rope([](RotarySpec& s) {
    s.cache_4d = true;
    s.with_k = true;
    s.halves = Halves::kSliceShape;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), (Ops{kRotary[0], kRotary[0]}));
  const onnx::TensorProto* cos = initializer(model, model.graph().node(0).input(2));
  ASSERT_NE(cos, nullptr);
  ASSERT_EQ(cos->dims_size(), 2);
  EXPECT_EQ(cos->dims(0), 16);
  EXPECT_EQ(cos->dims(1), 4);
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbeddingSplitRule, FusesTransformers431CachesSqueezedBeforeTheGather) {
  auto s = rope([](RotarySpec& s) {
    s.cache_4d = true;
    s.halves = Halves::kSplit;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbeddingRule, DoesNotFuseSqueezedCachesWhoseHalvesDiffer) {
  expectUnchanged(rotaryModel(rope([](RotarySpec& s) {
                    s.cache_4d = true;
                    s.halves_differ = true;
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingRule, DoesNotFuseSqueezedCachesSlicedWithAStep) {
  // cos_cached[:, :, :seq_len:2] would gather other rows than cos_cached[position_ids].
  std::string text = rotaryModel(rope([](RotarySpec& s) { s.cache_4d = true; }));
  const std::string from = "cos_rows = Slice(cos_cache, zero, seq_end, axis2, step)";
  text.replace(text.find(from), from.size(),
               "cos_rows = Slice(cos_cache, zero, seq_end, axis2, two_step)");
  text.replace(text.find("int64[1] axis2"), 0, "int64[1] two_step = {2}, ");
  expectUnchanged(text, kRotaryRules);
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

// ---- 3-D x [B, S, H] (one head) -------------------------------------------------------

RotarySpec threeD(void (*edit)(RotarySpec&) = nullptr) {
  RotarySpec s;
  s.three_d = true;
  if (edit) edit(s);
  return s;
}

TEST(RotaryEmbedding3DRule, FusesOneHeadWithNumHeads1) {
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(threeD()), &model), kRotary);
  const onnx::NodeProto& node = model.graph().node(0);
  EXPECT_EQ(node.input(0), "q");
  ASSERT_NE(attribute(node, "num_heads"), nullptr);
  EXPECT_EQ(attribute(node, "num_heads")->i(), 1) << "3-D input: [B, S, num_heads * H]";
  const onnx::TensorProto* cos = initializer(model, node.input(2));
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->dims(1), 4);
  expectSameInOrt(rotaryModel(threeD()));
}

TEST(RotaryEmbedding3DRule, FusesTorchScriptBoundsFromShape) {
  auto s = threeD([](RotarySpec& s) {
    s.halves = Halves::kSliceShape;
    s.shape_index = "2";
    s.with_k = true;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbedding3DRule, FusesCacheSlicedToTheSequence) {
  auto s = threeD([](RotarySpec& s) { s.cache_slice = true; });
  EXPECT_EQ(fuse(rotaryModel(s)), kRotary);
  expectSameInOrt(rotaryModel(s), "--int-range pos=0:5");
}

TEST(RotaryEmbedding3DSplitRule, FusesSplitHalvesOpset18) {
  auto s = threeD([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 18;
    s.with_k = true;
  });
  EXPECT_EQ(fuse(rotaryModel(s)), (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbedding3DSplitRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = threeD([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 23;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model), Ops{"RotaryEmbedding"});
  EXPECT_EQ(attribute(model.graph().node(0), "num_heads")->i(), 1);
  expectSameInOrt(rotaryModel(s));
}

TEST(RotaryEmbedding3DRule, DoesNotFuseCachesWhoseHalvesDiffer) {
  expectUnchanged(rotaryModel(threeD([](RotarySpec& s) { s.halves_differ = true; })), kRotaryRules);
}

TEST(RotaryEmbedding3DRule, DoesNotFuseTheWrongHalfNegated) {
  expectUnchanged(rotaryModel(threeD([](RotarySpec& s) { s.neg_first_half = true; })),
                  kRotaryRules);
}

TEST(RotaryEmbedding3DRule, DoesNotFuseShapeBoundsOfAnotherAxis) {
  expectUnchanged(rotaryModel(threeD([](RotarySpec& s) {
                    s.halves = Halves::kSliceShape;
                    s.shape_index = "1";
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbedding3DRule, DoesNotFuseCosAndSinAtDifferentPositions) {
  expectUnchanged(rotaryModel(threeD([](RotarySpec& s) { s.sin_other_pos = true; })), kRotaryRules);
}

TEST(RotaryEmbedding3DSplitRule, DoesNotFuseUnequalParts) {
  expectUnchanged(rotaryModel(threeD([](RotarySpec& s) {
                    s.halves = Halves::kSplit;
                    s.split = "3, 5";
                  })),
                  kRotaryRules);
}

// ---- cos/sin computed from inv_freq and position_ids (transformers >= 4.38) -------------

/// The maximum position the computed-cache tests state: the oracle draws positions below
/// the 16 rows the Gather tests' caches have, so 16 is enough.
Options withMaxPositions(int64_t n = 16) {
  Options o;
  o.max_positions = n;
  return o;
}

RotarySpec computed(void (*edit)(RotarySpec&) = nullptr) {
  RotarySpec s;
  s.computed = true;
  s.with_k = true;
  if (edit) edit(s);
  return s;
}

TEST(RotaryEmbeddingComputedRule, FusesCosSinComputedPerForwardPass) {
  const std::string text = rotaryModel(computed());
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaxPositions()), (Ops{kRotary[0], kRotary[0]}));
  const onnx::NodeProto& q = model.graph().node(0);
  ASSERT_EQ(q.input_size(), 4);
  EXPECT_EQ(q.input(0), "q");
  EXPECT_EQ(q.input(1), "pos");
  const onnx::TensorProto* cos = initializer(model, q.input(2));
  ASSERT_NE(cos, nullptr);
  ASSERT_EQ(cos->dims_size(), 2);
  EXPECT_EQ(cos->dims(0), 16) << "one row per position below max_positions";
  EXPECT_EQ(cos->dims(1), 4);
  ASSERT_NE(attribute(q, "num_heads"), nullptr);
  EXPECT_EQ(attribute(q, "num_heads")->i(), 2);
  // Q and K share one pair of caches; inv_freq is gone with the computation.
  EXPECT_EQ(model.graph().node(1).input(2), q.input(2));
  EXPECT_EQ(model.graph().node(1).input(3), q.input(3));
  EXPECT_EQ(initializer(model, "inv_freq"), nullptr);
  expectSameInOrt(text, "", withMaxPositions());
}

/// Fuses `text` with 3 positions and expects the first RotaryEmbedding's caches to hold
/// cos/sin(float(p) * inv_freq[i]) * scale, the product rounded to float as the graph's
/// MatMul of the float inverse frequencies and Cast(position_ids, float) computes it, then
/// multiplied in float.
void expectCachesHoldTheGraphsAngles(const std::string& text, float scale) {
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaxPositions(3)), (Ops{kRotary[0], kRotary[0]}));
  const onnx::TensorProto* cos = initializer(model, model.graph().node(0).input(2));
  const onnx::TensorProto* sin = initializer(model, model.graph().node(0).input(3));
  ASSERT_NE(cos, nullptr);
  ASSERT_NE(sin, nullptr);
  ASSERT_EQ(cos->raw_data().size(), 3u * 4u * sizeof(float));
  const float* c = reinterpret_cast<const float*>(cos->raw_data().data());
  const float* n = reinterpret_cast<const float*>(sin->raw_data().data());
  for (int p = 0; p < 3; ++p)
    for (int i = 0; i < 4; ++i) {
      const float inv = std::pow(10000.0f, -2.0f * static_cast<float>(i) / 8.0f);
      const float angle = static_cast<float>(p) * inv;
      EXPECT_EQ(c[p * 4 + i], std::cos(angle) * scale) << p << ", " << i;
      EXPECT_EQ(n[p * 4 + i], std::sin(angle) * scale) << p << ", " << i;
    }
}

TEST(RotaryEmbeddingComputedRule, CachesHoldTheAnglesTheGraphComputes) {
  expectCachesHoldTheGraphsAngles(rotaryModel(computed()), 1.0f);
}

TEST(RotaryEmbeddingComputedRule, FusesTorchScriptBatchDimAndShapeBounds) {
  auto s = computed([](RotarySpec& s) {
    s.batch_dim = RotarySpec::BatchDim::kGather;
    s.halves = Halves::kSliceShape;
  });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesTorchScriptExpandOfMinusOne) {
  // inv_freq[None, :, None].expand(B, -1, 1): torch writes the size's -1 through a Where.
  // Whatever shape the Expand broadcasts to, the MatMul's values are inv_freq[i] * pos.
  auto s = computed([](RotarySpec& s) {
    s.batch_dim = RotarySpec::BatchDim::kGatherExpandWhere;
    s.halves = Halves::kSliceShape;
  });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}))
      << "the size computation goes with the Expand";
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesOnlyQ) {
  auto s = computed([](RotarySpec& s) { s.with_k = false; });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()), kRotary);
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesTransformers445ScalingAndCast) {
  // cos = (emb.cos() * attention_scaling).to(x.dtype), attention_scaling 1.0, in a
  // TorchScript export.
  auto s = computed([](RotarySpec& s) {
    s.batch_dim = RotarySpec::BatchDim::kGather;
    s.scaling = "1.0";
    s.cast_tables = true;
  });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, BuildsFloat16CachesForAFloat16Model) {
  // cos.to(x.dtype) with x float16: the caches are the float values rounded as the Cast
  // rounds them.
  auto s = computed([](RotarySpec& s) {
    s.cast_tables = true;
    s.fp16 = true;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  const onnx::TensorProto* cos = initializer(model, model.graph().node(0).input(2));
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->data_type(), onnx::TensorProto::FLOAT16);
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesScalingWithoutCast) {
  auto s = computed([](RotarySpec& s) { s.scaling = "1.0"; });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FoldsAnAttentionScalingOtherThanOneIntoTheCaches) {
  // YaRN's and LongRoPE's attention_scaling: RotaryEmbedding is linear in its caches, so
  // row p holds cos(float(p) * inv_freq[i]) * 1.25, multiplied in float as the graph does.
  const std::string text = rotaryModel(computed([](RotarySpec& s) { s.scaling = "1.25"; }));
  expectCachesHoldTheGraphsAngles(text, 1.25f);
  expectSameInOrt(text, "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, TakesArangePositionsAsOnnxRuntimesStartPosition) {
  // Exported without position_ids: arange(0, S).unsqueeze(0), [1, S] for the whole batch.
  // ONNX Runtime rejects [1, S] for a batch of 2; its one-element form [0] means 0, 1, ...
  // for every batch entry.
  const std::string text = rotaryModel(computed([](RotarySpec& s) { s.arange_step = "1"; }));
  onnx::ModelProto model;
  EXPECT_EQ(fuse(text, &model, nullptr, withMaxPositions()),
            (Ops{"Reshape", kRotary[0], kRotary[0]}));
  const onnx::NodeProto& q = model.graph().node(1);
  EXPECT_EQ(model.graph().node(0).output(0), q.input(1)) << "the start position, reshaped to [1]";
  EXPECT_EQ(model.graph().node(2).input(1), q.input(1)) << "Q and K read the same positions";
  expectSameInOrt(text, "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseArangePositionsOfAnotherStep) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) { s.arange_step = "2"; })), kRotaryRules,
                  withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseAScalingOfCosAlone) {
  // The rewrite reads both factors; with sin's missing it fails rather than drop cos's.
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) {
                    s.scaling = "1.25";
                    s.scale_cos_only = true;
                  })),
                  kRotaryRules, withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesInvFreqWhoseExpandAConstantFolderComputed) {
  // onnxsim with static shapes folds Expand(inv_freq, [B, 1, 1]) into a [B, H/2, 1]
  // constant of equal rows.
  const std::string text = rotaryModel(computed([](RotarySpec& s) {
    s.folded_expand = true;
    s.pos_dims = "2, S";
  }));
  EXPECT_EQ(fuse(text, nullptr, nullptr, withMaxPositions()), (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(text, "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseAFoldedInvFreqOfUnequalRows) {
  // Each batch entry rotated by other frequencies: no one cache serves them.
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) {
                    s.folded_expand = true;
                    s.folded_rows_differ = true;
                    s.pos_dims = "2, S";
                  })),
                  kRotaryRules, withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FusesSplitHalvesOpset18) {
  auto s = computed([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 18;
  });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = computed([](RotarySpec& s) {
    s.halves = Halves::kSplit;
    s.opset = 23;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model, nullptr, withMaxPositions()),
            (Ops{"RotaryEmbedding", "RotaryEmbedding"}));
  EXPECT_EQ(model.graph().node(0).input(3), "pos");
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FoldsPhisPartialRotary) {
  auto s = computed([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.halves = Halves::kSplit;
    s.opset = 18;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(rotaryModel(s), &model, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  ASSERT_NE(attribute(model.graph().node(0), "rotary_embedding_dim"), nullptr);
  EXPECT_EQ(attribute(model.graph().node(0), "rotary_embedding_dim")->i(), 4);
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, FoldsPhisPartialRotaryWithSlices) {
  auto s = computed([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.batch_dim = RotarySpec::BatchDim::kGather;
    s.halves = Halves::kSliceShape;
  });
  EXPECT_EQ(fuse(rotaryModel(s), nullptr, nullptr, withMaxPositions()),
            (Ops{kRotary[0], kRotary[0]}));
  expectSameInOrt(rotaryModel(s), "", withMaxPositions());
}

// ---- the same without --max-positions: caches computed when the model runs --------------

/// How many nodes of `op` (an op type, any domain) `model` has.
int countOps(const onnx::ModelProto& model, const std::string& op) {
  int n = 0;
  for (const auto& node : model.graph().node()) n += node.op_type() == op;
  return n;
}

/// Fuses `text` without max_positions: every RotaryEmbedding (`rotaries` of them) reads one
/// pair of caches computed once in the graph, from a Range over the positions, never an
/// initializer; the outputs equal the model's in ONNX Runtime.
void expectRuntimeCaches(const std::string& text, int rotaries, const char* rotary_op,
                         const Options& options = {}) {
  onnx::ModelProto model;
  fuse(text, &model, nullptr, options);
  EXPECT_EQ(countOps(model, "RotaryEmbedding"), rotaries);
  EXPECT_EQ(countOps(model, "Range"), 1) << "one cache computation for every rotary";
  EXPECT_EQ(countOps(model, "Cos"), 1);
  EXPECT_EQ(countOps(model, "Sin"), 1);
  std::string cos_cache;
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "RotaryEmbedding") continue;
    EXPECT_EQ(node.domain(), rotary_op);
    // ONNX Runtime's op reads (x, position_ids, cos, sin), ONNX's (x, cos, sin, position_ids).
    const std::string& cos = node.input(node.domain().empty() ? 1 : 2);
    EXPECT_EQ(initializer(model, cos), nullptr) << "cos cache " << cos << " is computed";
    if (cos_cache.empty()) cos_cache = cos;
    EXPECT_EQ(cos, cos_cache) << "Q and K share the caches";
  }
  expectSameInOrt(text, "", options);
}

TEST(RotaryEmbeddingComputedRuntimeRule, FusesWithCachesComputedWhenTheModelRuns) {
  // Without --max-positions the graph cannot say how many constant rows to build; the
  // caches are computed from the positions fed, Range(0, max(position_ids) + 1).
  expectRuntimeCaches(rotaryModel(computed()), 2, "com.microsoft");
}

TEST(RotaryEmbeddingComputedRuntimeRule, ScalesAndCastsTheCachesAsTheGraphDoes) {
  expectRuntimeCaches(rotaryModel(computed([](RotarySpec& s) {
                        s.scaling = "1.25";
                        s.cast_tables = true;
                        s.fp16 = true;
                      })),
                      2, "com.microsoft");
}

TEST(RotaryEmbeddingComputedRuntimeRule, TakesArangePositionsUpToTheRangesLimit) {
  // Both rotaries fuse: the caches end at the arange's limit, read from its Range, not from
  // the [1, S] positions the other rotary's match still holds.
  expectRuntimeCaches(rotaryModel(computed([](RotarySpec& s) { s.arange_step = "1"; })), 2,
                      "com.microsoft");
}

TEST(RotaryEmbeddingComputedRuntimeRule, FoldsPhisPartialRotary) {
  const std::string text = rotaryModel(computed([](RotarySpec& s) {
    s.rotary_dim = 4;
    s.halves = Halves::kSplit;
  }));
  onnx::ModelProto model;
  fuse(text, &model);
  ASSERT_EQ(countOps(model, "RotaryEmbedding"), 2);
  EXPECT_EQ(countOps(model, "Concat"), 0) << "the pass-through part folded in";
  for (const auto& node : model.graph().node())
    if (node.op_type() == "RotaryEmbedding") {
      ASSERT_NE(attribute(node, "rotary_embedding_dim"), nullptr);
      EXPECT_EQ(attribute(node, "rotary_embedding_dim")->i(), 4);
    }
  expectSameInOrt(text);
}

TEST(RotaryEmbeddingComputedRuntimeRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  expectRuntimeCaches(rotaryModel(computed([](RotarySpec& s) {
                        s.halves = Halves::kSplit;
                        s.opset = 23;
                      })),
                      2, "");
}

TEST(RotaryEmbeddingComputedRuntimeRule, GivesArangePositionsTheirOwnAnglesFromOpset23) {
  // ONNX's RotaryEmbedding takes position_ids [B, S] only; without them it reads [B, S, H/2]
  // caches: the arange's rows p0 .. pe - 1, expanded to the batch.
  const std::string text = rotaryModel(computed([](RotarySpec& s) {
    s.arange_step = "1";
    s.halves = Halves::kSplit;
    s.opset = 23;
  }));
  onnx::ModelProto model;
  fuse(text, &model);
  EXPECT_EQ(countOps(model, "RotaryEmbedding"), 2);
  EXPECT_EQ(countOps(model, "Range"), 1);
  for (const auto& node : model.graph().node())
    if (node.op_type() == "RotaryEmbedding") {
      EXPECT_EQ(node.input_size(), 3) << "no position_ids";
    }
  expectSameInOrt(text);
}

TEST(RotaryEmbeddingComputedRuntimeRule, DoesNotFuseSinOfOtherFrequencies) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) { s.sin_other_freq = true; })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingComputedRuntimeRule, DoesNotFuseAScalingOfCosAlone) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) {
                    s.scaling = "1.25";
                    s.scale_cos_only = true;
                  })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingComputedRule, ExplainSaysConstantCachesNeedMaxPositions) {
  struct Reasons : RewriteListener {
    std::vector<std::string> seen;
    bool wantsMatchFailures() const override { return true; }
    void onMatchFailure(const RewritePattern& rule, Graph&, NodeId,
                        const std::string& reason) override {
      if (rule.name() == "rotary_embedding_computed") seen.push_back(reason);
    }
  } reasons;
  Options o;
  o.listener = &reasons;
  fuse(rotaryModel(computed()), nullptr, nullptr, o);
  ASSERT_FALSE(reasons.seen.empty());
  EXPECT_NE(reasons.seen[0].find("constant caches need --max-positions"), std::string::npos)
      << reasons.seen[0];
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseInvFreqThatIsAGraphInput) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) { s.freq_input = true; })), kRotaryRules,
                  withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseSinOfOtherFrequencies) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) { s.sin_other_freq = true; })),
                  kRotaryRules, withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, RotatesByThePositionsTheAnglesComeFrom) {
  // The angles use pos2 (the Expand reads only pos's batch size): the RotaryEmbeddings
  // take pos2, the position ids cos and sin were computed from.
  onnx::ModelProto model;
  const std::string text = rotaryModel(computed([](RotarySpec& s) { s.freq_other_pos = true; }));
  EXPECT_EQ(fuse(text, &model, nullptr, withMaxPositions()), (Ops{kRotary[0], kRotary[0]}));
  EXPECT_EQ(model.graph().node(0).input(1), "pos2");
  expectSameInOrt(text, "", withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, DoesNotFuseTheWrongHalfNegated) {
  expectUnchanged(rotaryModel(computed([](RotarySpec& s) { s.neg_first_half = true; })),
                  kRotaryRules, withMaxPositions());
}

TEST(RotaryEmbeddingComputedRule, ComputesCachesOverOneGiBAtRunTimeInstead) {
  // 2^28 rows of 4 floats: 4 GiB per cache. The constant-cache rule gives up rather than
  // build it; the run-time caches take its place.
  expectRuntimeCaches(rotaryModel(computed()), 2, "com.microsoft",
                      withMaxPositions(int64_t{1} << 28));
}

TEST(RotaryEmbeddingComputedRule, RejectsANegativeMaxPositions) {
  onnx::ModelProto model = testing::parseModel(rotaryModel(computed()));
  Options o;
  o.max_positions = -1;
  EXPECT_THROW(rewrite(model, testing::shippedRules(), o), std::invalid_argument);
}

// ---- Interleaved (GPT-J's rotate_every_two) ------------------------------------------------

InterleavedRotarySpec gptj(void (*edit)(InterleavedRotarySpec&) = nullptr) {
  InterleavedRotarySpec s;
  if (edit) edit(s);
  return s;
}
using Flatten = InterleavedRotarySpec::Flatten;

TEST(RotaryEmbeddingInterleavedRule, FusesGptjHeadsAs3DWithInterleaved) {
  // GPT-J rotates [B, S, N, H] heads; ORT takes that layout as [B, S, N*H] with num_heads.
  onnx::ModelProto model;
  EXPECT_EQ(fuse(interleavedRotaryModel(gptj()), &model), (Ops{"Reshape", kRotary[0], "Reshape"}));
  const onnx::NodeProto& node = model.graph().node(1);
  ASSERT_NE(attribute(node, "interleaved"), nullptr);
  EXPECT_EQ(attribute(node, "interleaved")->i(), 1);
  ASSERT_NE(attribute(node, "num_heads"), nullptr);
  EXPECT_EQ(attribute(node, "num_heads")->i(), 2);
  const onnx::TensorProto* cos = initializer(model, node.input(2));
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->dims(1), 4) << "the even columns of the repeat_interleave'd cache";
  expectSameInOrt(interleavedRotaryModel(gptj()));
}

TEST(RotaryEmbeddingInterleavedRule, FusesTorchScriptFlatten) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.flatten = Flatten::kTorchScript;
    s.with_k = true;
  });
  EXPECT_EQ(fuse(interleavedRotaryModel(s)),
            (Ops{"Reshape", kRotary[0], "Reshape", "Reshape", kRotary[0], "Reshape"}));
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingInterleavedRule, FusesDynamoFlattenOpset18) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.flatten = Flatten::kDynamo;
    s.opset = 18;
    s.end = "8";
  });
  EXPECT_EQ(fuse(interleavedRotaryModel(s)), (Ops{"Reshape", kRotary[0], "Reshape"}));
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingInterleavedRule, FusesAConstantShapeNamingTheHeads) {
  auto s = gptj([](InterleavedRotarySpec& s) { s.flat_shape = "0, 0, 2, 8"; });
  EXPECT_EQ(fuse(interleavedRotaryModel(s)), (Ops{"Reshape", kRotary[0], "Reshape"}));
}

TEST(RotaryEmbeddingInterleavedRule, EmitsOnnxRotaryEmbeddingFromOpset23) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.flatten = Flatten::kDynamo;
    s.opset = 23;
  });
  EXPECT_EQ(fuse(interleavedRotaryModel(s)), (Ops{"Reshape", "RotaryEmbedding", "Reshape"}));
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingInterleavedRule, FusesBnshHeadsAs4D) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.bsnh = false;
    s.with_k = true;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(interleavedRotaryModel(s), &model), (Ops{kRotary[0], kRotary[0]}));
  EXPECT_EQ(attribute(model.graph().node(0), "interleaved")->i(), 1);
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FoldsGptjsPartialRotaryOfBsnhHeads) {
  // GPT-J rotates x[..., :rotary_dim] of its [B, S, N, H] heads and concatenates the rest.
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.rotary_dim = 4;
    s.with_k = true;
    s.flatten = Flatten::kTorchScript;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(interleavedRotaryModel(s), &model),
            (Ops{"Reshape", kRotary[0], "Reshape", "Reshape", kRotary[0], "Reshape"}));
  const onnx::NodeProto& node = model.graph().node(1);
  EXPECT_EQ(attribute(node, "interleaved")->i(), 1);
  EXPECT_EQ(attribute(node, "rotary_embedding_dim")->i(), 4);
  EXPECT_EQ(attribute(node, "num_heads")->i(), 2);
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FoldsGptjsPartialRotaryFromOpset23) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.rotary_dim = 4;
    s.flatten = Flatten::kDynamo;
    s.opset = 23;
  });
  EXPECT_EQ(fuse(interleavedRotaryModel(s)), (Ops{"Reshape", "RotaryEmbedding", "Reshape"}));
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingPartialRule, FoldsAnInterleavedPartialRotaryOfBnshHeads) {
  auto s = gptj([](InterleavedRotarySpec& s) {
    s.rotary_dim = 4;
    s.bsnh = false;
  });
  onnx::ModelProto model;
  EXPECT_EQ(fuse(interleavedRotaryModel(s), &model), kRotary);
  EXPECT_EQ(attribute(model.graph().node(0), "interleaved")->i(), 1);
  EXPECT_EQ(attribute(model.graph().node(0), "rotary_embedding_dim")->i(), 4);
  expectSameInOrt(interleavedRotaryModel(s));
}

TEST(RotaryEmbeddingInterleavedRule, DoesNotFuseCachesWithoutPairs) {
  expectUnchanged(
      interleavedRotaryModel(gptj([](InterleavedRotarySpec& s) { s.pairs_differ = true; })),
      kRotaryRules);
}

TEST(RotaryEmbeddingInterleavedRule, DoesNotFuseStackOfX1First) {
  expectUnchanged(
      interleavedRotaryModel(gptj([](InterleavedRotarySpec& s) { s.stack_x1_first = true; })),
      kRotaryRules);
}

TEST(RotaryEmbeddingInterleavedRule, DoesNotFuseTheEvenElementsTwice) {
  expectUnchanged(interleavedRotaryModel(gptj([](InterleavedRotarySpec& s) { s.odd_start = "0"; })),
                  kRotaryRules);
}

TEST(RotaryEmbeddingInterleavedRule, DoesNotFuseAShapeThatMovesDims) {
  // [B, S, N, H/2, 2] -> [0, 0, 1, -1] is [B, S, 1, N*H], not x's shape.
  expectUnchanged(
      interleavedRotaryModel(gptj([](InterleavedRotarySpec& s) { s.flat_shape = "0, 0, 1, -1"; })),
      kRotaryRules);
}

TEST(RotaryEmbeddingInterleavedRule, DoesNotFuseWithoutAStaticHeadCount) {
  expectUnchanged(interleavedRotaryModel(gptj([](InterleavedRotarySpec& s) { s.heads = "N"; })),
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
  // the inner rotary fuses. (That second Slice takes all of the 4-wide q[..., :4], which
  // slice_whole drops.)
  std::string text = rotaryModel(rope([](RotarySpec& s) { s.rotary_dim = 4; }));
  const std::string from = "qp = Slice(q, rotary_end, end,";
  text.replace(text.find(from), from.size(), "qp = Slice(qr, zero, end,");
  EXPECT_EQ(fuse(text), (Ops{"Slice", kRotary[0], "Concat"}));
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
