//===- CliTest.cc - the onnx-rewrite command as a user meets it ----------===//
//
// Runs the real binary. For every mistake a user can make: the exact message,
// the exit status (1: the model or a file, 2: usage), and no output file left
// behind. For the happy path: the output, the report and an untouched input.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include <regex>
#include <set>

#include "tests/support/AttentionModels.h"
#include "tests/support/GeluModels.h"
#include "tests/support/NormModels.h"
#include "tests/support/RotaryModels.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite {
namespace {

using testing::CommandResult;
using testing::GeluForm;
using testing::geluModel;
using testing::listFolder;
using testing::parseModel;
using testing::readFile;
using testing::runCommand;
using testing::shellQuote;
using testing::TempDir;
using testing::writeFile;
using testing::writeModel;

CommandResult cli(const std::string& args) {
  return runCommand(shellQuote(ONNX_REWRITE_CLI) + " " + args);
}

/// A folder holding in.onnx, a model with two Gelus (one with a bias).
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    onnx::ModelProto model =
        parseModel(geluModel(GeluForm::kTorchScript, 17, "0.5", "1.0", "1.4142135", true));
    in_ = dir_.file("in.onnx");
    out_ = dir_.file("out.onnx");
    writeModel(in_, model);
  }
  /// The folder holds nothing but the input: no output, no temporary file.
  void expectNoOutput() { EXPECT_EQ(listFolder(dir_.path()), std::vector<std::string>{"in.onnx"}); }

  TempDir dir_;
  std::string in_, out_;
};

TEST_F(CliTest, RewritesAndReportsWhatItDid) {
  const std::string input_bytes = readFile(in_);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The rules tried, in columns as wide as the longest name, highest priority first.
  std::smatch m;
  const auto line = [&](const std::string& rule) {
    const std::regex re("\n  " + rule + " +applied      1  \\(matched 1, tried ");
    return std::regex_search(r.err, m, re) ? static_cast<size_t>(m.position(0)) : std::string::npos;
  };
  const size_t gelu = line("gelu_erf"), bias = line("bias_gelu/com\\.microsoft::Gelu");
  EXPECT_NE(gelu, std::string::npos) << r.err;
  EXPECT_NE(bias, std::string::npos) << r.err;
  EXPECT_LT(gelu, bias) << "gelu_erf (50) is listed before bias_gelu (40)";
  EXPECT_NE(r.err.find("nodes 6 -> 1, 2 rewrites in 2 sweep(s), converged"), std::string::npos)
      << r.err;
  EXPECT_EQ(readFile(in_), input_bytes) << "the input is never modified";
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), std::vector<std::string>{"com.microsoft::BiasGelu"});
  EXPECT_EQ(listFolder(dir_.path()), (std::vector<std::string>{"in.onnx", "out.onnx"}));
}

TEST_F(CliTest, WritesStatisticsAsJsonToStdout) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --stats - --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "--quiet prints nothing but errors";
  EXPECT_EQ(r.out.rfind("{\n  \"converged\": true,\n  \"iterations\": 2,\n  \"rewrites\": 2,", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("{\"name\": \"gelu_erf\", \"priority\": 50, \"tried\": "),
            std::string::npos);
}

TEST_F(CliTest, ProgressWritesALinePerPhaseIntoALogEvenWhenQuiet) {
  // stderr is a pipe here, not a terminal: --progress writes lines, not a status line.
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --progress -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex line(R"(onnx-rewrite: \[\d+\.\d s\] ([a-z ]+)\n)");
  std::vector<std::string> phases;
  std::string rest = r.err;
  for (std::smatch m; std::regex_search(rest, m, line); rest = m.suffix()) {
    EXPECT_EQ(m.position(0), 0) << "only progress lines: " << r.err;
    phases.push_back(m[1]);
  }
  EXPECT_EQ(rest, "");
  EXPECT_EQ(phases, (std::vector<std::string>{"load", "shape inference", "import", "rewrite",
                                              "export", "save"}));
}

TEST_F(CliTest, ShowsNoProgressOutsideATerminalUnlessAsked) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("onnx-rewrite: ["), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no status line: " << r.err;
  r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --progress --no-progress -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "the last of --progress and --no-progress counts";
}

TEST_F(CliTest, WritesStatisticsToAFile) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) +
                        " --stats=" + shellQuote(dir_.file("stats.json")) + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(readFile(dir_.file("stats.json")).find("\"rewrites\": 2"), std::string::npos);
}

TEST_F(CliTest, OnlyAndSkipChooseRules) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --skip bias --stats -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), (std::vector<std::string>{"Add", "com.microsoft::Gelu"}));
}

TEST_F(CliTest, EnableTurnsOnAnOptInRule) {
  // gelu_approximation (tag opt_in) is off by default; --enable approximation takes the
  // BiasGelu the default rules make on to FastGelu.
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " -q --enable approximation");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), std::vector<std::string>{"com.microsoft::FastGelu"});
  r = cli("--list-rules --only approximation");
  EXPECT_NE(r.out.find("opt_in"), std::string::npos) << "listed with its tag: " << r.out;
}

TEST_F(CliTest, ListsAndDocumentsTheMaskIndexOptIn) {
  // BERT's padding mask as Attention's mask_index assumes a 0/1 attention_mask: opt-in.
  CommandResult r = cli("--list-rules --only mask_index");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("packed_attention_mask_index"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("opt_in"), std::string::npos) << "listed with its tag: " << r.out;
  r = cli("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--enable mask_index"), std::string::npos) << r.out;
}

TEST_F(CliTest, BadEnablePattern) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --enable '['");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("onnx-rewrite: error: bad --enable pattern '[': ", 0), 0u) << r.err;
  expectNoOutput();
}

TEST_F(CliTest, ListsRules) {
  CommandResult r = cli("--list-rules");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gelu_erf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("root com.microsoft::Gelu"), std::string::npos) << r.out;
  r = cli("--list-rules --only '^bias'");
  EXPECT_EQ(r.out.find("gelu_erf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bias_gelu"), std::string::npos) << r.out;
}

TEST_F(CliTest, ReportsACapThatStoppedTheRun) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --max-rewrites 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("NOT converged"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: max-rewrites (1) reached in main; more rewrites may apply"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, InPlaceRewritesTheInput) {
  CommandResult r = cli(shellQuote(in_) + " --in-place -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(in_)));
  EXPECT_EQ(out.graph().node_size(), 1);
  expectNoOutput();
}

// ---- Every user error: message, status, nothing written --------------------------------

TEST_F(CliTest, MissingInput) {
  const std::string missing = dir_.file("missing.onnx");
  CommandResult r = cli(shellQuote(missing) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + missing + ": No such file or directory\n");
  expectNoOutput();
}

TEST_F(CliTest, InputIsAFolder) {
  CommandResult r = cli(shellQuote(dir_.path()) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + dir_.path() + ": is a folder, not a model file\n");
  expectNoOutput();
}

TEST_F(CliTest, InputIsNotAProtobuf) {
  writeFile(in_, "this is not a model\n");
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + in_ +
                       ": not an ONNX model: the protobuf does not parse (truncated or another "
                       "format)\n");
  expectNoOutput();
}

TEST_F(CliTest, InputIsTruncated) {
  const std::string bytes = readFile(in_);
  writeFile(in_, bytes.substr(0, bytes.size() / 2));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(in_ + ": not an ONNX model"), std::string::npos) << r.err;
  expectNoOutput();
}

TEST_F(CliTest, InputIsEmpty) {
  writeFile(in_, "");
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + in_ +
                       ": not an ONNX model: ir_version or graph is missing (truncated or another "
                       "format)\n");
  expectNoOutput();
}

TEST_F(CliTest, ExternalDataFileIsMissing) {
  onnx::ModelProto model = parseModel(geluModel(GeluForm::kTorchScript));
  onnx::TensorProto& half = *model.mutable_graph()->mutable_initializer(0);
  half.clear_float_data();
  half.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = half.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  writeModel(in_, model);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + in_ + ": external data file '" + dir_.path() +
                       "/weights.bin' of tensor 'half': No such file or directory\n");
  expectNoOutput();
}

TEST_F(CliTest, OutputFolderIsMissing) {
  const std::string out = dir_.file("nowhere/out.onnx");
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + out + ": output folder '" + dir_.file("nowhere") +
                       "': No such file or directory\n");
  expectNoOutput();
}

TEST_F(CliTest, OutputFolderIsNotWritable) {
  // /proc refuses new files even to root, unlike a chmod-ed folder.
  CommandResult r = cli(shellQuote(in_) + " -o /proc/out.onnx");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("onnx-rewrite: error: /proc/out.onnx: cannot write to output folder "
                        "'/proc': ",
                        0),
            0u)
      << r.err;
  expectNoOutput();
}

TEST_F(CliTest, OutputIsTheInputWithoutInPlace) {
  const std::string input_bytes = readFile(in_);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(in_));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: output '" + in_ +
                       "' is the input; pass --in-place to overwrite it (see --help)\n");
  EXPECT_EQ(readFile(in_), input_bytes);
  expectNoOutput();
}

TEST_F(CliTest, BadRegex) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --only '('");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: bad --only pattern '(': missing ): ( (see --help)\n");
  expectNoOutput();
}

TEST_F(CliTest, UnknownOption) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: unknown option '--frobnicate' (see --help)\n");
  expectNoOutput();
}

TEST_F(CliTest, MissingOutput) {
  CommandResult r = cli(shellQuote(in_));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "onnx-rewrite: error: no output given: pass -o OUT.onnx (or --in-place) (see --help)\n");
  expectNoOutput();
}

TEST_F(CliTest, BadNumber) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --max-iterations 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "onnx-rewrite: error: --max-iterations needs a whole number >= 1, not '0' (see "
            "--help)\n");
  expectNoOutput();
}

TEST_F(CliTest, BadMaxPositions) {
  for (const char* bad : {"0", "-3", "16k", ""}) {
    CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --max-positions=" + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err, std::string("onnx-rewrite: error: --max-positions needs a whole number >= 1, "
                                 "not '") +
                         bad + "' (see --help)\n");
    expectNoOutput();
  }
}

TEST_F(CliTest, BadMaxInferenceRounds) {
  for (const char* bad : {"0", "-1", "two"}) {
    CommandResult r =
        cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --max-inference-rounds " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err, std::string("onnx-rewrite: error: --max-inference-rounds needs a whole "
                                 "number >= 1, not '") +
                         bad + "' (see --help)\n");
    expectNoOutput();
  }
}

TEST_F(CliTest, MaxInferenceRoundsIsReportedInTheStats) {
  CommandResult r =
      cli(shellQuote(in_) + " -o " + shellQuote(out_) + " -q --max-inference-rounds 1 --stats -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"inference_rounds\": 1"), std::string::npos) << r.out;
}

TEST_F(CliTest, OptionWithoutValue) {
  CommandResult r = cli(shellQuote(in_) + " -o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: -o needs a value (see --help)\n");
  expectNoOutput();
}

// ---- Rule files (--rules) and --explain ---------------------------------------------------

std::string rulesPath(const std::string& name) { return testing::sourcePath("rules/" + name); }

TEST_F(CliTest, RunsRuleFilesGivenWithRules) {
  writeModel(in_, parseModel(testing::layerNormModel({})));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --rules " +
                        shellQuote(rulesPath("layer_norm.yaml")) + " " +
                        shellQuote(rulesPath("com_microsoft.yaml")) + " -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), std::vector<std::string>{"LayerNormalization"});
}

TEST_F(CliTest, ReportsRuleFileErrorsLikeRulec) {
  const std::string bad = dir_.file("bad.yaml");
  writeFile(
      bad,
      "rules:\n  - rule: r\n    match: |\n      y = Relu(x\n    rewrite: |\n      y = Abs(x)\n");
  CommandResult r =
      cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --rules " + shellQuote(bad));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error: expected ')'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("onnx-rewrite: error: the rule files have 1 error(s), reported above"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(listFolder(dir_.path()), (std::vector<std::string>{"bad.yaml", "in.onnx"}));
}

TEST_F(CliTest, ExplainsWhyARuleDidNotApply) {
  testing::LayerNormSpec spec;
  spec.keepdims = 0;
  writeModel(in_, parseModel(testing::layerNormModel(spec)));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --explain layer_norm -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("explain: layer_norm at Add (output 'y') in main: "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rules/layer_norm.yaml:"), std::string::npos) << "names the rule file";
  EXPECT_NE(r.err.find("ReduceMean: attribute keepdims is 0, expected 1"), std::string::npos)
      << r.err;
}

/// A near miss per shipped rule family: the reason --explain gives, identical whether the
/// rule runs compiled (built in) or interpreted (--rules).
struct NearMiss {
  const char* rule;
  std::string model;
  const char* reason;
};

TEST_F(CliTest, ExplainsANearMissOfEachRuleFamilyTheSameCompiledAndInterpreted) {
  testing::LayerNormSpec ln;
  ln.keepdims = 0;
  testing::RmsNormSpec rms;
  rms.exponent = "3.0";
  testing::SkipLayerNormSpec skip;
  skip.skip_dims = "S, 8";
  testing::RotarySpec rotary;
  rotary.neg_first_half = true;
  testing::AttentionSpec attention;
  attention.out_perm = "0, 1, 2, 3";
  // Locations are written L:C: rules move as they grow; the piece each points at does not.
  const NearMiss cases[] = {
      {"layer_norm", testing::layerNormModel(ln),
       "rules/layer_norm.yaml:L:C (in layer_norm_core at rules/layer_norm.yaml:L:C): "
       "ReduceMean: attribute keepdims is 0, expected 1"},
      {"simplified_layer_norm", testing::rmsNormModel(rms),
       "rules/rms_norm.td:L:C: constant 2.0: 'two' is 3.0, expected 2.0"},
      {"skip_layer_norm", testing::skipLayerNormModel(skip),
       "rules/skip_layer_norm.yaml:L:C (in residual_norm at rules/skip_layer_norm.yaml:L:C): "
       "same_shape(skip, a): does not hold"},
      {"gelu_erf", testing::geluModel(testing::GeluForm::kTorchScript, 17, "0.5", "1.0", "1.5"),
       "rules/gelu.yaml:L:C: sqrt2: 'sqrt2' is 1.5, expected 1.4142135"},
      {"rotary_embedding", testing::rotaryModel(rotary),
       "rules/rotary.yaml:L:C (in rotate_half at rules/rotary.yaml:L:C): constant 0: "
       "'half' is 4, expected 0"},
      {"multi_head_attention", testing::attentionModel(attention),
       "rules/attention.yaml:L:C (in merged at rules/attention.yaml:L:C) (in sdpa at "
       "rules/attention.yaml:L:C): Transpose: attribute perm is [0, 1, 2, 3], expected [0, 2, 1, "
       "3]"},
  };

  for (const NearMiss& c : cases) {
    writeModel(in_, parseModel(c.model));
    // Rule sources are reported relative to the source tree, as rulec was run there.
    const std::string cd = "cd " + shellQuote(testing::sourcePath("")) + " && ";
    const std::string args =
        shellQuote(in_) + " -o " + shellQuote(out_) + " -q --explain " + c.rule;
    CommandResult compiled = runCommand(cd + shellQuote(ONNX_REWRITE_CLI) + " " + args);
    CommandResult interp = runCommand(cd + shellQuote(ONNX_REWRITE_CLI) + " " + args +
                                      " --rules rules/com_microsoft.yaml rules/attention.yaml "
                                      "rules/canonicalize.yaml rules/gelu.yaml "
                                      "rules/layer_norm.yaml rules/rms_norm.td "
                                      "rules/rotary.yaml rules/skip_layer_norm.yaml");
    ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
    ASSERT_EQ(interp.exit_code, 0) << interp.err;
    const std::string located =
        std::regex_replace(compiled.err, std::regex(":[0-9]+:[0-9]+"), ":L:C");
    EXPECT_NE(located.find(c.reason), std::string::npos) << c.rule << "\n" << compiled.err;
    EXPECT_EQ(compiled.err, interp.err) << c.rule;
  }
}

/// LLaMA's rotary with cos/sin computed per forward pass from inv_freq and position_ids.
std::string computedRotaryModel() {
  testing::RotarySpec s;
  s.computed = true;
  s.with_k = true;
  return testing::rotaryModel(s);
}

TEST_F(CliTest, ExplainSaysConstantRotaryCachesNeedMaxPositions) {
  // The rotaries fuse anyway (caches computed at run time): --explain-all shows the attempt
  // of the constant-cache rule at nodes fused later.
  writeModel(in_, parseModel(computedRotaryModel()));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) +
                        " -q --explain rotary_embedding_computed --explain-all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("explain: rotary_embedding_computed at Add"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("constant caches need --max-positions N"), std::string::npos) << r.err;
}

/// The command's output for the computed-rotary model and `flags`; empty if it failed.
class ComputedRotaryCliTest : public CliTest {
 protected:
  onnx::ModelProto rewritten(const std::string& flags) {
    writeModel(in_, parseModel(computedRotaryModel()));
    CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " -q" + flags);
    onnx::ModelProto out;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.exit_code == 0 && out.ParseFromString(readFile(out_)));
    return out;
  }
};

TEST_F(ComputedRotaryCliTest, WithoutMaxPositionsCachesAreComputedWhenTheModelRuns) {
  const onnx::ModelProto out = rewritten("");
  const std::vector<std::string> ops = testing::opTypes(out);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "com.microsoft::RotaryEmbedding"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Range"), 1);
  std::set<std::string> initializers;
  for (const auto& t : out.graph().initializer()) initializers.insert(t.name());
  for (const auto& n : out.graph().node()) {
    if (n.op_type() != "RotaryEmbedding") continue;
    EXPECT_EQ(initializers.count(n.input(2)), 0u) << n.input(2) << ": a computed cos cache";
  }
}

TEST_F(ComputedRotaryCliTest, MaxPositionsMakesTheCachesConstants) {
  EXPECT_EQ(testing::opTypes(rewritten(" --max-positions 16")),
            (std::vector<std::string>{"com.microsoft::RotaryEmbedding",
                                      "com.microsoft::RotaryEmbedding"}));
}

TEST_F(CliTest, ExplainOfAnUnknownRuleIsAUsageError) {
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --explain no_such_rule");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: --explain: no rule named 'no_such_rule' (see --help)\n");
  expectNoOutput();
}

// ---- Values defined twice, as ONNX Runtime reads them ---------------------------------

/// A Gelu whose 0.5 a script patched in by appending a second Constant of the same name,
/// as in ONNX Runtime's gpt2_past test model: ONNX Runtime reads the last one everywhere.
const char* kPatchedGelu = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  patched (float[N, 4] x) => (float[N, 4] y) <float one = {1.0}, float sqrt2 = {1.4142135}> {
    half = Constant <value = float {0.25}> ()
    s = Div (x, sqrt2)
    e = Erf (s)
    p = Add (e, one)
    m = Mul (x, p)
    y = Mul (m, half)
    half = Constant <value = float {0.5}> ()
  }
)";

const char* kPatchedGeluNote =
    "main: value 'half' is defined 2 times (node #1 (Constant), node #7 (Constant)) with "
    "different values, of which ONNX Runtime reads the last everywhere: kept the last, dropped "
    "the others";

TEST_F(CliTest, ReadsAValueDefinedTwiceAsOnnxRuntimeDoesAndSaysSo) {
  writeModel(in_, parseModel(kPatchedGelu));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\n  note: " + std::string(kPatchedGeluNote) + "\n"), std::string::npos)
      << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), std::vector<std::string>{"com.microsoft::Gelu"})
      << "with the last Constant, 0.5, the pattern is a Gelu";

  r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --quiet --stats -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "--quiet prints nothing but errors";
  EXPECT_NE(r.out.find("\"notes\": [\"" + std::string(kPatchedGeluNote) + "\"]"), std::string::npos)
      << r.out;
}

TEST_F(CliTest, AnAmbiguousValueDefinedTwiceIsAOneLineErrorAndNoOutput) {
  writeModel(in_, parseModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    between (float[2] x) => (float[2] y) {
      s = Neg (x)
      y = Add (x, s)
      s = Abs (x)
    }
  )"));
  const std::string input_bytes = readFile(in_);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + in_ +
                       ": main: value 's' is defined 2 times (node #1 (Neg), node #3 (Abs)) and "
                       "node #2 (Add) reads it before the last definition, so which one it reads "
                       "is ambiguous (ONNX Runtime refuses such a model too)\n");
  expectNoOutput();
  EXPECT_EQ(readFile(in_), input_bytes);
}

// ---- Opset imports ONNX Runtime accepts ----------------------------------------------

TEST_F(CliTest, AModelWithoutAnOnnxImportIsReadAtTheNewestOpsetWithANote) {
  onnx::ModelProto model = parseModel(geluModel(GeluForm::kTorchScript));
  model.mutable_opset_import(0)->set_domain("com.microsoft");
  model.mutable_opset_import(0)->set_version(1);
  writeModel(in_, model);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\n  note: the model imports no ai.onnx opset; read at opset 24, the "
                       "newest onnx-rewrite knows, as ONNX Runtime reads it at its newest\n"),
            std::string::npos)
      << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  ASSERT_EQ(out.opset_import_size(), 1) << "ONNX Runtime keeps choosing the opset";
  EXPECT_EQ(out.opset_import(0).domain(), "com.microsoft");
}

// A Gelu whose Erf sits in a local function, as dynamo's torchlib functions hold it.
const char* kGeluAcrossAFunction = R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,4] x) => (float[2,4] y) {
  s = Div(x, c)
  c = Constant<value = float {1.4142135}>()
  e = local.aten_erf(s)
  one = Constant<value = float {1.0}>()
  p = Add(e, one)
  xp = Mul(x, p)
  half = Constant<value = float {0.5}>()
  y = Mul(xp, half)
}
<domain: "local", opset_import: ["" : 17]>
aten_erf (self) => (result) {
  result = Erf(self)
}
)";

TEST_F(CliTest, InlinesLocalFunctionCallsAndSaysSo) {
  writeModel(in_, parseModel(kGeluAcrossAFunction));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\n  note: inlined 1 call(s) of local functions; 1 function(s) no longer "
                       "called were dropped\n"),
            std::string::npos)
      << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(testing::opTypes(out), std::vector<std::string>{"com.microsoft::Gelu"});
  EXPECT_EQ(out.functions_size(), 0);
}

TEST_F(CliTest, KeepFunctionsLeavesTheCallsAndTheirFunctions) {
  writeModel(in_, parseModel(kGeluAcrossAFunction));
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_) + " --keep-functions");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("inlined"), std::string::npos) << r.err;
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(readFile(out_)));
  EXPECT_EQ(out.functions_size(), 1);
  EXPECT_EQ(out.graph().node_size(), 8);
}

TEST_F(CliTest, AModelImportingNoOpsetAtAllIsRefusedAsOnnxRuntimeDoes) {
  onnx::ModelProto model = parseModel(geluModel(GeluForm::kTorchScript));
  model.clear_opset_import();
  writeModel(in_, model);
  CommandResult r = cli(shellQuote(in_) + " -o " + shellQuote(out_));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "onnx-rewrite: error: " + in_ + ": not an ONNX model: it imports no opset\n");
  expectNoOutput();
}

TEST_F(CliTest, ExplainAllAlsoPrintsTheAttemptsAtNodesFusedLater) {
  CommandResult r = cli(shellQuote(in_) + " --explain gelu_erf --explain-all -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("explain: gelu_erf at "), 0u) << r.err;
  CommandResult alone = cli(shellQuote(in_) + " --explain-all -q -o " + shellQuote(out_));
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err, "onnx-rewrite: error: --explain-all needs --explain RULE (see --help)\n");
}

TEST_F(CliTest, ExplainOfAnUnknownRuleWithoutOutputIsAUsageError) {
  CommandResult r = cli(shellQuote(in_) + " --explain no_such_rule");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: --explain: no rule named 'no_such_rule' (see --help)\n");
  expectNoOutput();
}

TEST_F(CliTest, ExplainWithoutOutputReportsAndWritesNothing) {
  CommandResult r = cli(shellQuote(in_) + " --explain gelu_erf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The rule fused both Gelus: the attempts that failed before are not worth a line.
  EXPECT_EQ(r.err.find("onnx-rewrite: " + in_ + " (nothing written: --explain without -o)\n"), 0u)
      << r.err;
  EXPECT_NE(r.err.find("2 rewrites in 2 sweep(s), converged"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(", save "), std::string::npos) << r.err;
  expectNoOutput();
}

TEST_F(CliTest, ExplainNamesTheValueARefusedRewriteWouldChange) {
  // fused_matmul_input_scale would drop Mul(x, c) that made a scalar x a vector [1].
  writeModel(in_, parseModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float x, float[1,4] b) => (float[4] y) {
  c = Constant <value = float[1] {2.0}> ()
  s = Mul(x, c)
  y = MatMul(s, b)
}
)"));
  CommandResult r = cli(shellQuote(in_) + " -q --explain fused_matmul_input_scale");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "explain: fused_matmul_input_scale at MatMul (output 'y') in main: the rewrite would "
            "create "
            "com.microsoft::FusedMatMul 'fused_matmul_input_scale' over (float[], float[1,4]), "
            "which its shape inference rejects: Input tensors of wrong rank (0).\n");
  expectNoOutput();
}

/// relu_to_abs for opset 13 and later, as a rule file in `dir`.
std::string opset13RuleFile(const TempDir& dir) {
  const std::string path = dir.file("relu_to_abs.yaml");
  writeFile(path,
            "rules:\n  - rule: relu_to_abs\n    requires: { opset: \">=13\" }\n    match: |\n"
            "      y = Relu(x)\n    rewrite: |\n      y = Abs(x)\n");
  return path;
}

TEST_F(CliTest, ExplainSaysARuleNeverRanOutsideItsOpsetRange) {
  writeModel(in_, parseModel(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2] x) => (float[2] y) {
  y = Relu(x)
}
)"));
  const std::string rules = opset13RuleFile(dir_);
  CommandResult r =
      cli(shellQuote(in_) + " -q --rules " + shellQuote(rules) + " --explain relu_to_abs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "explain: relu_to_abs did not run: it requires ai.onnx >= 13, the model imports "
            "ai.onnx 11\n");
}

TEST_F(CliTest, ExplainSaysARuleNeverRanWithoutANodeOfItsRootOp) {
  const std::string rules = opset13RuleFile(dir_);
  CommandResult r =
      cli(shellQuote(in_) + " -q --rules " + shellQuote(rules) + " --explain relu_to_abs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "explain: relu_to_abs did not run: main has no Relu node (the op its match is rooted "
            "at)\n");
}

TEST_F(CliTest, ExplainSaysOnlyOrSkipDroppedTheRule) {
  CommandResult skip = cli(shellQuote(in_) + " -q --explain bias_gelu --skip gelu");
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(skip.err, "explain: bias_gelu did not run: --skip 'gelu' matches its name\n");
  CommandResult only = cli(shellQuote(in_) + " -q --explain bias_gelu --only norm");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(only.err,
            "explain: bias_gelu did not run: --only 'norm' matches neither its name nor its tags "
            "(ort)\n");
  CommandResult tag = cli(shellQuote(in_) + " -q --explain bias_gelu --skip '^ort$'");
  EXPECT_EQ(tag.err, "explain: bias_gelu did not run: --skip '^ort$' matches its tag 'ort'\n");
  expectNoOutput();
}

TEST_F(CliTest, HelpDescribesUsageAndExitStatus) {
  CommandResult r = cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: onnx-rewrite IN.onnx -o OUT.onnx [options]", 0), 0u);
  EXPECT_NE(r.out.find("exit status: 0 done, 1 the model"), std::string::npos);
}

// ---- onnx-rewrite test: rule tests as data --------------------------------------------------

/// A rule test file for the shipped canonicalize.yaml with one case: `body` after its name.
std::string ruleTestFile(const std::string& body) {
  return "rules: [" + rulesPath("canonicalize.yaml") +
         "]\n"
         "cases:\n"
         "  - name: identity\n"
         "    model: |\n"
         "      <ir_version: 8, opset_import: [\"\" : 17]>\n"
         "      g (float[2] x) => (float[2] y) {\n"
         "        a = Relu(x)\n"
         "        b = Identity(a)\n"
         "        y = Neg(b)\n"
         "      }\n" +
         body;
}

TEST_F(CliTest, RuleTestsPassAndSayHowMany) {
  const std::string file = dir_.file("canon.test.yaml");
  writeFile(file, ruleTestFile("    ops: [Relu, Neg]\n    counts: { Identity: 0 }\n"));
  CommandResult r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "[       OK ] " + file + ": identity\n1 case(s): 1 passed, 0 failed\n");
}

TEST_F(CliTest, ARuleTestWithAWrongCountFailsShowingWhatDiffered) {
  const std::string file = dir_.file("canon.test.yaml");
  writeFile(file, ruleTestFile("    counts: { Relu: 2 }\n"));
  CommandResult r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "[  FAILED  ] " + file +
                       ":3:5: identity\n"
                       "      count of Relu: expected 2, got 1 (ops after: [Relu, Neg])\n"
                       "1 case(s): 0 passed, 1 failed\n");
}

TEST_F(CliTest, ARuleTestCountsTheRewritesOfARule) {
  const std::string file = dir_.file("canon.test.yaml");
  writeFile(file, ruleTestFile("    applied: { identity: 1 }\n"));
  CommandResult r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  writeFile(file, ruleTestFile("    applied: { identity: 2, add_zero: 0 }\n"));
  r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "[  FAILED  ] " + file +
                       ":3:5: identity\n"
                       "      rewrites by identity: expected 2, got 1\n"
                       "1 case(s): 0 passed, 1 failed\n");
  // Rules split by root op count together; a name no rule has is a broken file.
  writeFile(file, ruleTestFile("    applied: { scalar_of_constants: 0, no_such_rule: 1 }\n"));
  r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("[  ERROR   ] " + file +
                       ":11:40: applied: no rule named 'no_such_rule' in the rules tested"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, ABrokenRuleTestFileIsAnErrorNamingWhere) {
  const std::string file = dir_.file("broken.test.yaml");
  writeFile(file, "rules: [x.yaml]\n");
  CommandResult r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "[  ERROR   ] " + file +
                       ": a rule test file is a mapping with rules: and cases:\n"
                       "0 case(s): 0 passed, 0 failed; 1 test file(s) could not run\n");
  writeFile(file, ruleTestFile("    ops: [Relu]\n")
                      .replace(ruleTestFile("").find("y = Neg(b)"), 10, "y = Neg(b"));
  r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("[  ERROR   ] " + file + ":4:12: the model does not parse: "),
            std::string::npos)
      << r.out;
  // ONNX's parser throws on a float it cannot read: the same error, not an exception's name.
  std::string inf = ruleTestFile("    ops: [Relu]\n");
  inf.replace(inf.find("g (float[2] x) => (float[2] y) {"), 32,
              "g (float[2] x) => (float[2] y) <float n = {-inf}> {");
  writeFile(file, inf);
  r = cli("test " + shellQuote(file));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("[  ERROR   ] " + file +
                       ":4:12: the model does not parse: a number it cannot read ("),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("inf and nan are not literals)"), std::string::npos) << r.out;
  r = cli("test");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "onnx-rewrite: error: test: no rule test files given (see --help)\n");
}

// runtime/cli/Allocator.cc sets the option before mimalloc starts; MIMALLOC_VERBOSE makes
// mimalloc print the options it runs with.
TEST(CliAllocatorTest, AsksMimallocForLargePagesUnlessTheEnvironmentSaysOtherwise) {
#if ONNX_REWRITE_WITH_MIMALLOC
  const std::string command = shellQuote(ONNX_REWRITE_CLI) + " --version";
  CommandResult r = runCommand("MIMALLOC_VERBOSE=1 " + command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("option 'large_os_pages': 1"), std::string::npos) << r.err;
  r = runCommand("MIMALLOC_VERBOSE=1 MIMALLOC_LARGE_OS_PAGES=0 " + command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("option 'large_os_pages': 0"), std::string::npos) << r.err;
#else
  GTEST_SKIP() << "built without mimalloc (ONNX_REWRITE_MIMALLOC off, or a sanitizer build)";
#endif
}

}  // namespace
}  // namespace onnx_rewrite
