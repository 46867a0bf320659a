# Sourced by tools/test.sh --sanitize and tools/fuzz.sh: how the sanitized tree's programs report.
# UBSan stops at the first error (halt_on_error) like ASan does, after the suppressions of
# tools/sanitizers/ubsan.supp (recoverable checks only can be suppressed, hence not
# -fno-sanitize-recover in CMakeLists.txt).
sanitizers_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-strict_string_checks=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:suppressions=$sanitizers_dir/ubsan.supp}"
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
