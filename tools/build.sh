#!/usr/bin/env bash
# Configures and builds llmx into build/ (Release, ccache when present). Used by demo.sh and test.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/install-deps.sh"
build="${LLMX_BUILD_DIR:-$root/build}"
jobs="${LLMX_JOBS:-2}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$build" -j "$jobs" >&2
