//===- Oracle.cc - ONNX Runtime as the judge of numeric equality ---------===//
#include "tests/support/Oracle.h"

#include "tests/support/TempDir.h"
#include "tests/support/TestModels.h"

namespace onnx_rewrite::testing {

OracleVerdict compareInOrt(const onnx::ModelProto& before, const onnx::ModelProto& after,
                           const std::vector<std::string>& dims, const std::string& extra_args) {
  TempDir dir;
  writeModel(dir.file("before.onnx"), before);
  writeModel(dir.file("after.onnx"), after);
  std::string command =
      shellQuote(ONNX_REWRITE_NODE) + " " + shellQuote(sourcePath("tests/oracle/compare.js")) +
      " " + shellQuote(dir.file("before.onnx")) + " " + shellQuote(dir.file("after.onnx"));
  for (const std::string& d : dims) command += " --dim " + shellQuote(d);
  if (!extra_args.empty()) command += " " + extra_args;
  CommandResult r = runCommand(command);
  return OracleVerdict{r.exit_code == 0, r.out + r.err};
}

}  // namespace onnx_rewrite::testing
