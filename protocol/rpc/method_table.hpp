// One typed handler per JSON-RPC method, the way clangd's LSPBinder does it. A server declares
// each method once:
//
//   table.bind<v2::ThreadStartParams, v2::ThreadResult>("thread/start", thread_start);
//
// with `void thread_start(Ctx ctx, v2::ThreadStartParams params, Reply<v2::ThreadResult> reply)`.
// The table decodes the params (-32602 naming the field), encodes the result, and turns an
// RpcError into the error reply, so no handler sees JSON. The schema export asks the same table
// which methods exist and with which params (export_requests), so the two cannot drift apart.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/schema_gen.hpp"
#include "protocol/rpc/jsonrpc.hpp"

namespace llmx::rpc {

// A failed request, as the client sees it.
struct RpcError {
  int code = kInternalError;
  std::string message;
  std::optional<std::string> data = {};  // the error's `data` (JSON), when it has one
};

// The `{}` result.
struct Empty {
  LLMX_NO_FIELDS
};
// The params of a method that takes none: absent, null or {} (protocol.md §1.6); anything else
// is -32602.
struct NoParams {};

// Where a reply goes among what is queued for the client. In order: after every line written
// before it (a tools/call result after its call's events). Ahead: before the notifications still
// queued for a slow client, for replies that no earlier notification explains (ping, listings).
enum class Lane { in_order, ahead };

// Where a table's answers go: supplied by the session that dispatches into it.
struct Responder {
  std::function<void(const Id&, std::string result_json, Lane)> result;
  std::function<void(const Id&, const RpcError&, Lane)> error;
};
using ResponderPtr = std::shared_ptr<const Responder>;

// The answer to one request. Copyable, so a handler can keep it until an actor replies (or an
// event arrives); it should be called once.
template <class R>
class Reply {
 public:
  Reply(Id id, ResponderPtr out, Lane lane = Lane::in_order) : id_(std::move(id)), out_(std::move(out)), lane_(lane) {}
  void operator()(const R& result) const { out_->result(id_, json::to_json(result), lane_); }
  void operator()(const RpcError& err) const { out_->error(id_, err, lane_); }
  void error(int code, std::string message) const { out_->error(id_, RpcError{code, std::move(message)}, lane_); }
  const Id& id() const { return id_; }

 private:
  Id id_;
  ResponderPtr out_;
  Lane lane_;
};

// A request's params as every method decodes them: absent (or null) params are `{}`. Throws
// json::DecodeError naming the field.
template <class P>
P decode_params(const Incoming& in) {
  return in.params ? json::from_json<P>(*in.params) : json::parse_as<P>("{}");
}

// Whether a bound method belongs to the exported app-server protocol, or to a protocol someone
// else specifies (MCP's own methods: their schema is the MCP specification's).
enum class Export { yes, no };

template <class Ctx>
class MethodTable {
 public:
  template <class P, class R>
  using Handler = void (*)(Ctx, P, Reply<R>);
  template <class P>
  using NotificationHandler = void (*)(Ctx, P);

  template <class P, class R>
  MethodTable& bind(std::string method, Handler<P, R> handler, Export exported = Export::yes) {
    Entry e;
    e.exported = exported == Export::yes;
    e.call = [handler](Ctx ctx, const Incoming& in, const ResponderPtr& out, Lane lane) {
      Reply<R> reply{in.id, out, lane};
      P params;
      // A request refused before it ran depends on nothing queued: its error goes ahead.
      if (!decode(in, params, [&](RpcError err) { Reply<R>{in.id, out, Lane::ahead}(err); })) return;
      handler(std::move(ctx), std::move(params), std::move(reply));
    };
    e.schema = [](schema::Registry& reg, const std::string& union_name, const std::string& name) {
      if constexpr (std::is_same_v<P, NoParams>)
        reg.request(union_name, name);
      else
        reg.template request<P>(union_name, name);
    };
    add(std::move(method), std::move(e));
    return *this;
  }

  // The replies of a bound method may go ahead of queued notifications (see Lane).
  MethodTable& ahead(std::string_view method) {
    if (auto it = index_.find(method); it != index_.end()) entries_[it->second].second.lane = Lane::ahead;
    return *this;
  }

  template <class P>
  MethodTable& on(std::string method, NotificationHandler<P> handler) {
    notifications_[std::move(method)] = [handler](Ctx ctx, const Incoming& in) {
      P params;
      if (decode(in, params, [&](const RpcError&) {})) handler(std::move(ctx), std::move(params));
    };
    return *this;
  }

  // Runs the method's handler (or answers its params error); false when the method is unknown.
  bool call(Ctx ctx, const Incoming& in, const ResponderPtr& out) const {
    auto it = index_.find(in.method);
    if (it == index_.end()) return false;
    const auto& e = entries_[it->second].second;
    e.call(std::move(ctx), in, out, e.lane);
    return true;
  }
  // Runs a notification's handler; false when nobody listens to it.
  bool notify(Ctx ctx, const Incoming& in) const {
    auto it = notifications_.find(in.method);
    if (it == notifications_.end()) return false;
    it->second(std::move(ctx), in);
    return true;
  }

  bool serves(std::string_view method) const { return index_.find(method) != index_.end(); }
  // Method names in the order they were bound.
  std::vector<std::string> methods(bool exported_only) const {
    std::vector<std::string> out;
    for (const auto& [name, e] : entries_)
      if (!exported_only || e.exported) out.push_back(name);
    return out;
  }
  // Adds every exported method, with its params type, to a request union of the schema.
  void export_requests(schema::Registry& reg, const std::string& union_name) const {
    for (const auto& [name, e] : entries_)
      if (e.exported) e.schema(reg, union_name, name);
  }

 private:
  struct Entry {
    bool exported = true;
    Lane lane = Lane::in_order;
    std::function<void(Ctx, const Incoming&, const ResponderPtr&, Lane)> call;
    std::function<void(schema::Registry&, const std::string&, const std::string&)> schema;
  };

  template <class P, class OnError>
  static bool decode(const Incoming& in, P& params, OnError&& on_error) {
    if constexpr (std::is_same_v<P, NoParams>) {
      if (!in.params) return true;
      auto p = *in.params;
      if (p.is_object() && p.get_object().value_unsafe().size() == 0) return true;
      on_error(RpcError{kInvalidParams,
                        fmt::format("Invalid params: `{}` takes no params, got {}", in.method, json::type_name(p))});
      return false;
    } else {
      try {
        params = decode_params<P>(in);
        return true;
      } catch (const json::DecodeError& err) {
        on_error(RpcError{kInvalidParams, fmt::format("Invalid params: {}", err.what())});
        return false;
      }
    }
  }

  void add(std::string method, Entry e) {
    if (auto it = index_.find(method); it != index_.end()) {
      entries_[it->second].second = std::move(e);  // a later bind replaces (a server's own flavour)
      return;
    }
    index_[method] = entries_.size();
    entries_.emplace_back(std::move(method), std::move(e));
  }

  std::vector<std::pair<std::string, Entry>> entries_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::function<void(Ctx, const Incoming&)>, std::less<>> notifications_;
};

}  // namespace llmx::rpc
