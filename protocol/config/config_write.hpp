// Writes to $LLMX_HOME/config.toml that keep the rest of the file as the user wrote it
// (protocol/config/toml_edit.hpp): the default model (protocol.md setDefaultModel) and MCP servers
// (`llmx mcp add/remove`). Each write reads the file, edits the text and replaces the file
// atomically; a file with a syntax error is refused and left untouched.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/config/config.hpp"
#include "protocol/config/toml_edit.hpp"

namespace llmx {

// The file's contents; nullopt when it does not exist. Throws ConfigError when unreadable.
std::optional<std::string> read_text_file(const std::string& path);

// Replaces the file atomically: a temporary file in the same directory, fsync, rename. Keeps the
// mode of an existing file (new files get 0644 less the umask), writes through a symlink to its
// target and creates missing parent directories. Throws ConfigError.
void write_file_atomic(const std::string& path, std::string_view text);

// Applies `edit` to the text of `<home>/config.toml` ("" when missing) and writes the result.
// toml_edit::EditError from `edit` becomes a ConfigError naming the file; nothing is written then.
void edit_config_file(const std::string& home, const std::function<std::string(const std::string&)>& edit);

// Sets `model` and `model_reasoning_effort` at the top level, or in [profiles.<profile>] when a
// profile is active; nullopt removes the key. Throws ConfigError for an unknown effort.
void set_default_model(const std::string& home, const std::optional<std::string>& profile,
                       const std::optional<std::string>& model, const std::optional<std::string>& effort);

// `^[a-zA-Z0-9_-]+$` (engine.md §10.2).
bool valid_mcp_server_name(std::string_view name);

// The keys `[mcp_servers.<name>]` gets for a server (defaults left out).
toml_edit::Entries mcp_server_entries(const McpServerConfig& server);

// Writes `[mcp_servers.<name>]`, replacing a server of that name. Throws ConfigError for an
// invalid name or a server with neither `command` nor `url`.
void add_mcp_server(const std::string& home, const std::string& name, const McpServerConfig& server);

// Removes `[mcp_servers.<name>]`; false when there was none (the file is then not rewritten).
bool remove_mcp_server(const std::string& home, const std::string& name);

}  // namespace llmx
