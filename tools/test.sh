#!/usr/bin/env bash
# Builds llmx and runs every test (unit, integration, js, conformance, ...) through ctest.
#   tools/test.sh              the Release tree (build/): the quick loop while developing
#   tools/test.sh --sanitize   what CI runs: the Clang tree under ASan+UBSan (build-san/), which
#                              also runs every fuzz target for LLMX_FUZZ_SECONDS (20) seconds
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --sanitize ]; then
  build="$root/build-san"
  "$root/tools/build.sh" --sanitize
  cmake -S "$root" -B "$build" -DLLMX_FUZZ_SECONDS="${LLMX_FUZZ_SECONDS:-20}" >/dev/null
  source "$root/tools/sanitizers/env.sh"
else
  build="${LLMX_BUILD_DIR:-$root/build}"
  "$root/tools/build.sh"
fi
cd "$build"
ctest --output-on-failure -j 2 --timeout 600
