#!/usr/bin/env bash
# Builds the benchmarks in Release (build-bench/), runs them and writes docs/benchmarks.md.
#
#   bash tests/bench/run.sh                  # ~10^3 .. 10^6 nodes, a few minutes
#   LAYERS="20 200" bash tests/bench/run.sh  # a quick run (layers; 50 nodes each)
#
# Each model size runs in its own process, so the peak RSS reported for a size is that
# size's own. Raw Google Benchmark JSON goes to build-bench/bench-results/. Besides the
# per-phase benchmark, the onnx-rewrite command is timed end to end on each model.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$root/build-bench"
results="$build/bench-results"
doc="$root/docs/benchmarks.md"
layers=(${LAYERS:-20 200 2000 20000})

cd "$root"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DONNX_REWRITE_TESTS=ON \
  -DONNX_REWRITE_BENCHMARKS=ON >/dev/null
cmake --build "$build" --target rewrite_benchmark gen_transformer onnx-rewrite

rm -rf "$results"
mkdir -p "$results"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${layers[@]}"; do
  echo "== rewrite_benchmark --layers=$n" >&2
  "$build/tests/bench/rewrite_benchmark" --layers="$n" \
    --benchmark_out="$results/phases_$n.json" --benchmark_out_format=json >&2
done

# End to end: the command a deployer runs, on the same models written to disk.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for n in "${layers[@]}"; do
  echo "== onnx-rewrite on $n layers" >&2
  "$build/tests/bench/gen_transformer" --layers "$n" --external --out "$tmp/m.onnx" >&2
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$build/onnx-rewrite" "$tmp/m.onnx" -o "$tmp/f.onnx" \
    --stats "$results/cli_stats_$n.json" -q
  read -r seconds max_kb <"$tmp/time"
  printf '{"layers": %s, "seconds": %s, "max_rss_kb": %s}\n' "$n" "$seconds" "$max_kb" \
    >"$results/cli_$n.json"
  rm -f "$tmp"/*
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then commit="$commit + uncommitted changes"; fi

RESULTS="$results" DOC="$doc" LAYERS_RUN="${layers[*]}" \
MACHINE_NPROC="$(nproc)" \
MACHINE_CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
MACHINE_RAM="$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)" \
MACHINE_COMPILER="$("$compiler" --version | head -1)" \
MACHINE_KERNEL="$(uname -sr)" \
RUN_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')" RUN_COMMIT="$commit" \
LOAD_BEFORE="$load_before" LOAD_AFTER="$load_after" \
python3 "$root/tests/bench/report.py"
echo "wrote $doc" >&2
