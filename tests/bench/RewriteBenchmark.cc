//===- RewriteBenchmark.cc - time per phase of onnx-rewrite on big models -===//
//
// For transformer models of about 10^3 .. 10^6 nodes (TransformerModelGenerator,
// external "shape-only" weights), times each phase the onnx-rewrite command goes
// through, separately: protobuf parse (from memory, and loadModelFile from disk),
// ONNX shape inference, IR import (constructing Model), the driver with the
// built-in rules, export (undoing inferred shapes, Model::finish), and saving
// (SerializeToString, and saveModelFile to disk). Each iteration prepares a fresh
// model by running the earlier phases untimed and measures only its own phase
// (manual timing), so one benchmark is one phase. Counters: nodes, ns_per_node,
// peak_rss_mb (the process's peak so far: run one size per process, as
// tests/bench/run.sh does, to read it as that size's peak).
//
//   rewrite_benchmark [--layers=20,200,2000,20000] [google benchmark flags]
//
//===----------------------------------------------------------------------===//
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "runtime/builtin/BuiltinRules.h"
#include "runtime/driver/Driver.h"
#include "runtime/graph/Model.h"
#include "runtime/io/ModelFile.h"
#include "runtime/io/ShapeInference.h"
#include "tests/bench/TransformerModelGenerator.h"

namespace onnx_rewrite::bench {
namespace {

using Clock = std::chrono::steady_clock;

/// The phases of one onnx-rewrite run, in pipeline order.
enum class Phase {
  kParse,      // ModelProto::ParseFromString of the serialized model
  kLoadFile,   // loadModelFile: read + parse + external data checks (instead of kParse)
  kInfer,      // InferredShapes (ONNX shape inference), on by default in the CLI
  kImport,     // Model construction (Graph IR import)
  kRewrite,    // runDriver with the built-in rules
  kExport,     // InferredShapes::undo + Model::finish
  kSerialize,  // ModelProto::SerializeToString
  kSaveFile,   // saveModelFile into the model's folder (write, fsync, rename)
};

/// A generated model on disk and in memory; one size at a time is kept.
struct Corpus {
  int layers = -1;
  int64_t nodes = 0;
  std::string folder;  // holds model.onnx and its sparse weights file
  std::string path;
  std::string bytes;  // the serialized model
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

void removeCorpusFiles() {
  Corpus& c = corpus();
  if (c.folder.empty()) return;
  for (const char* name : {"model.onnx", "weights.bin", "out.onnx"})
    ::unlink((c.folder + "/" + name).c_str());
  ::rmdir(c.folder.c_str());
  c.folder.clear();
}

const Corpus& corpusFor(int layers) {
  Corpus& c = corpus();
  if (c.layers == layers) return c;
  removeCorpusFiles();
  c = Corpus{};
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/rewrite_benchmark.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error(templ + ": " + std::strerror(errno));
  c.folder = buf.data();
  c.path = c.folder + "/model.onnx";
  TransformerOptions options;
  options.layers = layers;
  options.inline_weights = false;
  options.external_location = "weights.bin";
  c.nodes = writeTransformerModel(options, c.path);
  std::FILE* f = std::fopen(c.path.c_str(), "rb");
  if (!f) throw std::runtime_error(c.path + ": cannot read back");
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) c.bytes.append(chunk, n);
  std::fclose(f);
  c.layers = layers;
  return c;
}

const std::vector<const RewritePattern*>& builtinSelection() {
  static const RuleSet rules = builtinRules();
  static const std::vector<const RewritePattern*> selected = selectRules(rules, RuleFilter{});
  return selected;
}

/// One model going through the pipeline. Members are destroyed in reverse order: the IR
/// puts its nodes back before the proto goes.
struct Run {
  onnx::ModelProto proto;
  std::unique_ptr<InferredShapes> shapes;
  std::unique_ptr<Model> ir;
  DriverStats stats;
  std::string out;

  void step(Phase phase, const Corpus& c) {
    switch (phase) {
      case Phase::kParse:
        if (!proto.ParseFromString(c.bytes)) throw std::runtime_error("parse failed");
        break;
      case Phase::kLoadFile:
        loadModelFile(c.path, proto);
        break;
      case Phase::kInfer:
        shapes = std::make_unique<InferredShapes>(proto);
        break;
      case Phase::kImport:
        ir = std::make_unique<Model>(proto, c.folder);
        break;
      case Phase::kRewrite:
        stats = runDriver(*ir, builtinSelection());
        break;
      case Phase::kExport:
        shapes->undo();
        ir->finish();
        break;
      case Phase::kSerialize:
        if (!proto.SerializeToString(&out)) throw std::runtime_error("serialize failed");
        break;
      case Phase::kSaveFile:
        saveModelFile(proto, c.folder + "/out.onnx", c.folder);
        break;
    }
  }
};

/// The phases that must run before `phase`.
std::vector<Phase> setupFor(Phase phase) {
  static const Phase kMain[] = {Phase::kParse, Phase::kInfer, Phase::kImport, Phase::kRewrite,
                                Phase::kExport};
  std::vector<Phase> setup;
  if (phase == Phase::kParse || phase == Phase::kLoadFile) return setup;
  for (Phase p : kMain) {
    if (p == phase) break;
    setup.push_back(p);
  }
  return setup;
}

double peakRssMb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void benchmarkPhase(benchmark::State& state, Phase phase) {
  const int layers = static_cast<int>(state.range(0));
  const Corpus* c = nullptr;
  try {
    c = &corpusFor(layers);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const std::vector<Phase> setup = setupFor(phase);
  double total_seconds = 0;
  uint64_t rewrites = 0;
  for (auto _ : state) {
    auto run = std::make_unique<Run>();
    double seconds = 0;
    try {
      for (Phase p : setup) run->step(p, *c);
      const auto start = Clock::now();
      run->step(phase, *c);
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      break;
    }
    state.SetIterationTime(seconds);
    total_seconds += seconds;
    rewrites = run->stats.rewrites;
    run.reset();  // untimed: manual time covers only the phase
  }
  if (state.error_occurred() || state.iterations() == 0) return;
  const double iterations = static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(c->nodes);
  state.counters["ns_per_node"] = total_seconds * 1e9 / iterations / static_cast<double>(c->nodes);
  state.counters["peak_rss_mb"] = peakRssMb();
  if (phase == Phase::kRewrite) state.counters["rewrites"] = static_cast<double>(rewrites);
  if (phase == Phase::kParse)
    state.counters["model_mb"] = static_cast<double>(c->bytes.size()) / 1e6;
}

struct PhaseName {
  Phase phase;
  const char* name;
};
constexpr PhaseName kPhases[] = {
    {Phase::kParse, "parse"},         {Phase::kLoadFile, "load_file"}, {Phase::kInfer, "infer"},
    {Phase::kImport, "import"},       {Phase::kRewrite, "rewrite"},    {Phase::kExport, "export"},
    {Phase::kSerialize, "serialize"}, {Phase::kSaveFile, "save_file"},
};

/// Removes "--layers=a,b,c" from argv and returns the layer counts.
std::vector<int> takeLayersFlag(int& argc, char** argv) {
  std::vector<int> layers = {20, 200, 2000, 20000};  // ~10^3, 10^4, 10^5, 10^6 nodes
  int w = 1;
  for (int r = 1; r < argc; ++r) {
    const char* kFlag = "--layers=";
    if (std::strncmp(argv[r], kFlag, std::strlen(kFlag)) != 0) {
      argv[w++] = argv[r];
      continue;
    }
    layers.clear();
    for (const char* p = argv[r] + std::strlen(kFlag); *p;) {
      char* end = nullptr;
      const long n = std::strtol(p, &end, 10);
      if (end == p || n <= 0) throw std::invalid_argument("bad --layers value");
      layers.push_back(static_cast<int>(n));
      p = *end == ',' ? end + 1 : end;
    }
  }
  argc = w;
  return layers;
}

/// Size-major registration, so each model is generated once.
void registerBenchmarks(const std::vector<int>& layer_counts) {
  for (int layers : layer_counts) {
    const int64_t nodes = transformerNodeCount(layers);
    for (const PhaseName& p : kPhases) {
      auto* b = benchmark::RegisterBenchmark(
          p.name, [phase = p.phase](benchmark::State& s) { benchmarkPhase(s, phase); });
      b->Arg(layers)->ArgName("layers")->UseManualTime()->Unit(benchmark::kMillisecond);
      // Keep the total modest: big models take few iterations.
      if (nodes >= 500000)
        b->Iterations(1);
      else if (nodes >= 50000)
        b->Iterations(3);
      else if (nodes >= 5000)
        b->Iterations(10);
      else
        b->MinTime(0.1);
    }
  }
}

}  // namespace
}  // namespace onnx_rewrite::bench

int main(int argc, char** argv) {
  using namespace onnx_rewrite::bench;
  std::vector<int> layers;
  try {
    layers = takeLayersFlag(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewrite_benchmark: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  registerBenchmarks(layers);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  removeCorpusFiles();
  return 0;
}
