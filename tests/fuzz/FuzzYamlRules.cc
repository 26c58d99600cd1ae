//===- FuzzYamlRules.cc - libFuzzer target: YAML rule files ---------------===//
//
// A YAML rule file through the YAML front end (yaml-cpp, the statement parser),
// the checks, every rulec back end and the interpreter (tests/fuzz/RuleFileTarget.h).
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/RuleFileTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx_rewrite::fuzz::runRuleFile(data, size, "rules.yaml");
  return 0;
}
