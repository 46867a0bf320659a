// Identifiers and identification strings: UUIDs for conversations and items, the User-Agent.
#pragma once

#include <optional>
#include <string>

namespace llmx {

// A lowercase hyphenated UUID v7 (time-ordered), for conversation ids.
std::string new_uuid_v7();
// A random UUID v4, for item ids.
std::string new_uuid_v4();
// True when `s` parses as a UUID (any version).
bool is_uuid(std::string_view s);

// The creation time (Unix milliseconds) a UUID v7 carries in its first 48 bits; nullopt for
// other versions and non-UUIDs.
std::optional<int64_t> uuid_v7_millis(std::string_view s);

// `llmx/<version> (<os> <release>; <arch>) <terminal>` plus ` (<suffix>)` when given.
std::string user_agent(const std::string& suffix = {});

}  // namespace llmx
