//===- RotaryNatives.cc - native functions of the rotary rules ----------------===//
#include "runtime/match/NativeFamilies.h"

namespace onnx_rewrite {

NativeFamily rotaryNatives() { return {}; }

}  // namespace onnx_rewrite
