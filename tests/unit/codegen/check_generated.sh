#!/usr/bin/env bash
# generated_is_current: regenerates generated/ from rules/ into a temporary folder and
# fails, naming the command to run, if the committed files differ.
# Usage: check_generated.sh RULEC   (run from the repository root)
set -euo pipefail
rulec=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash compiler/rulec/regenerate.sh "$rulec" "$tmp/generated"
if ! diff -r "$tmp/generated" generated >"$tmp/diff"; then
  head -n 60 "$tmp/diff"
  echo "generated/ is stale: run bash compiler/rulec/regenerate.sh (from the repository root)"
  echo "(if rulec no longer builds because generated/ does not compile, delete"
  echo " generated/*.gen.* first, rebuild rulec, then run the command)"
  exit 1
fi
echo "generated/ is current"
