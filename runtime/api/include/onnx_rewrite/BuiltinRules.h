// <onnx_rewrite/BuiltinRules.h>: builtinRules(), the shipped rule set compiled.
// The installed headers keep the source tree's paths; this name is the stable one.
#pragma once

#include "runtime/builtin/BuiltinRules.h"
