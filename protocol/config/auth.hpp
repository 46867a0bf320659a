// Stored credentials (engine.md §4.8, DECISIONS E7): `<home>/auth.json`, written by
// `llmx login --api-key` and read once per configuration load so a provider can fall back to the
// stored key when its environment variable is not set.
//
// The file is pretty-printed JSON, mode 0600:
//   {"OPENAI_API_KEY": "<key>" | null, "tokens"?: {...}, "last_refresh"?: "..."}
// Fields we do not use (ChatGPT tokens, anything newer) are kept as they are when we rewrite it.
// Writes go through a 0600 temporary file in the same directory, fsync and rename, so the key is
// never readable by others, not even for a moment, and a crash leaves either the old or the new
// file. Keys are never logged or printed; show them with mask_key().
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/config/config.hpp"
#include "protocol/config/provider.hpp"

namespace llmx::auth {

// auth.json is unreadable or malformed. A ConfigError, so front ends that report configuration
// problems report this one too.
struct AuthError : ConfigError {
  using ConfigError::ConfigError;
};

// `<home>/auth.json`.
std::string auth_file_path(const std::string& home);

// The stored API key: nullopt when the file does not exist or holds no key (null, absent or
// blank). Throws AuthError naming the file when it cannot be read or is not a JSON object with a
// string-or-null `OPENAI_API_KEY`.
std::optional<std::string> load_api_key(const std::string& home);

// Stores `key` (surrounding whitespace and newlines trimmed) as `OPENAI_API_KEY`, keeping every
// other field of an existing file. Creates `home` (mode 0700) when missing. Throws AuthError when
// the trimmed key is empty, when an existing file is malformed (it is left untouched) or when
// writing fails.
void save_api_key(const std::string& home, const std::string& key);

// Deletes auth.json. False when there was none. Throws AuthError when it cannot be removed.
bool logout(const std::string& home);

// A key safe to show: the first 8 and last 5 characters around "***" (`sk-proj-***ABCDE`), or
// just "***" for keys too short to hide enough of them.
std::string mask_key(std::string_view key);

struct AuthStatus {
  std::string file;                    // auth.json's path
  bool file_exists = false;
  std::optional<std::string> api_key;  // the stored key itself: mask before showing
  bool has_tokens = false;             // ChatGPT tokens (kept, never used by llmx)

  // The protocol's `authMethod`: "apikey", "chatgpt" or nullopt when not logged in.
  std::optional<std::string> auth_method() const;
};

// What auth.json holds. Throws AuthError like load_api_key.
AuthStatus status(const std::string& home);

// Fills `provider.stored_api_key` from `<home>/auth.json` when the provider may use it
// (may_use_stored_api_key; other providers never touch the file). Called once by load_config,
// so requests never read the file. Throws AuthError on a malformed file.
void attach_stored_api_key(ModelProviderInfo& provider, const std::string& home);

}  // namespace llmx::auth
