// One connection to a configured MCP server as plain code (engine.md §10.2–10.4): the handshake
// (initialize, initialized, every tools/list page), request ids and what each answer belongs
// to, calls in flight with their progress, the server's own requests, and list_changed. It
// never touches a pipe or a socket: messages go in as text and come out in an Output, which the
// client actor (actors/mcp_client.cpp) carries to the transport and to the callers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/rpc/mcp_client_api.hpp"

namespace llmx::mcp {

class Connection {
 public:
  enum class Phase { idle, initializing, listing, ready, failed };

  // How a call ended: the CallToolResult's JSON text, or an error for the model.
  struct CallEnd {
    uint64_t call = 0;
    bool ok = false;
    std::string result;  // ok: the result object's JSON text
    std::string error;   // !ok: what went wrong
  };
  struct Progress {
    uint64_t call = 0;
    std::string message;  // "3/10: indexing" or the like
  };
  // The server asks our client for input (elicitation/create); `call` is the call it belongs to
  // when that is certain (exactly one in flight), else none. Answer with answer() or decline().
  struct Elicitation {
    std::string id;  // the request id's JSON text
    std::optional<uint64_t> call;
    std::string message;
    std::string requested_schema;  // JSON text
  };
  struct Output {
    std::vector<std::string> messages;  // for the server, in order
    std::vector<CallEnd> ended;
    std::vector<Progress> progress;
    std::vector<Elicitation> elicitations;
    std::vector<std::string> notes;  // worth logging: odd lines, failed listings
    bool initialized = false;        // initialize was answered: hello() is set, the revision agreed
    bool became_ready = false;       // the handshake finished: tools() is set too
    bool tools_changed = false;      // a listing after list_changed finished
    bool pong = false;               // the server answered our ping
    std::optional<std::string> failure;  // the handshake failed; the phase is `failed`
  };

  void start(Output& out);  // sends initialize
  // One JSON-RPC message (a line of a stdio server, an SSE event or a JSON body over HTTP).
  void on_message(std::string_view text, Output& out);
  // Calls the server's tool; sent at once when ready, else when the handshake finishes.
  uint64_t call(std::string_view tool, const std::optional<RawJson>& arguments, Output& out);
  // The caller stops waiting (timeout, interrupt): the server gets notifications/cancelled, the
  // call ends with `error`, and a late answer is ignored.
  void abandon(uint64_t call, const std::string& error, Output& out);
  // Our client's answer to an elicitation ({action, content}), or a decline.
  void answer(const std::string& id, std::string_view result_json, Output& out);
  void decline(const std::string& id, Output& out);
  // Asks whether the server still answers (after a call timed out); Output::pong follows.
  void ping(Output& out);
  // The transport is gone: every call and a running handshake end with `why`.
  void fail(const std::string& why, Output& out);

  Phase phase() const { return phase_; }
  const ServerHello& hello() const { return hello_; }
  const std::vector<ServerTool>& tools() const { return tools_; }
  size_t in_flight() const { return calls_.size(); }

  // Listing stops after this many pages (a server that never stops paging).
  static constexpr size_t kMaxPages = 1000;

 private:
  enum class Purpose { initialize, list, call, ping };
  struct Pending {
    Purpose purpose;
    uint64_t call = 0;
  };
  std::string request(std::string_view method, std::string_view params);
  void send_call(uint64_t call, Output& out);
  void list_page(const std::optional<std::string>& cursor, Output& out);
  void on_result(const Pending& p, std::string_view id, simdjson::dom::element result, Output& out);
  void on_error(const Pending& p, int64_t code, const std::string& message, Output& out);
  void on_request(const std::string& id, const std::string& method, std::optional<simdjson::dom::element> params,
                  Output& out);
  void on_notification(const std::string& method, std::optional<simdjson::dom::element> params, Output& out);
  void finish_listing(Output& out);
  void end_call(uint64_t call, bool ok, std::string text, Output& out);

  Phase phase_ = Phase::idle;
  ServerHello hello_;
  std::vector<ServerTool> tools_;
  // A listing in progress (start-up or after list_changed): pages so far and cursors seen.
  std::vector<ServerTool> listing_;
  std::vector<std::string> cursors_;
  bool relist_ = false;  // list_changed arrived during a listing: list again when it ends
  bool listing_running_ = false;
  uint64_t next_id_ = 0;
  std::map<std::string, Pending> pending_;  // by request id text
  struct Call {
    std::string tool;
    std::optional<RawJson> arguments;
    std::optional<std::string> id;  // set once sent
  };
  uint64_t next_call_ = 1;
  std::map<uint64_t, Call> calls_;
};

}  // namespace llmx::mcp
