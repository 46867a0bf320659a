#include "actors/mcp_tools.hpp"

#include <fmt/format.h>

#include "protocol/base/json_writer.hpp"
#include "protocol/model/tool_output.hpp"
#include "protocol/rpc/mcp_tool_schema.hpp"

namespace llmx {

namespace {
// mcp_tool_call_end carries results up to this size whole; larger ones as cut-down text.
constexpr size_t kMaxEventResultBytes = 1u << 20;
}  // namespace

McpTools::McpTools(const McpServers& servers, const std::map<std::string, McpServerConfig>& configs) {
  mcp::ToolNames names;
  for (const auto& status : servers.servers) {
    McpServerStatus kept = status;
    kept.tools.clear();
    servers_.push_back(std::move(kept));
    if (!status.ready) continue;
    auto cfg = configs.find(status.server);
    size_t offered = 0;
    for (const auto& tool : status.tools) {
      if (cfg != configs.end() && !mcp::tool_allowed(tool.name, cfg->second.enabled_tools, cfg->second.disabled_tools))
        continue;
      auto schema = mcp::provider_schema(tool.input_schema.text.empty() ? RawJson{R"({"type":"object"})"} : tool.input_schema);
      if (auto* refused = std::get_if<mcp::SchemaRefused>(&schema)) {
        warnings_.push_back(fmt::format("The tool `{}` of MCP server `{}` is not offered to the model: {}", tool.name,
                                        status.server, refused->reason));
        continue;
      }
      auto qualified = names.add(status.server, tool.name);
      specs_.push_back(ToolSpec{qualified, tool.description, RawJson{std::get<std::string>(std::move(schema))}});
      auto timeout = cfg != configs.end() ? cfg->second.tool_timeout() : McpServerConfig{}.tool_timeout();
      targets_[qualified] = Target{status.server, tool.name, tool.read_only, status.client,
                                   static_cast<int64_t>(timeout * 1000)};
      json::Writer w;
      w.begin_object().field("name", tool.name);
      if (!tool.description.empty()) w.field("description", tool.description);
      w.key("inputSchema").raw(tool.input_schema.text.empty() ? R"({"type":"object"})" : tool.input_schema.text);
      if (tool.read_only) w.key("annotations").begin_object().field("readOnlyHint", true).end_object();
      w.end_object();
      listing_[qualified] = RawJson{w.take()};
      ++offered;
    }
    offered_[status.server] = offered;
  }
  for (const auto& w : names.warnings()) warnings_.push_back(w);
}

const McpTools::Target* McpTools::find(std::string_view qualified) const {
  auto it = targets_.find(qualified);
  return it == targets_.end() ? nullptr : &it->second;
}

std::vector<EventMsg> McpTools::startup_events() const {
  std::vector<EventMsg> out;
  if (servers_.empty()) return out;
  McpStartupCompleteEvent complete;
  for (const auto& s : servers_) {
    McpStartupStatus status;
    if (s.ready) {
      status.state = "ready";
      auto it = offered_.find(s.server);
      status.tools = it == offered_.end() ? 0 : it->second;
      complete.ready.push_back(s.server);
    } else {
      status.state = "failed";
      status.error = s.error;
      complete.failed.push_back(McpStartupFailure{s.server, s.error});
    }
    out.push_back(McpStartupUpdateEvent{s.server, std::move(status)});
  }
  out.push_back(std::move(complete));
  for (const auto& w : warnings_) out.push_back(WarningEvent{w});
  return out;
}

McpListToolsResponseEvent McpTools::listing() const {
  McpListToolsResponseEvent ev;
  ev.tools = listing_;
  for (const auto& s : servers_) {
    ev.resources[s.server] = RawJson{"[]"};
    ev.resource_templates[s.server] = RawJson{"[]"};
    ev.auth_statuses[s.server] = "unsupported";
  }
  return ev;
}

McpArguments mcp_arguments(std::string_view text) {
  auto blank = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (blank) return {};
  json::Parser p;
  try {
    auto root = p.parse(text);
    return {RawJson{json::to_text(root)}, std::nullopt};
  } catch (const json::DecodeError& e) {
    return {std::nullopt, fmt::format("err: {}", e.what())};
  }
}

McpCallEnd mcp_call_end(const std::string& call_id, McpInvocation invocation, std::chrono::nanoseconds duration,
                        const McpCallResult& result) {
  McpCallEnd end;
  end.event.call_id = call_id;
  end.event.invocation = std::move(invocation);
  end.event.duration = Duration::from_nanos(static_cast<uint64_t>(duration.count()));
  json::Writer w;
  if (result.ok) {
    json::Parser p;
    auto out = mcp::tool_output(p.parse(result.result));  // the connection checked it is an object
    if (result.result.size() <= kMaxEventResultBytes) {
      w.begin_object().key("Ok").raw(result.result).end_object();
    } else {  // what clients and the rollout get of a huge result: its text, cut in the middle
      w.begin_object().key("Ok").begin_object().key("content").begin_array().begin_object();
      w.field("type", "text").field("text", truncate_middle(out.text, kMaxEventResultBytes));
      w.end_object().end_array().field("isError", !out.success).end_object().end_object();
    }
    end.output = truncate_for_model(out.text);
    end.success = out.success;
    if (!out.parts.empty()) {
      // Text parts are truncated like any output; images go as they are.
      for (auto& part : out.parts)
        if (auto* t = part.get_if<InputText>()) t->text = truncate_for_model(t->text);
      end.parts = std::move(out.parts);
    }
  } else {
    w.begin_object().field("Err", result.error).end_object();
    end.output = result.error;
    end.success = false;
  }
  end.event.result = RawJson{w.take()};
  return end;
}

}  // namespace llmx
