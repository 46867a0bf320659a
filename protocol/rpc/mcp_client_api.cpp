#include "protocol/rpc/mcp_client_api.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"

namespace llmx::mcp {

namespace {

// `isError: true` (anything else is not an error).
bool is_error_result(json::Object result) {
  auto flag = result["isError"];
  return flag.error() == simdjson::SUCCESS && flag.value_unsafe().is_bool() && flag.value_unsafe().get_bool().value_unsafe();
}

}  // namespace

std::string client_initialize_params() {
  json::Writer w;
  w.begin_object().field("protocolVersion", kClientProtocolVersions.front());
  w.key("capabilities").begin_object().key("elicitation").begin_object().end_object().end_object();
  w.key("clientInfo").begin_object().field("name", "llmx-mcp-client").field("version", LLMX_VERSION);
  w.field("title", "LLMX").end_object();
  w.end_object();
  return w.take();
}

std::variant<ServerHello, std::string> read_initialize_result(json::Element result) {
  if (!result.is_object()) return fmt::format("the initialize result is a {}, not an object", json::type_name(result));
  auto o = result.get_object().value_unsafe();
  ServerHello hello;
  auto version = json::get_string(o, "protocolVersion");
  if (!version) return std::string("the initialize result has no protocolVersion");
  if (std::find(kClientProtocolVersions.begin(), kClientProtocolVersions.end(), *version) ==
      kClientProtocolVersions.end())
    return fmt::format("the server speaks MCP {}, which llmx does not (it speaks {})", *version,
                       fmt::join(kClientProtocolVersions, ", "));
  hello.protocol_version = std::string(*version);
  if (auto info = json::object_if(o, "serverInfo")) {
    hello.name = std::string(json::get_string(*info, "name").value_or(""));
    hello.version = std::string(json::get_string(*info, "version").value_or(""));
  }
  if (auto caps = json::object_if(o, "capabilities"))
    if (auto tools = json::object_if(*caps, "tools")) {
      hello.tools = true;
      hello.tools_list_changed = json::get_bool(*tools, "listChanged").value_or(false);
    }
  if (auto text = json::get_string(o, "instructions")) hello.instructions = std::string(*text);
  return hello;
}

ToolPage read_tools_list(json::Element result) {
  ToolPage page;
  if (!result.is_object()) return page;
  auto o = result.get_object().value_unsafe();
  if (auto cursor = json::string_if(o, "nextCursor")) page.next_cursor = std::string(*cursor);
  auto tools = json::get(o, "tools");
  if (!tools || !tools->is_array()) return page;
  for (auto t : json::Array(tools->get_array().value_unsafe())) {
    if (!t.is_object()) {
      page.skipped.push_back(fmt::format("a listed tool is a {}", json::type_name(t)));
      continue;
    }
    auto to = t.get_object().value_unsafe();
    auto name = json::string_if(to, "name");
    if (!name || name->empty()) {
      page.skipped.push_back("a listed tool has no name");
      continue;
    }
    // Odd fields of one tool cost that field, never the listing.
    ServerTool tool;
    tool.name = std::string(*name);
    tool.description = std::string(json::string_if(to, "description").value_or(""));
    if (auto schema = json::get(to, "inputSchema")) tool.input_schema = RawJson{json::to_text(*schema)};
    if (auto ann = json::object_if(to, "annotations")) {
      auto hint = (*ann)["readOnlyHint"];
      tool.read_only = hint.error() == simdjson::SUCCESS && hint.value_unsafe().is_bool() &&
                       hint.value_unsafe().get_bool().value_unsafe();
    }
    page.tools.push_back(std::move(tool));
  }
  return page;
}

std::string tool_call_params(std::string_view tool, const std::optional<RawJson>& arguments,
                             std::optional<int64_t> progress_token) {
  json::Writer w;
  w.begin_object().field("name", tool);
  if (arguments && !arguments->text.empty()) w.key("arguments").raw(arguments->text);
  if (progress_token) w.key("_meta").begin_object().field("progressToken", *progress_token).end_object();
  w.end_object();
  return w.take();
}

ToolOutput tool_output(json::Element call_result) {
  ToolOutput out;
  if (!call_result.is_object()) {
    out.text = json::to_text(call_result);
    out.success = false;
    return out;
  }
  auto o = call_result.get_object().value_unsafe();
  out.success = !is_error_result(o);
  if (auto structured = json::get(o, "structuredContent"); structured && !structured->is_null()) {
    out.text = json::to_text(*structured);
    return out;
  }
  auto content = json::get(o, "content");
  out.text = content ? json::to_text(*content) : "[]";
  if (!content || !content->is_array()) return out;
  bool image = false, other = false;
  std::vector<ContentItem> parts;
  for (auto block : json::Array(content->get_array().value_unsafe())) {
    if (!block.is_object()) continue;
    auto b = block.get_object().value_unsafe();
    auto type = json::string_if(b, "type").value_or("");
    if (type == "text") {
      parts.push_back(InputText{std::string(json::string_if(b, "text").value_or(""))});
    } else if (type == "image") {
      image = true;
      parts.push_back(InputImage{fmt::format("data:{};base64,{}", json::string_if(b, "mimeType").value_or("image/png"),
                                             json::string_if(b, "data").value_or(""))});
    } else {
      other = true;  // audio, resources: the JSON text says it all
    }
  }
  if (image && !other) out.parts = std::move(parts);
  return out;
}

CallEnd read_call_end(std::string_view result_json) {
  CallEnd end;
  json::Parser p;
  auto root = p.parse(result_json);
  auto ok = root.at_key("Ok");
  if (ok.error() == simdjson::SUCCESS && ok.value_unsafe().is_object()) {
    auto o = ok.value_unsafe().get_object().value_unsafe();
    end.ok = true;
    end.failed = is_error_result(o);
    if (auto content = json::get(o, "content")) end.content = json::to_text(*content);
    if (auto structured = json::get(o, "structuredContent")) end.structured = json::to_text(*structured);
    return end;
  }
  auto err = root.at_key("Err");
  end.error = err.error() == simdjson::SUCCESS && err.value_unsafe().is_string()
                  ? std::string(err.value_unsafe().get_string().value_unsafe())
                  : "the call failed";
  return end;
}

std::string elicit_result(ReviewDecision decision, const std::optional<RawJson>& content) {
  json::Writer w;
  w.begin_object();
  if (decision == ReviewDecision::approved || decision == ReviewDecision::approved_for_session) {
    w.field("action", "accept");
    if (content) w.key("content").raw(content->text);
  } else {
    w.field("action", decision == ReviewDecision::abort ? "cancel" : "decline");
  }
  w.end_object();
  return w.take();
}

}  // namespace llmx::mcp
