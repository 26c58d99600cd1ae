//===- CommandLine.cc - onnx-rewrite's arguments --------------------------===//
#include "runtime/cli/CommandLine.h"

#include <algorithm>
#include <limits>

#include "dsl/RuleFileMerge.h"

namespace onnx_rewrite {
namespace {

int64_t parseCount(const std::string& option, const std::string& text, int64_t min) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < min)
    throw UsageError(option + " needs a whole number >= " + std::to_string(min) + ", not '" + text +
                     "'");
  return value;
}

bool isRuleFile(const std::string& arg) { return isYamlRuleFile(arg) || isTableGenRuleFile(arg); }

}  // namespace

std::string usageText() {
  return R"(usage: onnx-rewrite IN.onnx -o OUT.onnx [options]
       onnx-rewrite IN.onnx --explain RULE [options]
       onnx-rewrite --list-rules [--only RE] [--skip RE]   (opt-in rules included)
       onnx-rewrite test FILE.test.yaml...   (rule tests as data: docs/authoring.md)

Fuses subgraphs of an ONNX model into the single ops ONNX Runtime executes fast.
IN is never modified; OUT is written atomically (temporary file, then rename).

options:
  -o, --output FILE      where to write the rewritten model (with --explain, optional:
                         without it nothing is written)
  --rules FILE...        run the rules in these .yaml/.td files (interpreted) instead of the
                         built-in set; rule file errors are reported like rulec's
  --in-place             allow OUT to be IN (or omit -o to rewrite IN itself)
  --only RE              run only rules whose name or tag matches RE (RE2, searched)
  --skip RE              do not run rules whose name or tag matches RE
  --enable RE            also run the opt-in rules (tag opt_in, off by default) whose
                         name or tag matches RE, e.g. --enable approximation: Gelu as
                         its tanh approximation, FastGelu (not exact: within ~1e-3);
                         --enable mask_index: BERT's padding mask as Attention's
                         mask_index (exact only if attention_mask holds just 0 and 1)
  --max-iterations N     sweeps over each graph before giving up (default 10)
  --max-rewrites N       stop after N rewrites (default: 4 per node + 10000, which
                         ends rules that undo each other; 0: no limit)
  --max-positions N      position ids the model is fed stay below N (its longest
                         sequence); lets RoPE whose cos/sin are computed per forward
                         pass fuse, with [N, d/2] constant caches (default: unknown)
  --stats FILE|-         write per-rule statistics as JSON to FILE or stdout
  --explain RULE         print, for each node RULE was tried on and that is still
                         there at the end, why it did not apply (a rewrite that would
                         change a value's type or shape is one reason), or why RULE
                         never ran (--only/--skip, the model's opsets, no node of its
                         root op)
  --explain-all          with --explain: print every failed attempt as it happens,
                         also at nodes a rule fused later
  --no-shape-inference   do not infer shapes and types before matching (rules that
                         need a shape then do not fire)
  --keep-functions       do not inline calls of the model's local functions (by
                         default they are inlined, as ONNX Runtime does when it loads
                         the model, so that rules see across them)
  --max-inference-rounds N
                         rounds of shape inference and rewriting (default 16): another
                         runs while fused ops' outputs were left unsized (per-head
                         attention takes two); 1 infers shapes once
  --list-rules           print the rules (name, priority, root op, tags) and exit
  -q, --quiet            print nothing but errors
  --progress             report each phase and how far rewriting has come on stderr,
                         even with --quiet or into a file (by default a status line
                         shows on a terminal once a run takes half a second)
  --no-progress          never show progress
  -h, --help             print this help
  --version              print the version

exit status: 0 done, 1 the model or a rule file could not be read, rewritten or written,
             2 bad usage
)";
}

CommandLine parseCommandLine(const std::vector<std::string>& args) {
  CommandLine cl;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        inline_value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    }
    auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    auto flag = [&] {
      if (has_inline) throw UsageError(arg + " takes no value");
    };
    if (arg == "-o" || arg == "--output") {
      cl.output = value();
    } else if (arg == "--stats") {
      cl.stats = value();
    } else if (arg == "--rules") {
      // Every following argument that names a rule file belongs to --rules.
      cl.rules.push_back(value());
      while (i + 1 < args.size() && isRuleFile(args[i + 1])) cl.rules.push_back(args[++i]);
    } else if (arg == "--explain") {
      cl.explain = value();
    } else if (arg == "--only") {
      cl.only = value();
    } else if (arg == "--skip") {
      cl.skip = value();
    } else if (arg == "--enable") {
      cl.enable = value();
    } else if (arg == "--max-iterations") {
      cl.max_iterations = static_cast<int>(parseCount(arg, value(), 1));
    } else if (arg == "--max-rewrites") {
      cl.max_rewrites = parseCount(arg, value(), 0);
      if (cl.max_rewrites == 0) cl.max_rewrites = DriverConfig::kNoLimit;
    } else if (arg == "--max-positions") {
      cl.max_positions = parseCount(arg, value(), 1);
    } else if (arg == "--max-inference-rounds") {
      cl.max_inference_rounds =
          static_cast<int>(std::min<int64_t>(parseCount(arg, value(), 1), 1 << 20));
    } else if (arg == "--list-rules") {
      flag();
      cl.list_rules = true;
    } else if (arg == "--in-place") {
      flag();
      cl.in_place = true;
    } else if (arg == "--explain-all") {
      flag();
      cl.explain_all = true;
    } else if (arg == "--no-shape-inference") {
      flag();
      cl.shape_inference = false;
    } else if (arg == "--keep-functions") {
      flag();
      cl.inline_functions = false;
    } else if (arg == "-q" || arg == "--quiet") {
      flag();
      cl.quiet = true;
    } else if (arg == "--progress") {
      flag();
      cl.progress = CommandLine::Progress::kAlways;
    } else if (arg == "--no-progress") {
      flag();
      cl.progress = CommandLine::Progress::kNever;
    } else if (arg == "-h" || arg == "--help") {
      flag();
      cl.help = true;
    } else if (arg == "--version") {
      flag();
      cl.version = true;
    } else if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (cl.help || cl.version || cl.list_rules) return cl;
  if (cl.explain_all && cl.explain.empty()) throw UsageError("--explain-all needs --explain RULE");
  if (positional.empty()) throw UsageError("no input model given");
  if (positional.size() > 1)
    throw UsageError("more than one input model given: '" + positional[1] + "'");
  cl.input = positional[0];
  if (cl.output.empty()) {
    if (cl.in_place)
      cl.output = cl.input;
    else if (cl.explain.empty())  // --explain alone only reports: output stays empty
      throw UsageError("no output given: pass -o OUT.onnx (or --in-place)");
  }
  return cl;
}

}  // namespace onnx_rewrite
