#!/usr/bin/env bash
# The demo: builds llmx, starts the bundled mock model on a free loopback port, and runs
# `llmx exec` on a small task in a scratch workspace — the model looks around with a command,
# writes a file with a patch and answers — as a person sees it, then stops the mock.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${LLMX_BUILD_DIR:-$root/build}"
home="$(mktemp -d)"
out="$home/mock.url"
"$build/mock-llm" > "$out" &
mock=$!
trap 'kill $mock 2>/dev/null; wait $mock 2>/dev/null; rm -rf "$home"' EXIT
for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
url="$(head -n1 "$out")"
echo "mock model listening at $url" >&2
work="$home/workspace"
mkdir -p "$work"
echo "hello" > "$work/README.md"
prompt="${1:-Look at this workspace and write notes.md about it. @mock:task}"
echo "\$ llmx exec -s workspace-write \"$prompt\"" >&2
LLMX_HOME="$home" LLMX_BASE_URL="$url" LLMX_API_KEY=demo-key \
  "$build/llmx" exec --skip-git-repo-check -s workspace-write -C "$work" "$prompt"
echo "--- $work/notes.md:" >&2
cat "$work/notes.md" >&2
