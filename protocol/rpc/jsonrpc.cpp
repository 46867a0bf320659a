#include "protocol/rpc/jsonrpc.hpp"

#include "protocol/base/json_repair.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx::rpc {

std::string Id::as_plain_string() const {
  if (!json.empty() && json.front() == '"') {
    json::Parser p;
    try {
      auto e = p.parse(json);
      return std::string(e.get_string().value_unsafe());
    } catch (...) {
      return json;
    }
  }
  return json;
}

namespace {

std::optional<Id> read_id(json::Element e) {
  if (e.is_int64() || e.is_uint64() || e.is_string()) return Id{json::to_text(e)};
  return std::nullopt;
}

Incoming invalid(Id id, int code, std::string reason) {
  Incoming in;
  in.kind = Incoming::Kind::invalid;
  in.id = std::move(id);
  in.invalid_code = code;
  in.invalid_reason = std::move(reason);
  return in;
}

}  // namespace

Incoming classify(json::Element root, const std::optional<std::string>& raw_id) {
  if (!root.is_object())
    return invalid(Id{}, kInvalidRequest,
                   std::string("Invalid request: expected a JSON-RPC object, got ") +
                       std::string(json::type_name(root)));
  auto obj = root.get_object().value_unsafe();
  auto id_field = obj.at_key("id");
  bool has_id = !id_field.error();
  std::optional<Id> id;
  if (has_id && raw_id) {
    if (json::is_integer_token(*raw_id)) id = Id{*raw_id};  // else a float: refused below
  } else if (has_id) {
    id = read_id(id_field.value_unsafe());
  }

  auto method_field = obj.at_key("method");
  if (!method_field.error()) {
    auto m = method_field.value_unsafe();
    if (!m.is_string())
      return invalid(id.value_or(Id{}), kInvalidRequest, "Invalid request: `method` must be a string");
    Incoming in;
    in.method = std::string(m.get_string().value_unsafe());
    if (auto p = obj.at_key("params"); !p.error() && !p.value_unsafe().is_null())
      in.params = p.value_unsafe();
    if (!has_id) {
      in.kind = Incoming::Kind::notification;
      return in;
    }
    if (!id)
      return invalid(Id{}, kInvalidRequest,
                     "Invalid request: `id` must be an integer or a string");
    in.kind = Incoming::Kind::request;
    in.id = *id;
    return in;
  }
  if (has_id && id) {
    if (auto r = obj.at_key("result"); !r.error()) {
      Incoming in;
      in.kind = Incoming::Kind::response;
      in.id = *id;
      in.result = r.value_unsafe();
      return in;
    }
    if (auto err = obj.at_key("error"); !err.error() && err.value_unsafe().is_object()) {
      Incoming in;
      in.kind = Incoming::Kind::error_response;
      in.id = *id;
      auto eo = err.value_unsafe().get_object().value_unsafe();
      try {
        in.error_code = json::get_int(eo, "code").value_or(0);
        in.error_message = std::string(json::get_string(eo, "message").value_or(""));
      } catch (const json::DecodeError&) {
        // A malformed error object is still an error reply; keep what we have.
      }
      return in;
    }
  }
  return invalid(id.value_or(Id{}), kInvalidRequest,
                 "Invalid request: a message needs `method` (request or notification) or `id` "
                 "with `result` or `error` (response)");
}

std::string Encoder::result(const Id& id, std::string_view result_json) const {
  json::Writer w;
  open(w);
  w.key("id").raw(id.json);
  w.key("result").raw(result_json);
  w.end_object();
  return w.take();
}

std::string Encoder::error(const Id& id, int code, std::string_view message,
                           std::optional<std::string_view> data) const {
  json::Writer w;
  open(w);
  w.key("id").raw(id.json);
  w.key("error").begin_object().field("code", int64_t{code}).field("message", message);
  if (data) w.key("data").raw(*data);
  w.end_object();
  w.end_object();
  return w.take();
}

std::string Encoder::notification(std::string_view method,
                                  std::optional<std::string_view> params_json) const {
  json::Writer w;
  open(w);
  w.field("method", method);
  if (params_json) w.key("params").raw(*params_json);
  w.end_object();
  return w.take();
}

std::string Encoder::request(const Id& id, std::string_view method, std::string_view params_json) const {
  json::Writer w;
  open(w);
  w.key("id").raw(id.json);
  w.field("method", method);
  w.key("params").raw(params_json);
  w.end_object();
  return w.take();
}

}  // namespace llmx::rpc
