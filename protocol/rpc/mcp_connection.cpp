#include "protocol/rpc/mcp_connection.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/jsonrpc.hpp"

namespace llmx::mcp {

namespace {

const rpc::Encoder kEncoder{true};

std::string progress_text(json::Object o) {
  std::string text;
  auto number = [](json::Element e) -> std::string {
    if (e.is_int64()) return std::to_string(e.get_int64().value_unsafe());
    if (e.is_uint64()) return std::to_string(e.get_uint64().value_unsafe());
    if (e.is_double()) return fmt::format("{:g}", e.get_double().value_unsafe());
    return {};
  };
  if (auto p = json::get(o, "progress")) {
    text = number(*p);
    if (auto t = json::get(o, "total")) text += "/" + number(*t);
  }
  if (auto m = json::string_if(o, "message")) text += (text.empty() ? "" : ": ") + std::string(*m);
  return text;
}

}  // namespace

std::string Connection::request(std::string_view method, std::string_view params) {
  auto id = rpc::Id::from_int(static_cast<int64_t>(next_id_++));
  return kEncoder.request(id, method, params);
}

void Connection::start(Output& out) {
  phase_ = Phase::initializing;
  pending_["0"] = Pending{Purpose::initialize};
  next_id_ = 0;
  out.messages.push_back(request("initialize", client_initialize_params()));
}

uint64_t Connection::call(std::string_view tool, const std::optional<RawJson>& arguments, Output& out) {
  auto n = next_call_++;
  calls_[n] = Call{std::string(tool), arguments, std::nullopt};
  if (phase_ == Phase::failed)
    end_call(n, false, "the MCP server is not running", out);
  else if (phase_ == Phase::ready)
    send_call(n, out);
  return n;
}

void Connection::send_call(uint64_t n, Output& out) {
  auto& c = calls_.at(n);
  auto id = std::to_string(next_id_);
  pending_[id] = Pending{Purpose::call, n};
  c.id = id;
  // The call number is the progress token: progress notifications name the call they are for.
  out.messages.push_back(request("tools/call", tool_call_params(c.tool, c.arguments, static_cast<int64_t>(n))));
}

void Connection::list_page(const std::optional<std::string>& cursor, Output& out) {
  listing_running_ = true;
  pending_[std::to_string(next_id_)] = Pending{Purpose::list};
  json::Writer w;
  w.begin_object();
  if (cursor) w.field("cursor", *cursor);
  w.end_object();
  out.messages.push_back(request("tools/list", w.take()));
}

void Connection::ping(Output& out) {
  pending_[std::to_string(next_id_)] = Pending{Purpose::ping};
  out.messages.push_back(request("ping", "{}"));
}

void Connection::abandon(uint64_t n, const std::string& error, Output& out) {
  auto it = calls_.find(n);
  if (it == calls_.end()) return;
  if (it->second.id) {
    pending_.erase(*it->second.id);
    json::Writer w;
    w.begin_object().key("requestId").raw(*it->second.id).field("reason", error).end_object();
    out.messages.push_back(kEncoder.notification("notifications/cancelled", w.take()));
  }
  end_call(n, false, error, out);
}

void Connection::end_call(uint64_t n, bool ok, std::string text, Output& out) {
  calls_.erase(n);
  CallEnd end{n, ok, {}, {}};
  (ok ? end.result : end.error) = std::move(text);
  out.ended.push_back(std::move(end));
}

void Connection::answer(const std::string& id, std::string_view result_json, Output& out) {
  out.messages.push_back(kEncoder.result(rpc::Id{id}, result_json));
}

void Connection::decline(const std::string& id, Output& out) { answer(id, elicit_result(ReviewDecision::denied), out); }

void Connection::fail(const std::string& why, Output& out) {
  if (phase_ == Phase::initializing || phase_ == Phase::listing) out.failure = why;
  phase_ = Phase::failed;
  pending_.clear();
  listing_running_ = false;
  std::vector<uint64_t> open;
  for (auto& [n, c] : calls_) open.push_back(n);
  for (auto n : open) end_call(n, false, why, out);
}

void Connection::on_message(std::string_view text, Output& out) {
  if (text::trim_view(text, " \t\r\n").empty()) return;  // JSON whitespace: no message
  json::Parser parser;
  json::Element root;
  try {
    root = parser.parse(text);
  } catch (const json::DecodeError& e) {
    out.notes.push_back(fmt::format("ignored a line that is not JSON ({}): {:.120}", e.what(), text));
    return;
  }
  if (root.is_array()) {  // a batch (2025-03-26): each member on its own; batches do not nest
    for (auto member : json::Array(root.get_array().value_unsafe()))
      if (member.is_object()) on_message(json::to_text(member), out);
    return;
  }
  auto in = rpc::classify(root, parser.repaired_top_level_id());
  switch (in.kind) {
    case rpc::Incoming::Kind::response:
    case rpc::Incoming::Kind::error_response: {
      auto it = pending_.find(in.id.json);
      if (it == pending_.end()) return;  // abandoned or unknown: nobody waits for it
      auto p = it->second;
      pending_.erase(it);
      try {
        if (in.kind == rpc::Incoming::Kind::response)
          on_result(p, in.id.json, *in.result, out);
        else
          on_error(p, in.error_code, in.error_message, out);
      } catch (const json::DecodeError& e) {  // a field of the wrong type
        if (p.purpose == Purpose::call) return end_call(p.call, false, std::string("tool call error: ") + e.what(), out);
        if (p.purpose == Purpose::list) return on_error(p, rpc::kInvalidParams, e.what(), out);
        fail(std::string("the initialize result is unusable: ") + e.what(), out);
      }
      return;
    }
    case rpc::Incoming::Kind::request:
      return on_request(in.id.json, in.method, in.params, out);
    case rpc::Incoming::Kind::notification:
      return on_notification(in.method, in.params, out);
    case rpc::Incoming::Kind::invalid:
      out.notes.push_back(fmt::format("ignored a message that is not JSON-RPC ({}): {:.120}", in.invalid_reason, text));
      return;
  }
}

void Connection::on_result(const Pending& p, std::string_view, json::Element result, Output& out) {
  switch (p.purpose) {
    case Purpose::initialize: {
      auto hello = read_initialize_result(result);
      if (auto* err = std::get_if<std::string>(&hello)) return fail(*err, out);
      hello_ = std::get<ServerHello>(std::move(hello));
      out.initialized = true;
      out.messages.push_back(kEncoder.notification("notifications/initialized", std::nullopt));
      phase_ = Phase::listing;
      listing_.clear();
      cursors_.clear();
      if (!hello_.tools) return finish_listing(out);  // nothing to list
      return list_page(std::nullopt, out);
    }
    case Purpose::list: {
      auto page = read_tools_list(result);
      for (auto& why : page.skipped) out.notes.push_back("a listed tool was left out: " + why);
      for (auto& t : page.tools) listing_.push_back(std::move(t));
      if (page.next_cursor) {
        bool repeated = std::find(cursors_.begin(), cursors_.end(), *page.next_cursor) != cursors_.end();
        if (!repeated && cursors_.size() + 1 < kMaxPages) {
          cursors_.push_back(*page.next_cursor);
          return list_page(page.next_cursor, out);
        }
        out.notes.push_back(repeated ? "tools/list repeated a cursor; the listing stops there"
                                     : "tools/list gave too many pages; the listing stops there");
      }
      return finish_listing(out);
    }
    case Purpose::ping:
      out.pong = true;
      return;
    case Purpose::call:
      if (!result.is_object()) return end_call(p.call, false, "tool call error: the result is not an object", out);
      return end_call(p.call, true, json::to_text(result), out);
  }
}

void Connection::on_error(const Pending& p, int64_t code, const std::string& message, Output& out) {
  switch (p.purpose) {
    case Purpose::initialize:
      return fail(fmt::format("initialize failed: {} ({})", message, code), out);
    case Purpose::list:
      // As the reference: a server that cannot list its tools contributes none.
      out.notes.push_back(fmt::format("tools/list failed: {} ({})", message, code));
      listing_.clear();
      return finish_listing(out);
    case Purpose::ping:
      out.pong = true;  // an error answer is an answer: the server is alive
      return;
    case Purpose::call:
      return end_call(p.call, false, fmt::format("tool call error: {} (code {})", message, code), out);
  }
}

void Connection::finish_listing(Output& out) {
  listing_running_ = false;
  tools_ = std::move(listing_);
  listing_.clear();
  cursors_.clear();
  if (phase_ == Phase::listing) {
    phase_ = Phase::ready;
    out.became_ready = true;
    for (auto& [n, c] : calls_)
      if (!c.id) send_call(n, out);
  } else {
    out.tools_changed = true;
  }
  if (relist_) {
    relist_ = false;
    list_page(std::nullopt, out);
  }
}

void Connection::on_request(const std::string& id, const std::string& method,
                            std::optional<json::Element> params, Output& out) {
  if (method == "ping") return answer(id, "{}", out);
  if (method == "elicitation/create") {
    Elicitation e;
    e.id = id;
    // Over stdio nothing says which call asks. With one call in flight it is that one; with
    // several (of different conversations, maybe) nobody is asked rather than the wrong user.
    std::optional<uint64_t> asking;
    size_t sent = 0;
    for (const auto& [n, c] : calls_)
      if (c.id) {
        ++sent;
        asking = n;
      }
    if (sent == 1) e.call = asking;
    if (params && params->is_object()) {
      auto o = params->get_object().value_unsafe();
      e.message = std::string(json::string_if(o, "message").value_or(""));
      if (auto schema = json::get(o, "requestedSchema")) e.requested_schema = json::to_text(*schema);
    }
    if (e.requested_schema.empty()) e.requested_schema = R"({"type":"object","properties":{}})";
    out.elicitations.push_back(std::move(e));
    return;
  }
  // roots, sampling: capabilities we did not declare.
  out.messages.push_back(kEncoder.error(rpc::Id{id}, rpc::kMethodNotFound, "Method not found: " + method));
}

void Connection::on_notification(const std::string& method, std::optional<json::Element> params, Output& out) {
  if (method == "notifications/tools/list_changed") {
    if (phase_ != Phase::ready) {
      relist_ = phase_ == Phase::listing;
      return;
    }
    if (listing_running_) {
      relist_ = true;
      return;
    }
    listing_.clear();
    cursors_.clear();
    return list_page(std::nullopt, out);
  }
  if (method == "notifications/progress" && params && params->is_object()) {
    auto o = params->get_object().value_unsafe();
    auto token = json::get(o, "progressToken");
    if (!token) return;
    uint64_t call = 0;
    if (token->is_uint64())
      call = token->get_uint64().value_unsafe();
    else if (token->is_int64())
      call = static_cast<uint64_t>(token->get_int64().value_unsafe());
    if (calls_.count(call)) out.progress.push_back(Progress{call, progress_text(o)});
    return;
  }
  if (method == "notifications/message" && params && params->is_object()) {
    auto o = params->get_object().value_unsafe();
    if (auto data = json::get(o, "data"))
      out.notes.push_back(data->is_string() ? std::string(data->get_string().value_unsafe()) : json::to_text(*data));
  }
  // Anything else (resources, prompts, cancelled, unknown): nothing to do.
}

}  // namespace llmx::mcp
