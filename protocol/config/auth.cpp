#include "protocol/config/auth.hpp"

#include "protocol/base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/text.hpp"

namespace llmx::auth {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kApiKeyField = "OPENAI_API_KEY";

using text::trim;

std::string errno_text(int err) { return std::strerror(err); }

// The file's text; nullopt when it does not exist. Read through the settings cache: every config
// derivation looks for a stored key, and the file rarely changes.
std::optional<std::string> read_file(const std::string& path) {
  int err = 0;
  if (auto cached = files::settings_cache().read(path, &err)) return *cached;
  if (err == ENOENT) return std::nullopt;
  throw AuthError(fmt::format("failed to read {}: {}", path, errno_text(err)));
}

// The parsed contents of auth.json, checked: an object whose OPENAI_API_KEY, when present, is a
// string or null.
struct Parsed {
  json::Parser parser;
  json::Object root;
};

void parse_into(Parsed& out, const std::string& path, const std::string& text) {
  json::Element e;
  try {
    e = out.parser.parse(text);
  } catch (const json::DecodeError& err) {
    throw AuthError(fmt::format("{} is not valid JSON ({}); fix it or run `llmx logout` to remove it", path,
                                err.what()));
  }
  if (!e.is_object())
    throw AuthError(fmt::format("{} must hold a JSON object, found {}; fix it or run `llmx logout` to remove it",
                                path, json::type_name(e)));
  out.root = e.get_object().value_unsafe();
  if (auto key = json::get(out.root, kApiKeyField); key && !key->is_string())
    throw AuthError(fmt::format("{}: `{}` must be a string or null, found {}", path, kApiKeyField,
                                json::type_name(*key)));
}

std::optional<std::string> api_key_of(json::Object root) {
  auto key = json::get(root, kApiKeyField);
  if (!key) return std::nullopt;
  std::string k = trim(key->get_string().value_unsafe());
  if (k.empty()) return std::nullopt;
  return k;
}

// Pretty-printed JSON (two-space indent) of an element, the layout the reference writes.
// The new file text: OPENAI_API_KEY set to `key` (in its old place, else first), every other
// field of `old` kept as it was.
std::string render(const std::optional<json::Object>& old, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> fields;  // name, pretty value
  std::string key_value;
  json::append_escaped(key_value, key);
  bool replaced = false;
  if (old) {
    for (auto [k, v] : *old) {
      std::string value;
      if (k == kApiKeyField) {
        if (replaced) continue;  // a duplicate key: keep one
        value = key_value;
        replaced = true;
      } else {
        json::pretty(value, v, 1);
      }
      fields.emplace_back(std::string(k), std::move(value));
    }
  }
  if (!replaced) fields.insert(fields.begin(), {std::string(kApiKeyField), key_value});
  std::string out = "{\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    out += "  ";
    json::append_escaped(out, fields[i].first);
    out += ": ";
    out += fields[i].second;
    out += i + 1 < fields.size() ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

// Creates `home` with mode 0700 (its parents with the default mode) when it does not exist.
void ensure_home(const std::string& home) {
  std::error_code ec;
  if (fs::is_directory(home, ec)) return;
  fs::path parent = fs::path(home).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (::mkdir(home.c_str(), 0700) != 0 && errno != EEXIST)
    throw AuthError(fmt::format("failed to create {}: {}", home, errno_text(errno)));
}

// Replaces `path` with `text`: a 0600 temporary file next to it, fsync, rename, fsync of the
// directory. The temporary file is removed on any failure.
void write_private_file(const std::string& path, const std::string& text) {
  std::string dir = fs::path(path).parent_path().string();
  std::string tmpl = dir + "/.auth.json.tmp-XXXXXX";
  int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);  // created 0600
  if (fd < 0) throw AuthError(fmt::format("failed to write {}: {}", path, errno_text(errno)));
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw AuthError(fmt::format("failed to write {}: {}", path, errno_text(err)));
  };
  if (::fchmod(fd, 0600) != 0) fail(errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw AuthError(fmt::format("failed to write {}: {}", path, errno_text(err)));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw AuthError(fmt::format("failed to write {}: {}", path, errno_text(err)));
  }
  if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

std::string auth_file_path(const std::string& home) { return (fs::path(home) / "auth.json").string(); }

std::optional<std::string> load_api_key(const std::string& home) { return status(home).api_key; }

void save_api_key(const std::string& home, const std::string& key) {
  std::string k = trim(key);
  if (k.empty()) throw AuthError("the API key is empty");
  ensure_home(home);
  std::string path = auth_file_path(home);
  Parsed parsed;
  std::optional<json::Object> old;
  if (auto text = read_file(path)) {
    parse_into(parsed, path, *text);
    old = parsed.root;
  }
  write_private_file(path, render(old, k));
}

bool logout(const std::string& home) {
  std::string path = auth_file_path(home);
  if (::unlink(path.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  throw AuthError(fmt::format("failed to remove {}: {}", path, errno_text(errno)));
}

std::string mask_key(std::string_view key) {
  // Show 8 + 5 characters only when at least as many stay hidden.
  constexpr size_t kHead = 8, kTail = 5, kMinHidden = 8;
  if (key.size() < kHead + kTail + kMinHidden) return "***";
  return fmt::format("{}***{}", key.substr(0, kHead), key.substr(key.size() - kTail));
}

std::optional<std::string> AuthStatus::auth_method() const {
  if (api_key) return "apikey";
  if (has_tokens) return "chatgpt";
  return std::nullopt;
}

AuthStatus status(const std::string& home) {
  AuthStatus st;
  st.file = auth_file_path(home);
  auto text = read_file(st.file);
  if (!text) return st;
  st.file_exists = true;
  Parsed parsed;
  parse_into(parsed, st.file, *text);
  st.api_key = api_key_of(parsed.root);
  if (auto tokens = json::get(parsed.root, "tokens"); tokens && tokens->is_object())
    st.has_tokens = tokens->get_object().value_unsafe().size() > 0;
  return st;
}

void attach_stored_api_key(ModelProviderInfo& provider, const std::string& home) {
  provider.stored_api_key.reset();
  if (!may_use_stored_api_key(provider)) return;
  provider.stored_api_key = load_api_key(home);
}

}  // namespace llmx::auth
