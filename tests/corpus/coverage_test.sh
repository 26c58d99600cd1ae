#!/usr/bin/env bash
# coverage.js renders score.js results into the coverage page: the table by kind, the
# records met by only one side with the failing checks, the whole exports; bad input is an
# error with exit 2 and no page written.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "coverage_test: $*" >&2; exit 1; }

node "$here/coverage.js" --render "$here/testdata/ours.json" "$here/testdata/ort.json" \
  --out "$work/coverage.md" 2>/dev/null
page="$work/coverage.md"
grep -qxF '| layer_norm | 1/1 | 0/1 |' "$page" || fail "no layer_norm row"
grep -qxF '| attention | 0/1 | 1/1 |' "$page" || fail "no attention row"
grep -qxF '| **all** | **1/2** (50%) | **1/2** (50%) |' "$page" || fail "no total row"
grep -qxF '| norm | 1/1 | 0/1 |' "$page" || fail "no row for the Python tests' graphs"
grep -qF '| norm__x.onnx | TestNorm.test_x | met | missed |' "$page" ||
  fail "no row for a Python test graph only ours meets"
grep -qF '| attention_x.onnx | AttentionFusionTest | missed | met | Attention 0 (need >= 1) |' \
  "$page" || fail "no missed record row"
grep -qF '| layer_norm.onnx | LayerNormFusionTest | met | missed |' "$page" ||
  fail "no row for a record only ours meets"
grep -qF 'ContextOnly' "$page" && fail "an n/a record is listed"
grep -qxF '| whole.onnx | LayerNormalization 2 | LayerNormalization 2, Attention 1 |' "$page" ||
  fail "no whole-export row"
grep -qF '3 pass, 0 fail, 1 not runnable' "$page" || fail "no parity line"

# Errors: unreadable results and unknown flags exit 2, naming the problem, writing nothing.
set +e
msg=$(node "$here/coverage.js" --render "$work/missing.json" "$here/testdata/ort.json" \
  --out "$work/bad.md" 2>&1)
code=$?
set -e
[[ $code == 2 ]] || fail "missing results: exit $code, not 2"
[[ $msg == *"cannot read score results $work/missing.json"* ]] || fail "message: $msg"
[[ ! -e $work/bad.md ]] || fail "a page was written from missing results"
set +e
msg=$(node "$here/coverage.js" --bogus 2>&1)
code=$?
set -e
[[ $code == 2 && $msg == *"unknown argument '--bogus'"* ]] || fail "bad flag: exit $code: $msg"
echo "coverage_test: ok"
