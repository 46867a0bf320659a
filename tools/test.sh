#!/usr/bin/env bash
# Builds llmx, runs every fuzz target briefly (tools/fuzz.sh: a Clang build in build-fuzz/;
# LLMX_FUZZ_SECONDS=0 leaves them out), then every test (unit and integration) through ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${LLMX_BUILD_DIR:-$root/build}"
if [ "${LLMX_FUZZ_SECONDS:-20}" != 0 ]; then
  "$root/tools/fuzz.sh"
fi
cd "$build"
ctest --output-on-failure -j 2 --timeout 600
