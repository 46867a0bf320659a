// The JSON-RPC 2.0 envelope: classifying incoming lines and encoding outgoing ones, with the
// error codes of DECISIONS P2. The MCP server writes "jsonrpc":"2.0"; the app server does not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx::rpc {

enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
};

// A request id kept as its JSON text ("7", "\"abc\"", "null"), so it is echoed with the exact
// type and value the client used, including integers beyond int64.
struct Id {
  std::string json = "null";
  bool is_null() const { return json == "null"; }
  // The id as a plain string: `7` -> "7", `"abc"` -> "abc" (used as a submission id).
  std::string as_plain_string() const;
  static Id from_int(int64_t v) { return Id{std::to_string(v)}; }
  friend bool operator==(const Id&, const Id&) = default;
  friend auto operator<=>(const Id&, const Id&) = default;
};

struct Incoming {
  enum class Kind { request, notification, response, error_response, invalid };
  Kind kind = Kind::invalid;
  Id id;
  std::string method;
  std::optional<json::Element> params;  // absent or null -> nullopt
  std::optional<json::Element> result;  // responses
  int64_t error_code = 0;               // error responses
  std::string error_message;
  // For Kind::invalid: the reply to send (code and message).
  int invalid_code = 0;
  std::string invalid_reason;
};

// Classifies one parsed line. Never throws. `raw_id`: the id's exact token when the parser had
// to rewrite it (Parser::repaired_top_level_id), so the reply echoes what the client sent.
Incoming classify(json::Element root, const std::optional<std::string>& raw_id = std::nullopt);

struct Encoder {
  bool with_jsonrpc = true;  // MCP: true; app server: false

  std::string result(const Id& id, std::string_view result_json) const;
  // `data`: the error's data member (JSON), when it has one.
  std::string error(const Id& id, int code, std::string_view message,
                    std::optional<std::string_view> data = std::nullopt) const;
  std::string notification(std::string_view method, std::optional<std::string_view> params_json) const;
  // Appends a notification to `out` in place; `params(w)` writes its params value. For the hot
  // path of streamed events: no buffer per line, no copy of the params.
  template <class Params>
  void notification(std::string& out, std::string_view method, Params&& params) const {
    json::Writer w(out);
    open(w);
    w.plain_key("method").string(method);
    w.plain_key("params");
    params(w);
    w.end_object();
  }
  // Opens a message object: `{` and the "jsonrpc" member when this wire has it.
  void open(json::Writer& w) const {
    w.begin_object();
    if (with_jsonrpc) w.plain_key("jsonrpc").raw(R"("2.0")");
  }
  std::string request(const Id& id, std::string_view method, std::string_view params_json) const;
};

}  // namespace llmx::rpc
