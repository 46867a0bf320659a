#include "actors/mcp_client.hpp"

#include <fmt/format.h>

#include "actors/mcp_transport.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/log.hpp"
#include "protocol/rpc/mcp_connection.hpp"
#include "protocol/rpc/mcp_server_launch.hpp"
#include "protocol/rpc/mcp_tool_names.hpp"

namespace llmx {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPingWait = std::chrono::seconds(10);  // a server that misses this is hung
constexpr auto kMaxBackoff = std::chrono::seconds(30);
constexpr auto kStableFor = std::chrono::seconds(60);  // up this long: its failures are forgiven
constexpr auto kReplyMargin = std::chrono::seconds(15);  // beyond a client's own timeouts

std::chrono::milliseconds seconds_ms(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); }

std::string seconds_text(double s) { return fmt::format("{:g}s", s); }

// 1 s, 2 s, 4 s ... 30 s after consecutive failures.
std::chrono::milliseconds backoff(uint32_t failures) {
  auto ms = std::chrono::milliseconds(1000) * (1u << std::min<uint32_t>(failures, 5));
  return std::min<std::chrono::milliseconds>(ms, kMaxBackoff);
}

struct McpClientState {
  McpClientState() = default;  // user-declared: CAF must not aggregate-init the state from `self`
  std::string name;
  McpServerConfig config;
  uint64_t generation = 0;  // connection number: messages of an earlier one are stale
  std::unique_ptr<McpTransport> transport;
  mcp::Connection conn;
  enum class Up { idle, starting, ready, failed } up = Up::idle;
  std::string error;              // failed: why (as the user is told)
  Clock::time_point retry_after;  // failed: no new start before this
  uint32_t failures = 0;          // consecutive, for the backoff
  Clock::time_point ready_at;     // the last successful handshake
  bool restart_scheduled = false;
  bool ping_out = false;
  uint64_t pings = 0;  // ping number: a timer for an earlier ping is stale
  std::vector<caf::typed_response_promise<McpServerStatus>> waiting;
  struct Call {
    std::string key;
    caf::typed_response_promise<McpCallResult> promise;
    caf::strong_actor_ptr caller;
  };
  std::map<uint64_t, Call> calls;
  std::map<std::string, uint64_t> by_key;
};

using client_ptr = mcp_client_actor::stateful_pointer<McpClientState>;

McpServerStatus status_of(client_ptr self) {
  auto& st = self->state;
  McpServerStatus s;
  s.server = st.name;
  s.ready = st.up == McpClientState::Up::ready;
  s.error = st.error;
  if (s.ready) s.tools = st.conn.tools();
  s.client = caf::actor_cast<caf::strong_actor_ptr>(self);
  return s;
}

void failed(client_ptr self, std::string error) {
  auto& st = self->state;
  st.up = McpClientState::Up::failed;
  st.error = std::move(error);
  st.transport.reset();
  st.retry_after = Clock::now() + backoff(st.failures++);
  log::warn("{}", st.error);
  for (auto& p : st.waiting) p.deliver(status_of(self));
  st.waiting.clear();
}

void carry(client_ptr self, mcp::Connection::Output& out) {
  auto& st = self->state;
  // HTTP sends the agreed revision with every later message, starting with `initialized`.
  if (out.initialized && st.transport) st.transport->established(st.conn.hello().protocol_version);
  if (st.transport)
    for (auto& m : out.messages) st.transport->send(std::move(m));
  for (auto& note : out.notes) log::info("MCP server `{}`: {}", st.name, note);
  if (out.pong) st.ping_out = false;
  for (auto& end : out.ended) {
    auto it = st.calls.find(end.call);
    if (it == st.calls.end()) continue;
    it->second.promise.deliver(McpCallResult{end.ok, std::move(end.result), std::move(end.error)});
    st.by_key.erase(it->second.key);
    st.calls.erase(it);
  }
  for (auto& p : out.progress) {
    auto it = st.calls.find(p.call);
    if (it != st.calls.end() && it->second.caller)
      self->send(caf::actor_cast<turn_executor_actor>(it->second.caller), McpProgress{it->second.key, p.message});
  }
  for (auto& e : out.elicitations) {
    // The user of the call it belongs to answers (through its turn); without one, it is declined.
    auto it = e.call ? st.calls.find(*e.call) : st.calls.end();
    auto generation = st.generation;
    auto answer = [self, generation, id = e.id](const std::string& result) {
      auto& s = self->state;
      if (generation != s.generation) return;  // that connection is gone
      mcp::Connection::Output reply;
      s.conn.answer(id, result, reply);
      if (s.transport)
        for (auto& m : reply.messages) s.transport->send(std::move(m));
    };
    if (it == st.calls.end() || !it->second.caller) {
      answer(mcp::elicit_result(ReviewDecision::denied));
      continue;
    }
    McpElicitation ask{it->second.key, st.name, std::move(e.message), RawJson{std::move(e.requested_schema)}};
    self->request(caf::actor_cast<turn_executor_actor>(it->second.caller), caf::infinite, std::move(ask))
        .then([=](McpElicitationReply& r) { answer(r.result); },
              [=](caf::error&) { answer(mcp::elicit_result(ReviewDecision::denied)); });
  }
  if (out.became_ready) {
    st.up = McpClientState::Up::ready;
    st.error.clear();
    st.ready_at = Clock::now();
    log::info("MCP server `{}` is ready with {} tools", st.name, st.conn.tools().size());
    for (auto& p : st.waiting) p.deliver(status_of(self));
    st.waiting.clear();
  }
  if (out.tools_changed) log::info("MCP server `{}` now has {} tools", st.name, st.conn.tools().size());
  if (out.failure) failed(self, mcp::startup_error_message(st.name, st.config, *out.failure));
}

void start(client_ptr self) {
  auto& st = self->state;
  ++st.generation;
  st.conn = mcp::Connection{};
  st.ping_out = false;
  std::string error;
  st.transport = start_mcp_transport(st.name, st.config, self, st.generation, error);
  if (!st.transport) return failed(self, mcp::startup_error_message(st.name, st.config, error));
  st.up = McpClientState::Up::starting;
  mcp::Connection::Output out;
  st.conn.start(out);
  carry(self, out);
  self->delayed_send(self, seconds_ms(st.config.startup_timeout()), timeout_atom::value, st.generation);
}

// A start is due: never started, or failed and past its backoff.
bool may_start(client_ptr self) {
  auto& st = self->state;
  return st.up == McpClientState::Up::idle ||
         (st.up == McpClientState::Up::failed && !st.restart_scheduled && Clock::now() >= st.retry_after);
}

// The connection is gone (exit, hang, HTTP session lost): calls fail, and a server that was
// ready is started again after a backoff.
void lost(client_ptr self, const std::string& why) {
  auto& st = self->state;
  bool was_ready = st.up == McpClientState::Up::ready;
  mcp::Connection::Output out;
  st.conn.fail(was_ready ? fmt::format("MCP server `{}` stopped: {}", st.name, why) : why, out);
  st.transport.reset();
  carry(self, out);
  if (!was_ready) return;  // a failing start was handled by carry
  // A server that keeps dying soon after starting waits longer each time.
  if (Clock::now() - st.ready_at >= kStableFor) st.failures = 0;
  failed(self, fmt::format("MCP server `{}` stopped: {}", st.name, why));
  st.restart_scheduled = true;
  self->delayed_send(self, backoff(st.failures - 1), retry_atom::value);
}

mcp_client_actor::behavior_type mcp_client_impl(client_ptr self, std::string name, McpServerConfig config) {
  self->state.name = std::move(name);
  self->state.config = std::move(config);
  return {
      [=](status_atom) -> caf::result<McpServerStatus> {
        auto& st = self->state;
        if (may_start(self)) start(self);
        if (st.up != McpClientState::Up::starting) return status_of(self);
        st.waiting.push_back(self->make_response_promise<McpServerStatus>());
        return st.waiting.back();
      },
      [=](McpCall& call) -> caf::result<McpCallResult> {
        auto& st = self->state;
        if (may_start(self)) start(self);
        if (st.up == McpClientState::Up::failed)
          return McpCallResult{false, {}, fmt::format("MCP server `{}` is not available: {}", st.name, st.error)};
        if (!mcp::tool_allowed(call.tool, st.config.enabled_tools, st.config.disabled_tools))
          return McpCallResult{false, {}, fmt::format("tool '{}' is disabled for MCP server '{}'", call.tool, st.name)};
        auto promise = self->make_response_promise<McpCallResult>();
        mcp::Connection::Output out;
        auto n = st.conn.call(call.tool, call.arguments, out);
        st.calls[n] = McpClientState::Call{call.key, promise, std::move(call.caller)};
        st.by_key[call.key] = n;
        self->delayed_send(self, seconds_ms(st.config.tool_timeout()), timeout_atom::value, call.key);
        carry(self, out);
        return promise;
      },
      [=](cancel_atom, const std::string& key) {
        auto& st = self->state;
        auto it = st.by_key.find(key);
        if (it == st.by_key.end()) return;
        mcp::Connection::Output out;
        st.conn.abandon(it->second, "cancelled", out);
        carry(self, out);
      },
      [=](line_atom, uint64_t generation, std::string& line) {
        auto& st = self->state;
        if (generation != st.generation) return;
        mcp::Connection::Output out;
        st.conn.on_message(line, out);
        carry(self, out);
      },
      [=](eof_atom, uint64_t generation, const std::string& why) {
        if (generation != self->state.generation || !self->state.transport) return;
        lost(self, why);
      },
      [=](timeout_atom, uint64_t generation) {
        auto& st = self->state;
        if (generation != st.generation || st.up != McpClientState::Up::starting) return;
        mcp::Connection::Output out;
        st.transport.reset();
        st.conn.fail(fmt::format("timed out handshaking with MCP server after {}", seconds_text(st.config.startup_timeout())),
                     out);
        carry(self, out);
      },
      [=](timeout_atom, const std::string& key) {
        auto& st = self->state;
        auto it = st.by_key.find(key);
        if (it == st.by_key.end()) return;
        mcp::Connection::Output out;
        st.conn.abandon(it->second, fmt::format("timed out awaiting tools/call after {}", seconds_text(st.config.tool_timeout())),
                        out);
        // A slow tool or a hung server? One ping tells.
        if (!st.ping_out && st.up == McpClientState::Up::ready) {
          st.ping_out = true;
          st.conn.ping(out);
          self->delayed_send(self, kPingWait, idle_atom::value, ++st.pings);
        }
        carry(self, out);
      },
      [=](idle_atom, uint64_t ping) {
        auto& st = self->state;
        if (ping != st.pings || !st.ping_out || !st.transport) return;
        lost(self, fmt::format("it stopped answering (no answer to ping within {}s)",
                               std::chrono::duration_cast<std::chrono::seconds>(kPingWait).count()));
      },
      [=](retry_atom) {
        auto& st = self->state;
        st.restart_scheduled = false;
        if (st.up == McpClientState::Up::failed) start(self);
      },
  };
}

// --- the hub ---------------------------------------------------------------------------------

struct McpHubState {
  McpHubState() = default;
  std::map<std::string, mcp_client_actor> clients;  // by name and configuration
  static inline const char* name = "llmx.mcp_hub";
};

using hub_ptr = mcp_hub_actor::stateful_pointer<McpHubState>;

mcp_hub_actor::behavior_type mcp_hub_impl(hub_ptr self) {
  // Clients are linked: they end (and stop their servers) with the hub. A client that dies on its
  // own is forgotten, and the next conversation that needs its server starts a new one.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    auto& clients = self->state.clients;
    for (auto it = clients.begin(); it != clients.end(); ++it)
      if (it->second.address() == msg.source) {
        clients.erase(it);
        return;
      }
    self->quit(msg.reason);
  });
  return {
      [=](McpConnect& connect) -> caf::result<McpServers> {
        auto result = std::make_shared<McpServers>();
        auto remaining = std::make_shared<size_t>(0);
        auto promise = self->make_response_promise<McpServers>();
        struct Ask {
          size_t index;
          mcp_client_actor client;
          std::chrono::milliseconds limit;  // bounded even if the client itself died
        };
        std::vector<Ask> asks;
        for (auto& [name, config] : connect.servers) {
          if (!config.enabled) continue;
          McpServerStatus status;
          status.server = name;
          if (!mcp::valid_server_name(name)) {
            status.error = fmt::format("invalid server name '{}': must match pattern ^[a-zA-Z0-9_-]+$", name);
            result->servers.push_back(std::move(status));
            continue;
          }
          auto key = name + "\n" + json::to_json(config);
          auto it = self->state.clients.find(key);
          if (it == self->state.clients.end())
            it = self->state.clients.emplace(key, spawn_mcp_client(self, name, config)).first;
          auto limit = std::chrono::milliseconds(static_cast<int64_t>(config.startup_timeout() * 1000)) + kReplyMargin;
          asks.push_back(Ask{result->servers.size(), it->second, limit});
          result->servers.push_back(std::move(status));
        }
        *remaining = asks.size();
        if (asks.empty()) {
          promise.deliver(std::move(*result));
          return promise;
        }
        for (auto& ask : asks) {
          auto i = ask.index;
          auto done = [=]() mutable {
            if (--*remaining == 0) promise.deliver(std::move(*result));
          };
          self->request(ask.client, ask.limit, status_atom::value)
              .then([=](McpServerStatus& s) mutable {
                     result->servers[i] = std::move(s);
                     done();
                   },
                    [=](caf::error& err) mutable {
                      result->servers[i].error = mcp::startup_error_message(result->servers[i].server, {},
                                                                            self->system().render(err));
                      done();
                    });
        }
        return promise;
      },
  };
}

}  // namespace

mcp_client_actor spawn_mcp_client(caf::local_actor* hub, std::string name, McpServerConfig config) {
  return hub->spawn<caf::linked>(mcp_client_impl, std::move(name), std::move(config));
}

mcp_hub_actor spawn_mcp_hub(caf::actor_system& sys) { return sys.spawn(mcp_hub_impl); }

}  // namespace llmx
