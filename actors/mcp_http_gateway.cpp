#include "actors/mcp_http_gateway.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "actors/message_writer.hpp"
#include "protocol/base/log.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/rpc/mcp_http.hpp"
#include "protocol/rpc/mcp_stateless.hpp"
#include "protocol/rpc/mcp_tasks.hpp"

namespace llmx {

namespace mh = mcp::http;
using transport::HttpRequest;
using transport::HttpResponse;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxSessions = 1024;             // 2025 sessions; past it the longest idle one goes
constexpr size_t kMaxBacklog = 1024 * 1024;       // bytes kept for a GET stream not yet open
constexpr auto kSessionIdle = std::chrono::hours(1);  // a 2025 session without requests or streams
constexpr auto kUnusedIdle = std::chrono::minutes(5);  // one that never made a request after initialize

// One POST waiting for its answer, or a session's GET stream.
struct Exchange {
  std::string session;
  std::string method;
  std::string id, id_plain;        // the request's id (compact JSON) and its plain form
  std::string progress_token;      // the request's, compact JSON
  std::string task_id;             // the task a tasks/result waits for
  bool get_stream = false;
  bool streaming = false;          // its SSE answer has begun
};

struct Session {
  session_actor actor;
  bool stateless = false;
  bool ending = false;                       // DELETE or shutdown: new requests get 404
  std::map<std::string, uint64_t> requests;  // by request id (compact JSON): the exchange
  std::set<std::string> cancelled;           // requests whose client went away: their lines are dropped
  std::deque<std::string> cancelled_order;   // the same, oldest first (the set is bounded)
  std::optional<uint64_t> get_stream;
  bool used_once = false;                    // made a request after initialize
  std::deque<std::string> backlog;           // SSE events for a GET stream not yet open
  size_t backlog_bytes = 0;
  Clock::time_point used = Clock::now();
};

HttpResponse json_response(int status, std::string body) {
  return HttpResponse{status, {{"Content-Type", "application/json"}}, std::move(body)};
}

}  // namespace

struct McpHttpGateway::Core : std::enable_shared_from_this<McpHttpGateway::Core> {
  Core(caf::actor_system& sys, conversation_manager_actor manager, rollout_store_actor store, SessionOptions options)
      : sys(sys), manager(std::move(manager)), store(std::move(store)), options(std::move(options)) {}
  caf::actor_system& sys;
  conversation_manager_actor manager;
  rollout_store_actor store;
  SessionOptions options;
  std::mutex mu;
  json::Parser parser;  // under `mu`: every POST and every line a session writes is read with it
  transport::HttpListener* listener = nullptr;
  std::unordered_map<uint64_t, Exchange> exchanges;
  std::unordered_map<std::string, Session> sessions;  // by Mcp-Session-Id ("#<exchange>" for 2026 requests)
  Clock::time_point last_sweep = Clock::now();
  bool stopping = false;

  // Everything below runs under `mu`.

  HttpResponse with_session(HttpResponse r, const std::string& key) {
    if (auto it = sessions.find(key); it != sessions.end() && !it->second.stateless)
      r.headers.emplace_back("Mcp-Session-Id", key);
    return r;
  }

  void refuse(uint64_t x, int status, int code, std::string_view message, std::string_view id = "null") {
    if (!listener) return;
    listener->respond(x, json_response(status, mh::error_body(code, message, id)));
  }

  Session& spawn(const std::string& key, bool stateless) {
    std::weak_ptr<Core> weak = weak_from_this();
    auto writer = spawn_message_writer(
        sys,
        [weak, key](std::string line) {
          if (auto core = weak.lock()) core->on_line(key, std::move(line));
        },
        [weak, key] {
          if (auto core = weak.lock()) core->on_closed(key);
        });
    auto& s = sessions[key];
    s.stateless = stateless;
    s.actor = spawn_mcp_session(sys, writer, manager, store, options);
    // A session that dies of an error never tells its writer: it is told here, and its close
    // ends the session's exchanges after whatever it still had to write. (Never a lock here:
    // on an actor already dead this runs at once, on this thread, under `mu`.)
    caf::actor_cast<caf::actor>(s.actor)->attach_functor([writer](const caf::error& reason) {
      if (reason != caf::exit_reason::normal) caf::anon_send(writer, shutdown_atom::value);
    });
    return s;
  }

  void on_request(uint64_t x, HttpRequest req) {
    std::lock_guard lock(mu);
    if (!listener) return;
    auto path = std::string_view(req.target).substr(0, req.target.find('?'));
    if (path != "/mcp")
      return listener->respond(x, {404, {{"Content-Type", "text/plain"}}, "the MCP endpoint is /mcp\n"});
    if (stopping) return refuse(x, 503, -32000, "the server is stopping");
    if (req.method == "POST") return post(x, req);
    if (req.method == "GET") return get(x, req);
    if (req.method == "DELETE") return remove(x, req);
    listener->respond(x, {405, {{"Allow", "GET, POST, DELETE"}, {"Content-Type", "text/plain"}}, "method not allowed\n"});
  }

  void post(uint64_t x, const HttpRequest& req) {
    if (!mh::is_json_content(req.header("content-type")))
      return refuse(x, 415, -32600, "Unsupported Media Type: the body must be application/json");
    auto accept = req.header("accept");
    if (!mh::accepts(accept, "application/json") || !mh::accepts(accept, "text/event-stream"))
      return refuse(x, 406, -32600, "Not Acceptable: the client must accept both application/json and text/event-stream");
    auto posted = mh::read_posted(parser, req.body);
    if (posted.kind == mh::Posted::Kind::invalid)
      return posted.error.starts_with("Parse error") ? refuse(x, 400, -32700, posted.error)
                                                     : refuse(x, 400, -32600, "Invalid Request: " + posted.error);
    if (posted.kind == mh::Posted::Kind::batch)
      return refuse(x, 400, -32600, "Invalid Request: batches are not supported (one JSON-RPC message per POST)");
    auto version = req.header("mcp-protocol-version");
    auto sid = req.header("mcp-session-id");
    bool stateless = version ? mh::is_stateless_version(*version)
                             : !sid && posted.meta_version && mh::is_stateless_version(*posted.meta_version);
    if (stateless) return post_stateless(x, req, posted);
    post_to_session(x, req, posted);
  }

  // 2026-07-28: no session; each request is its own.
  void post_stateless(uint64_t x, const HttpRequest& req, const mh::Posted& posted) {
    if (posted.kind == mh::Posted::Kind::response)
      return refuse(x, 400, -32600, "Invalid Request: a 2026-07-28 client sends no responses");
    if (posted.kind == mh::Posted::Kind::notification) return listener->respond(x, {202, {}, ""});
    auto version = req.header("mcp-protocol-version");
    if (!version) return refuse(x, 400, mh::kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required", posted.id);
    if (!posted.meta_version)
      return refuse(x, 400, -32602,
                    fmt::format("Invalid params: `_meta.{}` is required (the MCP-Protocol-Version header names {})",
                                mcp::kVersionKey, *version),
                    posted.id);
    if (auto why = mh::header_mismatch(posted, version, req.header("mcp-method"), req.header("mcp-name")))
      return refuse(x, 400, mh::kHeaderMismatch, *why, posted.id);
    auto key = "#" + std::to_string(x);
    auto& s = spawn(key, true);
    start(x, key, s, posted);
    caf::anon_send(s.actor, line_atom::value, req.body);
  }

  // 2025-03-26 to 2025-11-25: the session `initialize` made.
  void post_to_session(uint64_t x, const HttpRequest& req, const mh::Posted& posted) {
    auto sid = req.header("mcp-session-id");
    if (posted.kind == mh::Posted::Kind::request && posted.method == "initialize") {
      if (sid) return refuse(x, 400, -32600, "Invalid Request: initialize starts a session, not within one", posted.id);
      sweep();
      if (!make_room()) return refuse(x, 503, -32000, "too many sessions", posted.id);
      auto key = mcp::new_task_id();
      auto& s = spawn(key, false);
      start(x, key, s, posted);
      return caf::anon_send(s.actor, line_atom::value, req.body);
    }
    if (!sid) return refuse(x, 400, -32000, "Bad Request: the Mcp-Session-Id header is required", posted.id);
    auto it = sessions.find(std::string(*sid));
    if (it == sessions.end() || it->second.stateless || it->second.ending)
      return refuse(x, 404, -32001, "Session not found", posted.id);
    if (auto version = req.header("mcp-protocol-version"); version && mcp::negotiate_version(std::string(*version)) != *version)
      return refuse(x, 400, -32600, fmt::format("Bad Request: unsupported MCP-Protocol-Version: {}", *version), posted.id);
    auto& s = it->second;
    s.used = Clock::now();
    if (posted.kind == mh::Posted::Kind::request) s.used_once = true;
    if (posted.kind != mh::Posted::Kind::request) {
      caf::anon_send(s.actor, line_atom::value, req.body);
      return listener->respond(x, {202, {{"Mcp-Session-Id", it->first}}, ""});
    }
    if (s.requests.count(posted.id))
      return refuse(x, 400, -32600, "Invalid Request: a request with this id is already in flight", posted.id);
    start(x, it->first, s, posted);
    caf::anon_send(s.actor, line_atom::value, req.body);
  }

  void start(uint64_t x, const std::string& key, Session& s, const mh::Posted& posted) {
    Exchange e{key, posted.method, posted.id, posted.id_plain, posted.progress_token.value_or(""),
               posted.method == "tasks/result" ? posted.task_id.value_or("") : ""};
    exchanges[x] = std::move(e);
    s.requests[posted.id] = x;
  }

  void get(uint64_t x, const HttpRequest& req) {
    if (auto version = req.header("mcp-protocol-version"); version && mh::is_stateless_version(*version))
      return listener->respond(x, {405, {{"Allow", "POST"}, {"Content-Type", "text/plain"}}, "2026-07-28 has no GET stream\n"});
    if (!mh::accepts(req.header("accept"), "text/event-stream"))
      return refuse(x, 406, -32600, "Not Acceptable: the GET stream is text/event-stream");
    auto sid = req.header("mcp-session-id");
    if (!sid) return refuse(x, 400, -32000, "Bad Request: the Mcp-Session-Id header is required");
    auto it = sessions.find(std::string(*sid));
    if (it == sessions.end() || it->second.stateless || it->second.ending) return refuse(x, 404, -32001, "Session not found");
    auto& s = it->second;
    if (s.get_stream) {  // a client that reconnects: the new stream replaces the old (maybe dead) one
      listener->end_stream(*s.get_stream);
      exchanges.erase(*s.get_stream);
    }
    s.get_stream = x;
    s.used = Clock::now();
    exchanges[x] = Exchange{.session = it->first, .get_stream = true, .streaming = true};
    listener->open_stream(x, stream_head(it->first));
    for (auto& event : s.backlog) listener->stream(x, std::move(event));
    s.backlog.clear();
    s.backlog_bytes = 0;
  }

  void remove(uint64_t x, const HttpRequest& req) {
    if (auto version = req.header("mcp-protocol-version"); version && mh::is_stateless_version(*version))
      return listener->respond(x, {405, {{"Allow", "POST"}, {"Content-Type", "text/plain"}}, "2026-07-28 has no sessions\n"});
    auto sid = req.header("mcp-session-id");
    if (!sid) return refuse(x, 400, -32000, "Bad Request: the Mcp-Session-Id header is required");
    auto it = sessions.find(std::string(*sid));
    if (it == sessions.end() || it->second.stateless || it->second.ending) return refuse(x, 404, -32001, "Session not found");
    end_session(it->second, "the session was deleted");
    listener->respond(x, {200, {}, ""});
  }

  HttpResponse stream_head(const std::string& key) {
    return with_session(HttpResponse{200,
                                     {{"Content-Type", "text/event-stream"},
                                      {"Cache-Control", "no-cache"},
                                      {"X-Accel-Buffering", "no"}},
                                     ""},
                        key);
  }

  // Cancels what the session has in flight and lets it finish; its writer's close removes it.
  void end_session(Session& s, std::string_view why) {
    if (s.ending) return;
    s.ending = true;
    for (auto& [id, _] : s.requests) caf::anon_send(s.actor, line_atom::value, mh::cancelled_notification(id, why));
    caf::anon_send(s.actor, eof_atom::value);
  }

  // 2025 sessions idle for an hour end (clients often never send DELETE).
  void sweep() {
    auto now = Clock::now();
    if (now - last_sweep < std::chrono::minutes(1)) return;
    last_sweep = now;
    for (auto& [_, s] : sessions)
      if (idle(s) && now - s.used > (s.used_once ? kSessionIdle : kUnusedIdle)) end_session(s, "idle");
  }

  static bool idle(const Session& s) { return !s.stateless && !s.ending && s.requests.empty() && !s.get_stream; }

  // Below the cap of 2025 sessions, ending the longest idle one if need be; false when all are busy.
  bool make_room() {
    size_t live = 0;
    Session* oldest = nullptr;
    for (auto& [_, s] : sessions) {
      if (s.stateless || s.ending) continue;
      ++live;
      if (idle(s) && (!oldest || s.used < oldest->used)) oldest = &s;
    }
    if (live < kMaxSessions) return true;
    if (!oldest) return false;
    end_session(*oldest, "evicted: too many sessions");
    return true;
  }

  void on_dropped(uint64_t x) {
    std::lock_guard lock(mu);
    auto it = exchanges.find(x);
    if (it == exchanges.end()) return;
    auto e = std::move(it->second);
    exchanges.erase(it);
    auto sit = sessions.find(e.session);
    if (sit == sessions.end()) return;
    auto& s = sit->second;
    if (e.get_stream) {
      if (s.get_stream == x) s.get_stream.reset();
      return;
    }
    s.requests.erase(e.id);
    if (s.cancelled.insert(e.id).second) s.cancelled_order.push_back(e.id);
    while (s.cancelled_order.size() > 1024) {  // a cancelled call gets no answer: forget the oldest
      s.cancelled.erase(s.cancelled_order.front());
      s.cancelled_order.pop_front();
    }
    // Nobody can receive this request's answer any more: stop its work.
    caf::anon_send(s.actor, line_atom::value, mh::cancelled_notification(e.id, "the HTTP connection closed"));
    if (s.stateless) end_session(s, "the HTTP connection closed");
  }

  // Whether a line belongs to a request whose client went away.
  static bool is_cancelled(const Session& s, const mh::Route& r) {
    if (s.cancelled.empty()) return false;
    if (!r.request_id.empty() && s.cancelled.count(r.request_id)) return true;
    if (r.request_plain.empty()) return false;
    for (const auto& id : s.cancelled)
      if (id == r.request_plain || id == "\"" + r.request_plain + "\"") return true;
    return false;
  }

  // The exchange a related line belongs to, if one is open.
  std::optional<uint64_t> related_exchange(const Session& s, const mh::Route& r) {
    if (!r.request_id.empty())
      if (auto it = s.requests.find(r.request_id); it != s.requests.end()) return it->second;
    for (auto& [_, x] : s.requests) {
      auto& e = exchanges.at(x);
      if (!r.request_plain.empty() && e.id_plain == r.request_plain && e.method == "tools/call") return x;
      if (!r.progress_token.empty() && e.progress_token == r.progress_token) return x;
      if (!r.task_id.empty() && e.task_id == r.task_id) return x;
    }
    return std::nullopt;
  }

  void on_line(const std::string& key, std::string line) {
    std::lock_guard lock(mu);
    auto sit = sessions.find(key);
    if (sit == sessions.end() || !listener) return;
    auto& s = sit->second;
    auto route = mh::route_of(parser, line);
    if (route.kind == mh::Route::Kind::response) {
      auto rit = s.requests.find(route.request_id);
      if (rit == s.requests.end()) {  // its client went away (or an answer to nothing: never on the GET stream)
        s.cancelled.erase(route.request_id);
        return;
      }
      auto x = rit->second;
      s.requests.erase(rit);
      auto e = std::move(exchanges.at(x));
      exchanges.erase(x);
      if (e.streaming) {
        listener->stream(x, mh::sse_event(line));
        listener->end_stream(x);
      } else {
        bool started = e.method == "initialize" && !route.error_code && !s.stateless;
        auto r = json_response(mh::status_of(route, s.stateless), std::move(line));
        listener->respond(x, started ? with_session(std::move(r), key) : std::move(r));
      }
      if (e.method == "initialize" && route.error_code) end_session(s, "initialize failed");
      if (s.stateless) end_session(s, "answered");
      return;
    }
    if (route.kind == mh::Route::Kind::related && is_cancelled(s, route)) return;
    if (route.kind == mh::Route::Kind::related)
      if (auto x = related_exchange(s, route)) {
        auto& e = exchanges.at(*x);
        if (!e.streaming) {
          e.streaming = true;
          listener->open_stream(*x, stream_head(key));
        }
        return listener->stream(*x, mh::sse_event(line));
      }
    if (s.stateless) return;  // a 2026 request's line with no stream to carry it
    auto event = mh::sse_event(line);
    if (s.get_stream) return listener->stream(*s.get_stream, std::move(event));
    s.backlog_bytes += event.size();
    s.backlog.push_back(std::move(event));
    while (s.backlog_bytes > kMaxBacklog && !s.backlog.empty()) {
      s.backlog_bytes -= s.backlog.front().size();
      s.backlog.pop_front();
    }
  }

  // The session is gone: whatever it left unanswered ends.
  void on_closed(const std::string& key) {
    std::lock_guard lock(mu);
    auto sit = sessions.find(key);
    if (sit == sessions.end()) return;
    if (!listener) return (void)sessions.erase(sit);
    auto& s = sit->second;
    for (auto& [id, x] : s.requests) {
      auto& e = exchanges.at(x);
      auto body = mh::error_body(-32603, "the session ended before answering", id);
      if (e.streaming) {
        listener->stream(x, mh::sse_event(body));
        listener->end_stream(x);
      } else {
        listener->respond(x, json_response(200, std::move(body)));
      }
      exchanges.erase(x);
    }
    if (s.get_stream) {
      listener->end_stream(*s.get_stream);
      exchanges.erase(*s.get_stream);
    }
    sessions.erase(sit);
  }
};

McpHttpGateway::McpHttpGateway(caf::actor_system& sys, conversation_manager_actor manager, rollout_store_actor store,
                               SessionOptions options)
    : core_(std::make_shared<Core>(sys, std::move(manager), std::move(store), std::move(options))) {
  core_->options.owns_engine = false;
}

McpHttpGateway::~McpHttpGateway() {
  {
    std::lock_guard lock(core_->mu);  // writers that outlive this object find no listener
    core_->stopping = true;
    core_->listener = nullptr;
  }
  if (listener_) listener_->stop();
}

uint16_t McpHttpGateway::listen(const std::string& host, uint16_t port, transport::HttpListener::Options options) {
  transport::HttpListener::Handlers h;
  std::weak_ptr<Core> weak = core_;
  h.request = [weak](uint64_t x, HttpRequest req) {
    if (auto core = weak.lock()) core->on_request(x, std::move(req));
  };
  h.dropped = [weak](uint64_t x) {
    if (auto core = weak.lock()) core->on_dropped(x);
  };
  std::lock_guard lock(core_->mu);  // no request is handled before the listener is known
  listener_ = std::make_unique<transport::HttpListener>(host, port, std::move(h), std::move(options));
  core_->listener = listener_.get();
  return listener_->port();
}

void McpHttpGateway::shutdown() {
  std::lock_guard lock(core_->mu);
  core_->stopping = true;
  for (auto& [_, s] : core_->sessions) core_->end_session(s, "the server is stopping");
}

}  // namespace llmx
