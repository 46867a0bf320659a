// MCP over Streamable HTTP (issue 16, point 4): what a POSTed message says, where a line a
// session writes belongs (which request's stream, or the session's GET stream), the 2026-07-28
// request headers and the HTTP status of an answer. Plain code: the gateway that joins the
// listener to sessions (actors/mcp_http_gateway.cpp) uses it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json_reader.hpp"

namespace llmx::mcp::http {

inline constexpr int kHeaderMismatch = -32020;

// One POST body, read once.
struct Posted {
  enum class Kind { request, notification, response, batch, invalid };
  Kind kind = Kind::invalid;
  std::string error;                        // invalid: why
  std::string id;                           // requests and responses: the id, compact JSON
  std::string id_plain;                     // `7` -> 7, `"a"` -> a (the form elicitations carry)
  std::string method;
  std::optional<std::string> name;          // params.name, else params.uri, else params.taskId
  std::optional<std::string> meta_version;  // params._meta["io.modelcontextprotocol/protocolVersion"]
  std::optional<std::string> progress_token;  // params._meta.progressToken, compact JSON
  std::optional<std::string> task_id;         // params.taskId (tasks/result and the like)
};
Posted read_posted(json::Parser& parser, std::string_view body);
// The same, parsed (throws on a field of the wrong type); `raw_id` as in rpc::classify.
Posted read_message(json::Element root, const std::optional<std::string>& raw_id = std::nullopt);

// Where a line a session writes goes.
struct Route {
  enum class Kind { response, related, unrelated };
  Kind kind = Kind::unrelated;
  std::string request_id;        // response: the id it answers (compact JSON); related: by `_meta.requestId`
  std::string request_plain;     // related: by an elicitation's `llmx_mcp_tool_call_id`
  std::string progress_token;    // notifications/progress: its token (compact JSON)
  std::string task_id;           // related to this task
  std::optional<int> error_code;  // a response that is an error
};
// `parser` is the caller's, reused: this runs for every line a session writes (each delta).
Route route_of(json::Parser& parser, std::string_view line);
// The same, parsed (throws on a field of the wrong type); `raw_id` as in rpc::classify.
Route route_message(json::Element root, const std::optional<std::string>& raw_id = std::nullopt);

// Whether a request naming this version goes the 2026-07-28 way (no handshake, no session): any
// version but the handshake's (an unknown one is then refused with -32022 and the supported list).
bool is_stateless_version(std::string_view version);

// A 2026-07-28 request's headers against its body: nullopt when they agree, else the message of
// the -32020 HeaderMismatch error (answered with 400).
std::optional<std::string> header_mismatch(const Posted& posted, std::optional<std::string_view> protocol_version,
                                           std::optional<std::string_view> method,
                                           std::optional<std::string_view> name);

// A header value, with the `=?base64?…?=` sentinel decoded; nullopt when it cannot be.
std::optional<std::string> decode_header_value(std::string_view value);

// Whether a Content-Type header says JSON (`application/json`, any case, parameters allowed).
bool is_json_content(std::optional<std::string_view> content_type);

// Whether an Accept header admits a media type (`*/*` and `type/*` count).
bool accepts(std::optional<std::string_view> accept, std::string_view media_type);

// The HTTP status of an answer: in 2026-07-28's era -32601 is 404, and the client's mistakes (a
// malformed request or params, an unsupported version, a header mismatch, a missing client
// capability) are 400; everything else is 200.
int status_of(const Route& answer, bool stateless);

// One Server-Sent Event carrying a JSON-RPC message.
std::string sse_event(std::string_view json);

// A JSON-RPC error with a null id (for HTTP-level refusals that have no request to answer).
std::string error_body(int code, std::string_view message, std::string_view id_json = "null");

// `notifications/cancelled` for a request whose HTTP exchange went away.
std::string cancelled_notification(std::string_view request_id_json, std::string_view reason);

}  // namespace llmx::mcp::http
