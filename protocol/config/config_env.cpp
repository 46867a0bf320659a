// The llmx home directory and `<home>/.env` (engine.md §4.1).
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "protocol/config/config.hpp"
#include "protocol/base/files.hpp"
#include "protocol/base/text.hpp"

namespace llmx {

namespace fs = std::filesystem;

std::string llmx_home() {
  if (const char* h = std::getenv("LLMX_HOME"); h && *h) {
    std::error_code ec;
    auto canon = fs::canonical(h, ec);
    if (ec) throw ConfigError(fmt::format("LLMX_HOME points to `{}`, which does not exist", h));
    if (!fs::is_directory(canon, ec))
      throw ConfigError(fmt::format("LLMX_HOME points to `{}`, which is not a directory", h));
    return canon.string();
  }
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    struct passwd* pw = getpwuid(getuid());
    home = pw && pw->pw_dir ? pw->pw_dir : ".";
  }
  return std::string(home) + "/.llmx";
}

namespace {

constexpr std::string_view kSpace = " \t";


bool valid_name(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

// The value part of a line: quoted (single = literal, double = with escapes) or bare (up to a
// ` #` comment). nullopt for an unterminated quote.
std::optional<std::string> parse_value(std::string_view v) {
  v = text::trim_view(v, kSpace);
  if (v.empty()) return std::string();
  char q = v.front();
  if (q == '\'' || q == '"') {
    std::string out;
    for (size_t i = 1; i < v.size(); ++i) {
      char c = v[i];
      if (c == q) return out;  // anything after the closing quote is ignored (a comment)
      if (q == '"' && c == '\\' && i + 1 < v.size()) {
        char n = v[++i];
        switch (n) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          default: out += n;  // \" \\ \$ and the rest: the character itself
        }
        continue;
      }
      out += c;
    }
    return std::nullopt;
  }
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == '#' && i > 0 && (v[i - 1] == ' ' || v[i - 1] == '\t')) return std::string(text::trim_view(v.substr(0, i), kSpace));
  return std::string(v);
}

bool reserved(std::string_view key) {
  std::string upper;
  for (char c : key) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper.starts_with("LLMX_");
}

}  // namespace

void load_dotenv(const std::string& home) {
  // Read whole, not through a stream: it runs before every `initialize` answer, and a first
  // stream costs the process its locale set-up (README, "Cold start").
  const auto content = files::read(home + "/.env");
  if (!content) return;
  for (std::string_view rest = *content; !rest.empty();) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view l = text::trim_view(line, kSpace);
    if (l.empty() || l.front() == '#') continue;
    if (l.starts_with("export ")) l = text::trim_view(l.substr(7), kSpace);
    auto eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(text::trim_view(l.substr(0, eq), kSpace));
    if (!valid_name(key) || reserved(key)) continue;
    auto value = parse_value(l.substr(eq + 1));
    if (!value) continue;
    ::setenv(key.c_str(), value->c_str(), 1);
  }
}

}  // namespace llmx
