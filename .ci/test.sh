#!/usr/bin/env bash
# Sets everything up, builds, and runs every test: the normal build (unit, CLI and ONNX
# Runtime oracle tests; every ctest test, through tests/run_tests.js), a clang-format
# check, the same tests built with clang-14 and AddressSanitizer + UndefinedBehaviorSanitizer,
# and the libFuzzer targets of that build (tests/fuzz), each for a bounded time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=$(nproc)

bash .ci/setup.sh

echo "== format check"
# generated/ is laid out by rulec itself (and says `clang-format off`): not checked here.
mapfile -t sources < <(git ls-files '*.cc' '*.h' ':!generated/')
clang-format --dry-run --Werror "${sources[@]}"

echo "== build (optimized: -O2, no debug info)"
# RelWithDebInfo's optimization without its -g: CI runs no debugger, and debug info is a
# third of the compile time of the generated matchers (rotary.gen.cc: 31 s with, 19 s
# without), which bound the build on 2 cores.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  >/dev/null
cmake --build build -j "$jobs"
echo "== generated/ is current"
ctest --test-dir build --output-on-failure -R '^generated_is_current$'
echo "== tests"
# Every ctest test, each googletest binary run once rather than once per case.
node tests/run_tests.js build -j "$jobs"

echo "== build (ASan + UBSan, clang-14, with the fuzz targets)"
# clang, because libFuzzer is clang's: the whole build gets its coverage instrumentation
# and the fuzz targets link libFuzzer, so no third build is needed. A build-asan left by
# an older gcc configuration is reconfigured from scratch (CMake cannot switch compilers).
if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++-14' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DONNX_REWRITE_SANITIZE=ON \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DONNX_REWRITE_FUZZ=ON \
  -DONNX_REWRITE_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  node tests/run_tests.js build-asan -j "$jobs"
echo "== fuzz (ASan + UBSan, 45 s per target)"
# A crash prints the reproducer; tests/fuzz/regressions is where it goes once fixed.
bash tests/fuzz/run.sh -t 45 -j "$jobs" build-asan
