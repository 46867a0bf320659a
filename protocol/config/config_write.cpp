#include "protocol/config/config_write.hpp"
#include "protocol/base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace llmx {

namespace fs = std::filesystem;

std::optional<std::string> read_text_file(const std::string& path) {
  int err = 0;
  auto text = files::read(path, &err);
  if (!text && err != ENOENT) throw ConfigError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  return text;
}

void write_file_atomic(const std::string& path, std::string_view text) {
  std::error_code ec;
  fs::path target(path);
  if (fs::is_symlink(target, ec)) {
    auto resolved = fs::canonical(target, ec);
    if (!ec) target = resolved;
  }
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  struct stat st {};
  bool existed = ::stat(target.c_str(), &st) == 0;
  // O_EXCL with a unique name: 0644 less the umask for new files, the old mode applied below.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = fmt::format("{}.tmp-{}-{}-{}", target.string(), ::getpid(), counter++,
                      std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw ConfigError(fmt::format("{}: cannot create a temporary file: {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw ConfigError(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
  };
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed");
    off += static_cast<size_t>(n);
  }
  if (existed && ::fchmod(fd, st.st_mode & 07777) != 0) fail("cannot keep the file mode");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw ConfigError(fmt::format("{}: close failed: {}", path, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw ConfigError(fmt::format("{}: rename failed: {}", path, std::strerror(err)));
  }
}

void edit_config_file(const std::string& home, const std::function<std::string(const std::string&)>& edit) {
  std::string file = home + "/config.toml";
  std::string before = read_text_file(file).value_or("");
  std::string after;
  try {
    after = edit(before);
  } catch (const toml_edit::EditError& err) {
    // Syntax errors come as "line:col: ...", the rest as plain messages.
    std::string msg = err.what();
    bool positioned = !msg.empty() && std::isdigit(static_cast<unsigned char>(msg[0]));
    throw ConfigError(fmt::format("{}{}{}", file, positioned ? ":" : ": ", msg));
  }
  if (after != before) write_file_atomic(file, after);
}

void set_default_model(const std::string& home, const std::optional<std::string>& profile,
                       const std::optional<std::string>& model, const std::optional<std::string>& effort) {
  if (effort && *effort != "minimal" && *effort != "low" && *effort != "medium" && *effort != "high")
    throw ConfigError(
        fmt::format("unknown reasoning effort `{}`: expected `minimal`, `low`, `medium` or `high`", *effort));
  std::string prefix = profile ? "profiles." + toml_edit::join_key({*profile}) + "." : "";
  edit_config_file(home, [&](const std::string& text) {
    std::string out = text;
    out = model ? toml_edit::set_value(out, prefix + "model", toml_edit::quote(*model))
                : toml_edit::remove_value(out, prefix + "model");
    out = effort ? toml_edit::set_value(out, prefix + "model_reasoning_effort", toml_edit::quote(*effort))
                 : toml_edit::remove_value(out, prefix + "model_reasoning_effort");
    return out;
  });
}

bool valid_mcp_server_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

toml_edit::Entries mcp_server_entries(const McpServerConfig& s) {
  using namespace toml_edit;
  auto map_text = [](const std::map<std::string, std::string>& m) {
    Entries e;
    for (const auto& [k, v] : m) e.emplace_back(k, quote(v));
    return inline_table(e);
  };
  Entries out;
  if (s.command) out.emplace_back("command", quote(*s.command));
  if (!s.args.empty()) out.emplace_back("args", string_array(s.args));
  if (!s.env.empty()) out.emplace_back("env", map_text(s.env));
  if (!s.env_vars.empty()) out.emplace_back("env_vars", string_array(s.env_vars));
  if (s.cwd) out.emplace_back("cwd", quote(*s.cwd));
  if (s.url) out.emplace_back("url", quote(*s.url));
  if (s.bearer_token_env_var) out.emplace_back("bearer_token_env_var", quote(*s.bearer_token_env_var));
  if (!s.http_headers.empty()) out.emplace_back("http_headers", map_text(s.http_headers));
  if (!s.env_http_headers.empty()) out.emplace_back("env_http_headers", map_text(s.env_http_headers));
  auto seconds = [](double v) {  // always a TOML float: "10.0", "2.5"
    std::string t = fmt::format("{}", v);
    return t.find_first_of(".e") == std::string::npos ? t + ".0" : t;
  };
  if (s.startup_timeout_sec) out.emplace_back("startup_timeout_sec", seconds(*s.startup_timeout_sec));
  if (s.tool_timeout_sec) out.emplace_back("tool_timeout_sec", seconds(*s.tool_timeout_sec));
  if (!s.enabled) out.emplace_back("enabled", "false");
  if (s.enabled_tools) out.emplace_back("enabled_tools", string_array(*s.enabled_tools));
  if (s.disabled_tools) out.emplace_back("disabled_tools", string_array(*s.disabled_tools));
  return out;
}

void add_mcp_server(const std::string& home, const std::string& name, const McpServerConfig& server) {
  if (!valid_mcp_server_name(name))
    throw ConfigError(fmt::format("invalid server name '{}': must match pattern ^[a-zA-Z0-9_-]+$", name));
  if (!server.command && !server.url)
    throw ConfigError(fmt::format("MCP server '{}' needs a command (stdio) or a url (streamable HTTP)", name));
  auto entries = mcp_server_entries(server);
  edit_config_file(home, [&](const std::string& text) {
    return toml_edit::set_table(text, "mcp_servers." + toml_edit::join_key({name}), entries);
  });
}

bool remove_mcp_server(const std::string& home, const std::string& name) {
  bool found = false;
  std::string path = "mcp_servers." + toml_edit::join_key({name});
  edit_config_file(home, [&](const std::string& text) {
    found = toml_edit::contains(text, path);
    return found ? toml_edit::remove_table(text, path) : text;
  });
  return found;
}

}  // namespace llmx
