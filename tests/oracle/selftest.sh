#!/usr/bin/env bash
# Self-test of the ORT oracle (compare.js) on the tiny models in testdata/.
# Exits non-zero if any expectation fails. Needs node and tests/oracle/node_modules
# (run .ci/setup.sh first).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
td="$here/testdata"
cmp_js="$here/compare.js"

if ! command -v node >/dev/null 2>&1; then
  echo "selftest: node not found; run .ci/setup.sh" >&2; exit 1
fi
if [[ ! -d "$here/node_modules/onnxruntime-node" ]]; then
  echo "selftest: $here/node_modules/onnxruntime-node missing; run .ci/setup.sh" >&2; exit 1
fi

pass=0 fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# expect NAME WANTED_EXIT_CODE ARGS... : run compare.js and check its exit code
expect() {
  local name=$1 want=$2; shift 2
  local got=0
  node "$cmp_js" "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
  if [[ $got == "$want" ]]; then
    pass=$((pass + 1)); echo "ok   $name (exit $got)"
  else
    fail=$((fail + 1)); echo "FAIL $name: expected exit $want, got $got"
    sed 's/^/     | /' "$tmp/out" "$tmp/err"
  fi
}

expect "erf GELU == com.microsoft.Gelu"      0 "$td/gelu_erf.onnx" "$td/gelu_ms.onnx" --dim batch=3
expect "erf GELU == com.microsoft.Gelu x3"   0 "$td/gelu_erf.onnx" "$td/gelu_ms.onnx" --dim batch=5 --runs 3 --seed 11
expect "erf GELU != tanh variant"            1 "$td/gelu_erf.onnx" "$td/gelu_wrong.onnx" --dim batch=3
expect "never finite: shows nothing"         1 "$td/all_nan.onnx" "$td/all_nan.onnx" --dim batch=3
expect "missing --dim is a usage error"      2 "$td/gelu_erf.onnx" "$td/gelu_ms.onnx"
expect "different input/output names"        2 "$td/gelu_erf.onnx" "$td/types.onnx" --dim batch=3
expect "all input dtypes round-trip"         0 "$td/types.onnx" "$td/types.onnx" --dim n=4 --int-range i64=0:1000
expect "missing model file"                  2 "$td/gelu_erf.onnx" "$td/does_not_exist.onnx" --dim batch=3
expect "a bool pinned true"                  0 "$td/types.onnx" "$td/types.onnx" --dim n=4 --int-range b=1:2
expect "a bool range past 0:2"               2 "$td/types.onnx" "$td/types.onnx" --dim n=4 --int-range b=0:3

# --int-range pins a bool input (a merged decoder's use_cache_branch): 1:2 all true, 0:1 all false
if node -e '
  const { generate, mulberry32 } = require(process.argv[1]);
  const t = generate("bool", 64, mulberry32(7), [1, 2]), f = generate("bool", 64, mulberry32(7), [0, 1]);
  const r = generate("bool", 64, mulberry32(7), [0, 2]);
  if (!t.every((x) => x === 1) || !f.every((x) => x === 0) || r.every((x) => x === r[0])) process.exit(1);
' "$cmp_js"; then
  pass=$((pass + 1)); echo "ok   --int-range pins bool inputs"
else
  fail=$((fail + 1)); echo "FAIL --int-range pins bool inputs"
fi

# --json prints one parseable object whose verdict matches the exit code
got=0
node "$cmp_js" "$td/gelu_erf.onnx" "$td/gelu_wrong.onnx" --dim batch=2 --json >"$tmp/json" 2>"$tmp/err" || got=$?
if [[ $got == 1 ]] && node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.ok !== false || r.outputs.length !== 1 || r.outputs[0].name !== "y" || !(r.outputs[0].max_abs > 0)) process.exit(1);
' "$tmp/json"; then
  pass=$((pass + 1)); echo "ok   --json output (exit $got)"
else
  fail=$((fail + 1)); echo "FAIL --json output: exit $got"; sed 's/^/     | /' "$tmp/json" "$tmp/err"
fi

# the committed .onnx files match their .textproto sources (when protoc is available)
if command -v protoc >/dev/null 2>&1 && [[ -f /usr/include/onnx/onnx.proto ]]; then
  stale=()
  for t in "$td"/*.textproto; do
    protoc --encode=onnx.ModelProto -I/usr/include onnx/onnx.proto <"$t" >"$tmp/enc.onnx"
    cmp -s "$tmp/enc.onnx" "${t%.textproto}.onnx" || stale+=("$(basename "${t%.textproto}").onnx")
  done
  if ((${#stale[@]} == 0)); then
    pass=$((pass + 1)); echo "ok   testdata .onnx files match their .textproto"
  else
    fail=$((fail + 1)); echo "FAIL stale testdata (run testdata/regen.sh): ${stale[*]}"
  fi
fi

echo "selftest: $pass passed, $fail failed"
((fail == 0))
