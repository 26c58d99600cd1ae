//===- Oracle.h - ONNX Runtime as the judge of numeric equality ----------===//
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_rewrite::testing {

/// Outcome of tests/oracle/compare.js on two models.
struct OracleVerdict {
  bool equal = false;
  /// compare.js's report (one line per output) or its error message.
  std::string report;
};

/// Runs `before` and `after` in ONNX Runtime on the same seeded random inputs and compares
/// every output (atol 1e-4, rtol 1e-3 unless given). `dims` binds symbolic dims, e.g.
/// {"batch=2", "seq=8"}.
OracleVerdict compareInOrt(const onnx::ModelProto& before, const onnx::ModelProto& after,
                           const std::vector<std::string>& dims,
                           const std::string& extra_args = "");

}  // namespace onnx_rewrite::testing
