#!/usr/bin/env bash
# Compiles every rule file of rules/ (*.yaml and *.td, in byte order of their names) into
# OUT_DIR (default generated/). The one list of shipped rule files: the generated_is_current
# test and the rule tests' interpreted mode read rules/ in the same order.
# Usage: compiler/rulec/regenerate.sh [RULEC [OUT_DIR]]   (run from the repository root)
set -euo pipefail
rulec=${1:-build/compiler/rulec/rulec}
out=${2:-generated}
mapfile -t files < <(find rules -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.td' \) | LC_ALL=C sort)
exec "$rulec" --emit=cpp -o "$out" "${files[@]}"
