//===- AttentionNatives.cc - native functions of the attention rules ----------------===//
#include "runtime/match/NativeFamilies.h"

namespace onnx_rewrite {

NativeFamily attentionNatives() { return {}; }

}  // namespace onnx_rewrite
