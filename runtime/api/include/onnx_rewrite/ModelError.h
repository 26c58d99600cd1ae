// <onnx_rewrite/ModelError.h>: ModelError, what the API throws for a model it cannot handle.
// The installed headers keep the source tree's paths; this name is the stable one.
#pragma once

#include "runtime/graph/ModelError.h"
