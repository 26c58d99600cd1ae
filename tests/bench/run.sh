#!/usr/bin/env bash
# Builds the benchmarks in Release (build-bench/), runs them all and writes docs/benchmarks.md.
#
#   bash tests/bench/run.sh          # everything: 5-15 minutes on 2 shared cores, by load
#   QUICK=1 bash tests/bench/run.sh  # small sizes only, a minute or two (the doc says so)
#
# 1. rewrite_benchmark, one process per size: the rewrite core compiled (generated/) vs
#    interpreted (rules/ through the rule loader), and every phase of the pipeline;
# 2. the onnx-rewrite command end to end on the same models;
# 3. onnx-rewrite against ONNX Runtime's offline optimization (ort_optimize.js), with the
#    fused ops of both outputs (count_ops), on generated and exporter-shaped models;
# 4. peak RSS with several GB of external weights against the same graph with small ones.
# Overrides: LAYERS (step 1), CLI_LAYERS (2), ORT_LAYERS, EXPORTER_MODELS ("family:exporter
# ..."), EXPORTER_LAYERS (3), RSS_LAYERS, RSS_HIDDEN, RSS_SKIP (4), RUNS (repetitions of each
# timed command in 3). Every figure of the report comes from this one run; raw results go
# to build-bench/bench-results/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build-bench"
results="$build/bench-results"
doc="$root/docs/benchmarks.md"
bench="$root/tests/bench"
if [[ -n ${QUICK:-} ]]; then
  layers=(${LAYERS:-1 20 200})
  cli_layers=(${CLI_LAYERS:-20 200})
  ort_layers=(${ORT_LAYERS:-1 12})
  rss_layers=${RSS_LAYERS:-2}
else
  # 59 .. 10^6 nodes (50 per layer + 9); 20, 200, 2000 and 20000 layers are the powers of ten.
  layers=(${LAYERS:-1 10 20 100 200 1000 2000 20000})
  cli_layers=(${CLI_LAYERS:-20 200 2000})  # 20000 adds a minute and a half
  ort_layers=(${ORT_LAYERS:-1 12 48})
  rss_layers=${RSS_LAYERS:-6}
fi
rss_hidden=${RSS_HIDDEN:-4096}  # 6 layers: 4.8 GB of weights
runs=${RUNS:-5}                  # repetitions of each timed command (the median is reported)

started=$EPOCHREALTIME
cd "$root"
# Timed as deployers run it: without the test builds' check after every rewrite.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DONNX_REWRITE_TESTS=ON \
  -DONNX_REWRITE_BENCHMARKS=ON -DONNX_REWRITE_VERIFY_REWRITES=OFF >/dev/null
targets=(rewrite_benchmark gen_transformer count_ops onnx-rewrite)
# Not `ninja ... | grep -q`: grep quits at the first match, ninja then dies of SIGPIPE and
# pipefail makes the test false, which skipped the exporter models.
if ninja -C "$build" -t targets all 2>/dev/null | grep '^gen_exporter_model:' >/dev/null; then
  targets+=(gen_exporter_model)
fi
cmake --build "$build" --target "${targets[@]}"
# The interpreted side reads rule files at run time: measure a copy of rules/ taken right
# after the build compiled generated/, so both sides run the same rules even if rules/
# changes meanwhile (rewrite_benchmark reports whether the rule names agree).
rules_snapshot="$(mktemp -d)"
cp "$root"/rules/*.yaml "$root"/rules/*.td "$rules_snapshot"/ 2>/dev/null || true
export ONNX_REWRITE_BENCH_RULES="$rules_snapshot"
gen="$build/tests/bench/gen_transformer"
count="$build/tests/bench/count_ops"
rewrite="$build/onnx-rewrite"
exporter="$(find "$build/tests/support" -name gen_exporter_model -type f -perm -u+x 2>/dev/null | head -1)"

rm -rf "$results"
mkdir -p "$results"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp" "$rules_snapshot"' EXIT
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
"$rewrite" --list-rules >"$results/rules.txt"

timecmd() { python3 "$bench/timecmd.py" "$@"; }

# 1. Rewrite core, compiled vs interpreted, and every phase: one process per size.
for n in "${layers[@]}"; do
  echo "== rewrite_benchmark --layers=$n" >&2
  "$build/tests/bench/rewrite_benchmark" --layers="$n" \
    --benchmark_out="$results/phases_$n.json" --benchmark_out_format=json >&2
done

# 2. The command end to end on the same models written to disk (external weights).
for n in "${cli_layers[@]}"; do
  echo "== onnx-rewrite on $n layers" >&2
  "$gen" --layers "$n" --external --out "$tmp/m.onnx" >&2
  timecmd -- "$rewrite" "$tmp/m.onnx" -o "$tmp/f.onnx" --stats "$results/cli_stats_$n.json" -q \
    >"$results/cli_$n.json"
  rm -f "$tmp"/*
done

# 3. File to fused file against ONNX Runtime's offline optimization, on models with real
# (inline, seeded random) weights, which ONNX Runtime needs.
compare_ort() {  # name input [onnx-rewrite options...]
  local name=$1 input=$2
  shift 2
  echo "== $name: onnx-rewrite vs ONNX Runtime" >&2
  timecmd --runs "$runs" -- "$rewrite" -q "$input" -o "$tmp/ours.onnx" "$@" \
    --stats "$tmp/ours_stats.json" >"$tmp/ours.json"
  timecmd --runs "$runs" -- "$rewrite" -q "$input" -o "$tmp/ours_nosi.onnx" "$@" \
    --no-shape-inference >"$tmp/ours_nosi.json"
  node "$bench/ort_optimize.js" "$input" "$tmp/ort.onnx" --runs "$runs" >"$tmp/ort.json"
  {
    printf '{"name": "%s", "input_bytes": %s,\n' "$name" "$(stat -c %s "$input")"
    printf ' "ours": %s,\n "ours_stats": %s,\n' "$(cat "$tmp/ours.json")" "$(cat "$tmp/ours_stats.json")"
    printf ' "ours_no_shape_inference": %s,\n' "$(cat "$tmp/ours_nosi.json")"
    printf ' "ort": %s,\n' "$(cat "$tmp/ort.json")"
    printf ' "counts": [%s]}\n' \
      "$("$count" "$input" "$tmp/ours.onnx" "$tmp/ort.onnx" "$tmp/ours_nosi.onnx" | paste -sd,)"
  } >"$results/ort_$name.json"
  rm -f "$tmp"/*
}
# The fixed cost of a run: process start-up and static initialisation (ONNX's schema registry).
timecmd --runs "$runs" -- "$rewrite" --version >"$results/startup.json"
for n in "${ort_layers[@]}"; do
  "$gen" --layers "$n" --out "$results/.in.onnx" >&2  # outside $tmp, which compare_ort empties
  compare_ort "transformer_$n" "$results/.in.onnx"
done
if [[ -n $exporter && -z ${QUICK:-} ]]; then
  # Models in the forms real exporters write (tests/support/gen_exporter_model).
  for model in ${EXPORTER_MODELS:-bert:torchscript gpt2:torchscript heads:torchscript llama:dynamo phi:dynamo}; do
    family=${model%%:*} form=${model#*:}
    "$exporter" --family "$family" --exporter "$form" --layers "${EXPORTER_LAYERS:-12}" \
      -o "$results/.in.onnx" >&2 || { echo "gen_exporter_model: $model failed" >&2; continue; }
    # The models' position_ids stay below the generator's default 64 positions: stated so
    # that RoPE computed per forward pass (dynamo LLaMA/Phi) fuses.
    compare_ort "${family}_${form}_${EXPORTER_LAYERS:-12}" "$results/.in.onnx" --max-positions 64
  done
fi
rm -f "$results/.in.onnx"

# 4. Peak RSS with several GB of external weights (a sparse file) against the same graph with
# small weights: with every rule, and without the rules that must read weights (RSS_SKIP:
# packed_attention concatenates the Q, K and V weights into one initializer).
for variant in all skip; do
  skip=()
  [[ $variant == skip ]] && skip=(--skip "${RSS_SKIP:-packed_attention}")
  for size in big small; do
    hidden=$([[ $size == big ]] && echo "$rss_hidden" || echo 64)
    echo "== peak RSS, $size weights (hidden $hidden), rules: $variant" >&2
    "$gen" --layers "$rss_layers" --hidden "$hidden" --external --out "$tmp/m.onnx" >&2
    timecmd -- "$rewrite" "$tmp/m.onnx" -o "$tmp/f.onnx" --stats "$tmp/stats.json" -q "${skip[@]}" \
      >"$tmp/time.json"
    printf '{"hidden": %s, "layers": %s, "skip": "%s", "weights_bytes": %s, "weights_disk_kb": %s, "model_bytes": %s, "out_bytes": %s,\n "run": %s,\n "stats": %s}\n' \
      "$hidden" "$rss_layers" "${skip[1]:-}" "$(stat -c %s "$tmp/m.onnx.data")" \
      "$(du -k "$tmp/m.onnx.data" | cut -f1)" "$(stat -c %s "$tmp/m.onnx")" "$(stat -c %s "$tmp/f.onnx")" \
      "$(cat "$tmp/time.json")" "$(cat "$tmp/stats.json")" >"$results/rss_${size}_$variant.json"
    rm -f "$tmp"/*
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
total_seconds="$(awk -v a="$EPOCHREALTIME" -v b="$started" 'BEGIN {printf "%.0f", a - b}')"

compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then commit="$commit + uncommitted changes"; fi

RESULTS="$results" DOC="$doc" QUICK="${QUICK:-}" \
LAYERS_RUN="${layers[*]}" CLI_LAYERS_RUN="${cli_layers[*]}" ORT_RUNS="$runs" \
MACHINE_NPROC="$(nproc)" \
MACHINE_CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
MACHINE_RAM="$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)" \
MACHINE_COMPILER="$("$compiler" --version | head -1)" \
MACHINE_KERNEL="$(uname -sr)" \
ORT_VERSION="$(node -p "require('$root/tests/oracle/node_modules/onnxruntime-node/package.json').version")" \
NODE_VERSION="$(node --version)" \
RUN_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')" RUN_COMMIT="$commit" RUN_SECONDS="$total_seconds" \
LOAD_BEFORE="$load_before" LOAD_AFTER="$load_after" \
python3 "$bench/report.py"
echo "wrote $doc" >&2
