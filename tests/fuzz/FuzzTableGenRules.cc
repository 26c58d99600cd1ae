//===- FuzzTableGenRules.cc - libFuzzer target: TableGen rule files -------===//
//
// A .td rule file through the include checks, LLVM's TableGen parser and
// RecordConverter, the checks, every rulec back end and the interpreter
// (tests/fuzz/RuleFileTarget.h), including the shipped dsl/td base classes.
//
// TableGen parses in a child process (dsl/tablegen/TableGenFrontEnd.h: its
// globals allow one parse per process), so libFuzzer sees the coverage of this
// process only (include checks, the wire decoding, the checks and back ends);
// inside the parser it mutates blind. A child that dies of anything but
// TableGen's own fatal-error exit is reported as "the parse process ..."; this
// target turns that message into a crash, so a sanitizer report or a signal in
// the child still fails the run (the child's own report is printed above it).
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/RuleFileTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx_rewrite::fuzz::runRuleFile(data, size, "rules.td", [](const onnx_rewrite::Diagnostic& d) {
    if (d.message.rfind("the parse process", 0) == 0) {
      std::fprintf(stderr, "TableGen parse child failed: %s\n", d.message.c_str());
      std::abort();
    }
  });
  return 0;
}
