#!/usr/bin/env bash
# Re-encode every *.textproto in this directory into the binary *.onnx next to it.
set -euo pipefail
cd "$(dirname "$0")"
proto=/usr/include/onnx/onnx.proto
[[ -f $proto ]] || { echo "regen.sh: $proto not found (install libonnx-dev)" >&2; exit 1; }
for t in *.textproto; do
  protoc --encode=onnx.ModelProto -I/usr/include onnx/onnx.proto < "$t" > "${t%.textproto}.onnx"
  echo "encoded ${t%.textproto}.onnx"
done
