#include "protocol/rpc/v2_api.hpp"

#include <fmt/format.h>

#include "protocol/core/event_msgs.hpp"
#include "protocol/base/json_codec.hpp"
#include "protocol/base/json_reader.hpp"
#include "protocol/store/thread_index.hpp"

namespace llmx::v2 {

AskForApproval to_core(ApprovalPolicy p) {
  switch (p) {
    case ApprovalPolicy::unless_trusted: return AskForApproval::untrusted;
    case ApprovalPolicy::on_failure: return AskForApproval::on_failure;
    case ApprovalPolicy::on_request: return AskForApproval::on_request;
    case ApprovalPolicy::never: return AskForApproval::never;
  }
  return AskForApproval::on_request;
}

ApprovalPolicy from_core(AskForApproval p) {
  switch (p) {
    case AskForApproval::untrusted: return ApprovalPolicy::unless_trusted;
    case AskForApproval::on_failure: return ApprovalPolicy::on_failure;
    case AskForApproval::on_request: return ApprovalPolicy::on_request;
    case AskForApproval::never: return ApprovalPolicy::never;
  }
  return ApprovalPolicy::on_request;
}

SandboxMode to_core(SandboxModeV2 m) {
  switch (m) {
    case SandboxModeV2::read_only: return SandboxMode::read_only;
    case SandboxModeV2::workspace_write: return SandboxMode::workspace_write;
    case SandboxModeV2::danger_full_access: return SandboxMode::danger_full_access;
  }
  return SandboxMode::read_only;
}

namespace {
void write_input(json::Writer& w, const UserInput& in) {
  w.begin_object();
  if (auto* t = in.get_if<TextInput>()) {
    w.field("type", "text").field("text", t->text);
  } else if (auto* i = in.get_if<ImageInput>()) {
    w.field("type", "image").field("url", i->image_url);
  } else if (auto* l = in.get_if<LocalImageInput>()) {
    w.field("type", "localImage").field("path", l->path);
  }
  w.end_object();
}
}  // namespace

void write_json(json::Writer& w, const UserInputV2& x) { write_input(w, x.item); }

void read_json(json::Element e, UserInputV2& x) {
  if (!e.is_object()) json::type_error(e, "object");
  auto o = e.get_object().value_unsafe();
  auto type = json::get_string(o, "type");
  if (!type) throw json::DecodeError("missing field `type`");
  auto need = [&](std::string_view key) {
    auto v = json::get_string(o, key);
    if (!v) throw json::DecodeError(fmt::format("missing field `{}`", key));
    return std::string(*v);
  };
  if (*type == "text")
    x.item = UserInput{TextInput{need("text")}};
  else if (*type == "image")
    x.item = UserInput{ImageInput{need("url")}};
  else if (*type == "localImage")
    x.item = UserInput{LocalImageInput{need("path")}};
  else
    throw json::DecodeError(fmt::format("unknown variant `{}`, expected one of `text`, `image`, `localImage`", *type));
}

void write_json(json::Writer& w, const ThreadItem& x) { w.raw(x.json.text); }
void read_json(json::Element e, ThreadItem& x) { x.json = RawJson{json::to_text(e)}; }

std::string preview_from_initial_messages(const std::optional<JsonOf<RecordedEvents>>& initial_messages) {
  if (!initial_messages) return {};
  try {
    for (const auto& e : json::parse_as<std::vector<EventMsg>>(initial_messages->text))
      if (auto* u = e.get_if<UserMessageEvent>()) return threads::preview_of(u->message);
  } catch (const json::DecodeError&) {
  }
  return {};
}

ThreadItem user_message_item(const std::string& id, const std::vector<UserInput>& content) {
  json::Writer w;
  w.begin_object().field("type", "userMessage").field("id", id).key("content").begin_array();
  for (const auto& c : content) write_input(w, c);
  w.end_array().end_object();
  return ThreadItem{RawJson{w.take()}};
}

}  // namespace llmx::v2
