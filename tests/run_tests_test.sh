#!/usr/bin/env bash
# tests/run_tests.js, CI's test runner, on fake build trees: a CTestTestfile.cmake listing
# the cases of one fake googletest binary (a script printing googletest's lines) and one
# other test. It must pass a passing tree, and fail, saying why, a binary that fails a
# case, runs fewer cases than ctest lists, or dies before its summary; bad arguments exit 2.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
runner=(node "$root/tests/run_tests.js")

# fake_tree DIR MODE: a build tree whose binary behaves as MODE says (pass, fail, fewer, crash).
fake_tree() {
  local dir="$1" mode="$2"
  mkdir -p "$dir"
  cat >"$dir/fake_gtest" <<SH
#!/usr/bin/env bash
[[ "\$*" == "--gtest_also_run_disabled_tests --extra" ]] || { echo "wrong arguments: \$*"; exit 3; }
[[ "\$PWD" == "$dir" ]] || { echo "wrong directory: \$PWD"; exit 3; }
[[ "\${FAKE_ENV:-}" == "set" ]] || { echo "no FAKE_ENV"; exit 3; }
echo "[ RUN      ] Suite.one"
echo "[       OK ] Suite.one (0 ms)"
case "$mode" in
  pass)  echo "[ RUN      ] Suite.two"; echo "[       OK ] Suite.two (0 ms)";
         echo "[==========] 2 tests from 1 test suite ran. (1 ms total)"; exit 0 ;;
  fail)  echo "[ RUN      ] Suite.two"; echo "x.cc:3: Failure"; echo "Expected 1";
         echo "[  FAILED  ] Suite.two (0 ms)";
         echo "[==========] 2 tests from 1 test suite ran. (1 ms total)"; exit 1 ;;
  fewer) echo "[==========] 1 test from 1 test suite ran. (1 ms total)"; exit 0 ;;
  crash) echo "[ RUN      ] Suite.two"; echo "==1==ERROR: AddressSanitizer: heap-use-after-free";
         kill -SEGV \$\$ ;;
esac
SH
  chmod +x "$dir/fake_gtest"
  {
    for t in one two; do
      echo "add_test([=[Suite.$t]=] \"$dir/fake_gtest\" \"--gtest_filter=Suite.$t\" \"--gtest_also_run_disabled_tests\" \"--extra\")"
      echo "set_tests_properties([=[Suite.$t]=] PROPERTIES WORKING_DIRECTORY \"$dir\" ENVIRONMENT \"FAKE_ENV=set\")"
    done
    echo "add_test(other_test \"/bin/true\")"
  } >"$dir/CTestTestfile.cmake"
}

fake_tree "$tmp/pass" pass
"${runner[@]}" "$tmp/pass" -j 2 >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "a passing tree failed"; }
"${runner[@]}" "$tmp/pass" -j1 >/dev/null 2>&1 || fail "-j1 refused"
grep -q "3 tests: 1 googletest binaries run once each (2 cases), 1 other tests" "$tmp/out" ||
  { cat "$tmp/out"; fail "the summary of the tree"; }
grep -q "all 3 tests passed" "$tmp/out" || { cat "$tmp/out"; fail "no pass line"; }

expect_failure() {  # MODE TEXT...: the tree of MODE fails with exit 1 and says each TEXT
  local mode="$1"; shift
  fake_tree "$tmp/$mode" "$mode"
  set +e
  "${runner[@]}" "$tmp/$mode" >"$tmp/out" 2>&1
  local rc=$?
  set -e
  [[ $rc == 1 ]] || { cat "$tmp/out"; fail "$mode: exit $rc, not 1"; }
  for text in "$@"; do
    grep -qF -- "$text" "$tmp/out" || { cat "$tmp/out"; fail "$mode: no '$text'"; }
  done
}
expect_failure fail "fake_gtest: FAILED (exit 1)" "x.cc:3: Failure" "[  FAILED  ] Suite.two (0 ms)"
expect_failure fewer "FAILED (ran 1 tests, ctest lists 2)"
expect_failure crash "FAILED (killed by SIGSEGV)" "--- last lines of the log:" \
  "AddressSanitizer: heap-use-after-free"
# A failed case's report is enough: no log tail after it.
fake_tree "$tmp/fail2" fail
"${runner[@]}" "$tmp/fail2" >"$tmp/out" 2>&1 || true
if grep -q "last lines of the log" "$tmp/out"; then cat "$tmp/out"; fail "tail after a failed case"; fi

usage() {  # EXPECTED_MESSAGE ARGS...: exit 2 with the message and the usage line
  local message="$1"; shift
  set +e
  "${runner[@]}" "$@" >"$tmp/out" 2>&1
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$tmp/out"; fail "exit $rc for '$*', not 2"; }
  grep -qF -- "run_tests: $message" "$tmp/out" || { cat "$tmp/out"; fail "no '$message'"; }
  grep -q "^usage: node tests/run_tests.js" "$tmp/out" || fail "no usage line for '$*'"
}
usage "no build directory"
usage "'$tmp/none' is not a configured build directory (no CTestTestfile.cmake)" "$tmp/none"
usage "bad job count 'x'" "$tmp/pass" -j x
usage "bad job count '0'" "$tmp/pass" -j0
usage "unknown option '--fast'" "$tmp/pass" --fast
usage "unexpected argument 'more'" "$tmp/pass" more
echo "run_tests.js: all checks passed"
