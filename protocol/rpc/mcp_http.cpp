#include "protocol/rpc/mcp_http.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "protocol/base/base64.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_repair.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/text.hpp"
#include "protocol/rpc/mcp.hpp"
#include "protocol/rpc/mcp_stateless.hpp"

namespace llmx::mcp::http {

namespace {

std::string plain_of(json::Element id) {
  std::string_view s;
  if (id.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return json::to_text(id);
}

std::optional<json::Object> meta_of(json::Object params) { return json::object_if(params, "_meta"); }

}  // namespace

Posted read_posted(json::Parser& parser, std::string_view body) {
  Posted p;
  json::Element root;
  try {
    root = parser.parse(body);
  } catch (const json::DecodeError& err) {
    p.error = err.what();
    return p;
  }
  try {
    return read_message(root, parser.repaired_top_level_id());
  } catch (const std::exception& err) {  // a field of the wrong type
    p.error = err.what();
    p.kind = Posted::Kind::invalid;
    return p;
  }
}

Posted read_message(json::Element root, const std::optional<std::string>& raw_id) {
  Posted p;
  if (root.is_array()) {
    p.kind = Posted::Kind::batch;
    return p;
  }
  if (!root.is_object()) {
    p.error = "a JSON-RPC message is an object";
    return p;
  }
  json::Object o = root.get_object().value_unsafe();
  auto id = json::get(o, "id");
  auto method_field = json::get(o, "method");
  if (method_field && !method_field->is_string()) {
    p.error = "`method` must be a string";
    return p;
  }
  // The ids the sessions answer with: an integer or a string (null is no id; anything else is
  // refused before it could be answered with a null id that matches no request).
  if (id && (raw_id ? !json::is_integer_token(*raw_id) : !id->is_int64() && !id->is_uint64() && !id->is_string())) {
    p.error = "`id` must be a string or an integer";
    return p;
  }
  auto method = json::string_if(o, "method");
  if (id) {
    p.id = raw_id ? *raw_id : json::to_text(*id);
    p.id_plain = raw_id ? *raw_id : plain_of(*id);
  }
  if (!method) {
    if (id && (json::get(o, "result") || json::get(o, "error"))) {
      p.kind = Posted::Kind::response;
      return p;
    }
    p.error = "not a JSON-RPC request, notification or response";
    return p;
  }
  p.method = std::string(*method);
  p.kind = id ? Posted::Kind::request : Posted::Kind::notification;
  if (auto params = json::object_if(o, "params")) {
    json::Object po = *params;
    if (auto task = json::string_if(po, "taskId")) p.task_id = std::string(*task);
    if (auto name = json::string_if(po, "name")) p.name = std::string(*name);
    else if (auto uri = json::string_if(po, "uri")) p.name = std::string(*uri);
    else if (p.task_id) p.name = p.task_id;
    if (auto meta = meta_of(po)) {
      json::Object mo = *meta;
      if (auto v = json::string_if(mo, kVersionKey)) p.meta_version = std::string(*v);
      if (auto token = json::get(mo, "progressToken"); token && !token->is_null()) p.progress_token = json::to_text(*token);
    }
  }
  return p;
}

Route route_of(json::Parser& parser, std::string_view line) {
  Route r;
  json::Element root;
  try {
    root = parser.parse(line);
    return route_message(root, parser.repaired_top_level_id());
  } catch (const std::exception&) {
    return r;
  }
}

Route route_message(json::Element root, const std::optional<std::string>& raw_id) {
  Route r;
  if (!root.is_object()) return r;
  json::Object o = root.get_object().value_unsafe();
  auto method = json::string_if(o, "method");
  auto id = json::get(o, "id");
  if (!method && id) {
    r.kind = Route::Kind::response;
    r.request_id = raw_id ? *raw_id : json::to_text(*id);
    if (auto error = json::object_if(o, "error")) {
      json::Object eo = *error;
      if (auto code = json::int_if(eo, "code")) r.error_code = static_cast<int>(*code);
    }
    return r;
  }
  auto params = json::object_if(o, "params");
  if (!params) return r;
  json::Object po = *params;
  auto tag = [&](json::Object where) {
    if (auto call = json::string_if(where, "llmx_mcp_tool_call_id")) r.request_plain = std::string(*call);
  };
  tag(po);
  if (method && *method == "notifications/progress")
    if (auto token = json::get(po, "progressToken")) r.progress_token = json::to_text(*token);
  if (method && *method == "notifications/tasks/status")
    if (auto task = json::string_if(po, "taskId")) r.task_id = std::string(*task);
  if (auto meta = meta_of(po)) {
    json::Object mo = *meta;
    if (auto request = json::get(mo, "requestId")) r.request_id = json::to_text(*request);
    if (auto related = json::object_if(mo, "io.modelcontextprotocol/related-task")) {
      json::Object ro = *related;
      if (auto task = json::string_if(ro, "taskId")) r.task_id = std::string(*task);
    }
    tag(mo);
  }
  if (!r.request_id.empty() || !r.request_plain.empty() || !r.progress_token.empty() || !r.task_id.empty())
    r.kind = Route::Kind::related;
  return r;
}

bool is_stateless_version(std::string_view version) {
  return negotiate_version(std::string(version)) != version;  // not one of the handshake's versions
}

std::optional<std::string> decode_header_value(std::string_view value) {
  constexpr std::string_view open = "=?base64?", close = "?=";
  if (value.size() >= open.size() + close.size() && value.starts_with(open) && value.ends_with(close))
    return base64::decode(value.substr(open.size(), value.size() - open.size() - close.size()));
  for (char c : value)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || static_cast<unsigned char>(c) > 0x7e) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> header_mismatch(const Posted& posted, std::optional<std::string_view> protocol_version,
                                           std::optional<std::string_view> method,
                                           std::optional<std::string_view> name) {
  if (!protocol_version) return "Header mismatch: the MCP-Protocol-Version header is required";
  if (posted.meta_version && *posted.meta_version != *protocol_version)
    return fmt::format("Header mismatch: MCP-Protocol-Version header value '{}' does not match body value '{}'",
                       *protocol_version, *posted.meta_version);
  if (!method) return "Header mismatch: the Mcp-Method header is required";
  if (text::trim_view(*method, " \t") != posted.method)
    return fmt::format("Header mismatch: Mcp-Method header value '{}' does not match body value '{}'", *method,
                       posted.method);
  // Methods this revision does not have are -32601 before any header of theirs is looked at.
  // The tasks extension names a task the same way; its Mcp-Name is checked when sent.
  static constexpr std::string_view kNamed[] = {"tools/call", "resources/read", "prompts/get"};
  static constexpr std::string_view kTasks[] = {"tasks/get", "tasks/update", "tasks/cancel"};
  bool named = std::find(std::begin(kNamed), std::end(kNamed), posted.method) != std::end(kNamed);
  bool task = std::find(std::begin(kTasks), std::end(kTasks), posted.method) != std::end(kTasks);
  if (!named && !(task && name)) return std::nullopt;
  if (!name) return "Header mismatch: the Mcp-Name header is required for " + posted.method;
  auto decoded = decode_header_value(text::trim_view(*name, " \t"));
  if (!decoded) return "Header mismatch: the Mcp-Name header value is malformed";
  if (*decoded != posted.name.value_or(""))
    return fmt::format("Header mismatch: Mcp-Name header value '{}' does not match body value '{}'", *decoded,
                       posted.name.value_or(""));
  return std::nullopt;
}

bool is_json_content(std::optional<std::string_view> content_type) {
  if (!content_type) return false;
  return text::lower(text::trim_view(content_type->substr(0, content_type->find(';')), " \t")) == "application/json";
}

bool accepts(std::optional<std::string_view> accept, std::string_view media_type) {
  if (!accept) return false;
  auto slash = media_type.find('/');
  std::string any_subtype = std::string(media_type.substr(0, slash)) + "/*";
  std::string_view rest = *accept;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    item = text::trim_view(item.substr(0, item.find(';')), " \t");
    if (item == media_type || item == "*/*" || item == any_subtype) return true;
  }
  return false;
}

int status_of(const Route& answer, bool stateless) {
  if (!stateless || !answer.error_code) return 200;
  switch (*answer.error_code) {
    case -32601: return 404;
    case -32700:  // the request itself is wrong: a client error
    case -32600:
    case -32602:
    case kUnsupportedProtocolVersion:
    case kMissingRequiredClientCapability:
    case kHeaderMismatch: return 400;
    default: return 200;
  }
}

std::string sse_event(std::string_view json) { return fmt::format("event: message\ndata: {}\n\n", json); }

std::string error_body(int code, std::string_view message, std::string_view id_json) {
  json::Writer w;
  w.begin_object().field("jsonrpc", "2.0").key("id").raw(id_json);
  w.key("error").begin_object().field("code", code).field("message", message).end_object();
  w.end_object();
  return w.take();
}

std::string cancelled_notification(std::string_view request_id_json, std::string_view reason) {
  json::Writer w;
  w.begin_object().field("jsonrpc", "2.0").field("method", "notifications/cancelled");
  w.key("params").begin_object().key("requestId").raw(request_id_json).field("reason", reason).end_object();
  w.end_object();
  return w.take();
}

}  // namespace llmx::mcp::http
