#!/usr/bin/env bash
# generated_is_current: regenerates generated/ from rules/ into a temporary folder and
# fails, naming the command to run, if the committed files differ.
# Usage: check_generated.sh RULEC   (run from the repository root)
set -euo pipefail
rulec=$1
files=(rules/com_microsoft.yaml rules/layer_norm.yaml rules/rms_norm.td rules/skip_layer_norm.yaml)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rulec" --emit=cpp -o "$tmp/generated" "${files[@]}"
if ! diff -r "$tmp/generated" generated >"$tmp/diff"; then
  head -n 60 "$tmp/diff"
  echo "generated/ is stale: run build/compiler/rulec/rulec --emit=cpp -o generated ${files[*]}"
  echo "(from the repository root; if rulec no longer builds because generated/ does not"
  echo " compile, delete generated/*.gen.* first, rebuild rulec, then run the command)"
  exit 1
fi
echo "generated/ is current"
