//===- GeluNatives.cc - native functions of the gelu rules ----------------===//
#include "runtime/match/NativeFamilies.h"

namespace onnx_rewrite {

NativeFamily geluNatives() { return {}; }

}  // namespace onnx_rewrite
