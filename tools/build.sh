#!/usr/bin/env bash
# Configures and builds llmx (ccache when present). Used by demo.sh, test.sh and fuzz.sh.
#   tools/build.sh [TARGET...]              Release, into build/ (LLMX_BUILD_DIR)
#   tools/build.sh --sanitize [TARGET...]   Clang with ASan+UBSan and the fuzz targets, into build-san/
# Environment: LLMX_JOBS (parallel jobs, default 2).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs="${LLMX_JOBS:-2}"
if [ "${1:-}" = --sanitize ]; then
  shift
  # Clang, its fuzzer and sanitizer runtimes, and llvm-symbolizer for readable reports.
  "$root/tools/install-deps.sh" clang-14 libclang-rt-14-dev llvm-14
  build="$root/build-san"
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMX_SANITIZE=ON >&2
  fi
else
  "$root/tools/install-deps.sh"
  build="${LLMX_BUILD_DIR:-$root/build}"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  fi
fi
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j "$jobs" "${targets[@]}" >&2
