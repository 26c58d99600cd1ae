#!/usr/bin/env bash
# rulec_cpp_golden: `rulec --emit=cpp` on small rule files under tests/unit/codegen/data
# must print exactly the committed *.gen.cc.golden text.
# Usage: check_golden.sh RULEC   (run from the repository root)
set -euo pipefail
rulec=$1
data=tests/unit/codegen/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for rules in "$data"/*.yaml; do
  stem=$(basename "$rules" .yaml)
  "$rulec" --emit=cpp -o "$tmp/$stem" "$rules"
  if ! diff -u "$data/$stem.gen.cc.golden" "$tmp/$stem/$stem.gen.cc"; then
    echo "golden mismatch for $rules; to accept: cp $tmp/$stem/$stem.gen.cc $data/$stem.gen.cc.golden"
    status=1
  fi
done
exit $status
