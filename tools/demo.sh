#!/usr/bin/env bash
# The demo: builds llmx, starts the bundled mock model on a free loopback port, runs
# `llmx exec` on a sample prompt (the answer streams as it arrives), then stops the mock.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${LLMX_BUILD_DIR:-$root/build}"
home="$(mktemp -d)"
out="$home/mock.url"
"$build/mock-llm" --scenario slow > "$out" &
mock=$!
trap 'kill $mock 2>/dev/null; wait $mock 2>/dev/null; rm -rf "$home"' EXIT
for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
url="$(head -n1 "$out")"
echo "mock model listening at $url" >&2
prompt="${1:-Explain in one sentence what llmx is. @mock:slow delay_ms=150 deltas=8}"
echo "\$ llmx exec \"$prompt\"" >&2
LLMX_HOME="$home" LLMX_BASE_URL="$url" LLMX_API_KEY=demo-key "$build/llmx" exec --skip-git-repo-check "$prompt"
