#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time and fails on any crash.
#
#   tests/fuzz/run.sh [-j JOBS] [-t SECONDS] [-w WORKDIR] BUILD_DIR [TARGET...]
#
# BUILD_DIR was configured with -DONNX_REWRITE_FUZZ=ON (clang-14, usually also
# -DONNX_REWRITE_SANITIZE=ON) and built (target `fuzzers`). Each target runs SECONDS
# (default 45) with -max_total_time, JOBS (default 2) at a time, from seeds taken from
# tests/ (rule files, the model seeds make_model_seeds writes, tests/fuzz/seeds) plus the
# corpus earlier runs left in WORKDIR (default BUILD_DIR/fuzz). A crash, leak, timeout
# or out-of-memory fails the run and prints the reproducer's path; replay it with
#   BUILD_DIR/tests/fuzz/fuzz_<target> REPRODUCER
# At the end one line per target gives executions, coverage and corpus size.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

jobs=2 seconds=45 work=""
while getopts "j:t:w:" opt; do
  case $opt in
    j) jobs=$OPTARG ;;
    t) seconds=$OPTARG ;;
    w) work=$OPTARG ;;
    *) echo "usage: $0 [-j JOBS] [-t SECONDS] [-w WORKDIR] BUILD_DIR [TARGET...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || { echo "usage: $0 [-j JOBS] [-t SECONDS] [-w WORKDIR] BUILD_DIR [TARGET...]" >&2; exit 2; }
build="$(cd "$1" && pwd)"
shift
targets=("$@")
((${#targets[@]})) || targets=(model yaml_rules tablegen_rules rule_expr command_line)
work="${work:-$build/fuzz}"
bin="$build/tests/fuzz"
for t in "${targets[@]}"; do
  [[ -x $bin/fuzz_$t ]] || { echo "fuzz: $bin/fuzz_$t not built (configure with -DONNX_REWRITE_FUZZ=ON, build target fuzzers)" >&2; exit 2; }
done

# ---- Seeds: from tests/ and rules/, assembled fresh each run -------------------------
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{model,yaml_rules,tablegen_rules,rule_expr,command_line}
"$bin/make_model_seeds" "$seeds/model"
cp "$root"/tests/models/examples/*.onnx "$seeds/model/"
cp "$root"/rules/*.yaml "$root"/tests/unit/dsl_yaml/data/*.yaml "$root"/tests/unit/dsl_tablegen/data/*.yaml \
  "$seeds/yaml_rules/"
cp "$root"/rules/*.td "$root"/tests/unit/dsl_tablegen/data/*.td "$seeds/tablegen_rules/"
cp "$root"/tests/fuzz/seeds/rule_expr/* "$seeds/rule_expr/"
cp "$root"/tests/fuzz/seeds/command_line/* "$seeds/command_line/"

# ---- Run -------------------------------------------------------------------------------
# Sanitizer reports end the process (the build uses -fno-sanitize-recover); leaks count.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
# The targets write their scratch files (the model, its output, the rule file) here.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

run_one() {
  local t=$1
  local corpus="$work/corpus/$t" artifacts="$work/artifacts/$t/" log="$work/$t.log"
  mkdir -p "$corpus" "$artifacts"
  local dict=()
  [[ -f $root/tests/fuzz/$t.dict ]] && dict=(-dict="$root/tests/fuzz/$t.dict")
  # -timeout: one input may take this long (a rewrite of the largest seed under ASan takes
  # well under a second). -rss_limit_mb: the budget of a run (docs/security.md, Limits).
  # -max_len: large enough for every seed (the biggest is an 88 KB model).
  "$bin/fuzz_$t" "$corpus" "$seeds/$t" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=2560 -max_len=131072 -artifact_prefix="$artifacts" -print_final_stats=1 \
    "${dict[@]}" >"$log" 2>&1
}

export -f run_one
export work seeds bin root seconds
start=$(date +%s)
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {} && echo "fuzz: {} ok" || echo "fuzz: {} FAILED"' \
  | tee "$work/results.txt"
elapsed=$(($(date +%s) - start))

# ---- Report ----------------------------------------------------------------------------
failed=0
for t in "${targets[@]}"; do
  log="$work/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$line")
  if grep -q "fuzz: $t FAILED" "$work/results.txt"; then
    failed=1
    echo "fuzz: $t: FAILED; log $log"
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written to|the parse process|does not load again|terminate called' "$log" | head -20 | sed 's/^/  /'
    for f in "$work/artifacts/$t"/*; do
      [[ -e $f ]] && echo "  reproducer: $f (replay: $bin/fuzz_$t $f)"
    done
  else
    echo "fuzz: $t: ${execs:-?} execs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?} in ${seconds}s"
  fi
done
echo "fuzz: ${#targets[@]} target(s), ${seconds}s each, $jobs at a time: ${elapsed}s"
exit $failed
