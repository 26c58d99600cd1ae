#!/usr/bin/env bash
# bench_generator_smoke: the benchmark generator's models load and rewrite.
#
#   smoke.sh GEN_TRANSFORMER ONNX_REWRITE
#
# Writes a 2-layer model with inline weights and one with external (sparse) weights,
# runs onnx-rewrite on each and checks it read every node and removed some. Timing
# is never checked here; tests/bench/run.sh measures.
set -euo pipefail
gen=$1
rewrite=$2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

expected_nodes=109  # 2 layers * 50 + the final LayerNorm's 9
fail() { echo "bench_generator_smoke: $*" >&2; exit 1; }

for mode in inline external; do
  flags=()
  [[ $mode == external ]] && flags=(--external)
  "$gen" --layers 2 --out "$tmp/$mode.onnx" "${flags[@]}"
  "$rewrite" -q "$tmp/$mode.onnx" -o "$tmp/$mode.fused.onnx" --stats "$tmp/$mode.json"
  [[ -s $tmp/$mode.fused.onnx ]] || fail "$mode: no output model"
  before=$(sed -n 's/.*"nodes_before": *\([0-9]*\).*/\1/p' "$tmp/$mode.json")
  after=$(sed -n 's/.*"nodes_after": *\([0-9]*\).*/\1/p' "$tmp/$mode.json")
  [[ $before == "$expected_nodes" ]] || fail "$mode: nodes_before is '$before', expected $expected_nodes"
  [[ -n $after && $after -lt $before ]] || fail "$mode: nothing was fused ($before -> $after nodes)"
  echo "ok   $mode: $before -> $after nodes"
done
