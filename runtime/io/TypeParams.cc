//===- TypeParams.cc - which inputs of an ai.onnx op share a type ---------===//
#include "runtime/io/TypeParams.h"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace onnx_rewrite {
namespace {

struct Row {
  std::string_view op;
  int64_t since;
  std::string_view params;
};

constexpr Row kRows[] = {
#include "TypeParams.inc"
};

}  // namespace

std::string_view onnxTypeParams(std::string_view op, int64_t opset) {
  // The first row past (op, opset); the one before it is the newest version <= opset.
  auto after =
      std::upper_bound(std::begin(kRows), std::end(kRows), std::make_pair(op, opset),
                       [](const std::pair<std::string_view, int64_t>& key, const Row& row) {
                         return std::tie(key.first, key.second) < std::tie(row.op, row.since);
                       });
  if (after == std::begin(kRows)) return {};
  const Row& row = *std::prev(after);
  return row.op == op ? row.params : std::string_view();
}

std::vector<FormalInput> onnxFormalInputs(std::string_view op, int64_t opset) {
  std::vector<FormalInput> formals;
  std::string_view sig = onnxTypeParams(op, opset);
  while (!sig.empty()) {
    const size_t space = sig.find(' ');
    FormalInput f;
    f.param = sig.substr(0, space);
    sig = space == std::string_view::npos ? std::string_view() : sig.substr(space + 1);
    if (f.param.back() == '*' || f.param.back() == '?') {
      f.variadic = f.param.back();
      f.param.remove_suffix(1);
    }
    formals.push_back(f);
  }
  return formals;
}

}  // namespace onnx_rewrite
