#!/usr/bin/env bash
# Builds llmx and runs every test (unit and integration) through ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${LLMX_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j 2 --timeout 600
