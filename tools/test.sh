#!/usr/bin/env bash
# Builds llmx and runs every test (unit, integration, js, conformance, ...) through ctest.
#   tools/test.sh              what CI runs: every suite on the Release tree (build/) but the unit
#                              and integration cases, which run on the sanitized tree (build-san/,
#                              ASan+UBSan, built with only what they need) — except those that
#                              measure memory (named "... (RSS)"), which run on Release only; then
#                              every fuzz target for LLMX_FUZZ_SECONDS (10)
#   tools/test.sh --sanitize   every test on the whole engine built under ASan+UBSan (build-san/)
# Environment: LLMX_SANITIZE=0 leaves the sanitized tree out (a quicker local run);
# LLMX_FUZZ_SECONDS=0 leaves the fuzz targets out.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${LLMX_FUZZ_SECONDS:-10}"
san="$root/build-san"

# ctest over one tree; the sanitizers' settings come with the sanitized one.
run_suites() {
  local build=$1; shift
  (
    [ "$build" = "$san" ] && source "$root/tools/sanitizers/env.sh"
    cd "$build" && ctest --output-on-failure -j 2 --timeout 600 "$@"
  )
}

if [ "${1:-}" = --sanitize ]; then
  "$root/tools/build.sh" --sanitize
  cmake -S "$root" -B "$san" -DLLMX_FUZZ_SECONDS="$seconds" >/dev/null
  run_suites "$san"
  exit
fi

failed=0
"$root/tools/build.sh"
release="${LLMX_BUILD_DIR:-$root/build}"
if [ "${LLMX_SANITIZE:-1}" = 0 ]; then
  run_suites "$release" || failed=1
else
  # The sanitized tree runs the unit and integration cases below; here only those it cannot
  # judge (RSS under ASan says nothing). The cluster suite, on two Release nodes, stays here.
  run_suites "$release" -E '^(unit|integration)/' || failed=1
  run_suites "$release" -R '^(unit|integration)/.*\(RSS\)$' || failed=1
  suites='^(unit|integration)/'
  targets=(llmx mock-llm llmx_unit_tests llmx_integration_tests)
  if [ "$seconds" != 0 ]; then
    suites='^(unit|integration|fuzz)/'
    targets+=(llmx_fuzz)
  fi
  "$root/tools/build.sh" --sanitize "${targets[@]}"
  cmake -S "$root" -B "$san" -DLLMX_FUZZ_SECONDS="$seconds" >/dev/null
  run_suites "$san" -R "$suites" || failed=1
fi
exit $failed
