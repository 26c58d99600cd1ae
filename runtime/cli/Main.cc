//===- Main.cc - the onnx-rewrite command ---------------------------------===//
//
// Load, rewrite with the built-in rules, save atomically, report. Every user
// error ends here as one line "onnx-rewrite: error: <file>: <cause>" with exit
// status 1 (model or file problems) or 2 (usage), and no output file.
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "dsl/RuleLoader.h"
#include "runtime/api/Rewrite.h"
#include "runtime/builtin/BuiltinRules.h"
#include "runtime/cli/CommandLine.h"
#include "runtime/cli/Explain.h"
#include "runtime/cli/ProgressPrinter.h"
#include "runtime/cli/RuleTests.h"
#include "runtime/graph/ModelError.h"
#include "runtime/graph/QuotedName.h"
#include "runtime/interp/RuleInterpreter.h"
#include "runtime/io/ModelFile.h"

namespace onnx_rewrite {
namespace {

constexpr const char* kVersion = "0.1.0";
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void listRules(const RuleSet& rules, RuleFilter filter) {
  // Opt-in rules are listed too: their opt_in tag says they are off by default.
  if (filter.enable.empty()) filter.enable = ".";
  const std::vector<const RewritePattern*> selected = selectRules(rules, filter);
  int name_width = 0, root_width = 0;  // columns as wide as the longest entry
  for (const RewritePattern* rule : selected) {
    name_width = std::max(name_width, static_cast<int>(rule->info().name.size()));
    root_width = std::max(root_width, static_cast<int>(rule->info().root.str().size()));
  }
  for (const RewritePattern* rule : selected) {
    const RuleInfo& info = rule->info();
    std::string tags;
    for (const std::string& t : info.tags) tags += (tags.empty() ? "" : ",") + t;
    std::printf("%-*s priority %4d  root %-*s tags %-12s %s\n", name_width, info.name.c_str(),
                info.priority, root_width, info.root.str().c_str(), tags.c_str(),
                info.source.c_str());
  }
}

/// The rules to run: the files of --rules (interpreted), or the built-in set: rulec's
/// compiled rules/ (generated/). Rule file errors print
/// like rulec's and end the run with status 1.
RuleSet loadRules(const CommandLine& cl) {
  if (cl.rules.empty()) return builtinRules();
  const std::vector<std::string>& files = cl.rules;
  RuleSet rules;
  DiagnosticEngine diag;
  ir::RuleFile file;
  if (!loadRuleFiles(files, RuleLoadOptions{}, file, diag))
    throw ModelError("the rule files have " + std::to_string(diag.errorCount()) +
                     " error(s), reported above");
  try {
    rules.append(interpretRules(file));
  } catch (const std::invalid_argument& e) {
    throw ModelError(e.what());
  }
  return rules;
}

/// Writes `text` to `path` via a temporary file and rename.
void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text << '\n';
    if (!out.flush()) {
      std::remove(temp.c_str());
      throw ModelError(path + ": cannot write statistics");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw ModelError(path + ": cannot write statistics");
  }
}

void printSummary(const CommandLine& cl, const Result& result, double load_s, double save_s) {
  const DriverStats& s = result.stats;
  if (cl.output.empty())
    std::fprintf(stderr, "onnx-rewrite: %s (nothing written: --explain without -o)\n",
                 cl.input.c_str());
  else
    std::fprintf(stderr, "onnx-rewrite: %s -> %s\n", cl.input.c_str(), cl.output.c_str());
  // The rules that were tried, highest priority first, in columns.
  std::vector<const RuleStats*> tried;
  int width = 0;
  for (const RuleStats& r : s.rules)
    if (r.tried > 0) {
      tried.push_back(&r);
      width = std::max(width, static_cast<int>(r.name.size()));
    }
  std::stable_sort(tried.begin(), tried.end(), [](const RuleStats* a, const RuleStats* b) {
    return a->priority > b->priority;
  });
  for (const RuleStats* rp : tried) {
    const RuleStats& r = *rp;
    std::fprintf(stderr, "  %-*s applied %6llu  (matched %llu, tried %llu, %.3f ms)\n", width,
                 r.name.c_str(), static_cast<unsigned long long>(r.applied),
                 static_cast<unsigned long long>(r.matched),
                 static_cast<unsigned long long>(r.tried), r.seconds * 1e3);
  }
  const std::string rounds =
      result.inference_rounds > 1
          ? " (" + std::to_string(result.inference_rounds) + " rounds of shape inference)"
          : "";
  std::fprintf(stderr, "  nodes %llu -> %llu, %llu rewrites in %d sweep(s)%s, %s\n",
               static_cast<unsigned long long>(s.nodes_before),
               static_cast<unsigned long long>(s.nodes_after),
               static_cast<unsigned long long>(s.rewrites), s.iterations, rounds.c_str(),
               s.converged ? "converged" : "NOT converged");
  if (cl.output.empty())
    std::fprintf(stderr, "  load %.3f s, rewrite %.3f s\n", load_s, s.seconds);
  else
    std::fprintf(stderr, "  load %.3f s, rewrite %.3f s, save %.3f s\n", load_s, s.seconds, save_s);
  for (const std::string& note : result.notes)
    std::fprintf(stderr, "  note: %s\n", oneLine(note).c_str());
}

/// The progress display `cl` asks for (null: none). A status line needs a terminal on
/// stderr; --progress into a file or pipe writes lines instead.
std::unique_ptr<ProgressPrinter> progressPrinter(const CommandLine& cl) {
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  // --explain streams its own lines, which a status line would break up.
  const bool show =
      cl.progress == CommandLine::Progress::kAlways ||
      (cl.progress == CommandLine::Progress::kAuto && terminal && !cl.quiet && cl.explain.empty());
  if (!show) return nullptr;
  return std::make_unique<ProgressPrinter>(
      stderr, terminal ? ProgressPrinter::Style::kStatusLine : ProgressPrinter::Style::kLines);
}

/// What a run leaves for main() to drop with the process instead of freeing it.
struct Kept {
  std::unique_ptr<RuleSet> rules;
  std::unique_ptr<onnx::ModelProto> model;
};

int run(const std::vector<std::string>& args, Kept& kept) {
  if (!args.empty() && args[0] == "test") {
    if (args.size() == 1) throw UsageError("test: no rule test files given");
    return runRuleTests(std::vector<std::string>(args.begin() + 1, args.end()), stdout);
  }
  CommandLine cl = parseCommandLine(args);
  if (cl.help) {
    std::fputs(usageText().c_str(), stdout);
    return 0;
  }
  if (cl.version) {
    std::printf("onnx-rewrite %s\n", kVersion);
    return 0;
  }
  kept.rules = std::make_unique<RuleSet>(loadRules(cl));
  const RuleSet& rules = *kept.rules;
  RuleFilter filter{cl.only, cl.skip, cl.enable};
  try {
    selectRules(rules, filter);  // reject a bad pattern before any work
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!cl.explain.empty() && !rules.find(cl.explain)) {
    bool prefix = false;
    for (const auto& r : rules.rules()) prefix |= r->name().rfind(cl.explain + "/", 0) == 0;
    if (!prefix) throw UsageError("--explain: no rule named '" + cl.explain + "'");
  }
  if (cl.list_rules) {
    listRules(rules, filter);
    return 0;
  }
  // Without -o, --explain only reports: nothing is written.
  if (!cl.output.empty() && !cl.in_place &&
      (cl.output == cl.input || sameFile(cl.input, cl.output)))
    throw UsageError("output '" + cl.output + "' is the input; pass --in-place to overwrite it");
  if (!cl.stats.empty() && cl.stats != "-" && ::access(folderOf(cl.stats).c_str(), W_OK) != 0)
    throw ModelError(cl.stats + ": cannot write statistics to folder '" + folderOf(cl.stats) + "'");

  std::unique_ptr<ProgressPrinter> progress = progressPrinter(cl);
  if (progress) progress->phase("load");
  auto start = Clock::now();
  kept.model = std::make_unique<onnx::ModelProto>();
  onnx::ModelProto& model = *kept.model;
  loadModelFile(cl.input, model);
  const double load_s = secondsSince(start);

  Options options;
  options.filter = filter;
  options.max_iterations = cl.max_iterations;
  options.max_rewrites = cl.max_rewrites;
  options.max_positions = cl.max_positions;
  options.max_inference_rounds = cl.max_inference_rounds;
  options.shape_inference = cl.shape_inference;
  options.inline_functions = cl.inline_functions;
  options.base_dir = folderOf(cl.input);
  options.time_rules = !cl.stats.empty() || !cl.quiet;  // the summary and --stats show them
  options.progress = progress.get();
  Explainer explain(cl.explain, stderr, cl.explain_all);
  if (!cl.explain.empty()) {
    options.listener = &explain;
    explain.reportFilteredOut(rules, filter);
  }
  Result result;
  try {
    result = rewrite(model, rules, options);
  } catch (const ModelError& e) {
    throw ModelError(cl.input + ": " + e.what());
  }

  if (progress) progress->finish();  // --explain's report, unbroken by a status line
  if (!cl.explain.empty()) explain.reportNotRun(result.stats);

  start = Clock::now();
  if (!cl.output.empty()) {
    if (progress) progress->phase("save");
    saveModelFile(model, cl.output, folderOf(cl.input));
  }
  if (progress) progress->finish();
  const double save_s = secondsSince(start);

  if (cl.stats == "-") {
    std::printf("%s\n", result.toJson().c_str());
  } else if (!cl.stats.empty()) {
    writeFileAtomically(cl.stats, result.toJson());
  }
  if (!cl.quiet) printSummary(cl, result, load_s, save_s);
  return 0;
}

}  // namespace
}  // namespace onnx_rewrite

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    onnx_rewrite::Kept kept;
    const int status = onnx_rewrite::run(args, kept);
    // The work is done and written: end here, without freeing the model node by node, the
    // rules or the schema tables, which on a 12-layer model costs more than saving it.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  } catch (const onnx_rewrite::UsageError& e) {
    std::fprintf(stderr, "onnx-rewrite: error: %s (see --help)\n",
                 onnx_rewrite::oneLine(e.what()).c_str());
    return 2;
  } catch (const onnx_rewrite::ModelError& e) {
    // Messages carry text from the model; one error is one line whatever it holds.
    std::fprintf(stderr, "onnx-rewrite: error: %s\n", onnx_rewrite::oneLine(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-rewrite: internal error: %s\n",
                 onnx_rewrite::oneLine(e.what()).c_str());
    return 1;
  }
}
