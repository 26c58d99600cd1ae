// <onnx_rewrite/ModelFile.h>: loading and saving model files, external data included.
// The installed headers keep the source tree's paths; this name is the stable one.
#pragma once

#include "runtime/io/ModelFile.h"
