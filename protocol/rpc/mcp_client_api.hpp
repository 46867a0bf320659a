// The client side of MCP, for the servers users configure (engine.md §10): what llmx sends in
// `initialize`, which protocol revisions it speaks, and how it reads a server's answers —
// the handshake, `tools/list` pages and `tools/call` results, the last made into the output the
// model sees. Plain code: the client actor (to come) moves the messages.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/reflect.hpp"
#include "protocol/core/items.hpp"
#include "protocol/core/policy.hpp"

namespace llmx::mcp {

// Newest first: we ask for the first and accept any of them.
inline constexpr std::array<std::string_view, 3> kClientProtocolVersions = {"2025-11-25", "2025-06-18",
                                                                             "2025-03-26"};

// `initialize` params: our newest revision, the elicitation capability, `llmx-mcp-client`.
std::string client_initialize_params();

// What the handshake told us about a server.
struct ServerHello {
  std::string protocol_version;
  std::string name;
  std::string version;
  bool tools = false;               // it offers tools
  bool tools_list_changed = false;  // and says when they change
  std::optional<std::string> instructions;
};
// nullopt-free: an error text when the result is not a usable initialize result or names a
// revision we do not speak.
std::variant<ServerHello, std::string> read_initialize_result(json::Element result);

// One tool as a server lists it.
struct ServerTool {
  std::string name;
  std::string description;
  RawJson input_schema;
  bool read_only = false;  // annotations.readOnlyHint: runs without asking (issue 13 §5)
  LLMX_FIELDS(v("name", s.name); v("description", s.description); v("input_schema", s.input_schema);
              v("read_only", s.read_only))
};
struct ToolPage {
  std::vector<ServerTool> tools;
  std::optional<std::string> next_cursor;
  std::vector<std::string> skipped;  // why listed entries were not usable
};
ToolPage read_tools_list(json::Element result);

// `tools/call` params; with a progress token, `_meta.progressToken` asks for progress.
std::string tool_call_params(std::string_view tool, const std::optional<RawJson>& arguments,
                             std::optional<int64_t> progress_token = std::nullopt);

// What a tools/call result becomes for the model (engine.md §10.4): `structuredContent` when
// present, else the content blocks as JSON; images also as image parts, which the wire may send
// in place of the text.
struct ToolOutput {
  std::string text;
  bool success = true;
  std::vector<ContentItem> parts;  // input_text / input_image, only when an image is among them
};
ToolOutput tool_output(json::Element call_result);

// Our answer to a server's elicitation/create (an ElicitResult): accept with the form's content
// when approved, cancel on abort, decline otherwise (a denial, a timeout, nobody to ask).
std::string elicit_result(ReviewDecision decision, const std::optional<RawJson>& content = std::nullopt);

// mcp_tool_call_end's `result` read back: `{"Ok": CallToolResult}` or `{"Err": "<message>"}`.
struct CallEnd {
  bool ok = false;                        // answered (it may still be an error result)
  bool failed = true;                     // Err, or a result with `isError: true`
  std::string content = "[]";             // ok: the content blocks as JSON
  std::optional<std::string> structured;  // ok: structuredContent as JSON, when present
  std::string error;                      // Err: the message
};
CallEnd read_call_end(std::string_view result_json);

}  // namespace llmx::mcp
