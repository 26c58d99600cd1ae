#!/usr/bin/env bash
# bench_generator_smoke: every piece tests/bench/run.sh uses runs, on tiny models.
#
#   smoke.sh GEN_TRANSFORMER ONNX_REWRITE [COUNT_OPS REWRITE_BENCHMARK]
#
# Writes a 2-layer model with inline weights and one with external (sparse) weights,
# runs onnx-rewrite on each (under timecmd.py) and checks it read every node and removed
# some; then, given the other tools, counts ops with count_ops, runs one iteration of
# rewrite_benchmark (compiled equals interpreted) and, when onnxruntime-node is
# installed, ort_optimize.js. Timing is never checked here; tests/bench/run.sh measures.
set -euo pipefail
gen=$1
rewrite=$2
count=${3:-}
benchmark=${4:-}
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

expected_nodes=109  # 2 layers * 50 + the final LayerNorm's 9
fail() { echo "bench_generator_smoke: $*" >&2; exit 1; }
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2"; }

for mode in inline external; do
  flags=()
  [[ $mode == external ]] && flags=(--external)
  "$gen" --layers 2 --out "$tmp/$mode.onnx" "${flags[@]}"
  python3 "$here/timecmd.py" -- "$rewrite" -q "$tmp/$mode.onnx" -o "$tmp/$mode.fused.onnx" \
    --stats "$tmp/$mode.json" >"$tmp/$mode.time.json"
  [[ -s $tmp/$mode.fused.onnx ]] || fail "$mode: no output model"
  [[ -n $(field max_rss_kb_max "$tmp/$mode.time.json") ]] || fail "$mode: timecmd.py printed no RSS"
  before=$(field nodes_before "$tmp/$mode.json")
  after=$(field nodes_after "$tmp/$mode.json")
  [[ $before == "$expected_nodes" ]] || fail "$mode: nodes_before is '$before', expected $expected_nodes"
  [[ -n $after && $after -lt $before ]] || fail "$mode: nothing was fused ($before -> $after nodes)"
  echo "ok   $mode: $before -> $after nodes"
done

[[ -n $count ]] || exit 0
"$count" "$tmp/inline.onnx" "$tmp/inline.fused.onnx" >"$tmp/counts.json"
grep -q '"nodes": 109, ' "$tmp/counts.json" || fail "count_ops: wrong node count: $(cat "$tmp/counts.json")"
grep -q 'com.microsoft::' "$tmp/counts.json" || fail "count_ops: no fused op in the output"
echo "ok   count_ops"

if [[ -n $benchmark ]]; then
  "$benchmark" --layers=2 --iterations=1 --benchmark_out="$tmp/bench.json" \
    --benchmark_out_format=json >/dev/null 2>"$tmp/bench.err" || fail "rewrite_benchmark: $(cat "$tmp/bench.err")"
  grep -q '"identical": 1' "$tmp/bench.json" || fail "rewrite_benchmark: compiled and interpreted outputs differ"
  grep -q '"rewrites": [1-9]' "$tmp/bench.json" || fail "rewrite_benchmark: nothing rewritten"
  echo "ok   rewrite_benchmark"
fi

if [[ -d $here/../oracle/node_modules/onnxruntime-node ]] && command -v node >/dev/null; then
  node "$here/ort_optimize.js" "$tmp/inline.onnx" "$tmp/ort.onnx" >"$tmp/ort.json" \
    || fail "ort_optimize.js failed"
  "$count" "$tmp/ort.onnx" >/dev/null || fail "count_ops cannot read ONNX Runtime's output"
  echo "ok   ort_optimize.js"
fi
