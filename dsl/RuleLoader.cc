//===- RuleLoader.cc - rule files in, checked Rule IR out -----------------===//
#include "dsl/RuleLoader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include "dsl/RegularFileText.h"
#include "dsl/RuleFileMerge.h"
#include "dsl/tablegen/TableGenFrontEnd.h"
#include "dsl/yaml/YamlFrontEnd.h"
#include "runtime/interp/BindCheck.h"

namespace onnx_rewrite {

std::string defaultTableGenIncludeDir() {
  // An installed rulec finds the .td files next to it (<prefix>/bin/../share/...); a
  // build-tree rulec uses the source tree's dsl/td.
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string path(exe, static_cast<size_t>(n));
    std::string prefix = path.substr(0, path.find_last_of('/'));
    prefix = prefix.substr(0, prefix.find_last_of('/'));
    const std::string installed = prefix + "/share/onnx_rewrite/td";
    struct stat st {};
    if (::stat((installed + "/onnx_rewrite/Rule.td").c_str(), &st) == 0) return installed;
  }
  return ONNX_REWRITE_TD_DIR;
}

bool loadRuleFiles(const std::vector<std::string>& paths, const RuleLoadOptions& options,
                   ir::RuleFile& out, DiagnosticEngine& diag) {
  std::vector<std::string> includes = options.include_dirs;
  includes.push_back(defaultTableGenIncludeDir());
  bool ok = true;
  for (const std::string& path : paths) {
    ir::RuleFile one;
    if (isYamlRuleFile(path)) {
      std::string text, error;
      if (!readRegularFile(path, text, error)) {
        diag.error(ir::SourceLoc{path, 0, 0}, cannotReadRuleFile(error));
        ok = false;
        continue;
      }
      ok &= parseYamlRules(path, text, one, diag);
    } else if (isTableGenRuleFile(path)) {
      ok &= parseTableGenRules(path, includes, one, diag);
    } else {
      diag.error(ir::SourceLoc{path, 0, 0},
                 "unknown rule file type: expected a .yaml, .yml or .td file");
      ok = false;
      continue;
    }
    mergeRuleFile(out, std::move(one));
  }
  if (!ok || !finishRuleFile(out, options.check, diag)) return false;
  if (!options.check) return true;
  // What binding a rule to the program rejects (the plan, the natives' registry): checked
  // here, for rulec and onnx-rewrite --rules alike, rather than first when a rule runs.
  for (const ir::Rule& rule : out.rules)
    if (std::optional<plan::PlanError> e = interp::bindError(rule)) diag.error(e->loc, e->message);
  return !diag.hasErrors();
}

}  // namespace onnx_rewrite
