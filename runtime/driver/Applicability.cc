//===- Applicability.cc - why a rule cannot run in a graph ---------------===//
#include "runtime/driver/Applicability.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "runtime/graph/NameTable.h"

namespace onnx_rewrite {
namespace {

/// Probed ai.onnx versions: every opset released so far and a few to come, so that an open
/// range ("from 13") shows as open.
constexpr int64_t kLastProbedOpset = 30;

std::string domainName(const std::string& domain) {
  return domain.empty() ? std::string("ai.onnx") : domain;
}

/// "ai.onnx >= 13", "ai.onnx <= 22", "ai.onnx 18 to 22" or several joined by " or ".
std::string describeVersions(const std::vector<int64_t>& accepted) {
  std::string text;
  for (size_t i = 0; i < accepted.size();) {
    size_t j = i;
    while (j + 1 < accepted.size() && accepted[j + 1] == accepted[j] + 1) ++j;
    const int64_t lo = accepted[i], hi = accepted[j];
    text += text.empty() ? "ai.onnx " : " or ai.onnx ";
    if (hi == kLastProbedOpset)
      text += lo == 1 ? ">= 1" : ">= " + std::to_string(lo);
    else if (lo == 1)
      text += "<= " + std::to_string(hi);
    else if (lo == hi)
      text += std::to_string(lo);
    else
      text += std::to_string(lo) + " to " + std::to_string(hi);
    i = j + 1;
  }
  return text;
}

}  // namespace

std::string whyNotApplicable(const RewritePattern& rule, Model& model, const Graph& graph) {
  if (rule.appliesTo(graph)) return {};
  // The graph's imports: the model's domains (and ai.onnx) at the versions the graph sees
  // (a function has its own).
  std::set<std::string> domains{""};
  for (const onnx::OperatorSetIdProto& o : model.proto().opset_import())
    domains.insert(o.domain() == "ai.onnx" ? std::string() : o.domain());
  std::vector<std::pair<std::string, int64_t>> imports;
  std::string imported;
  for (const std::string& d : domains) {
    const int64_t version = graph.opsetVersion(d);
    if (version < 0) continue;
    imports.emplace_back(d, version);
    imported += (imported.empty() ? "" : ", ") + domainName(d) + " " + std::to_string(version);
  }
  const std::string who = graph.kind() == Graph::Kind::kFunction ? graph.label() : "the model";
  const std::string imports_text =
      imported.empty() ? who + " imports no opset" : who + " imports " + imported;

  NameTable names;
  Graph probe(Graph::Kind::kMain, names, nullptr, kNoId);
  std::vector<int64_t> accepted;
  for (int64_t v = 1; v <= kLastProbedOpset; ++v) {
    std::vector<std::pair<std::string, int64_t>> varied;
    varied.emplace_back("", v);
    for (const auto& import : imports)
      if (!import.first.empty()) varied.push_back(import);
    probe.setOpsets(std::move(varied));
    if (rule.appliesTo(probe)) accepted.push_back(v);
  }
  const int64_t onnx_version = graph.opsetVersion("");
  const bool onnx_accepted =
      std::find(accepted.begin(), accepted.end(), onnx_version) != accepted.end();
  if (accepted.empty() || onnx_accepted)
    return "its required opsets or domains exclude this graph (" + imports_text + ")";
  return "it requires " + describeVersions(accepted) + ", " +
         (onnx_version < 0 ? who + " does not import ai.onnx"
                           : who + " imports ai.onnx " + std::to_string(onnx_version));
}

}  // namespace onnx_rewrite
