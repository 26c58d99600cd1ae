#!/usr/bin/env bash
# Install everything the project needs on a Debian 12 machine. Idempotent: when
# everything is present it only checks, and finishes in about a second.
#   - Debian packages (apt-get, only the missing ones)
#   - tests/oracle/node_modules (npm ci, only when missing or out of date)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { echo "setup: $*"; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

sudo_cmd=()
if [[ $(id -u) != 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available; cannot install packages"
  sudo_cmd=(sudo)
fi

# ---- Debian packages ---------------------------------------------------------
# clang-14 and libclang-rt-14-dev (libFuzzer, the sanitizer runtimes): the ASan + UBSan
# build, which also builds the fuzz targets (tests/fuzz). libmimalloc-dev: the command's
# allocator (CMakeLists.txt, ONNX_REWRITE_MIMALLOC).
pkgs=(cmake ninja-build g++ clang-format libonnx-dev libprotobuf-dev protobuf-compiler
      libre2-dev libyaml-cpp-dev llvm-14-dev libgtest-dev libgmock-dev libbenchmark-dev
      clang-14 libclang-rt-14-dev libmimalloc-dev)
# node/npm may come from elsewhere (e.g. nodesource); only ask Debian for them when absent
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  say "debian packages: all ${#pkgs[@]} present"
else
  say "debian packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null || die "apt-get update failed"
  for p in "${missing[@]}"; do
    cand="$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')"
    [[ -n $cand && $cand != "(none)" ]] || die "package $p is not available from the configured apt sources"
  done
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install failed for: ${missing[*]}"
  for p in "${missing[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    [[ $status == "install ok installed" ]] || die "package $p is still not installed"
  done
  say "debian packages: installed ${#missing[@]}"
fi

command -v node >/dev/null 2>&1 || die "node not found after installing packages"
command -v npm >/dev/null 2>&1 || die "npm not found after installing packages"

# ---- ORT oracle (tests/oracle) -------------------------------------------------
oracle="$root/tests/oracle"
[[ -f $oracle/package-lock.json ]] || die "$oracle/package-lock.json missing"
stamp="$oracle/node_modules/.package-lock.json"
if [[ -d $oracle/node_modules && -f $stamp && ! $oracle/package-lock.json -nt $stamp \
      && -d $oracle/node_modules/onnxruntime-node ]]; then
  say "oracle node_modules: up to date"
else
  say "oracle node_modules: npm ci (onnxruntime-node, bundled CPU build)"
  # ONNXRUNTIME_NODE_INSTALL=skip: the package's postinstall would otherwise try to
  # download extra (CUDA) binaries from outside the npm registry; the CPU library we
  # use is bundled in the npm tarball itself.
  log="$(mktemp)"
  if ! (cd "$oracle" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund >"$log" 2>&1); then
    cat "$log" >&2; rm -f "$log"
    die "npm ci failed in $oracle"
  fi
  rm -f "$log"
fi
# cheap sanity check that the native binding loads on this machine
(cd "$oracle" && node -e 'require("onnxruntime-node")') >/dev/null 2>&1 \
  || die "onnxruntime-node does not load in $oracle (try: rm -rf $oracle/node_modules && bash .ci/setup.sh)"
say "done"
