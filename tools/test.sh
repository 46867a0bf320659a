#!/usr/bin/env bash
# Builds llmx and runs every test (unit, integration, js, conformance, ...) through ctest.
#   tools/test.sh              what CI runs: the Release tree (build/), and first every fuzz target
#                              for LLMX_FUZZ_SECONDS (20; 0 leaves them out), built in the
#                              sanitized tree (build-san/, only what the targets need)
#   tools/test.sh --sanitize   every test on the whole engine built under ASan+UBSan (build-san/;
#                              about twice the Release build: longer than CI's budget allows)
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
  if [ "${LLMX_FUZZ_SECONDS:-20}" != 0 ]; then
    "$root/tools/fuzz.sh"
  fi
fi
cd "$build"
ctest --output-on-failure -j 2 --timeout 600
