//===- RewriteBenchmark.cc - onnx-rewrite's phases, compiled vs interpreted ===//
//
// For one transformer model size (TransformerModelGenerator, external "shape-only"
// weights), each iteration takes two fresh copies of the model through the pipeline
// the onnx-rewrite command runs: protobuf parse (from memory), ONNX shape inference,
// IR import (constructing Model), the driver, export (undoing inferred shapes,
// Model::finish) and SerializeToString. One copy is rewritten by the compiled rules
// (generated/, populateGeneratedRules), the other by the same rules/ files loaded with
// dsl/RuleLoader and run by the Rule IR interpreter; the order alternates between
// iterations, so both modes see the same machine load and their ratio holds within
// one run. Both outputs must be byte-identical.
//
// Times are CPU times of the benchmark thread (see threadCpuSeconds); manual time is the
// compiled rewrite's. Counters (medians over iterations, since the machine is shared;
// rewrite_wall and interp_rewrite_wall give the wall-clock medians for comparison): <phase>_ms and
// <phase>_ns_per_node for parse, infer, import, rewrite (compiled), recheck (a second driver run on
// the rewritten model, which finds nothing left: matching alone), interp_rewrite, interp_recheck,
// export and serialize; interp_over_compiled and recheck_interp_over_compiled;
// rewrite_pct_of_parse; rewrites, nodes_after, identical (1 if every output matched and no recheck
// rewrote); rules_compiled, rules_interpreted, interp_load_ms (loading the rule files once);
// peak_rss_mb (the process's peak: run one size per process, as tests/bench/run.sh does).
//
//   rewrite_benchmark [--layers=1,20,200,2000,20000] [--iterations=N] [google benchmark flags]
//
//===----------------------------------------------------------------------===//
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "compiler/diag/Diagnostics.h"
#include "dsl/RuleLoader.h"
#include "generated/registry.gen.h"
#include "runtime/driver/Driver.h"
#include "runtime/graph/Model.h"
#include "runtime/interp/RuleInterpreter.h"
#include "runtime/io/ShapeInference.h"
#include "tests/bench/TransformerModelGenerator.h"

namespace onnx_rewrite::bench {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// CPU time of the calling thread. The figures are CPU times, not wall-clock times: on a
/// shared machine a process waits for a core for milliseconds at a time, which would
/// swamp phases this short; CPU time leaves that out (cache pollution stays in).
double threadCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// A generated model on disk and in memory; one size at a time is kept.
struct Corpus {
  int layers = -1;
  int64_t nodes = 0;
  std::string folder;  // holds model.onnx and its sparse weights file
  std::string bytes;   // the serialized model
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

void removeCorpusFiles() {
  Corpus& c = corpus();
  if (c.folder.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(c.folder, ignored);
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
  // On disk (not only in memory) because import checks the external data references.
  const std::string path = c.folder + "/model.onnx";
  TransformerOptions options;
  options.layers = layers;
  options.inline_weights = false;
  options.external_location = "weights.bin";
  c.nodes = writeTransformerModel(options, path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot read back");
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) c.bytes.append(chunk, n);
  std::fclose(f);
  c.layers = layers;
  return c;
}

/// The shipped rules in both modes: rulec's output (generated/) and the rules/ files.
struct Rules {
  RuleSet compiled;
  RuleSet interpreted;
  std::vector<const RewritePattern*> compiled_selection;
  std::vector<const RewritePattern*> interpreted_selection;
  double interp_load_seconds = 0;
  /// Both modes have the same rules, by name and order (rules/ and generated/ agree).
  bool same_rules = false;
};

/// rules/ of the source tree, or $ONNX_REWRITE_BENCH_RULES (to measure a snapshot).
std::string rulesDir() {
  const char* dir = std::getenv("ONNX_REWRITE_BENCH_RULES");
  return dir && *dir ? dir : ONNX_REWRITE_RULES_DIR;
}

/// Every .yaml and .td of rules/ in byte order of their names, as
/// compiler/rulec/regenerate.sh gives them to rulec.
std::vector<std::string> shippedRuleFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(rulesDir())) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".td"))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const Rules& rules() {
  static const Rules r = [] {
    Rules out;
    populateGeneratedRules(out.compiled);
    const auto start = Clock::now();
    DiagnosticEngine diag;
    ir::RuleFile file;
    if (!loadRuleFiles(shippedRuleFiles(), RuleLoadOptions{}, file, diag))
      throw std::runtime_error("the rule files in " + rulesDir() + " do not load");
    out.interpreted = interpretRules(file);
    out.interp_load_seconds = secondsSince(start);
    out.compiled_selection = selectRules(out.compiled, RuleFilter{});
    out.interpreted_selection = selectRules(out.interpreted, RuleFilter{});
    out.same_rules = out.compiled_selection.size() == out.interpreted_selection.size();
    for (size_t i = 0; out.same_rules && i < out.compiled_selection.size(); ++i)
      out.same_rules = out.compiled_selection[i]->name() == out.interpreted_selection[i]->name();
    return out;
  }();
  return r;
}

/// The phases timed, in pipeline order. kRewrite is the driver; kRecheck runs it again on
/// the rewritten model, where every rule is tried on its candidates and none applies: the
/// cost of matching alone, without building targets or editing the graph.
enum Phase { kParse, kInfer, kImport, kRewrite, kRecheck, kExport, kSerialize, kPhaseCount };
constexpr const char* kPhaseNames[kPhaseCount] = {"parse",   "infer",  "import",   "rewrite",
                                                  "recheck", "export", "serialize"};

/// One copy of the model through the pipeline. Members are destroyed in reverse order:
/// the IR puts its nodes back before the proto goes.
struct Run {
  onnx::ModelProto proto;
  std::unique_ptr<InferredShapes> shapes;
  std::unique_ptr<Model> ir;
  DriverStats stats;
  DriverStats recheck;
  std::string out;
  double seconds[kPhaseCount] = {};  // CPU time of this thread
  double wall[kPhaseCount] = {};

  void go(const Corpus& c, const std::vector<const RewritePattern*>& selection) {
    auto timed = [&](Phase phase, auto&& step) {
      const double cpu_start = threadCpuSeconds();
      const auto start = Clock::now();
      step();
      wall[phase] = secondsSince(start);
      seconds[phase] = threadCpuSeconds() - cpu_start;
    };
    timed(kParse, [&] {
      if (!proto.ParseFromString(c.bytes)) throw std::runtime_error("parse failed");
    });
    timed(kInfer, [&] { shapes = std::make_unique<InferredShapes>(proto); });
    timed(kImport, [&] { ir = std::make_unique<Model>(proto, c.folder); });
    timed(kRewrite, [&] { stats = runDriver(*ir, selection); });
    timed(kRecheck, [&] { recheck = runDriver(*ir, selection); });
    timed(kExport, [&] {
      shapes->undo();
      ir->finish();
    });
    timed(kSerialize, [&] {
      if (!proto.SerializeToString(&out)) throw std::runtime_error("serialize failed");
    });
  }

  /// Frees the model (untimed), keeping the output and the figures: the next copy then
  /// starts from the same memory state, and two big models are never held at once.
  void dropModel() {
    ir.reset();
    shapes.reset();
    onnx::ModelProto().Swap(&proto);  // Clear() would keep the repeated fields' memory
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double peakRssMb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void benchmarkPipeline(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  const Corpus* c = nullptr;
  const Rules* r = nullptr;
  try {
    c = &corpusFor(layers);
    r = &rules();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::map<std::string, std::vector<double>> samples;  // phase -> seconds per iteration
  bool identical = true;
  uint64_t rewrites = 0, interp_rewrites = 0, nodes_after = 0;
  int64_t iteration = 0;
  for (auto _ : state) {
    std::unique_ptr<Run> compiled, interpreted;
    try {
      // Alternate the order so that neither mode always runs on a warmer machine.
      for (int k = 0; k < 2; ++k) {
        const bool compiled_turn = (k == 0) == (iteration % 2 == 0);
        auto run = std::make_unique<Run>();
        run->go(*c, compiled_turn ? r->compiled_selection : r->interpreted_selection);
        run->dropModel();
        (compiled_turn ? compiled : interpreted) = std::move(run);
      }
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      break;
    }
    ++iteration;
    state.SetIterationTime(compiled->seconds[kRewrite]);
    for (int p = 0; p < kPhaseCount; ++p) samples[kPhaseNames[p]].push_back(compiled->seconds[p]);
    samples["interp_rewrite"].push_back(interpreted->seconds[kRewrite]);
    samples["interp_recheck"].push_back(interpreted->seconds[kRecheck]);
    samples["rewrite_wall"].push_back(compiled->wall[kRewrite]);
    samples["interp_rewrite_wall"].push_back(interpreted->wall[kRewrite]);
    identical = identical && compiled->out == interpreted->out && compiled->recheck.rewrites == 0 &&
                interpreted->recheck.rewrites == 0;
    rewrites = compiled->stats.rewrites;
    interp_rewrites = interpreted->stats.rewrites;
    nodes_after = compiled->stats.nodes_after;
  }
  if (state.error_occurred() || state.iterations() == 0) return;
  const double nodes = static_cast<double>(c->nodes);
  for (const auto& [phase, seconds] : samples) {
    const double m = median(seconds);
    state.counters[phase + "_ms"] = m * 1e3;
    state.counters[phase + "_ns_per_node"] = m * 1e9 / nodes;
  }
  state.counters["interp_over_compiled"] =
      median(samples["interp_rewrite"]) / median(samples["rewrite"]);
  state.counters["recheck_interp_over_compiled"] =
      median(samples["interp_recheck"]) / median(samples["recheck"]);
  state.counters["rewrite_pct_of_parse"] =
      100 * median(samples["rewrite"]) / median(samples["parse"]);
  state.counters["nodes"] = nodes;
  state.counters["rewrites"] = static_cast<double>(rewrites);
  state.counters["interp_rewrites"] = static_cast<double>(interp_rewrites);
  state.counters["nodes_after"] = static_cast<double>(nodes_after);
  state.counters["identical"] = identical ? 1 : 0;
  state.counters["rules_compiled"] = static_cast<double>(r->compiled.size());
  state.counters["rules_interpreted"] = static_cast<double>(r->interpreted.size());
  state.counters["same_rules"] = r->same_rules ? 1 : 0;
  state.counters["interp_load_ms"] = r->interp_load_seconds * 1e3;
  state.counters["model_mb"] = static_cast<double>(c->bytes.size()) / 1e6;
  state.counters["peak_rss_mb"] = peakRssMb();
}

/// This program's own flags, taken out of argv before Google Benchmark sees it.
struct Flags {
  std::vector<int> layers = {1, 20, 200, 2000, 20000};  // 59 nodes, then ~10^3 .. 10^6
  int64_t iterations = 0;                               // 0: chosen by model size
};

/// Parses "a,b,c" into positive integers.
std::vector<int64_t> positiveList(const char* text) {
  std::vector<int64_t> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    const long long n = std::strtoll(p, &end, 10);
    if (end == p || n <= 0 || (*end != ',' && *end != '\0'))
      throw std::invalid_argument(std::string("bad value '") + text + "'");
    out.push_back(n);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

/// Removes --layers=a,b,c and --iterations=N from argv.
Flags takeFlags(int& argc, char** argv) {
  Flags flags;
  int w = 1;
  for (int r = 1; r < argc; ++r) {
    const std::string arg = argv[r];
    if (arg.rfind("--layers=", 0) == 0) {
      flags.layers.clear();
      for (int64_t n : positiveList(argv[r] + std::strlen("--layers=")))
        flags.layers.push_back(static_cast<int>(n));
    } else if (arg.rfind("--iterations=", 0) == 0) {
      const std::vector<int64_t> n = positiveList(argv[r] + std::strlen("--iterations="));
      if (n.size() != 1) throw std::invalid_argument("--iterations takes one count");
      flags.iterations = n[0];
    } else {
      argv[w++] = argv[r];
    }
  }
  argc = w;
  return flags;
}

void registerBenchmarks(const Flags& flags) {
  for (int layers : flags.layers) {
    const int64_t nodes = transformerNodeCount(layers);
    // About 5 * 10^4 nodes per mode in all: seconds for a size. An even count, so each
    // mode goes first equally often (the first copy a process rewrites also pays for
    // first-touching memory): at least 4 for a median, 2 from 5 * 10^5 nodes (a minute each).
    int64_t iterations = nodes >= 500000 ? 2 : std::clamp<int64_t>(50000 / nodes, 4, 500);
    iterations += iterations % 2;
    if (flags.iterations > 0) iterations = flags.iterations;
    benchmark::RegisterBenchmark("pipeline", benchmarkPipeline)
        ->Arg(layers)
        ->ArgName("layers")
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(iterations);
  }
}

}  // namespace
}  // namespace onnx_rewrite::bench

int main(int argc, char** argv) {
  using namespace onnx_rewrite::bench;
  Flags flags;
  try {
    flags = takeFlags(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewrite_benchmark: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  registerBenchmarks(flags);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  removeCorpusFiles();
  return 0;
}
