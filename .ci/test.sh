#!/usr/bin/env bash
# Sets everything up, builds, and runs every test: the normal build (unit, CLI and ONNX
# Runtime oracle tests through ctest), a clang-format check, and the same tests built
# with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=$(nproc)

bash .ci/setup.sh

echo "== format check"
# generated/ is laid out by rulec itself (and says `clang-format off`): not checked here.
mapfile -t sources < <(git ls-files '*.cc' '*.h' ':!generated/')
clang-format --dry-run --Werror "${sources[@]}"

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
echo "== generated/ is current"
ctest --test-dir build --output-on-failure -R '^generated_is_current$'
echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DONNX_REWRITE_SANITIZE=ON \
  -DONNX_REWRITE_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
