#include "protocol/rpc/conversation_api.hpp"

#include <fmt/format.h>

#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/base/schema_gen.hpp"
#include "protocol/rpc/jsonrpc.hpp"

namespace llmx::api {

std::vector<std::pair<std::string, RawJson>> dotted_overrides(const RawJson& config) {
  std::vector<std::pair<std::string, RawJson>> out;
  if (config.is_null()) return out;
  json::Parser p;
  auto root = p.parse(config.text);
  if (!root.is_object()) throw json::DecodeError("invalid type: expected object", "config");
  for (auto obj = root.get_object().value_unsafe(); auto [k, v] : obj)
    out.emplace_back(std::string(k), RawJson{json::to_text(v)});
  return out;
}

ConfigOverrides NewConversationParams::to_overrides(ConfigOverrides o) const {
  if (model) o.model = *model;
  if (modelProvider) o.model_provider = *modelProvider;
  if (profile) o.profile = *profile;
  if (cwd) o.cwd = *cwd;
  if (approvalPolicy) o.approval_policy = *approvalPolicy;
  if (sandbox) o.sandbox_mode = *sandbox;
  if (baseInstructions) o.base_instructions = *baseInstructions;
  if (developerInstructions) o.developer_instructions = *developerInstructions;
  if (compactPrompt) o.compact_prompt = *compactPrompt;
  if (config) {
    auto more = dotted_overrides(*config);
    o.json_overrides.insert(o.json_overrides.end(), more.begin(), more.end());
  }
  return o;
}

void write_json(json::Writer& w, const InputItem& x) {
  w.begin_object();
  if (auto* t = x.item.get_if<TextInput>()) {
    w.field("type", "text");
    w.key("data").begin_object().field("text", t->text).end_object();
  } else if (auto* i = x.item.get_if<ImageInput>()) {
    w.field("type", "image");
    w.key("data").begin_object().field("image_url", i->image_url).end_object();
  } else if (auto* l = x.item.get_if<LocalImageInput>()) {
    w.field("type", "localImage");
    w.key("data").begin_object().field("path", l->path).end_object();
  }
  w.end_object();
}

// The same shape as write_json above: adjacently tagged, the core UserInput field lists as data.
schema::Node json_schema(const InputItem*, schema::Context& c) {
  auto variant = [&c](std::string tag, schema::Node data) {
    std::string title = schema::pascal_case(tag) + "InputItem";
    return schema::object({schema::prop("type", schema::constant(std::move(tag))), schema::prop("data", std::move(data))},
                          std::move(title));
  };
  return schema::one_of({variant("text", schema::fields_object<TextInput>(c)),
                         variant("image", schema::fields_object<ImageInput>(c)),
                         variant("localImage", schema::fields_object<LocalImageInput>(c))});
}

void read_json(json::Element e, InputItem& x) {
  if (!e.is_object()) json::type_error(e, "object");
  auto o = e.get_object().value_unsafe();
  auto type = json::get_string(o, "type");
  if (!type) throw json::DecodeError("missing field `type`");
  // The reference nests the payload under `data`; the seed documents it flat (P8).
  auto body = o;
  if (auto data = json::get(o, "data")) {
    if (!data->is_object()) json::type_error(*data, "object");
    body = data->get_object().value_unsafe();
  }
  auto need = [&](std::string_view key) {
    auto v = json::get_string(body, key);
    if (!v) throw json::DecodeError(fmt::format("missing field `{}`", key));
    return std::string(*v);
  };
  if (*type == "text") {
    x.item = UserInput{TextInput{need("text")}};
  } else if (*type == "image") {
    x.item = UserInput{ImageInput{need("image_url")}};
  } else if (*type == "localImage" || *type == "local_image") {
    x.item = UserInput{LocalImageInput{need("path")}};
  } else {
    throw json::DecodeError(fmt::format("unknown variant `{}`, expected one of `text`, `image`, `localImage`", *type));
  }
}

void append_event_notification(const rpc::Encoder& rpc, std::string& out, const Event& ev,
                               const std::string& conversation_id) {
  fmt::basic_memory_buffer<char, 96> method;
  fmt::format_to(std::back_inserter(method), "llmx/event/{}", ev.msg.kind());
  rpc.notification(out, std::string_view(method.data(), method.size()), [&](json::Writer& w) {
    w.begin_object();
    w.field("id", ev.id);
    w.key("msg");
    json::write_value(w, ev.msg);
    w.field("conversationId", conversation_id);
    w.end_object();
  });
}

std::string model_list_result(std::vector<models::ModelPreset> items, const std::optional<std::string>& next_cursor,
                              bool data_key) {
  if (data_key) return json::to_json(ModelListData{std::move(items), next_cursor});
  return json::to_json(McpModelListResult{std::move(items), next_cursor});
}

std::vector<UserInput> to_user_inputs(const std::vector<InputItem>& items) {
  std::vector<UserInput> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(i.item);
  return out;
}

}  // namespace llmx::api
