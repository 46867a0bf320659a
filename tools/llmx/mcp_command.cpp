#include "mcp_command.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "actors/engine.hpp"
#include "actors/mcp_client.hpp"
#include "actors/mcp_tools.hpp"
#include "cli_util.hpp"
#include "protocol/config/config.hpp"
#include "protocol/config/config_write.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx::cli {

namespace {

struct McpState {
  std::string name;
  std::vector<std::string> env;      // K=V
  std::vector<std::string> command;  // after --
  std::string url;
  std::string bearer_token_env_var;
  bool json = false;
  bool tools = false;  // list: each server's tools too
};

// Connects to every enabled server the way a conversation does (engine.md §10.2) and reports
// how each start-up ended.
McpServers connect_all(const Config& cfg) {
  McpServers out;
  caf::actor_system_config sys_cfg;
  configure_system(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto hub = spawn_mcp_hub(sys);
  {
    caf::scoped_actor self{sys};
    self->request(hub, caf::infinite, McpConnect{cfg.mcp_servers})
        .receive([&](McpServers& s) { out = std::move(s); },
                 [&](caf::error& err) { fmt::print(stderr, "warning: {}\n", sys.render(err)); });
  }
  caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);  // its clients stop their servers
  return out;
}

const McpServerStatus* status_of(const McpServers& servers, const std::string& name) {
  for (const auto& s : servers.servers)
    if (s.server == name) return &s;
  return nullptr;
}

// "disabled", "ready (N tools)", "failed: <why>".
std::string state_text(const McpServerConfig& s, const McpServerStatus* status, size_t offered) {
  if (!s.enabled) return "disabled";
  if (!status) return "unknown";
  if (status->ready) return fmt::format("ready ({} tool{})", offered, offered == 1 ? "" : "s");
  auto first_line = status->error.substr(0, status->error.find('\n'));
  return "failed: " + first_line;
}


Config load(const std::vector<std::string>& overrides) {
  ConfigOverrides o;
  o.cli_overrides = overrides;
  auto cfg = load_config(o);
  for (const auto& w : cfg.warnings) fmt::print(stderr, "warning: {}\n", w);
  return cfg;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : std::string(sep)) + i;
  return out;
}

// Values of env maps and headers may be secrets: shown as KEY=*****.
std::string masked(const std::map<std::string, std::string>& m) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : m) parts.push_back(k + "=*****");
  return parts.empty() ? "-" : join(parts, ", ");
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// One server's configuration as a JSON object; `more` adds fields before it closes.
void write_server_json(json::Writer& w, const std::string& name, const McpServerConfig& s,
                       const std::function<void(json::Writer&)>& more = {}) {
  auto strings = [&](const std::vector<std::string>& v) {
    w.begin_array();
    for (const auto& x : v) w.string(x);
    w.end_array();
  };
  auto map = [&](const std::map<std::string, std::string>& m) {
    w.begin_object();
    for (const auto& [k, v] : m) w.field(k, v);
    w.end_object();
  };
  auto opt = [&](std::string_view key, const std::optional<std::string>& v) {
    w.key(key);
    v ? w.string(*v) : w.null();
  };
  w.begin_object().field("name", name).field("enabled", s.enabled).key("transport").begin_object();
  if (s.is_stdio()) {
    w.field("type", "stdio").field("command", *s.command).key("args");
    strings(s.args);
    w.key("env");
    map(s.env);
    w.key("env_vars");
    strings(s.env_vars);
    opt("cwd", s.cwd);
  } else {
    w.field("type", "streamable_http").field("url", s.url.value_or(""));
    opt("bearer_token_env_var", s.bearer_token_env_var);
    w.key("http_headers");
    map(s.http_headers);
    w.key("env_http_headers");
    map(s.env_http_headers);
  }
  w.end_object().field("startup_timeout_sec", s.startup_timeout()).field("tool_timeout_sec", s.tool_timeout());
  for (auto [key, tools] :
       {std::pair{"enabled_tools", &s.enabled_tools}, std::pair{"disabled_tools", &s.disabled_tools}}) {
    w.key(key);
    if (*tools)
      strings(**tools);
    else
      w.null();
  }
  if (more) more(w);
  w.end_object();
}

// Rows printed with every column padded to its widest cell.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) line += i + 1 < r.size() ? fmt::format("{:<{}}  ", r[i], width[i]) : r[i];
    fmt::print("{}\n", line);
  }
}

int run_add(const McpState& st) {
  if (!valid_mcp_server_name(st.name))
    return fail(fmt::format("invalid server name '{}': must match pattern ^[a-zA-Z0-9_-]+$", st.name));
  McpServerConfig s;
  if (!st.url.empty()) {
    if (!st.command.empty() || !st.env.empty())
      return fail("--url cannot be combined with a command or --env (those are for stdio servers)");
    s.url = st.url;
    if (!st.bearer_token_env_var.empty()) s.bearer_token_env_var = st.bearer_token_env_var;
  } else {
    if (st.command.empty())
      return fail(fmt::format("a command is required: llmx mcp add {} -- <command> [args...]", st.name));
    if (!st.bearer_token_env_var.empty()) return fail("--bearer-token-env-var needs --url");
    s.command = st.command.front();
    s.args.assign(st.command.begin() + 1, st.command.end());
    for (const auto& kv : st.env) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        return fail(fmt::format("environment entries must be in KEY=VALUE form, got '{}'", kv));
      s.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  add_mcp_server(llmx_home(), st.name, s);
  fmt::print("Added global MCP server '{}'.\n", st.name);
  return 0;
}

int run_remove(const McpState& st) {
  if (!valid_mcp_server_name(st.name))
    return fail(fmt::format("invalid server name '{}': must match pattern ^[a-zA-Z0-9_-]+$", st.name));
  if (remove_mcp_server(llmx_home(), st.name))
    fmt::print("Removed global MCP server '{}'.\n", st.name);
  else
    fmt::print("No MCP server named '{}' found.\n", st.name);
  return 0;
}

int run_list(const McpState& st, const std::vector<std::string>& overrides) {
  auto cfg = load(overrides);
  auto servers = connect_all(cfg);
  McpTools tools(servers, cfg.mcp_servers);
  auto listing = tools.listing();
  // The offered tools of one server, by qualified name.
  auto tools_of = [&](const std::string& server) {
    std::vector<std::pair<std::string, std::string>> out;  // qualified name, Tool JSON
    for (const auto& [qualified, tool] : listing.tools)
      if (auto* t = tools.find(qualified); t && t->server == server) out.emplace_back(qualified, tool.text);
    return out;
  };
  if (st.json) {
    json::Writer w;
    w.begin_array();
    for (const auto& entry : cfg.mcp_servers) {
      const auto& name = entry.first;  // not a structured binding: clang 14 cannot capture one
      const auto& s = entry.second;
      // The configuration, then how its start-up ended (and its tools with --tools).
      auto* status = status_of(servers, name);
      auto offered = tools_of(name);
      write_server_json(w, name, s, [&](json::Writer& w) {
        w.key("startup").begin_object();
        if (!s.enabled)
          w.field("state", "disabled");
        else if (status && status->ready)
          w.field("state", "ready").field("tools", static_cast<uint64_t>(offered.size()));
        else
          w.field("state", "failed").field("error", status ? status->error : std::string("not started"));
        w.end_object();
        if (st.tools) {
          w.key("tools").begin_object();
          for (const auto& [qualified, tool] : offered) w.key(qualified).raw(tool);
          w.end_object();
        }
      });
    }
    w.end_array();
    fmt::print("{}\n", w.str());
    return 0;
  }
  if (cfg.mcp_servers.empty()) {
    fmt::print("No MCP servers configured yet. Try `llmx mcp add my-tool -- my-command`.\n");
    return 0;
  }
  std::vector<std::vector<std::string>> stdio{{"Name", "Command", "Args", "Env", "Cwd", "Status"}};
  std::vector<std::vector<std::string>> http{{"Name", "Url", "Bearer Token Env Var", "Status"}};
  for (const auto& [name, s] : cfg.mcp_servers) {
    std::string status = state_text(s, status_of(servers, name), tools_of(name).size());
    if (s.is_stdio())
      stdio.push_back({name, *s.command, or_dash(join(s.args, " ")), masked(s.env), s.cwd.value_or("-"), status});
    else
      http.push_back({name, s.url.value_or(""), s.bearer_token_env_var.value_or("-"), status});
  }
  if (stdio.size() > 1) print_table(stdio);
  if (stdio.size() > 1 && http.size() > 1) fmt::print("\n");
  if (http.size() > 1) print_table(http);
  if (st.tools) {
    for (const auto& [name, s] : cfg.mcp_servers) {
      auto offered = tools_of(name);
      if (offered.empty()) continue;
      fmt::print("\nTools of {}:\n", name);
      std::vector<std::vector<std::string>> rows{{"Tool", "Description"}};
      for (const auto& [qualified, tool] : offered) {
        json::Parser p;
        auto o = p.parse(tool).get_object().value_unsafe();
        auto description = std::string(json::string_if(o, "description").value_or(""));
        rows.push_back({qualified, description.substr(0, description.find('\n'))});
      }
      print_table(rows);
    }
  }
  return 0;
}

int run_get(const McpState& st, const std::vector<std::string>& overrides) {
  auto cfg = load(overrides);
  auto it = cfg.mcp_servers.find(st.name);
  if (it == cfg.mcp_servers.end()) {
    fmt::print(stderr, "No MCP server named '{}' found.\n", st.name);
    return 1;
  }
  const auto& s = it->second;
  if (st.json) {
    json::Writer w;
    write_server_json(w, st.name, s);
    fmt::print("{}\n", w.str());
    return 0;
  }
  fmt::print("{}\n  enabled: {}\n", st.name, s.enabled);
  if (s.is_stdio()) {
    fmt::print("  transport: stdio\n  command: {}\n  args: {}\n  cwd: {}\n  env: {}\n  env_vars: {}\n", *s.command,
               or_dash(join(s.args, " ")), s.cwd.value_or("-"), masked(s.env), or_dash(join(s.env_vars, ", ")));
  } else {
    std::vector<std::string> env_headers;
    for (const auto& [h, var] : s.env_http_headers) env_headers.push_back(h + "=$" + var);
    fmt::print(
        "  transport: streamable_http\n  url: {}\n  bearer_token_env_var: {}\n  http_headers: {}\n"
        "  env_http_headers: {}\n",
        s.url.value_or(""), s.bearer_token_env_var.value_or("-"), masked(s.http_headers),
        or_dash(join(env_headers, ", ")));
  }
  fmt::print("  startup_timeout_sec: {}\n  tool_timeout_sec: {}\n", s.startup_timeout(), s.tool_timeout());
  if (s.enabled_tools) fmt::print("  enabled_tools: {}\n", or_dash(join(*s.enabled_tools, ", ")));
  if (s.disabled_tools) fmt::print("  disabled_tools: {}\n", or_dash(join(*s.disabled_tools, ", ")));
  fmt::print("  remove: llmx mcp remove {}\n", st.name);
  return 0;
}

}  // namespace

void add_mcp_command(CLI::App& app, std::vector<std::string>& config_overrides) {
  auto st = std::make_shared<McpState>();
  auto* mcp = app.add_subcommand("mcp", "Manage the MCP servers llmx uses ([mcp_servers] in config.toml)");
  mcp->require_subcommand(1);
  mcp->fallthrough();  // root options such as -c may follow `mcp`

  auto* add =
      mcp->add_subcommand("add", "Add (or replace) a global MCP server: add NAME [--env K=V]... -- COMMAND [ARGS...]");
  add->add_option("name", st->name, "Server name (letters, digits, '-' and '_')")->required();
  // One value per --env, so a `--` right after it still starts the command.
  add->add_option("--env", st->env, "Environment variable for the server, KEY=VALUE (repeatable)")
      ->allow_extra_args(false);
  add->add_option("--url", st->url, "URL of a streamable HTTP server (instead of a command)");
  add->add_option("--bearer-token-env-var", st->bearer_token_env_var,
                  "Environment variable holding the bearer token (with --url)");
  add->add_option("command", st->command, "The command and its arguments, after --");
  add->fallthrough();
  add->callback([st] { run_from_callback([&] { return run_add(*st); }); });

  auto* list = mcp->add_subcommand("list", "List the configured MCP servers, connecting to each to show its state");
  list->add_flag("--json", st->json, "Print JSON");
  list->add_flag("--tools", st->tools, "Also list each server's tools (as the model sees them)");
  list->fallthrough();
  list->callback([st, &config_overrides] { run_from_callback([&] { return run_list(*st, config_overrides); }); });

  auto* get = mcp->add_subcommand("get", "Show one MCP server");
  get->add_option("name", st->name, "Server name")->required();
  get->add_flag("--json", st->json, "Print JSON");
  get->fallthrough();
  get->callback([st, &config_overrides] { run_from_callback([&] { return run_get(*st, config_overrides); }); });

  auto* remove = mcp->add_subcommand("remove", "Remove a global MCP server");
  remove->add_option("name", st->name, "Server name")->required();
  remove->fallthrough();
  remove->callback([st] { run_from_callback([&] { return run_remove(*st); }); });
}

}  // namespace llmx::cli
