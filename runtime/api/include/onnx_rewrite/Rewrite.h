// <onnx_rewrite/Rewrite.h>: rewrite() and its Options and Result.
// The installed headers keep the source tree's paths; this name is the stable one.
#pragma once

#include "runtime/api/Rewrite.h"
