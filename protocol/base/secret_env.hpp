// Secrets in the server's own environment (LLMX_API_KEY, provider keys, tokens, passwords): read
// once at start-up into this process's memory, then removed from its environment and wiped from
// the bytes /proc/<pid>/environ shows, so neither a process that can read that file nor a child
// started by any code in the server inherits them by accident. Lookups and the child environment
// builder (sandbox/exec_env.hpp) still see them, so policies decide exactly as before.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace llmx {

// Whether a value holds a URL with a password in its userinfo (`postgres://user:pw@host/db`),
// also inside a longer value.
bool has_url_credentials(std::string_view value);

// Whether a variable is a secret by the default policy: its name looks like a key, token,
// secret, password or credential, or its value is a URL with a password.
bool is_secret_variable(std::string_view name, std::string_view value);

// Moves every secret variable out of the environment. Call once, early in main(), before any
// thread starts (it edits `environ`). Returns how many were sealed.
size_t seal_secret_env();

// A variable another copy of this code sealed in this process: the llmx binary seals its
// environment before it answers a client, and hands what it sealed to the engine it loads.
void add_sealed_variable(std::string name, std::string value);

// getenv() that also finds sealed variables.
const char* env_value(const char* name);

// A positive whole number from the environment (a limit a test or benchmark tunes), else
// `fallback`: unset, empty, zero or not a number.
uint64_t env_count(const char* name, uint64_t fallback);

// The sealed variables (name -> value), for building a child's environment.
const std::map<std::string, std::string>& sealed_env();

}  // namespace llmx
