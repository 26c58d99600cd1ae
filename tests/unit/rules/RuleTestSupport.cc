//===- RuleTestSupport.cc - running the shipped rules in tests ------------===//
#include "tests/unit/rules/RuleTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

#include "compiler/diag/Diagnostics.h"
#include "dsl/RuleLoader.h"
#include "generated/registry.gen.h"
#include "runtime/interp/RuleInterpreter.h"
#include "tests/support/EmbedModels.h"
#include "tests/support/NormModels.h"
#include "tests/support/Oracle.h"
#include "tests/support/RotaryModels.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite::testing {

namespace {

RuleSet loadInterpreted() {
  // Repo-relative paths, as rulec was given them: rule sources and failure texts then name
  // "rules/x.yaml:L:C" in both modes.
  // Every .yaml and .td of rules/, in byte order of their names, as
  // compiler/rulec/regenerate.sh gives them to rulec.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(ONNX_REWRITE_RULES_DIR)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".td"))
      files.push_back("rules/" + entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) throw std::runtime_error("getcwd failed");
  if (::chdir(ONNX_REWRITE_SOURCE_DIR) != 0) throw std::runtime_error("cannot enter the source");
  DiagnosticEngine diag;
  ir::RuleFile file;
  const bool ok = loadRuleFiles(files, RuleLoadOptions{}, file, diag);
  if (::chdir(cwd) != 0) throw std::runtime_error("cannot return to " + std::string(cwd));
  if (!ok) throw std::runtime_error("the shipped rules do not load");
  return interpretRules(file);
}

}  // namespace

const RuleSet& shippedRules(RuleMode mode) {
  static const RuleSet interpreted = loadInterpreted();
  static const RuleSet compiled = [] {
    RuleSet rules;
    populateGeneratedRules(rules);
    return rules;
  }();
  return mode == RuleMode::kCompiled ? compiled : interpreted;
}

std::vector<std::pair<std::string, std::string>> normModelCases() {
  std::vector<std::pair<std::string, std::string>> out;
  auto ln = [&](const std::string& name, auto edit) {
    LayerNormSpec s;
    edit(s);
    out.emplace_back("layer_norm/" + name, layerNormModel(s));
  };
  using L = LayerNormSpec;
  ln("default", [](L&) {});
  ln("opset18", [](L& s) { s.opset = 18; });
  ln("opset13", [](L& s) { s.opset = 13; });
  ln("mul_reciprocal", [](L& s) { s.pow = false, s.div = false; });
  ln("eps_first", [](L& s) { s.eps_first = true, s.eps = "1e-12"; });
  ln("axes_2", [](L& s) { s.axes = "2"; });
  ln("no_bias", [](L& s) { s.bias = false; });
  ln("no_affine", [](L& s) { s.bias = false, s.scale = false; });
  ln("fp16", [](L& s) { s.fp16 = true; });
  ln("fp16_opset18", [](L& s) { s.fp16 = true, s.opset = 18; });
  ln("neg_exponent3", [](L& s) { s.exponent = "3.0"; });
  ln("neg_axes_1", [](L& s) { s.axes = "1"; });
  ln("neg_keepdims0", [](L& s) { s.keepdims = 0; });
  ln("neg_eps_input", [](L& s) { s.eps_is_input = true; });
  ln("neg_huge_eps", [](L& s) { s.eps = "0.5"; });
  ln("neg_leak_d", [](L& s) { s.leak_d = true; });
  ln("gamma_3d", [](L& s) { s.gamma_dims = "1, 1, 8"; });
  auto rms = [&](const std::string& name, auto edit) {
    RmsNormSpec s;
    edit(s);
    out.emplace_back("rms_norm/" + name, rmsNormModel(s));
  };
  using R = RmsNormSpec;
  rms("default", [](R&) {});
  rms("no_casts", [](R& s) { s.cast_in = false, s.cast_out = false; });
  rms("t5", [](R& s) { s.reciprocal = false, s.pow = false, s.weight_first = false; });
  rms("t5_no_cast_in",
      [](R& s) { s.reciprocal = false, s.pow = false, s.weight_first = false, s.cast_in = false; });
  rms("fp16", [](R& s) { s.fp16 = true; });
  rms("opset18", [](R& s) { s.opset = 18; });
  rms("opset23", [](R& s) { s.opset = 23; });
  rms("neg_exponent3", [](R& s) { s.exponent = "3.0"; });
  rms("neg_axes_1", [](R& s) { s.axes = "1"; });
  rms("neg_huge_eps", [](R& s) { s.eps = "0.5"; });
  auto skip = [&](const std::string& name, auto edit) {
    SkipLayerNormSpec s;
    edit(s);
    out.emplace_back("skip_layer_norm/" + name, skipLayerNormModel(s));
  };
  using S = SkipLayerNormSpec;
  skip("default", [](S&) {});
  skip("skip_first", [](S& s) { s.skip_first = true; });
  skip("bias_before", [](S& s) { s.bias = S::Bias::kBefore; });
  skip("bias_after", [](S& s) { s.bias = S::Bias::kAfter; });
  skip("sum_used", [](S& s) { s.sum_used_elsewhere = true, s.bias = S::Bias::kBefore; });
  skip("opset18", [](S& s) { s.opset = 18; });
  skip("a_from_node", [](S& s) { s.a_from_node = true; });
  skip("neg_skip_2d", [](S& s) { s.skip_dims = "S, 8"; });
  skip("bias_2d", [](S& s) { s.bias = S::Bias::kBefore, s.bias_dims = "1, 8"; });
  skip("simplified", [](S& s) { s.simplified = true; });
  skip("simplified_sum_used", [](S& s) { s.simplified = true, s.sum_used_elsewhere = true; });
  skip("simplified_opset23", [](S& s) { s.simplified = true, s.opset = 23; });
  auto rope = [&](const std::string& name, auto edit) {
    RotarySpec s;
    edit(s);
    out.emplace_back("rotary/" + name, rotaryModel(s));
  };
  using P = RotarySpec;
  rope("default", [](P&) {});
  rope("shape_bounds", [](P& s) { s.halves = P::Halves::kSliceShape; });
  rope("split_q_k", [](P& s) { s.halves = P::Halves::kSplit, s.with_k = true; });
  rope("cache_slice", [](P& s) { s.cache_slice = true; });
  rope("partial_opset23", [](P& s) { s.rotary_dim = 4, s.opset = 23; });
  rope("neg_halves_differ", [](P& s) { s.halves_differ = true; });
  rope("neg_first_half", [](P& s) { s.neg_first_half = true; });
  rope("neg_step", [](P& s) { s.slice_step = "2"; });
  rope("3d", [](P& s) { s.three_d = true; });
  rope("3d_split", [](P& s) { s.three_d = true, s.halves = P::Halves::kSplit, s.opset = 18; });
  rope("computed", [](P& s) { s.computed = true, s.with_k = true; });
  auto gptj = [&](const std::string& name, auto edit) {
    InterleavedRotarySpec s;
    edit(s);
    out.emplace_back("rotary_interleaved/" + name, interleavedRotaryModel(s));
  };
  using I = InterleavedRotarySpec;
  gptj("bsnh", [](I&) {});
  gptj("bsnh_torchscript", [](I& s) { s.flatten = I::Flatten::kTorchScript; });
  gptj("bnsh_dynamo", [](I& s) { s.bsnh = false, s.flatten = I::Flatten::kDynamo, s.opset = 18; });
  gptj("neg_pairs_differ", [](I& s) { s.pairs_differ = true; });
  auto embed = [&](const std::string& name, auto edit) {
    EmbedSpec s;
    edit(s);
    out.emplace_back("embed_layer_norm/" + name, embedModel(s));
  };
  using E = EmbedSpec;
  embed("bert_slice", [](E&) {});
  embed("range_opset11", [](E& s) { s.opset = 11, s.positions = E::Positions::kRange; });
  embed("nonzero", [](E& s) { s.opset = 11, s.positions = E::Positions::kNonZero; });
  embed("distilbert_opset17", [](E& s) { s.segment = false, s.opset = 17; });
  embed("position_input", [](E& s) { s.positions = E::Positions::kInput; });
  embed("folded", [](E& s) { s.positions = E::Positions::kFolded; });
  embed("neg_ln_axis", [](E& s) { s.ln_op = true, s.ln_axis = 1; });
  return out;
}

std::vector<std::string> fuse(const std::string& text, onnx::ModelProto* out, Result* result,
                              const Options& options) {
  onnx::ModelProto model = parseModel(text);
  Result r = rewrite(model, shippedRules(), options);
  if (result) *result = r;
  std::vector<std::string> ops = opTypes(model);
  if (out) *out = std::move(model);
  return ops;
}

void expectUnchanged(const std::string& text, const std::string& only, const Options& given) {
  onnx::ModelProto model = parseModel(text);
  const std::string before = serialize(model);
  Options options = given;
  options.filter.only = only;
  Result r = rewrite(model, shippedRules(), options);
  EXPECT_EQ(r.stats.rewrites, 0u) << r.toJson();
  EXPECT_EQ(serialize(model), before);
}

void expectSameInOrt(const std::string& text, const std::string& tolerance,
                     const Options& options) {
  onnx::ModelProto before = parseModel(text);
  onnx::ModelProto after = before;
  Result r = rewrite(after, shippedRules(), options);
  ASSERT_GT(r.stats.rewrites, 0u) << "nothing was fused";
  OracleVerdict verdict = compareInOrt(before, after, {"B=2", "S=5"}, tolerance);
  EXPECT_TRUE(verdict.equal) << verdict.report;
}

}  // namespace onnx_rewrite::testing
