// <onnx_rewrite/RuleFiles.h>: loadRuleFiles(), YAML rule files at run time (component rules).
// The installed headers keep the source tree's paths; this name is the stable one.
#pragma once

#include "runtime/api/RuleFiles.h"
