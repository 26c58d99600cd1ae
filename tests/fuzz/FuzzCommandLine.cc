//===- FuzzCommandLine.cc - libFuzzer target: onnx-rewrite's arguments ----===//
//
// runtime/cli/CommandLine.h on hostile argument lists, one argument per input
// line, then what main() does with the parsed filters before loading anything:
// compile the --only/--skip/--enable patterns (RE2) and select rules with them.
// A UsageError (bad option, value or number) or std::invalid_argument (a bad
// pattern; main() turns it into a UsageError) is the clean outcome.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/builtin/BuiltinRules.h"
#include "runtime/cli/CommandLine.h"
#include "runtime/driver/RuleSet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnx_rewrite;
  static const RuleSet rules = builtinRules();
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  for (size_t start = 0; start <= input.size();) {
    const size_t end = std::min(input.find('\n', start), input.size());
    args.push_back(input.substr(start, end - start));
    start = end + 1;
  }
  CommandLine cl;
  try {
    cl = parseCommandLine(args);
  } catch (const UsageError&) {
    return 0;
  }
  if (cl.help) (void)usageText();
  try {
    (void)selectRules(rules, RuleFilter{cl.only, cl.skip, cl.enable});
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
