//===- RuleTests.h - `onnx-rewrite test`: rule tests as data --------------===//
//
// A rule author tests rules with files next to them, not with C++ or Python. A test file
// (YAML, conventionally NAME.test.yaml) names the rule files it runs and lists cases: an
// input graph in ONNX text format (or a model file), and what must hold after the rewrite:
//
//   rules: [swish.yaml]                 # relative to this file; "builtin": the shipped set
//   cases:
//     - name: fuses_silu
//       model: |
//         <ir_version: 8, opset_import: ["" : 17]>
//         g (float[2, 4] x) => (float[2, 4] y) { s = Sigmoid(x)  y = Mul(x, s) }
//       ops: [com.microsoft.QuickGelu]  # the exact op list after, in graph order
//       ort: true                       # and the same outputs in ONNX Runtime
//     - name: counts
//       model_file: silu.onnx
//       counts: { com.microsoft.QuickGelu: 1, Sigmoid: 0 }
//     - name: not_another_activation
//       model: ...
//       unchanged: true                 # no rule applies
//       explain: { rule: swish, reason: "is computed by Tanh" }   # a reason it gives
//
// `onnx-rewrite test FILE...` runs every case and reports like a test runner: one line per
// case, what differed for a failure, a summary; status 0 when all pass, 1 otherwise (2 for a
// usage error). ORT checks run `node` on the oracle script that ONNX_REWRITE_ORACLE names
// (tests/oracle/compare.js of this repository); without it they are reported as skipped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace onnx_rewrite {

/// Runs the rule test files `paths`, printing to `out`. Returns the exit status.
int runRuleTests(const std::vector<std::string>& paths, std::FILE* out);

}  // namespace onnx_rewrite
