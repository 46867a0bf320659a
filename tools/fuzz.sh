#!/usr/bin/env bash
# Runs the libFuzzer targets of test/fuzz, built in the sanitized tree (tools/build.sh --sanitize).
#   tools/fuzz.sh                  every target for $LLMX_FUZZ_SECONDS (20) each, via ctest
#   tools/fuzz.sh TARGET SECONDS   one target for a long run (LLMX_FUZZ_TIMEOUT: seconds before an input
#                                  counts as hung, 25; raise it when the machine is shared): its corpus grows in
#                                  build-san/fuzz-corpus/TARGET, crashes go to build-san/fuzz-crashes/TARGET/
# (tools/test.sh runs them too, after the unit and integration suites on the same tree.)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(fuzz_jsonrpc_line fuzz_sse fuzz_chat_stream fuzz_responses_stream fuzz_apply_patch
         fuzz_config_toml fuzz_rollout fuzz_mcp_client fuzz_acp)
seconds=${LLMX_FUZZ_SECONDS:-20}
build=build-san
source tools/sanitizers/env.sh

if [ $# -eq 0 ]; then
  tools/build.sh --sanitize "${targets[@]}"
  cmake -S . -B "$build" -DLLMX_FUZZ_SECONDS="$seconds" >/dev/null  # the ctest tests' duration
  ctest --test-dir "$build" -R '^fuzz/' --output-on-failure -j "${LLMX_JOBS:-2}"
  exit
fi

target=$1
seconds=${2:-$seconds}
[ -f "test/fuzz/$target.cpp" ] || { echo "fuzz: no target $target (one of: ${targets[*]})" >&2; exit 2; }
tools/build.sh --sanitize "$target"
corpus=$build/fuzz-corpus/$target
mkdir -p "$corpus" "$build/fuzz-crashes/$target"
cp -n test/fuzz/corpus/"$target"/* "$corpus"/  # the seeds join what earlier runs found
exec "$build/test/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout="${LLMX_FUZZ_TIMEOUT:-25}" \
  -artifact_prefix="$build/fuzz-crashes/$target/" "$corpus"
