#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz in build-fuzz/ (Clang, sanitizers) and runs them.
#   tools/fuzz.sh                  every target for $LLMX_FUZZ_SECONDS (20) each, via ctest
#   tools/fuzz.sh TARGET SECONDS   one target for a long run: its corpus grows in
#                                  build-fuzz/fuzz-corpus/TARGET, crashes go to build-fuzz/fuzz-crashes/TARGET/
# Environment: LLMX_FUZZ_SECONDS, LLMX_JOBS (build parallelism, default 2, as tools/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(fuzz_jsonrpc_line fuzz_sse fuzz_chat_stream fuzz_responses_stream fuzz_apply_patch
         fuzz_config_toml fuzz_rollout fuzz_mcp_client fuzz_acp)
seconds=${LLMX_FUZZ_SECONDS:-20}
jobs=${LLMX_JOBS:-2}

# Clang and its fuzzer and sanitizer runtimes, from Debian's packages (idempotent).
tools/install-deps.sh clang-14 libclang-rt-14-dev

if [ ! -f build-fuzz/CMakeCache.txt ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DLLMX_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
if [ $# -eq 0 ]; then
  cmake -S . -B build-fuzz -DLLMX_FUZZ_SECONDS="$seconds" >/dev/null  # the ctest tests' duration
  cmake --build build-fuzz -j "$jobs" --target "${targets[@]}"
  ctest --test-dir build-fuzz -R '^fuzz/' --output-on-failure -j "$jobs"
  exit
fi

target=$1
seconds=${2:-$seconds}
[ -f "test/fuzz/$target.cpp" ] || { echo "fuzz: no target $target (one of: ${targets[*]})" >&2; exit 2; }
cmake --build build-fuzz -j "$jobs" --target "$target"
corpus=build-fuzz/fuzz-corpus/$target
mkdir -p "$corpus" build-fuzz/fuzz-crashes/"$target"
cp -n test/fuzz/corpus/"$target"/* "$corpus"/  # the seeds join what earlier runs found
exec "build-fuzz/test/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 \
  -artifact_prefix=build-fuzz/fuzz-crashes/"$target"/ "$corpus"
