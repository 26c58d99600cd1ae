//===- RuleTests.cc - `onnx-rewrite test`: rule tests as data -------------===//
#include "runtime/cli/RuleTests.h"

#include <onnx/defs/parser.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "compiler/diag/Diagnostics.h"
#include "dsl/RegularFileText.h"
#include "dsl/RuleLoader.h"
#include "runtime/api/Rewrite.h"
#include "runtime/builtin/BuiltinRules.h"
#include "runtime/driver/FailureReasons.h"
#include "runtime/graph/ModelError.h"
#include "runtime/interp/RuleInterpreter.h"
#include "runtime/io/ModelFile.h"

namespace onnx_rewrite {
namespace {

/// A mistake in a test file: "FILE:LINE:COL: message".
struct TestFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string folderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string resolve(const std::string& folder, const std::string& path) {
  return path.empty() || path[0] == '/' ? path : folder + "/" + path;
}

std::string at(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.is_null() ? file
                     : file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

/// The ops of the main graph in order: "Op" for ONNX's, "domain.Op" for others.
std::vector<std::string> opsOf(const onnx::ModelProto& model) {
  std::vector<std::string> ops;
  for (const onnx::NodeProto& n : model.graph().node())
    ops.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                : n.domain() + "." + n.op_type());
  return ops;
}

std::string listText(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& s : items) out += (out.size() > 1 ? ", " : "") + s;
  return out + "]";
}

/// The rules a test file names, loaded once per file.
RuleSet loadTestRules(const std::string& file, const YAML::Node& rules_node) {
  if (!rules_node || !rules_node.IsSequence() || rules_node.size() == 0)
    throw TestFileError(at(file, rules_node) + ": 'rules' must list the rule files to test " +
                        "(relative to this file), or builtin");
  std::vector<std::string> paths;
  bool builtin = false;
  for (const YAML::Node& r : rules_node) {
    const std::string name = r.as<std::string>();
    if (name == "builtin")
      builtin = true;
    else
      paths.push_back(resolve(folderOf(file), name));
  }
  RuleSet rules = builtin ? builtinRules() : RuleSet{};
  if (paths.empty()) return rules;
  DiagnosticEngine diag;  // prints rulec-style diagnostics to stderr
  ir::RuleFile loaded;
  if (!loadRuleFiles(paths, RuleLoadOptions{}, loaded, diag))
    throw TestFileError(file + ": the rule files have " + std::to_string(diag.errorCount()) +
                        " error(s), reported above");
  rules.append(interpretRules(loaded));
  return rules;
}

/// Runs the ONNX Runtime oracle on `before` and `after`: "" when they agree, else why not.
/// Sets `skipped` when no oracle is configured.
std::string compareInOrt(const onnx::ModelProto& before, const onnx::ModelProto& after,
                         const YAML::Node& dims, const YAML::Node& int_ranges, bool& skipped) {
  const char* oracle = std::getenv("ONNX_REWRITE_ORACLE");
  if (!oracle || !*oracle) {
    skipped = true;
    return "";
  }
  char folder[] = "/tmp/onnx-rewrite-test-XXXXXX";
  if (!::mkdtemp(folder)) return "cannot make a temporary folder";
  const std::string a = std::string(folder) + "/before.onnx",
                    b = std::string(folder) + "/after.onnx";
  {
    std::ofstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    before.SerializeToOstream(&fa);
    after.SerializeToOstream(&fb);
  }
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string command = "node " + quote(oracle) + " " + quote(a) + " " + quote(b);
  if (dims && dims.IsMap())
    for (const auto& d : dims)
      command += " --dim " + quote(d.first.as<std::string>() + "=" + d.second.as<std::string>());
  if (int_ranges && int_ranges.IsMap())
    for (const auto& r : int_ranges)
      command +=
          " --int-range " + quote(r.first.as<std::string>() + "=" + r.second.as<std::string>());
  const std::string log = std::string(folder) + "/oracle.log";
  const int status = std::system((command + " >" + quote(log) + " 2>&1").c_str());
  std::string text, error;
  readRegularFile(log, text, error);
  std::remove(a.c_str());
  std::remove(b.c_str());
  std::remove(log.c_str());
  ::rmdir(folder);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "ONNX Runtime does not give the same outputs:\n" + text;
}

struct Tally {
  int passed = 0, failed = 0, ort_skipped = 0;
};

/// Runs one case; prints its line and, on failure, what differed.
void runCase(const std::string& file, const YAML::Node& c, const RuleSet& rules, Tally& tally,
             std::FILE* out) {
  const std::string where = at(file, c);
  if (!c.IsMap() || !c["name"]) throw TestFileError(where + ": a case needs a name");
  const std::string name = c["name"].as<std::string>();
  std::vector<std::string> problems;
  onnx::ModelProto model;
  if (c["model"]) {
    onnx::Common::Status status;
    try {
      status = onnx::OnnxParser::Parse(model, c["model"].as<std::string>().c_str());
    } catch (const std::exception& e) {
      // ONNX's parser lets std::stof's exceptions through (a literal such as inf).
      throw TestFileError(at(file, c["model"]) + ": the model does not parse: a number " +
                          "it cannot read (" + e.what() + "; inf and nan are not literals)");
    }
    if (!status.IsOK()) {
      std::string why = status.ErrorMessage();  // several lines: one, for the report
      std::replace(why.begin(), why.end(), '\n', ' ');
      throw TestFileError(at(file, c["model"]) + ": the model does not parse: " + why);
    }
  } else if (c["model_file"]) {
    loadModelFile(resolve(folderOf(file), c["model_file"].as<std::string>()), model);
  } else {
    throw TestFileError(where + ": case '" + name + "' needs a model (ONNX text) or model_file");
  }
  const onnx::ModelProto before = model;
  const std::vector<std::string> ops_before = opsOf(model);

  Options options;
  options.base_dir = folderOf(file);
  std::unique_ptr<FailureReasons> reasons;
  if (c["explain"]) {
    if (!c["explain"]["rule"] || !c["explain"]["reason"])
      throw TestFileError(at(file, c["explain"]) + ": explain needs rule and reason");
    reasons = std::make_unique<FailureReasons>(c["explain"]["rule"].as<std::string>());
    options.listener = reasons.get();
  }
  Result result;
  try {
    result = rewrite(model, rules, options);
  } catch (const std::exception& e) {
    problems.push_back(std::string("the rewrite failed: ") + e.what());
  }
  const std::vector<std::string> ops = opsOf(model);

  if (problems.empty()) {
    if (c["ops"]) {
      const auto expected = c["ops"].as<std::vector<std::string>>();
      if (ops != expected)
        problems.push_back("ops: expected " + listText(expected) + "\n        got " +
                           listText(ops));
    }
    if (c["counts"]) {
      for (const auto& kv : c["counts"]) {
        const std::string op = kv.first.as<std::string>();
        const long expected = kv.second.as<long>();
        const long got = static_cast<long>(std::count(ops.begin(), ops.end(), op));
        if (got != expected)
          problems.push_back("count of " + op + ": expected " + std::to_string(expected) +
                             ", got " + std::to_string(got) + " (ops after: " + listText(ops) +
                             ")");
      }
    }
    if (c["applied"]) {
      if (!c["applied"].IsMap())
        throw TestFileError(at(file, c["applied"]) + ": applied maps rule names to counts");
      // A rule whose alternatives have several root ops runs as rule/Op: its parts add up.
      for (const auto& kv : c["applied"]) {
        const std::string rule = kv.first.as<std::string>();
        const long expected = kv.second.as<long>();
        long got = 0;
        bool known = false;
        for (const RuleStats& r : result.stats.rules)
          if (r.name == rule || r.name.rfind(rule + "/", 0) == 0) {
            got += static_cast<long>(r.applied);
            known = true;
          }
        if (!known)
          throw TestFileError(at(file, kv.first) + ": applied: no rule named '" + rule +
                              "' in the rules tested");
        if (got != expected)
          problems.push_back("rewrites by " + rule + ": expected " + std::to_string(expected) +
                             ", got " + std::to_string(got));
      }
    }
    if (c["unchanged"] && c["unchanged"].as<bool>() && result.stats.rewrites != 0)
      problems.push_back("expected no rewrite, got " + std::to_string(result.stats.rewrites) +
                         " (ops before: " + listText(ops_before) + ", after: " + listText(ops) +
                         ")");
    if (reasons) {
      const std::string want = c["explain"]["reason"].as<std::string>();
      bool found = false;
      for (const std::string& r : reasons->reasons) found |= r.find(want) != std::string::npos;
      if (!found) {
        std::string got;
        for (const std::string& r : reasons->reasons) got += "\n          " + r;
        problems.push_back("explain: no reason of " + c["explain"]["rule"].as<std::string>() +
                           " contains \"" + want + "\"; its reasons:" +
                           (got.empty() ? std::string(" none (it was never tried)") : got));
      }
    }
  }
  bool ort_skipped = false;
  if (problems.empty() && c["ort"] && c["ort"].as<bool>()) {
    const std::string why = compareInOrt(before, model, c["dims"], c["int_ranges"], ort_skipped);
    if (!why.empty()) problems.push_back(why);
  }
  if (problems.empty()) {
    ++tally.passed;
    tally.ort_skipped += ort_skipped ? 1 : 0;
    std::fprintf(out, "[       OK ] %s: %s%s\n", file.c_str(), name.c_str(),
                 ort_skipped ? " (ORT check skipped: set ONNX_REWRITE_ORACLE)" : "");
    return;
  }
  ++tally.failed;
  std::fprintf(out, "[  FAILED  ] %s: %s\n", where.c_str(), name.c_str());
  for (const std::string& p : problems) std::fprintf(out, "      %s\n", p.c_str());
}

}  // namespace

int runRuleTests(const std::vector<std::string>& paths, std::FILE* out) {
  Tally tally;
  int broken_files = 0;
  for (const std::string& file : paths) {
    try {
      std::string text, error;
      if (!readRegularFile(file, text, error))
        throw TestFileError(file + ": cannot read the test file: " + error);
      YAML::Node doc;
      try {
        doc = YAML::Load(text);
      } catch (const YAML::Exception& e) {
        throw TestFileError(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": " + e.msg);
      }
      if (!doc.IsMap() || !doc["cases"] || !doc["cases"].IsSequence())
        throw TestFileError(file + ": a rule test file is a mapping with rules: and cases:");
      const RuleSet rules = loadTestRules(file, doc["rules"]);
      for (const YAML::Node& c : doc["cases"]) runCase(file, c, rules, tally, out);
    } catch (const TestFileError& e) {
      ++broken_files;
      std::fprintf(out, "[  ERROR   ] %s\n", e.what());
    } catch (const YAML::Exception& e) {
      ++broken_files;
      std::fprintf(out, "[  ERROR   ] %s:%d:%d: %s\n", file.c_str(), e.mark.line + 1,
                   e.mark.column + 1, e.msg.c_str());
    } catch (const std::exception& e) {
      ++broken_files;
      std::fprintf(out, "[  ERROR   ] %s: %s\n", file.c_str(), e.what());
    }
  }
  std::fprintf(out, "%d case(s): %d passed, %d failed", tally.passed + tally.failed, tally.passed,
               tally.failed);
  if (tally.ort_skipped) std::fprintf(out, ", %d ORT check(s) skipped", tally.ort_skipped);
  if (broken_files) std::fprintf(out, "; %d test file(s) could not run", broken_files);
  std::fprintf(out, "\n");
  return tally.failed == 0 && broken_files == 0 ? 0 : 1;
}

}  // namespace onnx_rewrite
