//===- Main.cc - rulec, the rule compiler ---------------------------------===//
//
// rulec [--emit=check|ir|dot|cpp] [-o OUT] [-I DIR]... [--locations] RULES...
//
// Parses rule files (YAML or TableGen), checks them against ONNX's schemas and
// the declared custom ops, and writes the requested form. --emit=cpp writes C++
// matchers into the folder OUT (see compiler/emit/CppEmitter.h). Errors print as
// `file:line:col: error: ...` with the source line and a caret; any error means
// exit status 1 and no output file. Usage mistakes exit with status 2.
//
//===----------------------------------------------------------------------===//
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "compiler/diag/Diagnostics.h"
#include "compiler/emit/CppEmitter.h"
#include "compiler/emit/DotEmitter.h"
#include "compiler/ir/RulePrinter.h"
#include "dsl/RuleLoader.h"

namespace onnx_rewrite {
namespace {

constexpr const char* kUsage =
    R"(usage: rulec [--emit=check|ir|dot|cpp] [-o OUT] [-I DIR]... [--locations] RULES...

Compiles rewrite rules written in YAML (.yaml, .yml) or TableGen (.td).
  --emit=check   parse and check only (default)
  --emit=ir      print the checked Rule IR
  --emit=dot     draw each rule as a Graphviz digraph
  --emit=cpp     write C++ matchers into the folder OUT: <stem>.gen.cc per rule file
                 with rules, plus registry.gen.{h,cc}; run from the repository root
                 with repo-relative paths (they appear in the output)
  -o OUT         write the output to OUT (default: stdout); nothing is written on error
  -I DIR         add DIR to the TableGen include path (dsl/td is always searched)
  --locations    with --emit=ir, show where each piece was written
exit status: 0 success, 1 errors in the rule files, 2 bad usage
)";

struct Args {
  std::string emit = "check";
  std::string output;
  std::vector<std::string> includes;
  std::vector<std::string> inputs;
  bool locations = false;
};

int usageError(const std::string& message) {
  std::fprintf(stderr, "rulec: error: %s (see --help)\n", message.c_str());
  return 2;
}

/// Writes via a temporary file and rename, so a failed run leaves no partial output.
bool writeAtomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::remove(temp.c_str());
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

/// --emit=cpp: every file is generated before the first is written.
int emitCpp(const Args& args, const ir::RuleFile& rules) {
  // The command quoted in the output is the one that made it, with the output folder
  // described rather than named: a check run into a temporary folder produces identical
  // text, and the line is right in and out of this repository.
  std::string command = "rulec --emit=cpp";
  for (const std::string& dir : args.includes) command += " -I " + dir;
  command += " -o <the folder of this file>";
  for (const std::string& in : args.inputs) command += " " + in;
  std::vector<std::pair<std::string, std::string>> files;
  try {
    files = CppEmitter(rules, args.inputs, command).run();
  } catch (const CppEmitError& e) {
    std::fprintf(stderr, "%s\nrulec: nothing written\n", e.what());
    return 1;
  }
  // Written as the emitter laid it out: no formatter runs, so the text depends on nothing
  // installed on the machine.
  ::mkdir(args.output.c_str(), 0755);
  for (const auto& [name, text] : files)
    if (!writeAtomically(args.output + "/" + name, text)) {
      std::fprintf(stderr, "rulec: error: %s/%s: cannot write output\n", args.output.c_str(),
                   name.c_str());
      return 1;
    }
  return 0;
}

int run(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a.rfind("--emit=", 0) == 0) {
      args.emit = a.substr(7);
    } else if (a == "-o" || a == "-I") {
      if (i + 1 >= argc) return usageError(a + " needs a value");
      (a == "-o" ? args.output : args.includes.emplace_back()) = argv[++i];
    } else if (a.rfind("-I", 0) == 0) {
      args.includes.push_back(a.substr(2));
    } else if (a == "--locations") {
      args.locations = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return usageError("unknown option '" + a + "'");
    } else {
      args.inputs.push_back(a);
    }
  }
  if (args.emit != "check" && args.emit != "ir" && args.emit != "dot" && args.emit != "cpp")
    return usageError("unknown --emit value '" + args.emit + "' (expected check, ir, dot or cpp)");
  if (args.inputs.empty()) return usageError("no rule files given");
  if (args.emit == "cpp" && args.output.empty()) return usageError("--emit=cpp needs -o DIR");

  DiagnosticEngine diag;
  ir::RuleFile rules;
  RuleLoadOptions options;
  options.include_dirs = args.includes;
  const bool ok = loadRuleFiles(args.inputs, options, rules, diag);
  if (!ok || diag.hasErrors()) {
    std::fprintf(stderr, "rulec: %u error(s), %u warning(s); nothing written\n", diag.errorCount(),
                 diag.warningCount());
    return 1;
  }
  std::string text;
  if (args.emit == "ir") {
    ir::PrintOptions print;
    print.locations = args.locations;
    text = ir::printRuleFile(rules, print);
  } else if (args.emit == "dot") {
    text = DotEmitter(rules).run();
  } else if (args.emit == "cpp") {
    return emitCpp(args, rules);
  } else {
    std::fprintf(stderr, "rulec: %zu rule(s) and %zu op declaration(s) checked, %u warning(s)\n",
                 rules.rules.size(), rules.ops.size(), diag.warningCount());
    return 0;
  }
  if (args.output.empty()) {
    std::fputs(text.c_str(), stdout);
  } else if (!writeAtomically(args.output, text)) {
    std::fprintf(stderr, "rulec: error: %s: cannot write output\n", args.output.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace onnx_rewrite

int main(int argc, char** argv) { return onnx_rewrite::run(argc, argv); }
