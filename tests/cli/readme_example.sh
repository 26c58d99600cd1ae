#!/usr/bin/env bash
# The README's main job: fuse the bundled example, then ONNX Runtime confirms the fused
# model computes what the original did.
set -euo pipefail
cli="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$cli" "$root/tests/models/examples/bert_tiny.onnx" -o "$out/fused.onnx" --stats "$out/stats.json"
grep -q '"rewrites": 15' "$out/stats.json" || { echo "expected 15 rewrites:"; cat "$out/stats.json"; exit 1; }
node "$root/tests/oracle/compare.js" "$root/tests/models/examples/bert_tiny.onnx" "$out/fused.onnx" \
  --dim batch=2 --dim seq=8
