#!/usr/bin/env bash
# The CMake package as an exporter meets it: install the (already built) build tree into a
# temporary prefix, check what was installed, then configure, build and run
# tests/install/example against that prefix only. The example compiles its own TableGen
# rule with the installed rulec (--emit=cpp) and links onnx_rewrite::onnx_rewrite.
#
# usage: install_example.sh BUILD_DIR CXX_COMPILER BUILD_TYPE [EXTRA_CXX_FLAGS]
set -euo pipefail
build="$1"
cxx="$2"
build_type="${3:-RelWithDebInfo}"
extra_flags="${4:-}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
prefix="$tmp/prefix"

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }

# What must be there, and what must not.
for f in bin/rulec bin/onnx-rewrite \
         include/onnx_rewrite/runtime/api/Rewrite.h \
         include/onnx_rewrite/runtime/driver/RewritePattern.h \
         include/onnx_rewrite/runtime/driver/RuleSet.h \
         include/onnx_rewrite/runtime/io/ModelFile.h \
         include/onnx_rewrite/runtime/builtin/BuiltinRules.h \
         share/onnx_rewrite/td/onnx_rewrite/Rule.td \
         share/onnx_rewrite/td/onnx_rewrite/Ops.td; do
  [[ -e "$prefix/$f" ]] || fail "not installed: $f"
done
[[ -n $(find "$prefix" -name 'libonnx_rewrite.*') ]] || fail "libonnx_rewrite not installed"
cmake_dir=$(dirname "$(find "$prefix" -name onnx_rewriteConfig.cmake)")
[[ -f $cmake_dir/onnx_rewriteTargets.cmake ]] || fail "no onnx_rewriteTargets.cmake"
[[ -n $(find "$prefix" -name '*_tests' -o -name 'bench*' -type f) ]] && fail "test or bench binaries installed"
[[ -n $(find "$prefix/include" -path '*/interp/*' -o -path '*/cli/*') ]] && fail "private headers installed"
# The library's link interface: ONNX, Protobuf, re2; never LLVM or yaml-cpp.
if grep -iE 'llvm|yaml' "$cmake_dir"/onnx_rewriteTargets*.cmake; then
  fail "the exported targets mention LLVM or yaml-cpp"
fi
grep -q 'PkgConfig::RE2' "$cmake_dir/onnx_rewriteTargets.cmake" || fail "re2 missing from the link interface"

echo "== configure, build and run the example against $prefix"
ex="$tmp/example"
cmake -S "$root/tests/install/example" -B "$ex" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$build_type" \
  -DCMAKE_CXX_FLAGS="$extra_flags" -DCMAKE_EXE_LINKER_FLAGS="$extra_flags" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure the example"; }
cmake --build "$ex" -v >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build the example"; }
# It ran the installed rulec (not the build tree's) and compiled its output.
grep -q "$prefix/bin/rulec --emit=cpp" "$tmp/build.log" || { cat "$tmp/build.log"; fail "the installed rulec did not run"; }
[[ -f $ex/onnx_rewrite_generated/generated/quick_gelu.gen.cc ]] || fail "no generated quick_gelu.gen.cc"
# No LLVM and no yaml-cpp at link time.
if grep -E 'silu_exporter' "$tmp/build.log" | grep -iE 'llvm|yaml'; then
  fail "the example links LLVM or yaml-cpp"
fi
if ldd "$ex/silu_exporter" | grep -iE 'llvm|yaml'; then fail "the example loads LLVM or yaml-cpp"; fi

"$ex/silu_exporter" "$tmp/fused.onnx"
[[ -s $tmp/fused.onnx ]] || fail "no model saved"

echo "== the interpreter component: a YAML rule file loaded at run time"
if ldd "$ex/yaml_rules_exporter" | grep -i llvm; then fail "the interpreter component loads LLVM"; fi
"$ex/yaml_rules_exporter" "$root/tests/install/example/rules/silu_runtime.yaml" \
  || fail "yaml_rules_exporter"
printf 'rules:\n  - rule: bad\n    match: |\n      y = Sigmod(x)\n    rewrite: |\n      y = x\n' >"$tmp/bad.yaml"
if "$ex/yaml_rules_exporter" "$tmp/bad.yaml" 2>"$tmp/bad.log"; then fail "a bad rule file loaded"; fi
grep -q "bad.yaml:4:11: error: unknown op 'Sigmod'; did you mean 'Sigmoid'?" "$tmp/bad.log" \
  || { cat "$tmp/bad.log"; fail "rule file diagnostics"; }
[[ -e $prefix/include/onnx_rewrite/Rewrite.h ]] || fail "no <onnx_rewrite/Rewrite.h>"

echo "== the example's rule tests, run by the installed onnx-rewrite (rule tests as data)"
cp -r "$root/tests/install/example/rules" "$tmp/rule_tests"
"$prefix/bin/onnx-rewrite" test "$tmp/rule_tests/quick_gelu.test.yaml" >"$tmp/test.log" \
  || { cat "$tmp/test.log"; fail "the example's rule tests"; }
grep -q "2 case(s): 2 passed, 0 failed" "$tmp/test.log" || { cat "$tmp/test.log"; fail "rule test summary"; }
# A wrong expectation fails with what differed.
sed -i 's/ops: \[com.microsoft.QuickGelu\]/ops: [Mul]/' "$tmp/rule_tests/quick_gelu.test.yaml"
if "$prefix/bin/onnx-rewrite" test "$tmp/rule_tests/quick_gelu.test.yaml" >"$tmp/test.log"; then
  fail "a wrong expectation passed"
fi
grep -q "ops: expected \[Mul\]" "$tmp/test.log" || { cat "$tmp/test.log"; fail "rule test diff"; }
grep -q "got \[com.microsoft.QuickGelu\]" "$tmp/test.log" || { cat "$tmp/test.log"; fail "rule test diff"; }

echo "== a rule file named like a shipped family is refused at configure time"
clash="$tmp/clash"
mkdir -p "$clash/rules"
cp "$root/tests/install/example/rules/"* "$clash/rules/"
first_rule=$(ls "$clash/rules" | head -1)
mv "$clash/rules/$first_rule" "$clash/rules/gelu.${first_rule##*.}"
cat >"$clash/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(clash LANGUAGES CXX)
find_package(onnx_rewrite CONFIG REQUIRED)
onnx_rewrite_generate(GENERATED RULES rules/gelu.${first_rule##*.})
CMAKE
if cmake -S "$clash" -B "$clash/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_COMPILER="$cxx" >"$tmp/clash.log" 2>&1; then
  fail "a rule file named gelu was accepted"
fi
grep -q "'gelu' is the name of a shipped" "$tmp/clash.log" || { cat "$tmp/clash.log"; fail "collision message"; }
echo "OK"
