#!/usr/bin/env bash
# rulec and `onnx-rewrite --rules` refuse the same rules with the same message (issue 15,
# item 4): both load rules through dsl/RuleLoader, which also binds every rule as the
# interpreter does (runtime/interp/BindCheck.h). For each bad file below, every --emit mode
# of rulec and onnx-rewrite --rules exit 1 and print the same first line, file:line:col.
#   same_checks_test.sh RULEC ONNX_REWRITE
set -euo pipefail
rulec="$1"
onnx_rewrite="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A native predicate no C++ registered.
cat >"$tmp/unknown_native.yaml" <<'YAML'
rules:
  - rule: add_small
    match: |
      y = Add(a, b)
    where:
      b: { native: "is_small(b)" }
    rewrite: |
      y = Sub(a, b)
YAML
# An element type that is no ONNX type, written where TableGen does not check it.
cat >"$tmp/bad_elem_type.td" <<'TD'
include "onnx_rewrite/Rule.td"

def AddTyped : Rule<"add_typed"> {
  let match = [(Add:$y $a, $b)];
  let where = [ElemType<"b", ["//"]>];
  let rewrite = [(Sub:$y $a, $b)];
}
TD
# A registered native called with the wrong number of arguments.
cat >"$tmp/native_arity.yaml" <<'YAML'
rules:
  - rule: add_last
    match: |
      y = Add(a, b)
    where:
      b: { native: "last_dim_of(b)" }
    rewrite: |
      y = Sub(a, b)
YAML

check() {
  local file=$1 expected=$2 out status
  for emit in check ir dot cpp; do
    set +e
    "$rulec" --emit=$emit -o "$tmp/out.$emit" "$tmp/$file" 2>"$tmp/err"
    status=$?
    set -e
    [[ $status == 1 ]] || { cat "$tmp/err"; fail "rulec --emit=$emit: exit status $status for $file"; }
    [[ ! -e $tmp/out.$emit ]] || fail "rulec --emit=$emit wrote output for $file"
    [[ "$(head -1 "$tmp/err")" == "$expected" ]] \
      || { cat "$tmp/err"; fail "rulec --emit=$emit: first line for $file"; }
  done
  set +e
  "$onnx_rewrite" --rules "$tmp/$file" "$root/tests/models/examples/bert_tiny.onnx" \
    -o "$tmp/out.onnx" 2>"$tmp/err"
  status=$?
  set -e
  [[ $status == 1 ]] || { cat "$tmp/err"; fail "onnx-rewrite --rules: exit status $status for $file"; }
  [[ ! -e $tmp/out.onnx ]] || fail "onnx-rewrite wrote output for $file"
  [[ "$(head -1 "$tmp/err")" == "$expected" ]] \
    || { cat "$tmp/err"; fail "onnx-rewrite --rules: first line for $file"; }
}

check unknown_native.yaml "$tmp/unknown_native.yaml:6:12: error: no native predicate named 'is_small'"
check bad_elem_type.td "$tmp/bad_elem_type.td:5:16: error: unknown element type '//'"
check native_arity.yaml "$tmp/native_arity.yaml:6:12: error: native predicate last_dim_of takes 2 arguments, not 1"
echo "rulec and onnx-rewrite --rules agree"
