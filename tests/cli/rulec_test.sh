#!/usr/bin/env bash
# rulec as an author meets it: the shipped rules check clean; IR and dot are written; a
# mistake gives file:line:col, the source line and a caret, exit status 1 and no output.
set -euo pipefail
rulec="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$rulec" --emit=check "$root"/rules/* 2>"$tmp/err" || { cat "$tmp/err"; fail "shipped rules do not check"; }
grep -q "0 warning(s)" "$tmp/err" || { cat "$tmp/err"; fail "shipped rules have warnings"; }

"$rulec" --emit=ir -o "$tmp/rules.ir" "$root"/rules/*
grep -q "^rule layer_norm priority 130" "$tmp/rules.ir" || fail "IR lacks layer_norm"
grep -q "^rule simplified_layer_norm priority 100" "$tmp/rules.ir" || fail "IR lacks the .td rule"

"$rulec" --emit=dot "$root/rules/layer_norm.yaml" >"$tmp/rules.dot"
[[ $(head -1 "$tmp/rules.dot") == 'digraph "layer_norm" {' ]] || fail "dot output"

cat >"$tmp/bad.yaml" <<'YAML'
rules:
  - rule: typo
    match: |
      y = ReduceMaen(x, axes=[-1])
    rewrite: |
      y = Identity(x)
YAML
set +e
"$rulec" --emit=ir -o "$tmp/out.ir" "$tmp/bad.yaml" 2>"$tmp/err"
status=$?
set -e
[[ $status == 1 ]] || fail "exit status $status for a bad rule"
[[ ! -e $tmp/out.ir ]] || fail "output written despite errors"
expected="$tmp/bad.yaml:4:11: error: unknown op 'ReduceMaen'; did you mean 'ReduceMean'?
      y = ReduceMaen(x, axes=[-1])
          ^"
[[ "$(head -3 "$tmp/err")" == "$expected" ]] || { cat "$tmp/err"; fail "diagnostic text"; }

set +e
"$rulec" --emit=bogus "$root/rules/layer_norm.yaml" 2>"$tmp/err"
status=$?
set -e
[[ $status == 2 ]] || fail "exit status $status for a bad --emit"
grep -q "unknown --emit value 'bogus'" "$tmp/err" || fail "usage message"
# Hostile rule files (issue 15): include "/dev/zero" and a self-include are errors at the
# include, within seconds, not a hang or a crashed parse process; a FIFO is not read.
printf 'include "/dev/zero"\n' >"$tmp/zero.td"
printf 'include "self.td"\n' >"$tmp/self.td"
mkfifo "$tmp/fifo.yaml"
for bad in zero.td self.td fifo.yaml; do
  set +e
  timeout 20 "$rulec" --emit=ir -o "$tmp/out.ir" "$tmp/$bad" 2>"$tmp/err"
  status=$?
  set -e
  [[ $status == 1 ]] || { cat "$tmp/err"; fail "exit status $status for $bad"; }
  [[ ! -e $tmp/out.ir ]] || fail "output written for $bad"
done
{ timeout 20 "$rulec" --emit=check "$tmp/zero.td" 2>&1 || true; } | grep -q "zero.td:1:1: error: include \"/dev/zero\": '/dev/zero' is not a regular file" || fail "/dev/zero message"
{ timeout 20 "$rulec" --emit=check "$tmp/self.td" 2>&1 || true; } | grep -q "self.td:1:1: error: include \"self.td\": the file includes itself" || fail "self-include message"
{ timeout 20 "$rulec" --emit=check "$tmp/fifo.yaml" 2>&1 || true; } | grep -q "fifo.yaml: error: cannot read rule file: it is not a regular file" || fail "FIFO message"
# Rules that would never stop (issues 15 and 16): a rewrite its own match fits again, and
# two rules each fitting what the other creates, are errors at the rewrite.
cat >"$tmp/endless.yaml" <<'YAML'
rules:
  - rule: grow
    match: |
      y = Relu(Relu(x))
    rewrite: |
      y = Relu(Relu(Relu(x)))
  - rule: add_to_sub
    match: |
      y = Add(a, b)
    rewrite: |
      y = Sub(a, Neg(b))
  - rule: sub_to_add
    match: |
      y = Sub(a, b)
    rewrite: |
      y = Add(a, Neg(b))
YAML
set +e
"$rulec" --emit=check "$tmp/endless.yaml" 2>"$tmp/err"
status=$?
set -e
[[ $status == 1 ]] || { cat "$tmp/err"; fail "exit status $status for endless rules"; }
grep -q "endless.yaml:6:16: error: rule 'grow' matches the Relu its own rewrite creates: it would apply to its own result forever" "$tmp/err" || { cat "$tmp/err"; fail "growing rule message"; }
grep -q "endless.yaml:16:11: error: rules 'add_to_sub' and 'sub_to_add' undo each other" "$tmp/err" || { cat "$tmp/err"; fail "rule pair message"; }
echo "rulec: all checks passed"
