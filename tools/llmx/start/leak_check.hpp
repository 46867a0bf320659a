// What the llmx process does for LeakSanitizer's check at exit (sanitized builds only).
#pragma once

namespace llmx::cli {

// In an AddressSanitizer build, arranges that the process, when it exits, waits for threads that
// are ending to be gone before the leak check runs; elsewhere does nothing. Call it first thing in
// main(), before any library registers its own exit handlers.
//
// Why: LeakSanitizer (clang 14) scans every thread the kernel still lists. A thread that has run
// its sanitizer teardown but is not yet gone still shows there, and its dynamic TLS (the engine is
// dlopened, so its thread_locals live there) is freed by then: the scan reads freed memory and the
// check dies ("Tracer caught signal 11"), failing a run that leaked nothing.
void settle_threads_before_leak_check();

}  // namespace llmx::cli
